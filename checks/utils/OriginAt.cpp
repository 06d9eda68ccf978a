// Tensor origin at the point an expression is evaluated: the provenance layer's entry points.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallVector.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

OriginResult AutogradModel::originAt(const Expr *E) {
  if (!E)
    return {};
  if (E->isTypeDependent())
    return originByName(E);
  const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreUnlessSpelledInSource());
  if (const Expr *Value = Ref ? lastAssignedValue(Ref) : nullptr)
    return originAt(Value);
  return classifyTensor(E, Ctx, Index);
}

/// The value of the assignment to a local tensor that runs last before \p Ref on every path:
/// it runs before \p Ref on every path, and no other write of the variable can run between.
const Expr *AutogradModel::lastAssignedValue(const DeclRefExpr *Ref) {
  auto [It, Inserted] = P->LastAssigned.try_emplace(Ref, nullptr);
  if (!Inserted)
    return It->second;
  const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
  const auto *FD = VD && VD->isLocalVarDecl() && isTensorType(VD->getType())
                       ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod())
                       : nullptr;
  if (!FD || !FD->hasBody())
    return nullptr;
  auto Var = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
  auto Write = stmt(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Var)).bind("assign"),
                          cxxMemberCallExpr(on(Var), callee(cxxMethodDecl(matchesName("_$"))))));
  llvm::SmallVector<const Stmt *, 4> Writes;
  for (const BoundNodes &B : match(findAll(stmt(Write).bind("w")), *FD->getBody(), Ctx))
    Writes.push_back(B.getNodeAs<Stmt>("w"));
  for (const Stmt *W : Writes) {
    const auto *Assign = dyn_cast<CXXOperatorCallExpr>(W);
    if (!Assign || Assign->getOperator() != OO_Equal || !runsBeforeOnEveryPath(Assign, Ref))
      continue;
    if (llvm::none_of(Writes, [&](const Stmt *Other) {
          return Other != W && mayRunBeforeAvoiding(Other, Ref, {W});
        }))
      return P->LastAssigned[Ref] = Assign->getArg(1);
  }
  return nullptr;
}

bool AutogradModel::isGraphAttached(const Expr *E) {
  if (!E)
    return false;
  if (isTensorType(E->getType()))
    return originAt(E).Kind == TensorOrigin::GraphAttached;
  // An aggregate, pair or tuple is as attached as its most attached part.
  E = E->IgnoreParenImpCasts();
  if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
    E = Temp->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *Bind = dyn_cast<CXXBindTemporaryExpr>(E))
    E = Bind->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E)) // `Record{loss, step}`
    E = Cast->getSubExpr()->IgnoreImplicit();
  auto AnyAttached = [&](auto Range) {
    return llvm::any_of(Range, [&](const Expr *Part) { return Part && isGraphAttached(Part); });
  };
  if (const auto *IL = dyn_cast<InitListExpr>(E))
    return AnyAttached(IL->inits());
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E))
    return AnyAttached(Construct->arguments());
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && FD->isInStdNamespace() && FD->getIdentifier() &&
        (FD->getName() == "make_pair" || FD->getName() == "make_tuple" || FD->getName() == "forward_as_tuple"))
      return AnyAttached(Call->arguments());
    return false;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && VD->hasLocalStorage() && VD->getInit() && VD->getInit() != E && isGraphAttached(VD->getInit());
  }
  return false;
}

bool AutogradModel::isRequiresGradLeaf(const Expr *E) {
  return E && originAt(E).Kind == TensorOrigin::RequiresGradLeaf;
}

} // namespace torchtidy
