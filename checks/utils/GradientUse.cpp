// Whether a value later feeds a gradient: backward() after a point, or any gradient use of a
// variable, field or reference parameter.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {

/// Whether \p S names one of \p Decls (a variable or a field).
bool refersTo(const Stmt *S, const llvm::SmallPtrSetImpl<const ValueDecl *> &Decls) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S); DRE && Decls.contains(DRE->getDecl()))
    return true;
  if (const auto *ME = dyn_cast<MemberExpr>(S); ME && Decls.contains(ME->getMemberDecl()))
    return true;
  return llvm::any_of(S->children(), [&](const Stmt *C) { return refersTo(C, Decls); });
}

} // namespace

namespace {
/// A reference to a variable or to a field of `this`, and what it names.
auto variableOrFieldRef() {
  return expr(anyOf(declRefExpr(), memberExpr(hasObjectExpression(ignoringParenImpCasts(cxxThisExpr())))))
      .bind("ref");
}
const ValueDecl *referenced(const BoundNodes &B) {
  const auto *Ref = B.getNodeAs<Expr>("ref");
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Ref))
    return DRE->getDecl();
  return cast<MemberExpr>(Ref)->getMemberDecl();
}
} // namespace

bool AutogradModel::reachesBackward(const Expr *Value, const Stmt *From) {
  const ValueDecl *Root = Value ? containerRoot(Value) : nullptr;
  const FunctionDecl *FD = From ? enclosingFunction(From, Ctx) : nullptr;
  if (!Root || !FD || !FD->hasBody())
    return false;
  // The variables and fields computed from Root, through initializers and assignments, in FD.
  llvm::SmallPtrSet<const ValueDecl *, 8> Derived{Root};
  for (bool Grew = true; Grew;) {
    Grew = false;
    auto Uses = match(findAll(variableOrFieldRef()), *FD->getBody(), Ctx);
    for (const BoundNodes &B : Uses) {
      const auto *Ref = B.getNodeAs<Expr>("ref");
      if (!Derived.count(referenced(B)))
        continue;
      for (DynTypedNode N = parentOf(DynTypedNode::create(*Ref), Ctx); !N.getNodeKind().isNone();
           N = parentOf(N, Ctx)) {
        if (const auto *VD = N.get<VarDecl>()) {
          Grew |= Derived.insert(VD).second;
          break;
        }
        const auto *S = N.get<Stmt>();
        if (!S || isa<CompoundStmt>(S))
          break;
        if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S); Op && Op->isAssignmentOp()) {
          if (const ValueDecl *Lhs = containerRoot(Op->getArg(0)))
            Grew |= Derived.insert(Lhs).second;
          break;
        }
      }
    }
  }
  auto UsesDerived = [&](const Stmt *S) {
    for (const BoundNodes &B : match(findAll(variableOrFieldRef()), *S, Ctx))
      if (Derived.count(referenced(B)))
        return true;
    return false;
  };
  for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *FD->getBody(), Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    if (!mayRunBefore(From, Call) || !UsesDerived(Call))
      continue;
    if (!match(matchers::backwardCall(), *Call, Ctx).empty())
      return true;
    const FunctionDecl *Callee = calledFunction(Call);
    const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
    if (Def && Def->hasBody() && !isInSystemHeader(Def) && Opts.CallDepth > 0 &&
        findReachable(Def->getBody(), matchers::backwardCall(), Opts.CallDepth - 1))
      return true;
  }
  return false;
}

