#include "BackwardWithoutZeroGradCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// A loop whose iterations run both backward() and an optimizer step(): a window of
/// gradient accumulation. A loop that only backpropagates (micro-batches) is part of the
/// window of the loop around it.
AST_MATCHER_P(Stmt, stepsEachWindow, AutogradModel *, M) {
  const LoopFacts &Facts = M->loop(&Node);
  return Facts.has(LoopEventKind::Backward) && Facts.has(LoopEventKind::Step);
}

/// Whether the optimizer stepped by \p Step is a local declared inside \p Loop: every
/// iteration then trains a fresh optimizer (typically on a fresh model, as in a
/// hyper-parameter sweep), so nothing carries over.
bool optimizerIsPerIteration(const Stmt *Step, const Stmt *Loop, const SourceManager &SM) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(Step);
  if (!Call)
    return false;
  const Expr *Obj = Call->getImplicitObjectArgument()->IgnoreParenImpCasts();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Obj)) // `opt->step()` on a smart pointer
    Obj = Op->getArg(0)->IgnoreParenImpCasts();
  const auto *Ref = dyn_cast<DeclRefExpr>(Obj);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  return VD && VD->isLocalVarDecl() && isWithin(VD->getLocation(), loopBody(Loop)->getSourceRange(), SM);
}

/// The optimizer object a `step()` / `zero_grad()` call is made on, when it is a plain named
/// object: a local or global variable, or a member of `this`. References, parameters,
/// pointers and anything computed may alias another optimizer, so they have no identity here.
const ValueDecl *plainOptimizer(const Expr *Obj) {
  Obj = Obj ? Obj->IgnoreParenImpCasts() : nullptr;
  const ValueDecl *D = nullptr;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Obj)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    if (VD && !isa<ParmVarDecl>(VD))
      D = VD;
  } else if (const auto *M = dyn_cast<MemberExpr>(Obj)) {
    if (!M->isArrow() || !isa<CXXThisExpr>(M->getBase()->IgnoreParenImpCasts()))
      return nullptr;
    D = dyn_cast<FieldDecl>(M->getMemberDecl());
  }
  if (!D || D->getType()->isReferenceType() || D->getType()->isDependentType())
    return nullptr;
  return cast<ValueDecl>(D->getCanonicalDecl());
}

/// The plain optimizer (see above) a `step()` / `zero_grad()` call \p S is made on; for an
/// event run by a helper (`reset_grads(d_opt)` whose body calls `opt.zero_grad()` on its
/// parameter), the argument the loop's call passes for that parameter.
const ValueDecl *plainOptimizer(const LoopEvent &E, AutogradModel &M) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(E.Call);
  const Expr *Obj = Call ? Call->getImplicitObjectArgument() : nullptr;
  if (E.Site == E.Call || !Obj)
    return Obj ? plainOptimizer(Obj) : nullptr;
  const auto *Ref = dyn_cast<DeclRefExpr>(Obj->IgnoreParenImpCasts());
  const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  const auto *Helper = dyn_cast<CallExpr>(E.Site);
  const FunctionDecl *Callee = Helper ? M.calledFunction(Helper) : nullptr;
  if (!Param || !Callee || Param->getDeclContext() != Callee->getDefinition())
    return nullptr;
  return plainOptimizer(argumentFor(Helper, Param));
}

/// An optimizer stepped in the loop together with the backward() that feeds its step.
struct UnzeroedOptimizer {
  const ValueDecl *Optimizer;
  const Stmt *Step;
  const Stmt *Backward;
};

/// Several optimizers stepped in one loop (a GAN's generator and discriminator) where the
/// loop zeroes some of them by name, itself or through a helper handed the optimizer, and
/// nothing else: each optimizer without a zero_grad() of its own keeps accumulating. Any other
/// kind of clearing (a module's zero_grad(), manual `p.grad()` clearing, a helper clearing what
/// it is not handed) may cover several optimizers' parameters at once, so the loop is then
/// trusted as a whole; so is a step() made in a helper.
llvm::SmallVector<UnzeroedOptimizer, 2> unzeroedOptimizers(AutogradModel &M, const Stmt *Loop) {
  const LoopFacts &Facts = M.loop(Loop);
  const SourceManager &SM = M.context().getSourceManager();
  llvm::SmallPtrSet<const ValueDecl *, 4> Zeroed;
  llvm::SmallVector<const ValueDecl *, 4> Stepped;
  llvm::DenseMap<const ValueDecl *, const Stmt *> FirstStep;
  llvm::SmallVector<const Stmt *, 4> Backwards;
  for (const LoopEvent &E : Facts.Events) {
    bool Direct = E.Site == E.Call;
    const ValueDecl *Opt = plainOptimizer(E, M);
    if (E.Kind == LoopEventKind::ZeroGrad) {
      if (!Opt || match(optimizerMethodCall({"zero_grad"}), *E.Call, M.context()).empty())
        return {};
      Zeroed.insert(Opt);
    } else if (E.Kind == LoopEventKind::Step) {
      if (!Direct || !Opt || optimizerIsPerIteration(E.Call, Loop, SM))
        return {};
      if (FirstStep.try_emplace(Opt, E.Call).second)
        Stepped.push_back(Opt);
    } else if (E.Kind == LoopEventKind::Backward && Direct) {
      Backwards.push_back(E.Call);
    }
  }
  llvm::SmallVector<UnzeroedOptimizer, 2> Result;
  if (Stepped.size() < 2)
    return Result;
  for (const ValueDecl *Opt : Stepped) {
    if (Zeroed.contains(Opt))
      continue;
    const Stmt *Step = FirstStep[Opt];
    // The backward() whose gradients the step applies: one that reaches it with no other
    // backward() in between.
    const Stmt *Feeding = Facts.first(LoopEventKind::Backward)->Call;
    for (const Stmt *B : Backwards)
      if (M.mayRunBeforeAvoiding(B, Step, Backwards))
        Feeding = B;
    Result.push_back({Opt, Step, Feeding});
  }
  return Result;
}

