// Whether a value comes from a model output or a loss, and where its path to their graph was
// cut: the model's outputCut, for values that reach backward() without reaching the model.
#include "utils/AutogradModel.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// What is known of one value: the output it comes from, and whether a path to that output's
/// graph survives (Attached) or every one was cut (Cut says where, first).
struct Trail {
  const Expr *Output = nullptr;
  const Stmt *Cut = nullptr;
  bool Attached = false;

  /// The value of an op over several inputs: attached through any attached input.
  void join(const Trail &Other) {
    if (!Other.Output)
      return;
    if (!Output)
      Output = Other.Output;
    Attached |= Other.Attached;
    if (!Cut)
      Cut = Other.Cut;
  }
  /// The op \p At makes a value with no graph (detach, item, a factory over plain numbers).
  void cutAt(const Stmt *At) {
    if (Output && Attached) {
      Attached = false;
      Cut = At;
    }
  }
};

class Walker {
public:
  explicit Walker(AutogradModel &M) : M(M), Ctx(M.context()) {}

  Trail of(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > 16)
      return {};
    E = E->IgnoreUnlessSpelledInSource();
    if (const auto *Call = dyn_cast<CallExpr>(E))
      return ofCall(Call, Depth);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *BD = dyn_cast<BindingDecl>(DRE->getDecl()))
        if (const auto *Whole = dyn_cast_or_null<DecompositionDecl>(BD->getDecomposedDecl()))
          return of(Whole->getInit(), Depth + 1);
      Trail T = ofVar(dyn_cast<VarDecl>(DRE->getDecl()), Depth);
      // No model output in sight: a tensor that autograd records from (a leaf that requires
      // grad, or computed from one) starts a trail too.
      if (!T.Output && isTensorType(DRE->getType())) {
        TensorOrigin K = M.originAt(DRE).Kind;
        if (K == TensorOrigin::GraphAttached || K == TensorOrigin::RequiresGradLeaf)
          T = {DRE, nullptr, true};
      }
      return T;
    }
    // Arithmetic on numbers, braced lists, constructions, conditionals: whatever they are made of.
    Trail T;
    for (const Stmt *Child : E->children())
      if (const auto *CE = dyn_cast_or_null<Expr>(Child))
        T.join(of(CE, Depth + 1));
    return T;
  }

