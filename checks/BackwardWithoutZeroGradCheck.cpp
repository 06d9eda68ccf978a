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
  return isWithin(VD->getLocation(), Body->getSourceRange(), SM);
}


/// The optimizer object a `step()` / `zero_grad()` call is made on, when it is a plain named
/// object: a local or global variable, or a member of `this`. References, parameters,
/// pointers and anything computed may alias another optimizer, so they have no identity here.
const ValueDecl *plainOptimizer(const Stmt *S) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(S);
  if (!Call || !Call->getImplicitObjectArgument())
    return nullptr;
  const Expr *Obj = Call->getImplicitObjectArgument()->IgnoreParenImpCasts();
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

/// Every node matching \p M written in \p Parts, in source order.
llvm::SmallVector<const Stmt *, 4> allIn(llvm::ArrayRef<const Stmt *> Parts, const StmtMatcher &M,
                                         ASTContext &Ctx) {
  llvm::SmallVector<const Stmt *, 4> Found;
  for (const Stmt *Part : Parts)
    if (Part)
      for (const BoundNodes &B : match(findAll(stmt(M).bind("s")), *Part, Ctx))
        Found.push_back(B.getNodeAs<Stmt>("s"));
  const SourceManager &SM = Ctx.getSourceManager();
  llvm::stable_sort(Found, [&](const Stmt *A, const Stmt *B) {
    return SM.isBeforeInTranslationUnit(A->getBeginLoc(), B->getBeginLoc());
  });
  return Found;
}

/// Whether a user function called in \p Parts clears gradients itself.
bool helperClears(llvm::ArrayRef<const Stmt *> Parts, const StmtMatcher &Clearing, ASTContext &Ctx) {
  for (const Stmt *Call : allIn(Parts, callExpr(), Ctx)) {
    const auto *CE = cast<CallExpr>(Call);
    const FunctionDecl *Callee = CE->getDirectCallee();
    const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
    if (Def && Def->hasBody() && !isInSystemHeader(Def) &&
        findReachable(Def->getBody(), Clearing, Ctx))
      return true;
  }
  return false;
}

/// An optimizer stepped in the loop together with the backward() that feeds its step.
struct UnzeroedOptimizer {
  const ValueDecl *Optimizer;
  const Stmt *Step;
  const Stmt *Backward;
};

/// Several optimizers stepped in one loop (a GAN's generator and discriminator) where the
/// loop zeroes some of them by name and nothing else: each optimizer without a zero_grad()
/// of its own keeps accumulating. Any other kind of clearing (a module's zero_grad(), manual
/// `p.grad()` clearing, a helper) may cover several optimizers' parameters at once, so the
/// loop is then trusted as a whole.
llvm::SmallVector<UnzeroedOptimizer, 2>
unzeroedOptimizers(llvm::ArrayRef<const Stmt *> Parts, const Stmt *FirstBackward,
                   const Vocabulary &V, ASTContext &Ctx) {
  llvm::SmallVector<UnzeroedOptimizer, 2> Result;
  llvm::SmallPtrSet<const ValueDecl *, 4> Zeroed;
  for (const Stmt *Clear : allIn(Parts, V.Clearing, Ctx)) {
    const ValueDecl *Opt = plainOptimizer(Clear);
    if (!Opt || match(optimizerMethodCall({"zero_grad"}), *Clear, Ctx).empty())
      return Result;
    Zeroed.insert(Opt);
  }
  if (helperClears(Parts, V.Clearing, Ctx))
    return Result;
  llvm::SmallVector<const ValueDecl *, 4> Stepped;
  llvm::DenseMap<const ValueDecl *, const Stmt *> FirstStep;
  for (const Stmt *Step : allIn(Parts, V.Step, Ctx)) {
    const ValueDecl *Opt = plainOptimizer(Step);
    if (!Opt || optimizerIsPerIteration(Step, Parts.front(), Ctx.getSourceManager()))
      return Result;
    if (FirstStep.try_emplace(Opt, Step).second)
      Stepped.push_back(Opt);
  }
  if (Stepped.size() < 2)
    return Result;
  auto Backwards = allIn(Parts, V.Backward, Ctx);
  const SourceManager &SM = Ctx.getSourceManager();
  for (const ValueDecl *Opt : Stepped) {
    if (Zeroed.contains(Opt))
      continue;
    const Stmt *Step = FirstStep[Opt];
    const Stmt *Feeding = FirstBackward;
    for (const Stmt *B : Backwards)
      if (SM.isBeforeInTranslationUnit(B->getBeginLoc(), Step->getBeginLoc()))
        Feeding = B;
    Result.push_back({Opt, Step, Feeding});
  }
  return Result;
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
  auto Parts = perIterationParts(Loop);
  if (llvm::any_of(Parts, [&](const Stmt *Part) { return findReachable(Part, V.Clearing, Ctx); })) {
    // Calls in an uninstantiated template name no optimizer object to tell apart.
    if (ByName)
      return;
    for (const UnzeroedOptimizer &U : unzeroedOptimizers(Parts, Backward, V, Ctx)) {
      if (U.Backward->getBeginLoc().isMacroID())
        continue;
      std::string Name = U.Optimizer->getNameAsString();
      diag(U.Backward->getBeginLoc(),
           "backward() accumulates into gradients of '%0' that are never zeroed in this "
           "training loop; consider calling %0.zero_grad() before this step")
          << Name;
      diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
      diag(U.Step->getBeginLoc(), "optimizer step is here", DiagnosticIDs::Note);
    }
    return;
  }

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
