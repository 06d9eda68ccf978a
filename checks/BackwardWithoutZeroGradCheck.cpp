#include "BackwardWithoutZeroGradCheck.h"

#include "utils/TorchMatchers.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

using StmtMatcher = clang::ast_matchers::internal::Matcher<Stmt>;
using ExprMatcher = clang::ast_matchers::internal::Matcher<Expr>;

/// `p.grad()` / `p.mutable_grad()`, possibly seen through `.data()` / `.detach()` (which
/// share the gradient's storage).
ExprMatcher gradAccess() {
  auto Grad = tensorMethodCall({"grad", "mutable_grad"});
  return ignoringParenImpCasts(
      anyOf(Grad, cxxMemberCallExpr(tensorMethodCall({"data", "detach"}),
                                    on(ignoringParenImpCasts(Grad)))));
}

/// Anything that clears accumulated gradients: `optimizer.zero_grad()`, `module->zero_grad()`,
/// a user wrapper named like zero_grad (its body may live in another translation unit),
/// `p.grad().zero_()`, `p.mutable_grad().reset()`, `p.mutable_grad() = ...`.
StmtMatcher gradClearing() {
  return stmt(anyOf(
      zeroGradCall(), callExpr(callee(functionDecl(matchesName("[Zz]ero_?[Gg]rad")))),
      cxxMemberCallExpr(tensorMethodCall({"zero_", "fill_", "reset"}), on(gradAccess())),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, gradAccess())),
      callExpr(callee(functionDecl(hasAnyName("::at::zero_", "::at::fill_"))),
               hasArgument(0, gradAccess()))));
}

/// A loop whose body runs both backward() and optimizer.step(), directly or through the user
/// functions it calls.
bool runsBackwardAndStep(const Stmt *Loop, ASTContext &Ctx) {
  const Stmt *Body = loopBody(Loop);
  return findReachable(Body, backwardCall(), Ctx) && findReachable(Body, optimizerStepCall(), Ctx);
}

AST_MATCHER(Stmt, isTrainingLoop) { return runsBackwardAndStep(&Node, Finder->getASTContext()); }

/// The parts of a loop that run on every iteration: the range initializer of a range-for
/// runs once and is left out.
llvm::SmallVector<const Stmt *, 3> perIterationParts(const Stmt *Loop) {
  llvm::SmallVector<const Stmt *, 3> Parts{loopBody(Loop)};
  if (const auto *F = dyn_cast<ForStmt>(Loop)) {
    Parts.push_back(F->getCond());
    Parts.push_back(F->getInc());
  } else if (const auto *W = dyn_cast<WhileStmt>(Loop)) {
    Parts.push_back(W->getCond());
  } else if (const auto *D = dyn_cast<DoStmt>(Loop)) {
    Parts.push_back(D->getCond());
  }
  return Parts;
}

/// Whether the optimizer stepped by \p Step is a local declared inside \p Body: every
/// iteration then trains a fresh optimizer (typically on a fresh model, as in a
/// hyper-parameter sweep), so nothing carries over.
bool optimizerIsPerIteration(const Stmt *Step, const Stmt *Body, const SourceManager &SM) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(Step);
  if (!Call)
    return false;
  const Expr *Obj = Call->getImplicitObjectArgument()->IgnoreParenImpCasts();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Obj)) // `opt->step()` on a smart pointer
    Obj = Op->getArg(0)->IgnoreParenImpCasts();
  const auto *Ref = dyn_cast<DeclRefExpr>(Obj);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || !VD->isLocalVarDecl())
    return false;
  SourceRange R = Body->getSourceRange();
  SourceLocation L = VD->getLocation();
  return !SM.isBeforeInTranslationUnit(L, R.getBegin()) &&
         !SM.isBeforeInTranslationUnit(R.getEnd(), L);
}

} // namespace

void BackwardWithoutZeroGradCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(stmt(unless(isExpansionInSystemHeader()), loopStmt()).bind("loop"), this);
}

void BackwardWithoutZeroGradCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Loop = Result.Nodes.getNodeAs<Stmt>("loop");
  ASTContext &Ctx = *Result.Context;
  if (Loop->getBeginLoc().isMacroID())
    return;
  // Template patterns are analysed through their instantiations, where calls resolve.
  const FunctionDecl *Fn = enclosingFunction(Loop, Ctx);
  if (Fn && Fn->isDependentContext())
    return;

  const Stmt *Body = loopBody(Loop);
  const Stmt *Backward = findReachable(Body, backwardCall(), Ctx);
  if (!Backward || Backward->getBeginLoc().isMacroID())
    return;
  const Stmt *Step = findReachable(Body, optimizerStepCall(), Ctx);
  if (!Step || optimizerIsPerIteration(Step, Body, *Result.SourceManager))
    return;
  // Only the innermost training loop is the step window: an outer epoch loop around it is
  // judged by the inner one.
  if (findReachable(Body, stmt(loopStmt(), isTrainingLoop()), Ctx))
    return;
  for (const Stmt *Part : perIterationParts(Loop))
    if (findReachable(Part, gradClearing(), Ctx))
      return;

  diag(Backward->getBeginLoc(),
       "backward() accumulates into gradients that are never zeroed in this training loop; "
       "consider calling optimizer.zero_grad() at the top of each step");
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  diag(Step->getBeginLoc(), "optimizer step is here", DiagnosticIDs::Note);
  if (Fn && Fn->getBody())
    if (const Stmt *Outside = findReachable(Fn->getBody(), gradClearing(), Ctx))
      diag(Outside->getBeginLoc(), "zero_grad() is only called here, outside the loop",
           DiagnosticIDs::Note);
}

} // namespace torchtidy