namespace {
/// A statement from which backward() is reachable through user functions.
AST_MATCHER_P(Stmt, reachesBackwardCall, AutogradModel *, M) {
  return M->findReachable(&Node, matchers::backwardCall()) != nullptr;
}

/// The bodies a gradient use of \p D could be written in.
llvm::SmallVector<const Stmt *, 4> bodiesUsing(const ValueDecl *D, const FunctionDecl *Fn) {
  llvm::SmallVector<const FunctionDecl *, 4> Fns{Fn};
  if (const auto *Owner = dyn_cast_or_null<FunctionDecl>(D->getParentFunctionOrMethod()))
    Fns.push_back(Owner);
  if (const auto *FD = dyn_cast<FieldDecl>(D))
    if (const auto *RD = dyn_cast<CXXRecordDecl>(FD->getParent()))
      for (const CXXMethodDecl *M : RD->methods())
        Fns.push_back(M->getDefinition());
  llvm::SmallVector<const Stmt *, 4> Bodies;
  for (const FunctionDecl *F : Fns)
    if (F && F->getBody() && !llvm::is_contained(Bodies, F->getBody()))
      Bodies.push_back(F->getBody());
  return Bodies;
}

bool feedsGradientImpl(AutogradModel &M, const ValueDecl *D, const FunctionDecl *Fn,
                       const FunctionDecl *WrittenIn, unsigned Depth) {
  ASTContext &Ctx = M.context();
  if (const auto *Parm = dyn_cast<ParmVarDecl>(D); Parm && Depth > 0) {
    for (const CallExpr *Call : M.callersOf(Fn)) {
      const Expr *Arg = argumentFor(Call, Parm);
      const ValueDecl *Passed = Arg ? namedDecl(Arg) : nullptr;
      const FunctionDecl *Caller = enclosingFunction(Call, Ctx);
      if (!Passed || !Caller || feedsGradientImpl(M, Passed, Caller, WrittenIn, Depth - 1))
        return true;
    }
  }
  llvm::SmallPtrSet<const ValueDecl *, 4> Tainted{D};
  auto Bodies = bodiesUsing(D, Fn);
  auto TensorUse = expr(matchers::isTensorExpr());
  // Handing the value to the function that writes it is that write, not an escape; a
  // function that never runs backward() (logging, a probe) cannot backpropagate it.
  auto Escape = stmt(anyOf(
      matchers::backwardCall(), returnStmt(hasReturnValue(TensorUse)),
      callExpr(callee(functionDecl(unless(clang::ast_matchers::isExpansionInSystemHeader()),
                                   unless(equalsNode(WrittenIn->getCanonicalDecl())),
                                   anyOf(unless(hasBody(stmt())),
                                         hasBody(stmt(reachesBackwardCall(&M)))))),
               hasAnyArgument(TensorUse)),
      cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert", "emplace", "push"))))));
  auto Derived = stmt(anyOf(
      declStmt(has(varDecl(hasType(matchers::tensorType()), hasInitializer(expr().bind("from"))).bind("var"))),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, TensorUse.bind("to")),
                          hasArgument(1, expr().bind("from")))));
  for (unsigned Round = 0; Round < M.depth(); ++Round) {
    unsigned Before = Tainted.size();
    for (const Stmt *Body : Bodies) {
      for (const BoundNodes &B : match(findAll(Escape.bind("use")), *Body, Ctx))
        if (refersTo(B.getNodeAs<Stmt>("use"), Tainted))
          return true;
      // A tensor computed from it (`auto mean = total / n;`) carries the same graph.
      for (const BoundNodes &B : match(findAll(Derived), *Body, Ctx)) {
        if (!refersTo(B.getNodeAs<Expr>("from"), Tainted))
          continue;
        if (const auto *V = B.getNodeAs<VarDecl>("var"))
          Tainted.insert(V);
        else if (const ValueDecl *To = namedDecl(B.getNodeAs<Expr>("to")))
          Tainted.insert(To);
      }
    }
    if (Tainted.size() == Before)
      break;
  }
  return false;
}
} // namespace

bool AutogradModel::feedsGradient(const ValueDecl *D, const FunctionDecl *WrittenIn) {
  return D && WrittenIn && feedsGradientImpl(*this, D, WrittenIn, WrittenIn, Opts.CallDepth ? Opts.CallDepth - 1 : 0);
}

} // namespace torchtidy
