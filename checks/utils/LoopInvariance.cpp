// Loop invariance: whether a value is the same on every iteration, whether a container's
// contents survive an iteration.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {
/// Whether \p D is declared inside \p Scope (in a lambda defined there too).
bool declaredIn(const ValueDecl *D, const Stmt *Scope, ASTContext &Ctx) {
  return isWithin(D->getLocation(), Scope->getSourceRange(), Ctx.getSourceManager());
}

/// Whether the local \p VD belongs to the function \p S is in, or to a function enclosing the
/// lambda \p S is in (its locals and captures are theirs), rather than to a helper called from there.
bool declaredAround(const VarDecl *VD, const Stmt *S, ASTContext &Ctx) {
  const auto *Owner = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  return Owner && Owner->getBody() && enclosingFunction(S, Ctx) &&
         isWithin(S->getBeginLoc(), Owner->getBody()->getSourceRange(), Ctx.getSourceManager());
}

/// A parameter declared as a forwarding reference (`Args&&... args`): binding an lvalue to
/// it makes its type a non-const reference, but it only passes the argument on.
AST_MATCHER(ParmVarDecl, isForwardingReference) {
  const auto *FD = dyn_cast<FunctionDecl>(Node.getDeclContext());
  const FunctionDecl *Pattern = FD ? FD->getTemplateInstantiationPattern() : nullptr;
  if (!Pattern)
    return false;
  // The parameter as written: the pack that the instantiated ones from its position on expand.
  auto Written = llvm::find_if(Pattern->parameters(), [Index = Node.getFunctionScopeIndex()](
                                                          const ParmVarDecl *P) mutable {
    return P->isParameterPack() || Index-- == 0;
  });
  if (Written == Pattern->parameters().end())
    return false;
  QualType T = (*Written)->getType();
  if (const auto *Pack = T->getAs<PackExpansionType>())
    T = Pack->getPattern();
  const auto *RRef = T->getAs<RValueReferenceType>();
  return RRef && RRef->getPointeeType().getUnqualifiedType()->getAs<TemplateTypeParmType>() &&
         !RRef->getPointeeType().hasQualifiers();
}

/// Whether \p D gets a new value in \p Loop: assigned, passed by non-const reference,
/// changed by an in-place tensor op or a container's mutator. Not ExprMutationAnalyzer: it
/// counts a module's non-const operator-> and a lambda's by-reference capture as writes.
bool writtenIn(const ValueDecl *D, const Stmt *Loop, ASTContext &Ctx) {
  auto Ref = ignoringImplicit(refTo(D));
  auto NonConstRefParam =
      parmVarDecl(hasType(referenceType(pointee(unless(isConstQualified())))), unless(isForwardingReference()));
  auto Mutator = cxxMethodDecl(anyOf(
      allOf(ofClass(cxxRecordDecl(hasAnyName(names::Tensor, names::TensorBase))), matchesName("_$")),
      hasAnyName("push_back", "emplace_back", "insert", "emplace", "clear", "erase", "resize", "assign",
                 "pop_back", "swap")));
  auto Writes = expr(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Ref)),
                           binaryOperator(isAssignmentOperator(), hasLHS(Ref)),
                           unaryOperator(hasAnyOperatorName("++", "--", "&"), hasUnaryOperand(Ref)),
                           cxxMemberCallExpr(on(Ref), callee(Mutator)),
                           callExpr(forEachArgumentWithParam(Ref, NonConstRefParam))));
  return !match(findAll(Writes.bind("w")), *Loop, Ctx).empty();
}

/// Whether \p VD is handed to an optimizer in the function that declares it (an optimizer
/// constructed from it, or given it with add_param_group).
bool ownedByOptimizer(const VarDecl *VD, ASTContext &Ctx) {
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->hasBody())
    return false;
  auto Ref = hasDescendant(declRefExpr(to(varDecl(equalsNode(VD)))));
  auto Owner = stmt(anyOf(cxxConstructExpr(hasType(matchers::optimizerType()), Ref),
                          stmt(matchers::optimizerMethodCall({"add_param_group"}), Ref)));
  return !match(findAll(Owner), *FD->getBody(), Ctx).empty();
}

