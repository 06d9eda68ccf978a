// The provenance walk (Provenance.h) and the model's questions of it: originAt (for a value of
// dependent type, as outputCut reads it), outputCut and leafAt. What they share is in
// ProvenanceWalk.cpp.
#include "utils/Provenance.h"
#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"
#include "utils/ProvenanceWalk.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {

// ---- origin --------------------------------------------------------------------------------

using MaybeLeaf = std::optional<LeafFact>;
using FieldDefinitions = llvm::DenseMap<const FieldDecl *, std::vector<Definition>>;

/// The lattice walk: a value is as attached as its most attached definition. Asked for cuts
/// (AutogradModel::outputCut), it follows what autograd does not record too (numbers taken
/// out with .item(), containers of them, parameters through their callers, calls left
/// unresolved in templates) and records the model output or loss a value is computed from,
/// and where every path to that output's graph was cut. Asked for leaves (AutogradModel::leafAt),
/// it follows a value through in-place ops and views to the leaf that requires grad any of its
/// definitions gives, flow-sensitively at the point asked about, and beyond locals: globals,
/// parameters through their callers, user fields through their writes, what holds parameters.
class OriginWalk : public ProvenanceWalk {
public:
  /// The question asked: the origin, the cut (AutogradModel::outputCut), the leaf (leafAt).
  enum Question { Origin, Cuts, Leaves };
  OriginWalk(AutogradModel &M, Question Q = Origin, FieldDefinitions *Fields = nullptr)
      : ProvenanceWalk(M), Q(Q), Fields(Fields) {}

  OriginResult classify(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > MaxDepth)
      return {};
    E = Q == Leaves ? strip(E) : E->IgnoreUnlessSpelledInSource();
    // Asked for leaves, a variable or field at ReadAt (see leafVar, field). What an unresolved
    // expression yields is unknown until instantiation; a variable of dependent type is still
    // followed to where its value comes from.
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E); DRE && Q == Leaves)
      return leaf(leafVar(dyn_cast<VarDecl>(DRE->getDecl()), ReadAt, Depth, Want::Tensor));
    if (Q == Leaves && E->isTypeDependent())
      return {};
    if (const auto *ME = dyn_cast<MemberExpr>(E); ME && Q == Leaves)
      return leaf(anyReaching(reaching(ME, ReadAt), ReadAt, Depth, Want::Tensor,
                              [&] { return field(ME, Depth, Want::Tensor); }));
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return ref(DRE, Depth);
    if (Q == Cuts)
      return cutOf(E, Depth);
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E))
      return memberCall(MCE, Depth);
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
      return operatorCall(OCE, Depth);
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return call(CE, Depth);
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (isTupleLike(ME->getBase()->getType())) // pair.first / pair.second
        return classify(ME->getBase(), Depth + 1);
      return member(ME, Depth);
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return join(classify(CO->getTrueExpr(), Depth + 1), classify(CO->getFalseExpr(), Depth + 1));
    if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->isCommaOp())
      return classify(BO->getRHS(), Depth + 1);
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() == 1)
      return classify(Construct->getArg(0), Depth + 1);
    return {};
  }

  /// Asked for leaves: the leaf that requires grad \p E is, or is a view of, at \p Where.
  MaybeLeaf leafAt(const Expr *E, const Stmt *Where, unsigned Depth = 0) {
    llvm::SaveAndRestore Outer(ReadAt, Where);
    return classify(E, Depth).Leaf;
  }

  /// Asked for the origin: the parameter whose value on entry is taken as graph-attached (see
  /// AutogradModel::returnsGraphThrough).
  const ParmVarDecl *AttachedParm = nullptr;

