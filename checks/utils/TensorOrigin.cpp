#include "utils/TensorOrigin.h"

#include "utils/ProjectIndex.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// Methods and functions whose result never carries a grad_fn: detaching, integer and
/// boolean results, shape queries.
bool isNonDifferentiable(StringRef Name) {
  static const llvm::StringSet<> Names = {
      "detach", "data", "variable_data", "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt",
      "ge", "le", "isnan", "isinf", "isfinite", "nonzero", "sign", "logical_and", "logical_or",
      "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not", "round", "floor",
      "ceil", "trunc", "grad", "mutable_grad", "eq_", "bincount", "bucketize", "searchsorted",
      "one_hot", "randint_like", "zeros_like", "ones_like", "empty_like", "full_like",
      "rand_like", "randn_like", "multinomial", "topk_indices", "unique", "equal"};
  return Names.contains(Name);
}

/// Factory functions: their result is a fresh leaf, requiring grad only when asked to.
bool isFactory(StringRef Name) {
  static const llvm::StringSet<> Names = {
      "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
      "range", "linspace", "logspace", "eye", "tensor", "from_blob", "empty_strided",
      "normal", "bernoulli", "scalar_tensor", "zeros_like", "ones_like", "empty_like",
      "full_like", "rand_like", "randn_like", "randint_like", "from_file", "load"};
  return Names.contains(Name);
}

/// std::tuple / std::pair: module forwards (LSTM, GRU) return their tensors in one.
bool isTupleLike(QualType T) {
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(recordOf(T));
  return Spec && Spec->isInStdNamespace() && Spec->getIdentifier() &&
         (Spec->getName() == "tuple" || Spec->getName() == "pair");
}

/// The ordering of the lattice: a value is as attached as its most attached source.
int rank(TensorOrigin K) {
  switch (K) {
  case TensorOrigin::Unknown: return 0;
  case TensorOrigin::Data: return 1;
  case TensorOrigin::Detached: return 2;
  case TensorOrigin::RequiresGradLeaf: return 3;
  case TensorOrigin::GraphAttached: return 4;
  }
  return 0;
}

class Classifier {
public:
  Classifier(ASTContext &Ctx, const ProjectIndex *Index) : Ctx(Ctx), Index(Index) {}

  OriginResult classify(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > 8)
      return {};
    E = E->IgnoreUnlessSpelledInSource();
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E))
      return classifyMemberCall(MCE, Depth);
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
      return classifyOperatorCall(OCE, Depth);
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return classifyCall(CE, Depth);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      // `auto [out, state] = lstm->forward(x)`: a binding is as attached as the whole.
      if (const auto *BD = dyn_cast<BindingDecl>(DRE->getDecl())) {
        const auto *Whole = dyn_cast_or_null<DecompositionDecl>(BD->getDecomposedDecl());
        if (!Whole)
          return {};
        unsigned Index = llvm::find(Whole->bindings(), BD) - Whole->bindings().begin();
        return classifyTupleElement(Whole->getInit(), Index, Depth);
      }
      return classifyVar(dyn_cast<VarDecl>(DRE->getDecl()), Depth);
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (isTupleLike(ME->getBase()->getType())) // pair.first / pair.second
        return classify(ME->getBase(), Depth + 1);
      return classifyMember(ME);
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return join(classify(CO->getTrueExpr(), Depth + 1), classify(CO->getFalseExpr(), Depth + 1));
    if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->isCommaOp())
      return classify(BO->getRHS(), Depth + 1);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() == 1)
      return classify(Construct->getArg(0), Depth + 1);
    return {};
  }