/// `opt.zero_grad();` right after the statement of `opt.step()`: every step window then starts
/// from zero gradients, also a window of several backward() calls (gradient accumulation).
/// Only for a step on a named optimizer (a variable declared before the loop, a member).
fixits::Fixes zeroAfterStep(const Stmt *Step, const Stmt *Loop, ASTContext &Ctx) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(Step);
  const Stmt *Statement = Call ? fixits::statementOf(Call, Ctx) : nullptr;
  if (!Statement || match(optimizerMethodCall({"step"}), *Step, Ctx).empty())
    return {};
  std::string ZeroGrad = fixits::sameObjectCall(Call, "zero_grad", Loop, Ctx);
  return ZeroGrad.empty() ? fixits::Fixes() : fixits::insertAfter(Statement, ZeroGrad + ";", Ctx);
}
} // namespace

void BackwardWithoutZeroGradCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(stmt(unless(matchers::isExpansionInSystemHeader()), loopStmt()).bind("loop"), this);
}

void BackwardWithoutZeroGradCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Loop = Result.Nodes.getNodeAs<Stmt>("loop");
  ASTContext &Ctx = *Result.Context;
  if (Loop->getBeginLoc().isMacroID() || holdsUnparsedCode(Loop, Ctx))
    return;
  // Template patterns are analysed through their instantiations, where calls resolve; a
  // template nobody instantiates is analysed by name.
  const FunctionDecl *Fn = enclosingFunction(Loop, Ctx);
  bool ByName = Fn && Fn->isDependentContext();
  if (ByName && !isUninstantiatedPattern(Fn))
    return;
  AutogradModel &M = model(Ctx);
  const LoopFacts &Facts = M.loop(Loop);
  const LoopEvent *Backward = Facts.first(LoopEventKind::Backward);
  const LoopEvent *Step = Facts.first(LoopEventKind::Step);
  if (!Backward || !Step || Backward->Call->getBeginLoc().isMacroID() ||
      optimizerIsPerIteration(Step->Call, Loop, *Result.SourceManager))
    return;
  // Only the innermost training loop is the step window: an outer epoch loop around it is
  // judged by the inner one.
  if (M.findReachable(loopBody(Loop), stmt(loopStmt(), stepsEachWindow(&M))))
    return;
  if (Facts.has(LoopEventKind::ZeroGrad)) {
    // Calls in an uninstantiated template name no optimizer object to tell apart.
    if (ByName)
      return;
    for (const UnzeroedOptimizer &U : unzeroedOptimizers(M, Loop)) {
      if (U.Backward->getBeginLoc().isMacroID())
        continue;
      std::string Name = U.Optimizer->getNameAsString();
      diag(U.Backward->getBeginLoc(),
           "backward() accumulates into gradients of '%0' that are never zeroed in this "
           "training loop; consider calling %0.zero_grad() before this step")
          << Name << zeroAfterStep(U.Step, Loop, Ctx);
      diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
      diag(U.Step->getBeginLoc(), "optimizer step is here", DiagnosticIDs::Note);
    }
    return;
  }

  diag(Backward->Call->getBeginLoc(),
       "backward() accumulates into gradients that are never zeroed in this training loop; "
       "consider calling optimizer.zero_grad() at the top of each step")
      << (Step->Site == Step->Call ? zeroAfterStep(Step->Call, Loop, Ctx) : fixits::Fixes());
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  diag(Step->Call->getBeginLoc(), "optimizer step is here", DiagnosticIDs::Note);
  if (Fn && Fn->getBody())
    if (const Stmt *Outside = M.findReachable(Fn->getBody(), AutogradModel::event(LoopEventKind::ZeroGrad)))
      diag(Outside->getBeginLoc(), "zero_grad() is only called here, outside the loop", DiagnosticIDs::Note);
}

} // namespace torchtidy