private:
  /// What an expression is asked to be: a tensor, or what holds tensors (a std::vector or
  /// initializer list of them, a torch::OrderedDict of them, one of its items).
  enum class Want { Tensor, Holder };

  static OriginResult leaf(MaybeLeaf L) {
    OriginResult R;
    R.Leaf = L;
    return R;
  }

  /// The origin of the more attached of \p A and \p B; the output either is computed from,
  /// cut only when every path to it is.
  static OriginResult join(OriginResult A, const OriginResult &B) {
    OriginResult R = B.Kind > A.Kind ? B : A; // the lattice's order is TensorOrigin's
    R.Leaf = A.Leaf ? A.Leaf : B.Leaf;
    R.Output = A.Output ? A.Output : B.Output;
    R.Cut = !A.Output ? B.Cut : B.Output && !B.Cut ? nullptr : A.Cut;
    return R;
  }
  /// \p R reached through the definition whose value is \p Value.
  static OriginResult through(const Expr *Value, OriginResult R) {
    if (R.Kind != TensorOrigin::Unknown)
      R.Chain.insert(R.Chain.begin(), Value);
    return R;
  }

  /// `auto [out, state] = lstm->forward(x)`: a binding is as attached as the whole.
  OriginResult ref(const DeclRefExpr *DRE, unsigned Depth) {
    if (const auto *BD = dyn_cast<BindingDecl>(DRE->getDecl())) {
      const auto *Whole = dyn_cast_or_null<DecompositionDecl>(BD->getDecomposedDecl());
      if (!Whole)
        return {};
      unsigned I = llvm::find(Whole->bindings(), BD) - Whole->bindings().begin();
      return tupleElement(Whole->getInit(), I, Depth);
    }
    OriginResult R = var(dyn_cast<VarDecl>(DRE->getDecl()), DRE, Depth);
    // No model output in sight: a tensor that autograd records from (a leaf that requires
    // grad, or computed from one) is where a path to a graph starts too.
    if (Q == Cuts && !R.Output && isTensorType(DRE->getType())) {
      TensorOrigin K = M.originAt(DRE).Kind;
      if (K == TensorOrigin::GraphAttached || K == TensorOrigin::RequiresGradLeaf)
        R.Output = DRE;
    }
    return R;
  }

  /// The result of a differentiable op over \p Obj and the tensors among Op's arguments:
  /// attached when any input requires grad, unless the op runs where autograd is off.
  OriginResult derived(const CallExpr *Op, const Expr *Obj, unsigned Depth) {
    // Asked for leaves: an in-place op returns its object; a view shares its base's storage and
    // autograd identity, and an in-place op on a view of a leaf that requires grad throws just
    // as one on the leaf does.
    if (Q == Leaves) {
      if (std::optional<InplaceOp> In = M.inplaceOp(Op); In && !In->IsAssignment)
        return classify(In->Target, Depth + 1);
      OriginResult R = classify(viewedTensor(Op), Depth + 1);
      if (R.Leaf)
        R.Leaf->View = true;
      return R;
    }
    llvm::SmallVector<const Expr *, 4> Inputs;
    if (Obj)
      Inputs.push_back(Obj);
    for (const Expr *Arg : Op->arguments())
      tensorArgs(Arg, Inputs);
    OriginResult R{TensorOrigin::Data, Op};
    for (const Expr *In : Inputs) {
      OriginResult I = classify(In, Depth + 1);
      if (I.Kind >= TensorOrigin::RequiresGradLeaf) {
        R = I.Kind == TensorOrigin::GraphAttached ? I : OriginResult{TensorOrigin::GraphAttached, Op, I.Chain};
        break;
      }
      if (I.Kind == TensorOrigin::Unknown)
        R.Kind = TensorOrigin::Unknown;
    }
    return noGradAware(R, Op);
  }

  OriginResult noGradAware(OriginResult R, const Expr *Op) {
    if (R.Kind == TensorOrigin::GraphAttached && M.gradDisabledAt(Op))
      return {TensorOrigin::Detached, Op};
    return R;
  }

  OriginResult memberCall(const CXXMemberCallExpr *MCE, unsigned Depth) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (!MD || !MD->getIdentifier())
      return {};
    StringRef Name = MD->getName();
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Q == Leaves && !isTensorClass(MD->getParent())) {
      QualType T = Obj->getType();
      if (Name == "register_parameter")
        return leaf(boolArgument(MCE, 2, Ctx) == true ? MaybeLeaf(LeafFact{LeafKind::Parameter, MCE}) : std::nullopt);
      if ((isRecord(T, "::std::vector") && (Name == "at" || Name == "front" || Name == "back")) ||
          (isOrderedDict(T) && Name == "at") || (isOrderedDictItem(T) && Name == "value"))
        return leaf(holder(Obj, ReadAt, Depth + 1));
      return userFunction(MD, Depth, MCE);
    }
    if (Obj && isModuleType(Obj->getType()) && Name == "forward")
      return noGradAware({TensorOrigin::GraphAttached, MCE}, MCE);
    if (Name == "toTensor") // TorchScript: module.forward(inputs).toTensor()
      return classify(Obj, Depth + 1);
    if (isTensorMethod(MD, {Name})) {
      if (Name == "requires_grad_" || Name == "set_requires_grad") {
        OriginResult R{markFlag(MCE, Ctx) == true ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, MCE};
        // `(a * b).requires_grad_()` on a graph-attached result leaves it a non-leaf.
        if (Q == Leaves && R.Kind == TensorOrigin::RequiresGradLeaf &&
            M.origin(Obj).Kind != TensorOrigin::GraphAttached)
          R.Leaf = LeafFact{LeafKind::Marked, MCE};
        return R;
      }
      if (Q == Leaves)
        return derived(MCE, Obj, Depth);
      if (Name == "detach" || Name == "data" || Name == "variable_data")
        return {TensorOrigin::Detached, MCE};
      if (isNonDifferentiable(Name))
        return {TensorOrigin::Data, MCE};
      return derived(MCE, Obj, Depth);
    }
    // A user method returning a tensor: look at what it returns.
    if (isTensorType(MCE->getType()))
      return userFunction(MD, Depth, MCE);
    return {};
  }

  OriginResult operatorCall(const CXXOperatorCallExpr *OCE, unsigned Depth) {
    // Asked for leaves: an element of what holds them (`params[0]`, `dict["w"]`, `*item`).
    if (Q == Leaves && OCE->getNumArgs() > 0) {
      QualType T = OCE->getArg(0)->getType();
      OverloadedOperatorKind Op = OCE->getOperator();
      bool Element = isRecord(T, "::std::vector") || (isOrderedDict(T) && isTensorType(OCE->getType()));
      if ((Op == OO_Subscript && Element) ||
          ((Op == OO_Star || Op == OO_Arrow) && isOrderedDictItem(T)))
        return leaf(holder(OCE->getArg(0), ReadAt, Depth + 1));
    }
    const auto *Callee = dyn_cast_or_null<CXXMethodDecl>(OCE->getDirectCallee());
    if (OCE->getOperator() == OO_Call && Callee && isModuleType(QualType(Callee->getParent()->getTypeForDecl(), 0)))
      return noGradAware({TensorOrigin::GraphAttached, OCE}, OCE);
    // A lambda's or a functor's operator() of the user's: what it returns, as for a user function.
    if (OCE->getOperator() == OO_Call && Callee && !isInSystemHeader(Callee) &&
        (Q == Leaves || isTensorType(OCE->getType())))
      return userFunction(Callee, Depth, OCE);
    switch (OCE->getOperator()) {
    case OO_EqualEqual: case OO_ExclaimEqual: case OO_Less: case OO_Greater:
    case OO_LessEqual: case OO_GreaterEqual: case OO_AmpAmp: case OO_PipePipe:
    case OO_Exclaim: case OO_Amp: case OO_Pipe: case OO_Caret: case OO_Tilde:
      return {TensorOrigin::Data, OCE};
    case OO_Equal:
      return Q == Leaves ? OriginResult{} : classify(OCE->getArg(1), Depth + 1);
    default:
      break;
    }
    return derived(OCE, nullptr, Depth);
  }

  OriginResult call(const CallExpr *CE, unsigned Depth) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD || !FD->getIdentifier())
      return {};
    StringRef Name = FD->getName();
    if (!isInSystemHeader(FD))
      return userFunction(FD, Depth, CE);
    if (isFactory(Name)) {
      OriginResult R{requestsGrad(CE, Ctx) ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, CE};
      if (Q == Leaves && R.Kind == TensorOrigin::RequiresGradLeaf)
        R.Leaf = LeafFact{LeafKind::Created, CE};
      return R;
    }
    if (isNonDifferentiable(Name))
      return {TensorOrigin::Data, CE};
    if (FD->isInStdNamespace() && Name == "get" && CE->getNumArgs() == 1) { // std::get<0>(tuple)
      const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs();
      unsigned I = Args && Args->size() > 0 && Args->get(0).getKind() == TemplateArgument::Integral
                       ? Args->get(0).getAsIntegral().getZExtValue()
                       : 0;
      return tupleElement(CE->getArg(0), I, Depth);
    }
    if (!isTensorType(CE->getType()))
      return {};
    return derived(CE, nullptr, Depth);
  }

  /// Asked for cuts, a call or what a value is made of (arithmetic on numbers, braced lists,
  /// constructions, conditionals): a model's output starts a path to its graph (by name in a
  /// template nobody instantiates); a loss module's output is attached only through its inputs.
  OriginResult cutOf(const Expr *E, unsigned Depth) {
    const auto *Call = dyn_cast<CallExpr>(E);
    if (!Call) {
      OriginResult R;
      for (const Stmt *Child : E->children())
        R = join(R, classify(dyn_cast_or_null<Expr>(Child), Depth + 1));
      return R;
    }
    CallShape Shape = M.callShape(Call);
    llvm::SmallVector<const Expr *, 4> Inputs;
    if (Shape.Object)
      Inputs.push_back(Shape.Object);
    for (const Expr *Arg : Call->arguments())
      Inputs.push_back(Arg);
    bool Forward = !match(matchers::moduleForwardCall(), *Call, Ctx).empty();
    if (Forward && Shape.Object && isLossModule(Shape.Object))
      return lossOver(Call, ArrayRef<const Expr *>(Inputs).drop_front(), Depth);
    // By name, a member `forward` (`model->forward(x)` on a dependent model), not `std::forward<T>(x)`.
    if (Forward || (!Shape.Resolved && Shape.Name == "forward" &&
                    !isa<UnresolvedLookupExpr>(Call->getCallee()->IgnoreParenImpCasts())))
      return recorded(Call, {}, Depth, Call);
    OriginResult R;
    if (llvm::is_contained(names::GraphCuttingMethods, Shape.Name)) {
      R = classify(Shape.Object, Depth + 1);
    } else if (!Shape.Callee) {
      return recorded(Call, Inputs, Depth);
    } else if (!isInSystemHeader(Shape.Callee)) {
      return userFunction(Shape.Callee, Depth, Call);
    } else if (isLossName(Shape.Name) && Shape.Callee->getDeclContext()->isNamespace()) {
      return lossOver(Call, Inputs, Depth);
    } else if (isTensorType(Call->getType()) && !Shape.Object &&
               !llvm::any_of(Inputs, [](const Expr *In) { return canHoldGraph(In->getType()); })) {
      // A tensor made from numbers (torch::tensor(values), from_blob, full(size, v)) has no graph.
      for (const Expr *In : Inputs)
        R = join(R, classify(In, Depth + 1));
    } else {
      return recorded(Call, Inputs, Depth);
    }
    if (R.Output && !R.Cut) // the call makes a value with no graph (detach, item, numbers)
      R.Cut = Call;
    return R;
  }

  /// An op over \p Inputs at \p Op (a model output itself: \p Output): attached only where
  /// autograd records; cut at the guard that turned it off.
  OriginResult recorded(const CallExpr *Op, ArrayRef<const Expr *> Inputs, unsigned Depth,
                        const Expr *Output = nullptr) {
    OriginResult R;
    R.Output = Output;
    for (const Expr *In : Inputs)
      R = join(R, classify(In, Depth + 1));
    if (R.Output && !R.Cut && M.gradDisabledAt(Op))
      R.Cut = M.gradModeAt(Op).DecidedBy ? M.gradModeAt(Op).DecidedBy : Op;
    return R;
  }

  /// A loss over \p Inputs: as attached as they are; over values that require nothing, the
  /// loss itself starts a path that is already cut.
  OriginResult lossOver(const CallExpr *Call, ArrayRef<const Expr *> Inputs, unsigned Depth) {
    OriginResult R = recorded(Call, Inputs, Depth);
    if (R.Output)
      return R;
    bool AnyGrad = llvm::any_of(Inputs, [&](const Expr *In) {
      if (!isTensorType(In->getType()))
        return false;
      TensorOrigin K = M.originAt(In).Kind;
      return K != TensorOrigin::Data && K != TensorOrigin::Detached;
    });
    if (!AnyGrad) {
      R.Output = Call;
      R.Cut = Call;
    }
    return R;
  }

  /// Element \p I of the tuple \p Tuple: the indices that max / min / sort / topk /
  /// kthvalue / mode / median return second are integers, never attached.
  OriginResult tupleElement(const Expr *Tuple, unsigned I, unsigned Depth) {
    const Expr *Source = Tuple ? Tuple->IgnoreUnlessSpelledInSource() : nullptr;
    if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(Source))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()); VD && VD->isLocalVarDecl() && VD->getInit())
        Source = VD->getInit()->IgnoreUnlessSpelledInSource();
    if (const auto *Call = dyn_cast_or_null<CallExpr>(Source); Call && I == 1 && Q != Cuts) {
      static const llvm::StringSet<> WithIndices = {"max", "min", "sort", "topk", "kthvalue",
                                                    "mode", "median", "nanmedian", "cummax", "cummin"};
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (Callee && Callee->getIdentifier() && WithIndices.contains(Callee->getName()) && isInSystemHeader(Callee))
        return {TensorOrigin::Data, Call};
    }
    return classify(Tuple, Depth + 1);
  }

  /// A tensor returned by a function of the user's: as attached as what it returns (asked for
  /// leaves, any return decides). One defined in another TU: as the project index says
  /// (graph-attached; detached; asked for the origin, attached through an argument that is;
  /// else unknown).
  OriginResult userFunction(const FunctionDecl *FD, unsigned Depth, const CallExpr *Call) {
    if (Q == Leaves)
      return leaf(returned(FD, Call, Depth, Want::Tensor));
    const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
    if (FD && !Def && M.index() && !isInSystemHeader(FD)) {
      std::optional<uint32_t> Facts = M.index()->factsOf(FD);
      if (Facts && (*Facts & FunctionSummary::ReturnsGraph))
        return {TensorOrigin::GraphAttached, Call};
      if (Facts && (*Facts & FunctionSummary::ReturnsDetached) && Q == Origin)
        return {TensorOrigin::Detached, Call};
      uint32_t Through = Q == Origin ? M.index()->graphThroughParamsOf(FD) : 0;
      for (unsigned I = 0; I < FD->getNumParams() && I < 32; ++I) {
        const Expr *Arg = Through & (1u << I) ? argumentFor(Call, FD->getParamDecl(I)) : nullptr;
        if (OriginResult A = Arg ? classify(Arg, Depth + 1) : OriginResult{}; A.Kind >= TensorOrigin::RequiresGradLeaf)
          return noGradAware({TensorOrigin::GraphAttached, Call, A.Chain}, Call);
      }
      return {};
    }
    OriginResult R;
    returns(FD, Call, [&](const Expr *Ret) {
      R = join(R, through(Ret, classify(Ret, Depth + 1)));
      return false;
    });
    return R;
  }

  /// Parameters of a module: linear->weight, conv->bias, this->weight inside the module. A tensor
  /// field of a struct value (`pred.logits`, `net->forward(x).loss`): see fieldOf.
  OriginResult member(const MemberExpr *ME, unsigned Depth) {
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field || !isTensorType(Field->getType()))
      return {};
    QualType BaseType = ME->getBase()->IgnoreUnlessSpelledInSource()->getType();
    if (ME->isArrow() && BaseType->isPointerType())
      BaseType = BaseType->getPointeeType();
    bool OwnerIsModule = isModuleType(QualType(Field->getParent()->getTypeForDecl(), 0)) || isModuleType(BaseType);
    if (OwnerIsModule && isParameterFieldName(Field->getName()))
      return {TensorOrigin::RequiresGradLeaf, ME};
    return ME->isArrow() || OwnerIsModule ? OriginResult{} : fieldOf(ME->getBase(), Field, ME, Depth);
  }

  /// The field \p Field of the struct value \p Whole, read at \p Use: the member of a braced
  /// list (`return {logits, loss};`), of what a user function returns (a module's forward out
  /// of sight or called through its holder, `net(x)`: attached), of a local (fieldOfVar) or, in
  /// the returns of a call being followed, of the argument a parameter reads. A call that runs
  /// with autograd off gives no graph.
  OriginResult fieldOf(const Expr *Whole, const FieldDecl *Field, const Stmt *Use, unsigned Depth) {
    const Expr *E = Whole ? strip(Whole) : nullptr;
    if (!E || Depth > MaxDepth)
      return {};
    if (const auto *IL = dyn_cast<InitListExpr>(E)) {
      const InitListExpr *Semantic = IL->isSemanticForm() ? IL : IL->getSemanticForm();
      const CXXRecordDecl *RD = recordOf(IL->getType());
      unsigned I = Field->getFieldIndex() + (RD && RD->hasDefinition() ? RD->getNumBases() : 0);
      return Semantic && RD && RD->getCanonicalDecl() == Field->getParent()->getCanonicalDecl() &&
                     I < Semantic->getNumInits()
                 ? through(Semantic->getInit(I), classify(Semantic->getInit(I), Depth + 1))
                 : OriginResult{};
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return join(fieldOf(CO->getTrueExpr(), Field, Use, Depth + 1), fieldOf(CO->getFalseExpr(), Field, Use, Depth + 1));
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (const auto *Parm = dyn_cast_or_null<ParmVarDecl>(VD))
        return fieldOf(followedArgument(Parm), Field, followedArgument(Parm), Depth + 1);
      return VD && VD->isLocalVarDecl() && !VD->getType()->isReferenceType() ? fieldOfVar(VD, Field, Use, Depth)
                                                                              : OriginResult{};
    }
    const auto *Call = dyn_cast<CallExpr>(E);
    const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
    if (!FD)
      return {};
    OriginResult R;
    if (!isInSystemHeader(FD) && FD->getDefinition() && FD->getDefinition()->hasBody())
      returns(FD, Call, [&](const Expr *Ret) {
        R = join(R, through(Ret, fieldOf(Ret, Field, Ret, Depth + 1)));
        return false;
      });
    else if (!match(matchers::moduleForwardCall(), *Call, Ctx).empty()) // `net(x)`, a forward out of sight
      R = {TensorOrigin::GraphAttached, Call};
    return noGradAware(R, Call);
  }

  /// The field \p Field of the local \p VD at \p Use: the assignments to it that reach Use; where
  /// none hides it, the field of what the whole local holds there (its initializer, assignments)
  /// and what the calls it is handed to write to it (writtenByCalls).
  OriginResult fieldOfVar(const VarDecl *VD, const FieldDecl *Field, const Stmt *Use, unsigned Depth) {
    Reaching R = reaching(VD, Field, Use);
    OriginResult Out;
    for (const Definition &D : R.Defs)
      if (D.K == Definition::Assign && enter(D.Site)) {
        Out = join(Out, through(D.Value, classify(D.Value, Depth + 1)));
        leave(D.Site);
      }
    if (!R.Incoming || !enter(VD))
      return Out;
    Reaching Whole = reaching(VD, Use);
    for (const Definition &D : Whole.Defs)
      if (D.K == Definition::Assign)
        Out = join(Out, fieldOf(D.Value, Field, D.Site, Depth + 1));
    if (Whole.Incoming && VD->getInit())
      Out = join(Out, fieldOf(VD->getInit(), Field, VD->getInit(), Depth + 1));
    leave(VD);
    return join(Out, writtenByCalls(VD, Field, Use, Depth));
  }

  /// A local at \p Use: the most attached of its definitions that reach it (initializer,
  /// assignments, marks; asked for cuts, of any type, and what is inserted into it).
  OriginResult var(const VarDecl *VD, const Expr *Use, unsigned Depth) {
    // Asked for cuts, a parameter: as attached as what the calls pass for it (see arguments).
    if (const auto *Parm = dyn_cast_or_null<ParmVarDecl>(VD); Parm && Q == Cuts) {
      OriginResult R;
      if (!enter(Parm))
        return R;
      arguments(Parm, [&](const Expr *Arg, const CallExpr *) {
        R = join(R, classify(Arg, Depth + 1));
        return false;
      });
      leave(Parm);
      return R;
    }
    // `for (auto &p : model->parameters())`: every element is a parameter (see listsParameters).
    const CXXForRangeStmt *For = VD && Q != Cuts ? rangeForOf(VD, Ctx) : nullptr;
    const auto *MCE = For ? dyn_cast<CXXMemberCallExpr>(For->getRangeInit()->IgnoreUnlessSpelledInSource()) : nullptr;
    if (MCE && isTensorType(VD->getType()) && listsParameters(MCE))
      return {TensorOrigin::RequiresGradLeaf, MCE};
    // In the returns of a call being followed (`[&](const Tensor &t) { return t.sum(); }(out)`),
    // a parameter holds that call's argument on entry; elsewhere what it holds is unknown.
    const Expr *Passed = isa_and_nonnull<ParmVarDecl>(VD) ? followedArgument(cast<ParmVarDecl>(VD)) : nullptr;
    bool Assumed = VD && VD == AttachedParm;
    if (!VD || (!Passed && !Assumed && (isa<ParmVarDecl>(VD) || !VD->isLocalVarDecl())) ||
        !(Q == Cuts || isTensorType(VD->getType()) || isTupleLike(VD->getType())) ||
        (VD->getType()->isReferenceType() && !VD->getInit() && !Passed && !Assumed))
      return {};
    Reaching Defs = reaching(VD, Use);
    OriginResult R{TensorOrigin::Data, nullptr};
    // Each definition is entered once: `x = x * w` reads the definitions that reach its `x`.
    if (const Expr *Init = Passed ? Passed : VD->getInit(); Init && Defs.Incoming && enter(Init)) {
      R = through(Init, classify(Init, Depth + 1));
      leave(Init);
    }
    if (Assumed && Defs.Incoming)
      R = join(R, {TensorOrigin::GraphAttached, Use});
    for (const Definition &D : Defs.Defs) {
      if (!enter(D.Site))
        continue;
      if (D.K == Definition::Assign || D.K == Definition::Compound) {
        OriginResult A = through(D.Value, classify(D.Value, Depth + 1));
        if (D.K == Definition::Compound && A.Kind == TensorOrigin::RequiresGradLeaf)
          A.Kind = TensorOrigin::GraphAttached;
        R = join(R, A);
      } else if (D.K == Definition::Mark && isa<CXXMemberCallExpr>(D.Value) && Q != Cuts) {
        R = join(R, through(D.Value, classify(D.Value, Depth + 1)));
      } else if (D.K == Definition::Insert && Q == Cuts) {
        for (const Expr *Arg : cast<CallExpr>(D.Value)->arguments())
          R = join(R, classify(Arg, Depth + 1));
      }
      leave(D.Site);
    }
    if (Q != Cuts)
      R = join(R, writtenByCalls(VD, nullptr, Use, Depth));
    return R;
  }

  /// What the calls that take the local \p VD by reference or address (`forward_into(x, out)`,
  /// `forward_to(x, &out)`) write to it, or with \p Field to that field of it, on some path to
  /// \p Use on which no assignment to VD follows them: a function defined here, what it assigns
  /// to its parameter (its other parameters reading the call's arguments); another TU's, as the
  /// project index's out-parameters say. A call that runs with autograd off writes no graph.
  OriginResult writtenByCalls(const VarDecl *VD, const FieldDecl *Field, const Stmt *Use, unsigned Depth) {
    OriginResult R;
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (!FD || !FD->hasBody())
      return R;
    auto Ref = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
    auto RefOrAddress = anyOf(Ref, unaryOperator(hasOperatorName("&"), hasUnaryOperand(Ref)));
    auto Passing = callExpr(forEachArgumentWithParam(RefOrAddress, parmVarDecl().bind("parm"))).bind("call");
    std::vector<Definition> Defs = definitionsOf(VD, Ctx);
    if (Field)
      llvm::append_range(Defs, definitionsIn(FD->getBody(),
                                             memberExpr(ast_matchers::member(equalsNode(Field)), hasObjectExpression(Ref)),
                                             Ctx));
    llvm::SmallVector<const Stmt *, 2> Assignments;
    for (const Definition &D : Defs)
      if (D.K == Definition::Assign)
        Assignments.push_back(D.Site);
    for (const BoundNodes &B : match(findAll(Passing), *FD->getBody(), Ctx)) {
      const auto *Call = B.getNodeAs<CallExpr>("call");
      const FunctionDecl *Callee = Call->getDirectCallee();
      unsigned Index = B.getNodeAs<ParmVarDecl>("parm")->getFunctionScopeIndex();
      if (!Callee || isInSystemHeader(Callee) || !M.mayRunBefore(Call, Use, Assignments))
        continue;
      OriginResult Written;
      if (Callee->getDefinition() && Callee->getDefinition()->hasBody())
        writes(Callee, Call, Index, Field, [&](const Expr *V) {
          Written = join(Written, through(V, classify(V, Depth + 1)));
          return false;
        });
      else if (M.index() && Index < 32 && (M.index()->graphOutParamsOf(Callee) & (1u << Index)))
        Written = {TensorOrigin::GraphAttached, Call};
      R = join(R, noGradAware(Written, Call));
    }
    return R;
  }

  MaybeLeaf want(Want W, const Expr *E, const Stmt *At, unsigned Depth) {
    return W == Want::Tensor ? leafAt(E, At, Depth) : holder(E, At, Depth);
  }

  /// The leaf, or what holds leaves (\p W), the user function \p FD returns to \p Call: any
  /// return statement decides.
  MaybeLeaf returned(const FunctionDecl *FD, const CallExpr *Call, unsigned Depth, Want W) {
    MaybeLeaf L;
    returns(FD, Call, [&](const Expr *Ret) { return (L = want(W, Ret, Ret, Depth + 1)).has_value(); });
    return L;
  }

  /// The leaf one of \p R's definitions gives; with R.Incoming, else the one \p Otherwise finds.
  MaybeLeaf anyReaching(const Reaching &R, const Stmt *At, unsigned Depth, Want W,
                        llvm::function_ref<MaybeLeaf()> Otherwise) {
    for (const Definition &D : R.Defs)
      if (MaybeLeaf L = definedValue(D, At, Depth, W))
        return L;
    return R.Incoming ? Otherwise() : std::nullopt;
  }

  /// The leaf a definition gives: a mark decides by itself, an assignment by its right-hand side,
  /// `params.push_back(w)` into a holder by its element.
  MaybeLeaf definedValue(const Definition &D, const Stmt *At, unsigned Depth, Want W) {
    const auto *Call = dyn_cast<CallExpr>(D.Value->IgnoreParenImpCasts());
    const auto *MD = Call ? dyn_cast_or_null<CXXMethodDecl>(Call->getDirectCallee()) : nullptr;
    StringRef Name = MD && MD->getIdentifier() ? MD->getName() : StringRef();
    if (D.K == Definition::Insert)
      return W == Want::Holder && (Name == "push_back" || Name == "emplace_back") && Call->getNumArgs() == 1 &&
                     isTensorType(Call->getArg(0)->getType())
                 ? leafAt(Call->getArg(0), Call, Depth + 1)
                 : std::nullopt;
    if (D.K == Definition::Compound)
      return std::nullopt;
    bool Dependent = Call && dependentMemberBase(Call, Name, /*AllowArrow=*/true);
    if ((Dependent && isMarkName(Name)) ||
        (isa<CXXMemberCallExpr>(D.Value) && isMarkName(Name) && isTensorClass(MD->getParent())))
      return W == Want::Tensor && markFlag(Call, Ctx) == true ? MaybeLeaf(LeafFact{LeafKind::Marked, Call})
                 : std::nullopt;
    return want(W, D.Value, At, Depth + 1);
  }

  /// A variable at \p At: the leaf a definition that reaches At gives (see reaching).
  MaybeLeaf leafVar(const VarDecl *VD, const Stmt *At, unsigned Depth, Want W) {
    if (!VD || !enter(VD))
      return std::nullopt;
    MaybeLeaf Result =
        !VD->hasLocalStorage()
            ? (VD->getInit() ? want(W, VD->getInit(), At, Depth + 1) : std::nullopt)
            : anyReaching(reaching(VD, At), At, Depth, W, [&] { return incoming(VD, Depth, W); });
    leave(VD);
    return Result;
  }

  /// What the local \p VD holds before any assignment or mark: a parameter's argument, a loop
  /// variable's element, a container's pushed elements, the initializer.
  MaybeLeaf incoming(const VarDecl *VD, unsigned Depth, Want W) {
    if (const auto *PVD = dyn_cast<ParmVarDecl>(VD)) { // a leaf a call outside no-grad passes (see arguments)
      MaybeLeaf L;
      arguments(PVD, [&](const Expr *Arg, const CallExpr *Call) {
        return Arg && !M.gradDisabledAt(Call) && (L = want(W, Arg, Call, Depth + 2)).has_value();
      });
      return L;
    }
    if (const CXXForRangeStmt *For = rangeForOf(VD, Ctx)) {
      const Expr *Range = For->getRangeInit();
      if (W == Want::Tensor)
        return frozenBefore(For) ? std::nullopt : holder(Range, For, Depth + 1);
      return isOrderedDictItem(VD->getType()) ? holder(Range, For, Depth + 1) : std::nullopt;
    }
    // A default-constructed tensor is undefined, not a leaf.
    return VD->getInit() ? want(W, VD->getInit(), VD->getInit(), Depth + 1) : std::nullopt;
  }

  /// `for (auto &p : model->parameters()) p.requires_grad_(false);` earlier in the function
  /// froze what \p For iterates over: every such loop over the same range that reaches \p For
  /// (AutogradModel::reachingAt) freezes it.
  bool frozenBefore(const CXXForRangeStmt *For) {
    const FunctionDecl *FD = enclosingFunction(For, Ctx);
    if (!FD || !FD->hasBody())
      return false;
    llvm::SmallVector<const Stmt *, 2> Loops;
    llvm::DenseMap<const Stmt *, bool> Freezes;
    for (const BoundNodes &B : match(findAll(cxxForRangeStmt().bind("loop")), *FD->getBody(), Ctx)) {
      const auto *Other = B.getNodeAs<CXXForRangeStmt>("loop");
      if (Other == For || !sameExpr(Other->getRangeInit(), For->getRangeInit()))
        continue;
      const CallExpr *Mark = nullptr;
      for (const Definition &D :
           definitionsIn(Other->getBody(), declRefExpr(to(varDecl(equalsNode(Other->getLoopVariable())))), Ctx))
        if (D.K == Definition::Mark && !(isa<CXXMemberCallExpr>(D.Value) &&
                                         cast<CXXMemberCallExpr>(D.Value)->getMethodDecl()->getName() == "detach_"))
          Mark = cast<CallExpr>(D.Value);
      if (!Mark)
        continue;
      Loops.push_back(Other);
      Freezes[Other] = markFlag(Mark, Ctx) != true;
    }
    llvm::SmallVector<const Stmt *, 2> Reaching = M.reachingAt(Loops, For);
    return !Reaching.empty() && llvm::all_of(Reaching, [&](const Stmt *L) { return Freezes.lookup(L); });
  }

  /// What holds leaves that require grad: module->parameters(), optimizer.parameters(),
  /// param_group.params(), {w, b}; module->named_parameters(), its values and its items.
  MaybeLeaf holder(const Expr *E, const Stmt *At, unsigned Depth) {
    E = strip(E);
    if (!E || Depth > MaxDepth)
      return std::nullopt;
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(E))
      return holder(SIL->getSubExpr(), At, Depth + 1);
    if (const auto *IL = dyn_cast<InitListExpr>(E)) {
      for (const Expr *Init : IL->inits())
        if (MaybeLeaf L = want(isTensorType(Init->getType()) ? Want::Tensor : Want::Holder, Init, At, Depth + 1))
          return L;
      return std::nullopt;
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      for (const Expr *Arg : Construct->arguments())
        if (MaybeLeaf L = holder(Arg, At, Depth + 1))
          return L;
      return std::nullopt;
    }
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
      if (listsParameters(MCE))
        return LeafFact{LeafKind::Parameter, MCE};
      if (isOrderedDict(MCE->getImplicitObjectArgument()->getType())) // its values(), an item
        return holder(MCE->getImplicitObjectArgument(), At, Depth + 1);
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      return MD && MD->getIdentifier() ? returned(MD, MCE, Depth, Want::Holder) : std::nullopt;
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E)) { // `dict[0]`, a lambda returning parameters
      if (OCE->getOperator() == OO_Subscript && isOrderedDict(OCE->getArg(0)->getType()))
        return holder(OCE->getArg(0), At, Depth + 1);
      return OCE->getOperator() == OO_Call ? returned(OCE->getDirectCallee(), OCE, Depth, Want::Holder) : std::nullopt;
    }
    // `model.parameters()` on a model of dependent type, in a template never instantiated.
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return CE->getNumArgs() == 0 && !M.callShape(CE).Resolved && M.callShape(CE).Name == "parameters"
                 ? LeafFact{LeafKind::Parameter, CE}
                 : returned(CE->getDirectCallee(), CE, Depth, Want::Holder);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return leafVar(dyn_cast<VarDecl>(DRE->getDecl()), At, Depth, Want::Holder);
    if (const auto *ME = dyn_cast<MemberExpr>(E))
      return field(ME, Depth, Want::Holder);
    return std::nullopt;
  }

  /// Library modules' parameters are their weight / bias fields (Linear, Conv, BatchNorm,
  /// Embedding, LayerNorm, RNN cells); user fields are followed to what they are given.
  MaybeLeaf field(const MemberExpr *ME, unsigned Depth, Want W) {
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field)
      return std::nullopt;
    if (isInSystemHeader(Field)) {
      if (W == Want::Tensor && isParameterFieldName(Field->getName()) && isTensorType(Field->getType()) &&
          isModuleType(QualType(Field->getParent()->getTypeForDecl(), 0)))
        return LeafFact{LeafKind::Parameter, ME};
      return std::nullopt;
    }
    if (!enter(Field))
      return std::nullopt;
    MaybeLeaf Result;
    // A copy: the walk below may add other fields' definitions to the cache.
    std::vector<Definition> Defs = defsOf(Field);
    for (bool Marks : {false, true})
      for (const Definition &D : Defs)
        if (!Result && (D.K == Definition::Mark) == Marks && D.K <= Definition::Mark)
          Result = definedValue(D, D.Value, Depth, W);
    leave(Field);
    return Result;
  }

  /// What the user field \p Field is given anywhere in this unit: its in-class initializer, then
  /// for each declaration its assignments and marks, then its constructors' initializers.
  const std::vector<Definition> &defsOf(const FieldDecl *Field) {
    auto [It, Inserted] = Fields->try_emplace(Field);
    std::vector<Definition> &Defs = It->second;
    if (!Inserted)
      return Defs;
    if (const Expr *Init = Field->getInClassInitializer())
      Defs.push_back({Definition::Init, Init, nullptr, Init});
    auto Function = functionDecl(hasBody(stmt().bind("body"))).bind("fn");
    forEachUserDecl(Ctx, [&](Decl *D) {
      std::vector<Definition> CtorInits;
      for (const BoundNodes &B : match(decl(eachOf(Function, forEachDescendant(Function))), *D, Ctx)) {
        auto Write = memberExpr(ast_matchers::member(equalsNode(Field)));
        llvm::append_range(Defs, definitionsIn(B.getNodeAs<Stmt>("body"), Write, Ctx));
        if (const auto *Ctor = B.getNodeAs<CXXConstructorDecl>("fn"))
          for (const CXXCtorInitializer *Init : Ctor->inits())
            if (Init->isWritten() && Init->getMember() == Field)
              CtorInits.push_back({Definition::Init, Init->getInit(), nullptr, Init->getInit()});
      }
      Defs.insert(Defs.end(), CtorInits.begin(), CtorInits.end());
    });
    return Defs;
  }

  Question Q;
  /// Asked for leaves: the model's cache of the user fields' definitions (see defsOf), and the
  /// point the value asked about is read at.
  FieldDefinitions *Fields;
  const Stmt *ReadAt = nullptr;
};

} // namespace