private:
  static OriginResult join(OriginResult A, OriginResult B) {
    return rank(B.Kind) > rank(A.Kind) ? B : A;
  }

  /// The result of a differentiable op over \p Inputs: attached when any input requires
  /// grad, unless the op runs where autograd is off.
  OriginResult derived(const Expr *Op, llvm::ArrayRef<const Expr *> Inputs, unsigned Depth) {
    OriginResult R{TensorOrigin::Data, Op};
    for (const Expr *In : Inputs) {
      OriginResult I = classify(In, Depth + 1);
      if (I.Kind == TensorOrigin::GraphAttached || I.Kind == TensorOrigin::RequiresGradLeaf) {
        R = {TensorOrigin::GraphAttached, I.Kind == TensorOrigin::GraphAttached ? I.Source : Op};
        break;
      }
      if (I.Kind == TensorOrigin::Unknown)
        R.Kind = TensorOrigin::Unknown;
    }
    return noGradAware(R, Op);
  }

  OriginResult noGradAware(OriginResult R, const Expr *Op) {
    if (R.Kind == TensorOrigin::GraphAttached && inNoGradScope(Op, Ctx))
      return {TensorOrigin::Detached, Op};
    return R;
  }

  /// Tensor-typed arguments, including those inside braced lists (torch::cat({a, b})).
  static void tensorArgs(const Expr *E, llvm::SmallVectorImpl<const Expr *> &Out) {
    E = E->IgnoreUnlessSpelledInSource();
    if (const auto *IL = dyn_cast<InitListExpr>(E)) {
      for (const Expr *Init : IL->inits())
        tensorArgs(Init, Out);
      return;
    }
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(E)) {
      tensorArgs(SIL->getSubExpr(), Out);
      return;
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      for (const Expr *Arg : Construct->arguments())
        tensorArgs(Arg, Out);
      return;
    }
    if (isTensorType(E->getType()))
      Out.push_back(E);
  }

  static bool requestsGrad(const CallExpr *CE, ASTContext &Ctx) {
    // requires_grad(true) anywhere in the options: torch::requires_grad(),
    // TensorOptions().requires_grad(true), torch::dtype(..).requires_grad(true).
    auto Found = match(
        findAll(callExpr(callee(functionDecl(hasName("requires_grad"))),
                         anyOf(argumentCountIs(0), hasArgument(0, cxxDefaultArgExpr()),
                               // requires_grad(true) converts to c10::optional<bool>.
                               hasArgument(0, anyOf(cxxBoolLiteral(equals(true)),
                                                    hasDescendant(cxxBoolLiteral(equals(true)))))))
                    .bind("rg")),
        *CE, Ctx);
    return !Found.empty();
  }

  OriginResult classifyMemberCall(const CXXMemberCallExpr *MCE, unsigned Depth) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (!MD || !MD->getIdentifier())
      return {};
    StringRef Name = MD->getName();
    const Expr *Obj = MCE->getImplicitObjectArgument();

    if (Obj && isModuleType(Obj->getType()) && Name == "forward")
      return noGradAware({TensorOrigin::GraphAttached, MCE}, MCE);
    if (Name == "toTensor") // TorchScript: module.forward(inputs).toTensor()
      return classify(Obj, Depth + 1);

    if (isTensorMethod(MD, {Name})) {
      if (Name == "requires_grad_" || Name == "set_requires_grad") {
        bool On = true;
        if (MCE->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(MCE->getArg(0)))
          MCE->getArg(0)->EvaluateAsBooleanCondition(On, Ctx);
        return {On ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, MCE};
      }
      if (Name == "detach" || Name == "data" || Name == "variable_data")
        return {TensorOrigin::Detached, MCE};
      if (isNonDifferentiable(Name))
        return {TensorOrigin::Data, MCE};
      llvm::SmallVector<const Expr *, 4> Inputs;
      if (Obj)
        Inputs.push_back(Obj);
      for (const Expr *Arg : MCE->arguments())
        tensorArgs(Arg, Inputs);
      return derived(MCE, Inputs, Depth);
    }
    // A user method returning a tensor: look at what it returns.
    if (isTensorType(MCE->getType()))
      return classifyUserFunction(MD, Depth, MCE);
    return {};
  }

  OriginResult classifyOperatorCall(const CXXOperatorCallExpr *OCE, unsigned Depth) {
    const auto *Callee = dyn_cast_or_null<CXXMethodDecl>(OCE->getDirectCallee());
    if (OCE->getOperator() == OO_Call && Callee && isModuleType(QualType(Callee->getParent()->getTypeForDecl(), 0)))
      return noGradAware({TensorOrigin::GraphAttached, OCE}, OCE);
    switch (OCE->getOperator()) {
    case OO_EqualEqual: case OO_ExclaimEqual: case OO_Less: case OO_Greater:
    case OO_LessEqual: case OO_GreaterEqual: case OO_AmpAmp: case OO_PipePipe:
    case OO_Exclaim: case OO_Amp: case OO_Pipe: case OO_Caret: case OO_Tilde:
      return {TensorOrigin::Data, OCE};
    case OO_Equal:
      return classify(OCE->getArg(1), Depth + 1);
    default:
      break;
    }
    llvm::SmallVector<const Expr *, 4> Inputs;
    for (const Expr *Arg : OCE->arguments())
      tensorArgs(Arg, Inputs);
    return derived(OCE, Inputs, Depth);
  }

  OriginResult classifyCall(const CallExpr *CE, unsigned Depth) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD || !FD->getIdentifier())
      return {};
    StringRef Name = FD->getName();
    if (isInSystemHeader(FD)) {
      if (isFactory(Name))
        return {requestsGrad(CE, Ctx) ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, CE};
      if (isNonDifferentiable(Name))
        return {TensorOrigin::Data, CE};
      if (FD->isInStdNamespace() && Name == "get" && CE->getNumArgs() == 1) { // std::get<0>(tuple)
        const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs();
        unsigned Index = Args && Args->size() > 0 && Args->get(0).getKind() == TemplateArgument::Integral
                             ? Args->get(0).getAsIntegral().getZExtValue()
                             : 0;
        return classifyTupleElement(CE->getArg(0), Index, Depth);
      }
      if (!isTensorType(CE->getType()))
        return {};
      llvm::SmallVector<const Expr *, 4> Inputs;
      for (const Expr *Arg : CE->arguments())
        tensorArgs(Arg, Inputs);
      return derived(CE, Inputs, Depth);
    }
    return classifyUserFunction(FD, Depth, CE);
  }

  /// Element \p Index of the tuple \p Tuple: the indices that max / min / sort / topk /
  /// kthvalue / mode / median return second are integers, never attached.
  OriginResult classifyTupleElement(const Expr *Tuple, unsigned Index, unsigned Depth) {
    const Expr *Source = Tuple ? Tuple->IgnoreUnlessSpelledInSource() : nullptr;
    if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(Source))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()); VD && VD->isLocalVarDecl() && VD->getInit())
        Source = VD->getInit()->IgnoreUnlessSpelledInSource();
    if (const auto *Call = dyn_cast_or_null<CallExpr>(Source); Call && Index == 1) {
      static const llvm::StringSet<> WithIndices = {"max", "min", "sort", "topk", "kthvalue",
                                                    "mode", "median", "nanmedian", "cummax", "cummin"};
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (Callee && Callee->getIdentifier() && WithIndices.contains(Callee->getName()) &&
          isInSystemHeader(Callee))
        return {TensorOrigin::Data, Call};
    }
    return classify(Tuple, Depth + 1);
  }

  /// A tensor returned by a function of the user's: as attached as what it returns.
  /// One defined in another TU: as the project index says (graph-attached, or unknown).
  OriginResult classifyUserFunction(const FunctionDecl *FD, unsigned Depth, const Expr *Call) {
    const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
    if (FD && !Def && Index && !isInSystemHeader(FD)) {
      std::optional<uint32_t> Facts = Index->factsOf(FD);
      if (Facts && (*Facts & FunctionSummary::ReturnsGraph))
        return {TensorOrigin::GraphAttached, Call};
      return {};
    }
    if (!Def || !Def->hasBody() || isInSystemHeader(Def) || !ActiveFunctions.insert(Def).second)
      return {};
    OriginResult R;
    for (const BoundNodes &B : match(findAll(returnStmt().bind("ret")), *Def->getBody(), Ctx)) {
      const auto *Ret = B.getNodeAs<ReturnStmt>("ret");
      if (Ret->getRetValue() && enclosingFunction(Ret, Ctx) == Def)
        R = join(R, classify(Ret->getRetValue(), Depth + 1));
    }
    ActiveFunctions.erase(Def);
    return R;
  }

  OriginResult classifyMember(const MemberExpr *ME) {
    // Parameters of a module: linear->weight, conv->bias, this->weight inside the module.
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field || !isTensorType(Field->getType()))
      return {};
    const Expr *Base = ME->getBase()->IgnoreUnlessSpelledInSource();
    QualType BaseType = Base->getType();
    if (ME->isArrow() && BaseType->isPointerType())
      BaseType = BaseType->getPointeeType();
    const RecordDecl *Owner = Field->getParent();
    bool OwnerIsModule = isModuleType(QualType(Owner->getTypeForDecl(), 0)) || isModuleType(BaseType);
    StringRef Name = Field->getName();
    if (OwnerIsModule && (Name.contains("weight") || Name.contains("bias")))
      return {TensorOrigin::RequiresGradLeaf, ME};
    return {};
  }

  OriginResult classifyVar(const VarDecl *VD, unsigned Depth) {
    if (OriginResult Range = classifyRangeVar(VD, Depth); Range.Kind != TensorOrigin::Unknown)
      return Range;
    if (!VD || isa<ParmVarDecl>(VD) || !VD->isLocalVarDecl() ||
        !(isTensorType(VD->getType()) || isTupleLike(VD->getType())))
      return {};
    if (VD->getType()->isReferenceType() && !VD->getInit())
      return {};
    if (!ActiveVars.insert(VD).second)
      return {};
    OriginResult R;
    if (const Expr *Init = VD->getInit())
      R = classify(Init, Depth + 1);
    else
      R = {TensorOrigin::Data, nullptr};
    // Later assignments and in-place requires_grad marks in the same function.
    if (const FunctionDecl *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
        FD && FD->hasBody()) {
      auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
      for (const BoundNodes &B :
           match(findAll(stmt(anyOf(
                     cxxOperatorCallExpr(hasAnyOverloadedOperatorName("=", "+=", "-=", "*=", "/="),
                                         hasArgument(0, ignoringImplicit(Ref)))
                         .bind("assign"),
                     cxxMemberCallExpr(on(ignoringImplicit(Ref)),
                                       callee(cxxMethodDecl(hasAnyName("requires_grad_", "set_requires_grad"))))
                         .bind("mark")))),
                 *FD->getBody(), Ctx)) {
        if (const auto *Assign = B.getNodeAs<CXXOperatorCallExpr>("assign")) {
          OriginResult A = classify(Assign->getArg(1), Depth + 1);
          if (Assign->getOperator() != OO_Equal && A.Kind == TensorOrigin::RequiresGradLeaf)
            A.Kind = TensorOrigin::GraphAttached;
          R = join(R, A);
        } else if (const auto *Mark = B.getNodeAs<CXXMemberCallExpr>("mark")) {
          R = join(R, classify(Mark, Depth + 1));
        }
      }
      if (Index)
        R = join(R, writtenByOtherUnits(VD, FD));
    }
    ActiveVars.erase(VD);
    return R;
  }

  /// \p VD handed by reference to a function of another TU that assigns it a graph-attached
  /// tensor (`forward_into(x, out)`; the project index's out-parameters).
  OriginResult writtenByOtherUnits(const VarDecl *VD, const FunctionDecl *FD) {
    OriginResult R;
    auto Ref = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
    for (const BoundNodes &B : match(findAll(callExpr(hasAnyArgument(Ref)).bind("call")), *FD->getBody(), Ctx)) {
      const auto *Call = B.getNodeAs<CallExpr>("call");
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (!Callee || Callee->getDefinition() || isInSystemHeader(Callee))
        continue;
      uint32_t Out = Index->graphOutParamsOf(Callee);
      unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Callee) ? 1 : 0;
      for (unsigned I = Offset; I < Call->getNumArgs() && I - Offset < 32; ++I) {
        const auto *Arg = dyn_cast<DeclRefExpr>(Call->getArg(I)->IgnoreImplicit());
        if (Arg && Arg->getDecl() == VD && (Out & (1u << (I - Offset))))
          R = join(R, {TensorOrigin::GraphAttached, Call});
      }
    }
    return R;
  }

  /// `for (auto &p : model->parameters())`: every element is a parameter.
  OriginResult classifyRangeVar(const VarDecl *VD, unsigned Depth) {
    if (!VD)
      return {};
    auto Parents = Ctx.getParents(*VD);
    const DeclStmt *DS = Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
    if (!DS)
      return {};
    auto Grand = Ctx.getParents(*DS);
    const auto *For = Grand.empty() ? nullptr : Grand[0].get<CXXForRangeStmt>();
    if (!For || For->getLoopVarStmt() != DS)
      return {};
    const Expr *Range = For->getRangeInit()->IgnoreUnlessSpelledInSource();
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(Range))
      if (const CXXMethodDecl *MD = MCE->getMethodDecl();
          MD && MD->getIdentifier() && MD->getName() == "parameters" &&
          isModuleType(MCE->getImplicitObjectArgument()->getType()))
        return {TensorOrigin::RequiresGradLeaf, MCE};
    return {};
  }

  ASTContext &Ctx;
  const ProjectIndex *Index;
  llvm::SmallPtrSet<const VarDecl *, 8> ActiveVars;
  llvm::SmallPtrSet<const FunctionDecl *, 8> ActiveFunctions;
};

} // namespace

OriginResult classifyTensor(const Expr *E, ASTContext &Ctx, const ProjectIndex *Index) {
  return Classifier(Ctx, Index).classify(E);
}

} // namespace torchtidy
