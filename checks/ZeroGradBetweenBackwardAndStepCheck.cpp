#include "ZeroGradBetweenBackwardAndStepCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// The optimizer a `step()` / `zero_grad()` is called on, when it is a named variable or
/// field (`opt.step()`, `opt->step()`, `this->opt_.step()`), or the one optimizer handed to a
/// helper that runs it (`zero_all(opt)`); null otherwise.
const ValueDecl *optimizerOf(const Stmt *S) {
  const auto *Call = dyn_cast<CallExpr>(S);
  const auto *Member = dyn_cast_or_null<CXXMemberCallExpr>(Call);
  if (Member && Member->getImplicitObjectArgument() && isOptimizerType(Member->getImplicitObjectArgument()->getType())) {
    const Expr *Obj = Member->getImplicitObjectArgument()->IgnoreParenImpCasts();
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Obj)) // `opt->step()` on a smart pointer
      Obj = Op->getArg(0);
    return namedDecl(Obj);
  }
  if (!Call || Member)
    return nullptr;
  const ValueDecl *Handed = nullptr;
  for (const Expr *Arg : Call->arguments())
    if (isOptimizerType(Arg->getType())) {
      if (Handed)
        return nullptr;
      Handed = namedDecl(throughPointer(Arg->IgnoreParenImpCasts()));
    }
  return Handed;
}

} // namespace

void ZeroGradBetweenBackwardAndStepCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), zeroGradCall()).bind("zero"), this);
  // A helper that clears the gradients, here or in another TU (the project index).
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), unless(zeroGradCall()),
                              callee(functionDecl(unless(ast_matchers::isExpansionInSystemHeader()))))
                         .bind("helper"),
                     this);
}

void ZeroGradBetweenBackwardAndStepCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Zero = Result.Nodes.getNodeAs<CallExpr>("zero");
  const auto *Helper = Result.Nodes.getNodeAs<CallExpr>("helper");
  if (!Zero)
    Zero = Helper;
  if (Zero->getBeginLoc().isMacroID())
    return;
  AutogradModel &M = model(*Result.Context);
  const FunctionDecl *Fn = enclosingFunction(Zero, *Result.Context);
  if (!Fn || !Fn->getBody() || Fn->isDependentContext())
    return;
  // A helper counts when it clears the gradients on every call, not only in loops of its own.
  if (Helper && llvm::none_of(M.eventsIn(Fn->getBody()), [&](const LoopEvent &E) {
        return E.Kind == LoopEventKind::ZeroGrad && E.Site == Helper && !E.Looped;
      }))
    return;
  // Which step()s this zero_grad() can spoil: those of the same optimizer; a module's
  // zero_grad() clears the parameters of whichever optimizer the function steps, when it
  // steps only one.
  const ValueDecl *Zeroed = optimizerOf(Zero);
  llvm::SmallVector<const Stmt *, 4> Steps;
  llvm::SmallPtrSet<const ValueDecl *, 2> Stepped;
  for (const Stmt *Step : M.sitesIn(Fn->getBody(), LoopEventKind::Step)) {
    const ValueDecl *Opt = optimizerOf(Step);
    Stepped.insert(Opt);
    if (Opt && (!Zeroed || Opt == Zeroed))
      Steps.push_back(Step);
  }
  if (!Zeroed && Stepped.size() != 1)
    return;
  auto Backwards = M.sitesIn(Fn->getBody(), LoopEventKind::Backward);
  for (const Stmt *Backward : Backwards) {
    for (const Stmt *Step : Steps) {
      if (Backward == Step || Zero == Step || !M.mayRunBeforeAvoiding(Backward, Zero, Steps) ||
          !M.mayRunBeforeAvoiding(Zero, Step, Backwards))
        continue;
      if (Helper)
        diag(Zero->getBeginLoc(),
             "'%0' clears the gradients after backward() and before step(): the step applies "
             "cleared gradients; consider zeroing before the forward pass or after step()")
            << M.callShape(Helper).Name;
      else
        diag(Zero->getBeginLoc(),
             "zero_grad() runs after backward() and before step(): the step applies cleared "
             "gradients; consider zeroing before the forward pass or after step()");
      diag(Backward->getBeginLoc(), "backward() runs here", DiagnosticIDs::Note);
      diag(Step->getBeginLoc(), "step() runs here", DiagnosticIDs::Note);
      // Zeroing right after the step clears the gradients for the next backward() instead.
      const Stmt *ZeroStatement = fixits::statementOf(Zero, *Result.Context);
      const auto *StepCall = dyn_cast<Expr>(Step);
      const Stmt *StepStatement = StepCall ? fixits::statementOf(StepCall, *Result.Context) : nullptr;
      if (ZeroStatement && StepStatement)
        if (fixits::Fixes Fix = fixits::moveAfter(ZeroStatement, StepStatement, *Result.Context); !Fix.empty())
          diag(Step->getEndLoc(), "move zero_grad() after step()", DiagnosticIDs::Note) << Fix;
      return;
    }
  }
}

} // namespace torchtidy