/// Whether every variable and field \p E reads is an invariantEntity of \p Loop (or a constant
/// declared outside it); a helper's locals and parameters are computed per call, so they are
/// not. With \p Locals, E calls no user function, and a local of the iteration counts when
/// nothing writes it and its initializer qualifies, \p Locals levels deep.
bool readsInvariants(AutogradModel &M, const Expr *E, const Stmt *Loop, std::optional<unsigned> Locals) {
  ASTContext &Ctx = M.context();
  if (Locals && *Locals == 0)
    return false;
  for (const BoundNodes &B :
       match(findAll(expr(anyOf(declRefExpr(to(varDecl())), memberExpr(), callExpr())).bind("e")), *E, Ctx)) {
    const auto *Node = B.getNodeAs<Expr>("e");
    if (const auto *Call = dyn_cast<CallExpr>(Node)) {
      if (Locals && (!Call->getDirectCallee() || !isInSystemHeader(Call->getDirectCallee())))
        return false;
      continue;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(Node); ME && !isa<FieldDecl>(ME->getMemberDecl()))
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Node)) {
      const auto *VD = cast<VarDecl>(DRE->getDecl());
      if (VD->isUsableInConstantExpressions(Ctx))
        continue;
      if (VD->hasLocalStorage() && !declaredAround(VD, Loop, Ctx))
        return false;
      bool Inside = declaredIn(VD, Loop, Ctx);
      if (VD->getType().isConstQualified() && !Inside)
        continue;
      if (Inside && Locals) {
        const auto *Range = dyn_cast<CXXForRangeStmt>(Loop);
        if ((Range && Range->getLoopVariable() == VD) || !VD->getInit() || writtenIn(VD, Loop, Ctx) ||
            !readsInvariants(M, VD->getInit(), Loop, *Locals - 1))
          return false;
        continue;
      }
    }
    if (!M.invariantEntity(Node, Loop))
      return false;
  }
  return true;
}

/// The statements of \p Body that empty \p Container: `c.clear()`, or an assignment of a value
/// not computed from itself (`total = total + loss` keeps what it held).
llvm::SmallVector<const Stmt *, 2> emptyingsIn(const ValueDecl *Container, const Stmt *Body, ASTContext &Ctx) {
  auto Root = expr(ignoringParenImpCasts(refTo(Container)));
  auto Emptying = stmt(anyOf(cxxMemberCallExpr(on(Root), callee(cxxMethodDecl(hasName("clear")))),
                             cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, Root),
                                                 unless(hasArgument(1, anyOf(Root, hasDescendant(Root)))))));
  llvm::SmallVector<const Stmt *, 2> Found;
  for (const BoundNodes &B : match(findAll(Emptying.bind("clear")), *Body, Ctx))
    Found.push_back(B.getNodeAs<Stmt>("clear"));
  return Found;
}
} // namespace

bool AutogradModel::sameEveryIteration(const Expr *E, const Stmt *Loop) {
  return E && Loop && readsInvariants(*this, E, Loop, /*Locals=*/4);
}

bool AutogradModel::readsOnlyInvariants(const Expr *E, const Stmt *Loop) {
  return readsInvariants(*this, E, Loop, std::nullopt);
}

const ValueDecl *AutogradModel::invariantEntity(const Expr *E, const Stmt *Loop) {
  if (!E || !Loop)
    return nullptr;
  E = throughPointer(E);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (!VD || declaredIn(VD, Loop, Ctx) || writtenIn(VD, Loop, Ctx))
      return nullptr;
    // optimizer.step() writes every tensor the optimizer owns.
    if (isTensorType(VD->getType()) && loop(Loop).has(LoopEventKind::Step) &&
        (ownedByOptimizer(VD, Ctx) || isRequiresGradLeaf(DRE)))
      return nullptr;
    return VD;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!FD || writtenIn(FD, Loop, Ctx))
      return nullptr;
    const Expr *Base = ME->getBase()->IgnoreUnlessSpelledInSource();
    if (isa<CXXThisExpr>(Base) || invariantEntity(Base, Loop))
      return FD;
  }
  return nullptr;
}

bool AutogradModel::outlivesIteration(const ValueDecl *Container, const Stmt *Loop, const Stmt *Write) {
  if (!Container || !Loop)
    return false;
  if (const auto *VD = dyn_cast<VarDecl>(Container); VD && declaredIn(VD, Loop, Ctx))
    return false;
  if (!Write) {
    // Emptied by a statement of the loop body itself (not under a condition): nothing survives.
    const auto *Body = dyn_cast_or_null<CompoundStmt>(loopBody(Loop));
    if (!Body)
      return true;
    llvm::SmallVector<const Stmt *, 2> Clears = emptyingsIn(Container, Body, Ctx);
    return llvm::none_of(Body->body(), [&](const Stmt *Top) {
      return isa<Expr>(Top) && llvm::is_contained(Clears, cast<Expr>(Top)->IgnoreImplicit());
    });
  }
  // A write in a lambda or helper of the loop body: the statement of the loop's function
  // that runs it.
  const FunctionDecl *FD = enclosingFunction(Loop, Ctx);
  DynTypedNode N = DynTypedNode::create(*Write);
  for (unsigned Steps = 0; Steps < 64 && N.get<Stmt>() && enclosingFunction(N.get<Stmt>(), Ctx) != FD; ++Steps)
    N = parentOf(N, Ctx);
  if (!N.get<Stmt>() || !loopBody(Loop))
    return true;
  Write = N.get<Stmt>();
  llvm::SmallVector<const Stmt *, 2> Clears = emptyingsIn(Container, loopBody(Loop), Ctx);
  llvm::erase_if(Clears, [Write](const Stmt *S) { return S == Write; });
  return Clears.empty() || mayRunBeforeAvoiding(Write, Write, Clears);
}

} // namespace torchtidy