// ---- the model's questions -----------------------------------------------------------------

OriginResult AutogradModel::origin(const Expr *E) { return OriginWalk(*this).classify(E); }

OriginResult AutogradModel::originAt(const Expr *E) {
  if (!E)
    return {};
  // A value of dependent type: computed from a model output or loss, along a path nothing cut.
  if (E->isTypeDependent()) {
    std::optional<OutputCut> Cut = outputCut(E);
    if (!Cut || Cut->Cut)
      return {};
    return {TensorOrigin::GraphAttached, Cut->Output};
  }
  return origin(E);
}

std::optional<LeafFact> AutogradModel::leafAt(const Expr *E, const Stmt *At) {
  return E && At ? OriginWalk(*this, OriginWalk::Leaves, &P->Fields).leafAt(E, At) : std::nullopt;
}


bool AutogradModel::isGraphAttached(const Expr *E) {
  if (!E || isTensorType(E->getType()))
    return E && originAt(E).Kind == TensorOrigin::GraphAttached;
  // An aggregate, pair or tuple is as attached as its most attached part.
  llvm::SmallVector<const Expr *, 4> Parts;
  if (aggregateParts(E, Parts))
    return llvm::any_of(Parts, [&](const Expr *P) { return isGraphAttached(P); });
  const auto *DRE = dyn_cast<DeclRefExpr>(E);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && VD->hasLocalStorage() && VD->getInit() && VD->getInit() != E && isGraphAttached(VD->getInit());
}

