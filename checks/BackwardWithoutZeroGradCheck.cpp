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
  // `.data()` returns a temporary: look through its materialization too.
  return ignoringImplicit(expr(anyOf(
      Grad, cxxMemberCallExpr(tensorMethodCall({"data", "detach"}), on(ignoringImplicit(Grad))))));
}

/// Anything that clears accumulated gradients: `optimizer.zero_grad()`, `module->zero_grad()`,
/// a user wrapper named like zero_grad (its body may live in another translation unit),
/// `p.grad().zero_()`, `p.mutable_grad().reset()`, `p.mutable_grad() = ...`, or an overwrite
/// (`p.grad().copy_(g)`).
StmtMatcher gradClearing() {
  return stmt(anyOf(
      zeroGradCall(), callExpr(callee(functionDecl(matchesName("[Zz]ero_?[Gg]rad")))),
      cxxMemberCallExpr(tensorMethodCall({"zero_", "fill_", "copy_", "reset"}), on(gradAccess())),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, gradAccess())),
      callExpr(callee(functionDecl(hasAnyName("::at::zero_", "::at::fill_"))),
               hasArgument(0, gradAccess()))));
}

const Expr *dependentMemberBase(const Expr *Callee) {
  Callee = Callee->IgnoreParenImpCasts();
  if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee))
    return M->isImplicitAccess() ? nullptr : M->getBase();
  if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    return M->isImplicitAccess() ? nullptr : M->getBase();
  return nullptr;
}

bool callsDependentMember(const Expr *E, ArrayRef<StringRef> Names) {
  const auto *Call = dyn_cast_or_null<CallExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return Call && llvm::is_contained(Names, dependentMemberName(Call->getCallee()));
}

AST_MATCHER_P(CallExpr, dependentMemberCall, std::vector<StringRef>, Names) {
  return callsDependentMember(&Node, Names);
}

/// `p.grad().zero_()` and friends where `p` has a dependent type.
AST_MATCHER(CallExpr, isDependentGradClearing) {
  if (!callsDependentMember(&Node, {"zero_", "fill_", "copy_", "reset"}))
    return false;
  const Expr *Grad = dependentMemberBase(Node.getCallee());
  if (callsDependentMember(Grad, {"data", "detach"}))
    Grad = dependentMemberBase(cast<CallExpr>(Grad->IgnoreParenImpCasts())->getCallee());
  return callsDependentMember(Grad, {"grad", "mutable_grad"});
}

/// `p.mutable_grad() = ...` where `p` has a dependent type.
AST_MATCHER(BinaryOperator, isDependentGradAssignment) {
  return Node.getOpcode() == BO_Assign &&
         callsDependentMember(Node.getLHS(), {"grad", "mutable_grad"});
}

/// What the check looks for. In a template that is never instantiated, calls on objects of
/// dependent type cannot be resolved and are recognised by name.
struct Vocabulary {
  StmtMatcher Backward, Step, Clearing;
};

/// A call whose callee is not resolved yet (dependent arguments) and one of whose candidate
/// user functions reaches \p Inner.
AST_MATCHER_P(CallExpr, unresolvedCalleeReaches, StmtMatcher, Inner) {
  const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Node.getCallee()->IgnoreParenImpCasts());
  if (!Lookup)
    return false;
  for (const NamedDecl *D : Lookup->decls()) {
    const auto *FD = D->getAsFunction();
    if (FD && FD->hasBody() && !isInSystemHeader(FD) &&
        findReachable(FD->getBody(), Inner, Finder->getASTContext(), /*Depth=*/2))
      return true;
  }
  return false;
}

StmtMatcher byNameOrThroughUnresolvedHelper(StmtMatcher M) {
  return stmt(anyOf(M, callExpr(unresolvedCalleeReaches(M))));
}

const Vocabulary &vocabulary(bool InUninstantiatedTemplate) {
  static const Vocabulary Resolved{backwardCall(), optimizerStepCall(), gradClearing()};
  static const Vocabulary ByName{
      byNameOrThroughUnresolvedHelper(
          stmt(anyOf(backwardCall(), callExpr(dependentMemberCall({"backward"})),
                     callExpr(callee(unresolvedLookupExpr(hasAnyDeclaration(
                         functionDecl(hasName("::torch::autograd::backward"))))))))),
      byNameOrThroughUnresolvedHelper(
          stmt(anyOf(optimizerStepCall(), callExpr(dependentMemberCall({"step"}))))),
      byNameOrThroughUnresolvedHelper(
          stmt(anyOf(gradClearing(), callExpr(dependentMemberCall({"zero_grad"})),
                     callExpr(isDependentGradClearing()),
                     binaryOperator(isDependentGradAssignment()),
                     callExpr(callee(unresolvedLookupExpr(
                         hasAnyDeclaration(namedDecl(matchesName("[Zz]ero_?[Gg]rad")))))))))};
  return InUninstantiatedTemplate ? ByName : Resolved;
}

/// A loop whose body runs both backward() and optimizer.step(), directly or through the user
/// functions it calls.
bool runsBackwardAndStep(const Stmt *Loop, const Vocabulary &V, ASTContext &Ctx) {
  const Stmt *Body = loopBody(Loop);
  return findReachable(Body, V.Backward, Ctx) && findReachable(Body, V.Step, Ctx);
}

AST_MATCHER_P(Stmt, isTrainingLoop, bool, InUninstantiatedTemplate) {
  return runsBackwardAndStep(&Node, vocabulary(InUninstantiatedTemplate), Finder->getASTContext());
}

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
  // Template patterns are analysed through their instantiations, where calls resolve; a
  // template nobody instantiates is analysed by name.
  const FunctionDecl *Fn = enclosingFunction(Loop, Ctx);
  bool ByName = Fn && Fn->isDependentContext();
  if (ByName && !isUninstantiatedPattern(Fn))
    return;
  const Vocabulary &V = vocabulary(ByName);

  const Stmt *Body = loopBody(Loop);
  const Stmt *Backward = findReachable(Body, V.Backward, Ctx);
  if (!Backward || Backward->getBeginLoc().isMacroID())
    return;
  const Stmt *Step = findReachable(Body, V.Step, Ctx);
  if (!Step || optimizerIsPerIteration(Step, Body, *Result.SourceManager))
    return;
  // Only the innermost training loop is the step window: an outer epoch loop around it is
  // judged by the inner one.
  if (findReachable(Body, stmt(loopStmt(), isTrainingLoop(ByName)), Ctx))
    return;
  for (const Stmt *Part : perIterationParts(Loop))
    if (findReachable(Part, V.Clearing, Ctx))
      return;

  diag(Backward->getBeginLoc(),
       "backward() accumulates into gradients that are never zeroed in this training loop; "
       "consider calling optimizer.zero_grad() at the top of each step");
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  diag(Step->getBeginLoc(), "optimizer step is here", DiagnosticIDs::Note);
  if (Fn && Fn->getBody())
    if (const Stmt *Outside = findReachable(Fn->getBody(), V.Clearing, Ctx))
      diag(Outside->getBeginLoc(), "zero_grad() is only called here, outside the loop",
           DiagnosticIDs::Note);
}

} // namespace torchtidy