private:
  /// An op over \p Inputs at \p Op: attached only where autograd records.
  Trail recorded(const Stmt *Op, ArrayRef<const Expr *> Inputs, unsigned Depth) {
    Trail T;
    for (const Expr *In : Inputs)
      T.join(of(In, Depth + 1));
    if (T.Attached && M.gradDisabledAt(Op))
      T.cutAt(M.gradModeAt(Op).DecidedBy ? M.gradModeAt(Op).DecidedBy : Op);
    return T;
  }

  /// A loss over \p Inputs: as attached as they are; over values that require nothing, the
  /// loss itself starts a trail that is already cut.
  Trail lossOver(const CallExpr *Call, ArrayRef<const Expr *> Inputs, unsigned Depth) {
    Trail T = recorded(Call, Inputs, Depth);
    if (T.Output)
      return T;
    bool AnyGrad = llvm::any_of(Inputs, [&](const Expr *In) {
      if (!isTensorType(In->getType()))
        return false;
      TensorOrigin K = M.originAt(In).Kind;
      return K != TensorOrigin::Data && K != TensorOrigin::Detached;
    });
    return AnyGrad ? Trail{} : Trail{Call, Call, false};
  }

  /// torch::nn's loss modules (MSELoss, CrossEntropyLoss, ...): no parameters of their own.
  /// \p Module is the holder (`criterion(out, y)`) or the pointer to the Impl (`criterion->`).
  static bool isLossModule(const Expr *Module) {
    QualType T = Module->IgnoreParenImpCasts()->getType();
    if (T->isPointerType())
      T = T->getPointeeType();
    const CXXRecordDecl *RD = recordOf(T);
    return RD && RD->getIdentifier() && RD->getName().contains("Loss") && isInSystemHeader(RD);
  }

  Trail ofCall(const CallExpr *Call, unsigned Depth) {
    CallShape Shape = M.callShape(Call);
    llvm::SmallVector<const Expr *, 4> Inputs;
    if (Shape.Object)
      Inputs.push_back(Shape.Object);
    for (const Expr *Arg : Call->arguments())
      Inputs.push_back(Arg);
    // A model's output is where a trail starts (by name in a template nobody instantiates);
    // a loss module's output is attached only through its inputs.
    bool Forward = !match(matchers::moduleForwardCall(), *Call, Ctx).empty();
    if (Forward && Shape.Object && isLossModule(Shape.Object)) {
      Inputs.erase(Inputs.begin());
      return lossOver(Call, Inputs, Depth);
    }
    if (Forward || (!Shape.Resolved && Shape.Name == "forward")) {
      Trail T{Call, nullptr, true};
      if (M.gradDisabledAt(Call))
        T.cutAt(M.gradModeAt(Call).DecidedBy ? M.gradModeAt(Call).DecidedBy : Call);
      return T;
    }
    if (llvm::is_contained(names::GraphCuttingMethods, Shape.Name)) {
      Trail T = of(Shape.Object, Depth + 1);
      T.cutAt(Call);
      return T;
    }
    if (!Shape.Callee)
      return recorded(Call, Inputs, Depth);
    if (!isInSystemHeader(Shape.Callee)) {
      const FunctionDecl *Def = Shape.Callee->getDefinition();
      if (!Def || !Def->hasBody() || !Functions.insert(Def).second)
        return {};
      Trail T;
      for (const BoundNodes &B : match(findAll(returnStmt().bind("ret")), *Def->getBody(), Ctx))
        T.join(of(B.getNodeAs<ReturnStmt>("ret")->getRetValue(), Depth + 1));
      Functions.erase(Def);
      return T;
    }
    // A loss over values that require nothing: the loss itself starts a cut trail.
    if (isLossName(Shape.Name) && Shape.Callee->getDeclContext()->isNamespace()) {
      return lossOver(Call, Inputs, Depth);
    }
    // A tensor made from numbers (torch::tensor(values), from_blob, full(size, v)) has no graph.
    if (isTensorType(Call->getType()) && !Shape.Object &&
        !llvm::any_of(Inputs, [](const Expr *In) { return canHoldGraph(In->getType()); })) {
      Trail T;
      for (const Expr *In : Inputs)
        T.join(of(In, Depth + 1));
      T.cutAt(Call);
      return T;
    }
    return recorded(Call, Inputs, Depth);
  }

  /// A parameter: the arguments of the visible calls.
  Trail ofParameter(const ParmVarDecl *Parm, unsigned Depth) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(Parm->getParentFunctionOrMethod());
    if (!FD || !Functions.insert(FD).second)
      return {};
    Trail T;
    unsigned Index = Parm->getFunctionScopeIndex();
    for (const CallExpr *Call : M.callersOf(FD))
      if (Index < Call->getNumArgs())
        T.join(of(Call->getArg(Index), Depth + 1));
    Functions.erase(FD);
    return T;
  }

  /// A local: what it is initialized with, assigned, or (a container) given.
  Trail ofVar(const VarDecl *VD, unsigned Depth) {
    if (const auto *Parm = dyn_cast_or_null<ParmVarDecl>(VD))
      return ofParameter(Parm, Depth);
    if (!VD || !VD->isLocalVarDecl() || !Vars.insert(VD).second)
      return {};
    Trail T = of(VD->getInit(), Depth + 1);
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (FD && FD->hasBody()) {
      auto Ref = ignoringParenImpCasts(declRefExpr(to(varDecl(equalsNode(VD)))));
      auto Writes = stmt(anyOf(
          cxxOperatorCallExpr(hasAnyOverloadedOperatorName("=", "+=", "-=", "*=", "/="), hasArgument(0, Ref),
                              hasArgument(1, expr().bind("value"))),
          binaryOperator(isAssignmentOperator(), hasLHS(Ref), hasRHS(expr().bind("value"))),
          cxxMemberCallExpr(on(Ref), callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert",
                                                                      "emplace", "push", "assign"))))))
                        .bind("write");
      for (const BoundNodes &B : match(findAll(Writes), *FD->getBody(), Ctx)) {
        if (const auto *Value = B.getNodeAs<Expr>("value")) {
          T.join(of(Value, Depth + 1));
          continue;
        }
        for (const Expr *Arg : B.getNodeAs<CallExpr>("write")->arguments())
          T.join(of(Arg, Depth + 1));
      }
    }
    Vars.erase(VD);
    return T;
  }

  AutogradModel &M;
  ASTContext &Ctx;
  llvm::SmallPtrSet<const VarDecl *, 8> Vars;
  llvm::SmallPtrSet<const FunctionDecl *, 4> Functions;
};

} // namespace

std::optional<OutputCut> AutogradModel::outputCut(const Expr *E) {
  if (!E)
    return std::nullopt;
  Trail T = Walker(*this).of(E);
  if (!T.Output)
    return std::nullopt;
  return OutputCut{T.Output, T.Attached ? nullptr : T.Cut};
}

} // namespace torchtidy