bool AutogradModel::isDetached(const Expr *E) { return detachedWithin(E, Opts.CallDepth); }

bool AutogradModel::detachedWithin(const Expr *E, unsigned Depth) {
  if (!E)
    return false;
  // Not plain data: a local's origin reads Data where the walk misses one of its writes
  // (`std::tie(h, c) = ...`), and a state must not be taken for cut on that.
  if (isTensorType(E->getType()))
    return originAt(E).Kind == TensorOrigin::Detached;
  if (!canHoldGraph(E->getType()))
    return true;
  // An aggregate, pair or tuple has its graph cut when each of its parts has.
  llvm::SmallVector<const Expr *, 4> Parts;
  if (aggregateParts(E, Parts))
    return llvm::all_of(Parts, [&](const Expr *Part) { return detachedWithin(Part, Depth); });
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || isInSystemHeader(FD))
    return false;
  // A function of the user's: what every return holds; another TU's: as the index says.
  if (const FunctionDecl *Def = FD->getDefinition()) {
    llvm::SmallVector<const Expr *, 2> Returned = returnedValues(Def, Ctx);
    return Depth > 0 && !Returned.empty() &&
           llvm::all_of(Returned, [&](const Expr *R) { return detachedWithin(R, Depth - 1); });
  }
  std::optional<uint32_t> Facts = indexedFacts(FD);
  return Facts && (*Facts & FunctionSummary::ReturnsDetached);
}

bool AutogradModel::isRequiresGradLeaf(const Expr *E) {
  return E && originAt(E).Kind == TensorOrigin::RequiresGradLeaf;
}

bool AutogradModel::returnsGraphThrough(const FunctionDecl *FD, unsigned Param) {
  const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
  if (!Def || Param >= Def->getNumParams() || !isTensorType(Def->getParamDecl(Param)->getType()))
    return false;
  OriginWalk Walk(*this);
  Walk.AttachedParm = Def->getParamDecl(Param);
  return llvm::any_of(returnedValues(Def, context()), [&](const Expr *Ret) {
    return isTensorType(Ret->getType()) && Walk.classify(Ret).Kind == TensorOrigin::GraphAttached;
  });
}

std::optional<OutputCut> AutogradModel::outputCut(const Expr *E) {
  OriginResult R = OriginWalk(*this, OriginWalk::Cuts).classify(E);
  if (!R.Output)
    return std::nullopt;
  return OutputCut{R.Output, R.Cut};
}

} // namespace torchtidy
