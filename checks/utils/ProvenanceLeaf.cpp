// The leaf question of the provenance walk (AutogradModel::leafAt), and the in-place ops that
// autograd refuses on such leaves (AutogradModel::inplaceOp).
#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"
#include "utils/Provenance.h"
#include "utils/ProvenanceWalk.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

const CXXForRangeStmt *rangeForOf(const VarDecl *VD, ASTContext &Ctx) {
  auto Parents = Ctx.getParents(*VD);
  const auto *DS = Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
  if (!DS)
    return nullptr;
  auto Grand = Ctx.getParents(*DS);
  const auto *For = Grand.empty() ? nullptr : Grand[0].get<CXXForRangeStmt>();
  return For && For->getLoopVarStmt() == DS ? For : nullptr;
}

namespace {

/// Methods ending in '_' that autograd's in-place check does not guard: they change
/// metadata (requires_grad, names, sharing), detach, or fail with an error of their own
/// that no NoGradGuard avoids (resize_).
bool isExemptUnderscoreName(StringRef Name) {
  static const llvm::StringSet<> Names = {
      "requires_grad_", "detach_", "rename_", "share_memory_", "resize_", "resize_as_",
      "resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_"};
  return Names.contains(Name);
}

bool isInplaceName(StringRef Name) {
  return Name.size() > 1 && Name.ends_with("_") && !Name.starts_with("_") &&
         !isExemptUnderscoreName(Name);
}

bool isTensorRecord(const CXXRecordDecl *RD) {
  return isSameOrDerivedFrom(RD, names::Tensor) || isSameOrDerivedFrom(RD, names::TensorBase);
}

/// Whether \p D is declared directly in namespace \p NS (a top-level namespace).
bool isInTopLevelNamespace(const Decl *D, StringRef NS) {
  const DeclContext *DC = D->getDeclContext();
  while (DC && DC->isInlineNamespace())
    DC = DC->getParent();
  const auto *N = dyn_cast_or_null<NamespaceDecl>(DC);
  return N && N->getName() == NS && N->getParent()->getRedeclContext()->isTranslationUnit();
}

/// A record named \p Name whose enclosing class or namespace is \p Parent.
bool isRecordNamed(const CXXRecordDecl *RD, StringRef Name, StringRef Parent) {
  if (!RD || !RD->getIdentifier() || RD->getName() != Name)
    return false;
  const auto *P = dyn_cast<NamedDecl>(RD->getDeclContext());
  return P && P->getIdentifier() && P->getName() == Parent;
}

bool isOrderedDict(QualType T) { return isRecordNamed(recordOf(T), "OrderedDict", "torch"); }
bool isOrderedDictItem(QualType T) { return isRecordNamed(recordOf(T), "Item", "OrderedDict"); }
bool isStdVector(QualType T) { return isRecordNamed(recordOf(T), "vector", "std"); }

bool recordHasMember(const CXXRecordDecl *RD, StringRef Name) {
  if (!RD || Name.empty())
    return false;
  return !RD->lookup(DeclarationName(&RD->getASTContext().Idents.get(Name))).empty();
}

std::optional<InplaceOp> asInplaceOp(const CallExpr *CE) {
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (!MD || !MD->getIdentifier() || !isInplaceName(MD->getName()) ||
        !isTensorRecord(MD->getParent()))
      return std::nullopt;
    InplaceOp Op{MCE->getImplicitObjectArgument(), MD->getName().str(), "", false};
    StringRef Base = MD->getName().drop_back();
    if (recordHasMember(MD->getParent(), Base) ||
        recordHasMember(recordOf(Op.Target->getType()), Base))
      Op.OutOfPlace = Base.str();
    return Op;
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(CE)) {
    const auto *MD = dyn_cast_or_null<CXXMethodDecl>(OCE->getDirectCallee());
    if (!MD || !isTensorRecord(MD->getParent()) || OCE->getNumArgs() != 2)
      return std::nullopt;
    StringRef Spelling = getOperatorSpelling(OCE->getOperator());
    switch (OCE->getOperator()) {
    case OO_PlusEqual: case OO_MinusEqual: case OO_StarEqual: case OO_SlashEqual:
    case OO_AmpEqual: case OO_PipeEqual: case OO_CaretEqual:
      return InplaceOp{OCE->getArg(0), Spelling.str(), Spelling.drop_back().str(), false};
    case OO_Equal:
      // `t = x` on an lvalue rebinds the handle; `t[0] = x` (an rvalue) runs fill_/copy_.
      if (MD->getRefQualifier() == RQ_RValue)
        return InplaceOp{OCE->getArg(0), "=", "", true};
      return std::nullopt;
    default:
      return std::nullopt;
    }
  }
  // at::relu_(t) / torch::sigmoid_(t). torch::nn::init::*_ run under their own NoGradGuard
  // and torch::nn::utils::*_ touch gradients only: both live in nested namespaces.
  const FunctionDecl *FD = CE->getDirectCallee();
  if (!FD || isa<CXXMethodDecl>(FD) || !FD->getIdentifier() || !isInplaceName(FD->getName()) ||
      CE->getNumArgs() == 0 || !isTensorType(CE->getArg(0)->getType()) ||
      !(isInTopLevelNamespace(FD, "at") || isInTopLevelNamespace(FD, "torch")))
    return std::nullopt;
  InplaceOp Op{CE->getArg(0), FD->getName().str(), "", false};
  StringRef Base = FD->getName().drop_back();
  if (!FD->getDeclContext()->lookup(DeclarationName(&FD->getASTContext().Idents.get(Base))).empty())
    Op.OutOfPlace = "torch::" + Base.str();
  return Op;
}

/// The name of an unresolved member call, empty when \p E is not one.
StringRef unresolvedMemberCallName(const Expr *E) {
  const auto *Call = dyn_cast_or_null<CallExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  StringRef Name;
  return Call && dependentMemberBase(Call, Name, /*AllowArrow=*/true) ? Name
                                                                                  : StringRef();
}

/// Only a tensor, or an object whose type is not known yet, can be an in-place target; the
/// resolver then has to prove it a leaf.
bool mayBeTensor(const Expr *E) { return E->isTypeDependent() || isTensorType(E->getType()); }

/// An in-place operation in a template that is never instantiated, which cannot be
/// resolved because some operand has a dependent type: `w.mul_(scale)`, `w -= lr * g`.
std::optional<InplaceOp> asDependentInplaceOp(const Expr *E) {
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    StringRef Name;
    const Expr *Base = dependentMemberBase(CE, Name);
    if (!Base || !isInplaceName(Name) || !mayBeTensor(Base))
      return std::nullopt;
    InplaceOp Op{Base, Name.str(), "", false};
    if (recordHasMember(recordOf(Base->getType()), Name.drop_back()))
      Op.OutOfPlace = Name.drop_back().str();
    return Op;
  }
  const Expr *LHS = nullptr;
  StringRef Spelling;
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && BO->isCompoundAssignmentOp() && !BO->isShiftAssignOp() && BO->isTypeDependent()) {
    LHS = BO->getLHS();
    Spelling = BO->getOpcodeStr();
  } else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E);
             OCE && !OCE->getDirectCallee() && OCE->getNumArgs() == 2 &&
             OCE->isAssignmentOp() && OCE->getOperator() != OO_Equal &&
             OCE->getOperator() != OO_LessLessEqual && OCE->getOperator() != OO_GreaterGreaterEqual) {
    LHS = OCE->getArg(0);
    Spelling = getOperatorSpelling(OCE->getOperator());
  }
  if (!LHS || !mayBeTensor(LHS) || Spelling.empty())
    return std::nullopt;
  return InplaceOp{LHS, Spelling.str(), Spelling.drop_back().str(), false};
}

const CXXRecordDecl *tensorClass(ASTContext &Ctx) {
  auto LookupIn = [&](const DeclContext *DC, StringRef Name) {
    DeclContext::lookup_result R = DC->lookup(DeclarationName(&Ctx.Idents.get(Name)));
    return R.empty() ? nullptr : R.front();
  };
  const auto *At = dyn_cast_or_null<NamespaceDecl>(LookupIn(Ctx.getTranslationUnitDecl(), "at"));
  const auto *RD = At ? dyn_cast_or_null<CXXRecordDecl>(LookupIn(At, "Tensor")) : nullptr;
  return RD ? RD->getDefinition() : nullptr;
}

/// Whether such an unresolved mark turns requires_grad on: only a constant flag says so.
bool dependentMarkTurnsOn(const CallExpr *Mark, ASTContext &Ctx) {
  if (unresolvedMemberCallName(Mark) == "detach_")
    return false;
  if (Mark->getNumArgs() == 0)
    return unresolvedMemberCallName(Mark) == "requires_grad_";
  const Expr *Arg = Mark->getArg(0);
  bool Value = false;
  return !Arg->isValueDependent() && !Arg->isTypeDependent() &&
         Arg->EvaluateAsBooleanCondition(Value, Ctx) && Value;
}

const Expr *strip(const Expr *E) {
  while (E) {
    const Expr *Prev = E;
    E = E->IgnoreImplicit()->IgnoreParenImpCasts();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E);
        Construct && Construct->getNumArgs() == 1 && !isa<CXXTemporaryObjectExpr>(Construct))
      E = Construct->getArg(0);
    else if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E))
      E = Cast->getSubExpr();
    if (E == Prev)
      return E;
  }
  return E;
}

using Leaf = LeafFact;
using MaybeLeaf = std::optional<Leaf>;


/// Decides whether an expression denotes a leaf tensor that requires grad (or a view of
/// one) at a given point. Local variables are followed flow-sensitively: the last
/// assignment or requires_grad mark before the point decides.
class LeafResolver : public ProvenanceWalk {
public:
  LeafResolver(AutogradModel &M, llvm::DenseMap<const FieldDecl *, FieldDefs> &FieldCache)
      : ProvenanceWalk(M), FieldCache(FieldCache) {}

  MaybeLeaf tensor(const Expr *E, const Stmt *At, unsigned Depth = 0) {
    E = strip(E);
    if (!E || Depth > MaxDepth)
      return std::nullopt;
    // What an unresolved expression yields is unknown until instantiation; a variable of
    // dependent type is still followed to where its value comes from.
    if (E->isTypeDependent() && !isa<DeclRefExpr>(E))
      return std::nullopt;
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E))
      return memberCall(MCE, At, Depth);
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
      return operatorCall(OCE, At, Depth);
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return freeCall(CE, At, Depth);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return var(dyn_cast<VarDecl>(DRE->getDecl()), At, Depth, Want::Tensor);
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      bool Incoming = true;
      llvm::SmallVector<const Stmt *, 2> Values = eventsReaching(ME, At, Incoming);
      return anyReaching(Values, Incoming, At, Depth, Want::Tensor, [&] { return field(ME, Depth, Want::Tensor); });
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      if (MaybeLeaf L = tensor(CO->getTrueExpr(), At, Depth + 1))
        return L;
      return tensor(CO->getFalseExpr(), At, Depth + 1);
    }
    return std::nullopt;
  }

private:
  /// What an expression is asked to be: a tensor, or what holds tensors (a std::vector or
  /// initializer list of them, a torch::OrderedDict of them, one of its items).
  enum class Want { Tensor, Holder };

  MaybeLeaf want(Want W, const Expr *E, const Stmt *At, unsigned Depth) {
    return W == Want::Tensor ? tensor(E, At, Depth) : holder(E, At, Depth);
  }

  static MaybeLeaf asView(MaybeLeaf L) {
    if (L)
      L->View = true;
    return L;
  }

  MaybeLeaf memberCall(const CXXMemberCallExpr *MCE, const Stmt *At, unsigned Depth) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (!MD || !MD->getIdentifier())
      return std::nullopt;
    StringRef Name = MD->getName();
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (isTensorRecord(MD->getParent())) {
      // `(a * b).requires_grad_()` on a graph-attached result leaves it a non-leaf.
      if (Name == "requires_grad_" || Name == "set_requires_grad")
        return markTurnsOn(MCE) && M.origin(Obj).Kind != TensorOrigin::GraphAttached
                   ? MaybeLeaf(Leaf{LeafKind::Marked, MCE})
                   : std::nullopt;
      if (isInplaceName(Name)) // returns its object
        return tensor(Obj, At, Depth + 1);
      // Views share the base's storage and autograd identity: an in-place op on a view of a
      // leaf that requires grad throws just as one on the leaf does.
      if (viewedTensor(MCE))
        return asView(tensor(Obj, At, Depth + 1));
      return std::nullopt;
    }
    if (Name == "register_parameter")
      return boolArgument(MCE, 2, Ctx) ? MaybeLeaf(Leaf{LeafKind::Parameter, MCE}) : std::nullopt;
    QualType T = Obj->getType();
    if ((isStdVector(T) && (Name == "at" || Name == "front" || Name == "back")) ||
        (isOrderedDict(T) && Name == "at") || (isOrderedDictItem(T) && Name == "value"))
      return holder(Obj, At, Depth + 1);
    return returnedBy(MD, MCE, Depth, Want::Tensor);
  }

  MaybeLeaf operatorCall(const CXXOperatorCallExpr *OCE, const Stmt *At, unsigned Depth) {
    if (OCE->getNumArgs() == 0)
      return std::nullopt;
    const Expr *Obj = OCE->getArg(0);
    switch (OCE->getOperator()) {
    case OO_Subscript:
      if (isTensorType(Obj->getType()))
        return asView(tensor(Obj, At, Depth + 1));
      if (isStdVector(Obj->getType()) || (isOrderedDict(Obj->getType()) && isTensorType(OCE->getType())))
        return holder(Obj, At, Depth + 1);
      return std::nullopt;
    case OO_Star:
    case OO_Arrow:
      if (isOrderedDictItem(Obj->getType()))
        return holder(Obj, At, Depth + 1);
      return std::nullopt;
    default:
      if (std::optional<InplaceOp> Op = asInplaceOp(OCE); Op && !Op->IsAssignment)
        return tensor(Op->Target, At, Depth + 1);
      return std::nullopt;
    }
  }

  MaybeLeaf freeCall(const CallExpr *CE, const Stmt *At, unsigned Depth) {
    if (std::optional<InplaceOp> Op = asInplaceOp(CE))
      return tensor(Op->Target, At, Depth + 1);
    const FunctionDecl *FD = CE->getDirectCallee();
    if (FD && !isInSystemHeader(FD))
      return returnedBy(FD, CE, Depth, Want::Tensor);
    // Factories with requires_grad options, requires_grad_() chains.
    OriginResult R = M.origin(CE);
    if (R.Kind != TensorOrigin::RequiresGradLeaf)
      return std::nullopt;
    const Stmt *Source = R.Source ? R.Source : CE;
    const auto *Mark = dyn_cast<CXXMemberCallExpr>(Source);
    return Leaf{Mark ? LeafKind::Marked : LeafKind::Created, Source};
  }

  /// A user function returning (a reference to) a leaf: any return statement decides.
  MaybeLeaf returnedBy(const FunctionDecl *FD, const CallExpr *Call, unsigned Depth, Want W) {
    MaybeLeaf L;
    returns(FD, Call, [&](const Expr *Ret) { return (L = want(W, Ret, Ret, Depth + 1)).has_value(); });
    return L;
  }

  static bool markTurnsOn(const CXXMemberCallExpr *Mark) {
    return Mark->getMethodDecl()->getName() != "detach_" &&
           boolArgument(Mark, 0, Mark->getMethodDecl()->getASTContext());
  }

  /// The assignments to, and requires_grad marks on, a \p Target expression in \p Body that
  /// may reach \p At (AutogradModel::reachingAt; \p Same picks the matches that denote the same
  /// tensor): the assigned values and the marks, the latest in source order first. \p Start,
  /// where the value \p Target held before them is given (a local's declaration; null: the
  /// function's entry), reaching \p At sets \p Incoming.
  llvm::SmallVector<const Stmt *, 2> eventsReaching(const clang::ast_matchers::internal::Matcher<Expr> &Target,
                                                   llvm::function_ref<bool(const Expr *)> Same, const Stmt *Body,
                                                   const Stmt *At, const Stmt *Start, bool &Incoming) {
    llvm::SmallVector<const Stmt *, 4> Sites;
    llvm::DenseMap<const Stmt *, const Stmt *> ValueAt;
    for (const Definition &D : definitionsIn(Body, Target, Ctx))
      if ((D.K == Definition::Assign || D.K == Definition::Mark) && Same(D.Target) && ValueAt.try_emplace(D.Site, D.Value).second)
        Sites.push_back(D.Site);
    if (Start)
      Sites.push_back(Start);
    llvm::SmallVector<const Stmt *, 2> Values;
    Incoming = !Start && llvm::none_of(Sites, [&](const Stmt *S) { return M.runsBeforeOnEveryPath(S, At); });
    for (const Stmt *Site : llvm::reverse(M.reachingAt(Sites, At))) {
      if (Site == Start)
        Incoming = true;
      else
        Values.push_back(ValueAt.lookup(Site));
    }
    // A declaration with no order to \p At (no CFG holds both) cannot rule its value out.
    Incoming |= Start && M.reachingAt({Start}, At).empty();
    return Values;
  }

  /// `fc->weight.set_requires_grad(false)` earlier in the function: the same member
  /// expression, spelled the same way, decides.
  llvm::SmallVector<const Stmt *, 2> eventsReaching(const MemberExpr *ME, const Stmt *At, bool &Incoming) {
    Incoming = true;
    const FunctionDecl *FD = enclosingFunction(At, Ctx);
    if (!FD || !FD->hasBody())
      return {};
    return eventsReaching(memberExpr(member(equalsNode(ME->getMemberDecl()))),
                          [&](const Expr *E) { return sameExpr(E, ME); }, FD->getBody(), At, nullptr, Incoming);
  }

  /// The leaf one of \p Values (see eventsReaching) gives; with \p Incoming, else the one \p
  /// Otherwise finds.
  MaybeLeaf anyReaching(llvm::ArrayRef<const Stmt *> Values, bool Incoming, const Stmt *At, unsigned Depth, Want W,
                        llvm::function_ref<MaybeLeaf()> Otherwise) {
    for (const Stmt *Value : Values)
      if (MaybeLeaf L = eventValue(Value, At, Depth, W))
        return L;
    return Incoming ? Otherwise() : std::nullopt;
  }

  bool sameExpr(const Expr *A, const Expr *B) const {
    llvm::FoldingSetNodeID IA, IB;
    strip(A)->Profile(IA, Ctx, /*Canonical=*/true);
    strip(B)->Profile(IB, Ctx, /*Canonical=*/true);
    return IA == IB;
  }

  /// A value an event gave the variable: a mark decides by itself, an assignment by its
  /// right-hand side.
  MaybeLeaf eventValue(const Stmt *Value, const Stmt *At, unsigned Depth, Want W) {
    if (const auto *Mark = dyn_cast<CallExpr>(Value); Mark && isMarkName(unresolvedMemberCallName(Mark)))
      return W == Want::Tensor && dependentMarkTurnsOn(Mark, Ctx) ? MaybeLeaf(Leaf{LeafKind::Marked, Mark})
                                                                 : std::nullopt;
    if (const auto *Mark = dyn_cast<CXXMemberCallExpr>(Value);
        Mark && Mark->getMethodDecl() && Mark->getMethodDecl()->getIdentifier() &&
        isMarkName(Mark->getMethodDecl()->getName()) && isTensorRecord(Mark->getMethodDecl()->getParent()))
      return W == Want::Tensor && markTurnsOn(Mark) ? MaybeLeaf(Leaf{LeafKind::Marked, Mark})
                                                    : std::nullopt;
    return want(W, cast<Expr>(Value), At, Depth + 1);
  }

  MaybeLeaf var(const VarDecl *VD, const Stmt *At, unsigned Depth, Want W) {
    if (!VD || !enter(VD))
      return std::nullopt;
    MaybeLeaf Result = varImpl(VD, At, Depth, W);
    leave(VD);
    return Result;
  }

  MaybeLeaf varImpl(const VarDecl *VD, const Stmt *At, unsigned Depth, Want W) {
    if (!VD->hasLocalStorage())
      return VD->getInit() ? want(W, VD->getInit(), At, Depth + 1) : std::nullopt;
    const auto *Owner = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    bool Incoming = true;
    llvm::SmallVector<const Stmt *, 2> Values;
    if (Owner && Owner->hasBody()) {
      auto Parents = Ctx.getParents(*VD);
      const Stmt *Declared = isa<ParmVarDecl>(VD) || Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
      Values = eventsReaching(declRefExpr(to(varDecl(equalsNode(VD)))), [](const Expr *) { return true; },
                              Owner->getBody(), At, Declared, Incoming);
    }
    return anyReaching(Values, Incoming, At, Depth, W, [&] { return incoming(VD, At, Depth, W); });
  }

  /// What the local \p VD holds before any assignment or mark: a parameter's argument, a loop
  /// variable's element, a container's pushed elements, the initializer.
  MaybeLeaf incoming(const VarDecl *VD, const Stmt *At, unsigned Depth, Want W) {
    if (const auto *PVD = dyn_cast<ParmVarDecl>(VD))
      return argument(PVD, Depth, W);
    if (const CXXForRangeStmt *For = rangeForOf(VD, Ctx)) {
      const Expr *Range = For->getRangeInit();
      if (W == Want::Tensor)
        return frozenBefore(For) ? std::nullopt : holder(Range, For, Depth + 1);
      return isOrderedDictItem(VD->getType()) ? holder(Range, For, Depth + 1) : std::nullopt;
    }
    if (W == Want::Holder)
      if (MaybeLeaf L = pushedBefore(VD, At, Depth))
        return L;
    // A default-constructed tensor is undefined, not a leaf.
    return VD->getInit() ? want(W, VD->getInit(), VD->getInit(), Depth + 1) : std::nullopt;
  }

  /// `params.push_back(w)` before \p At: the container holds that leaf.
  MaybeLeaf pushedBefore(const VarDecl *VD, const Stmt *At, unsigned Depth) {
    for (const Definition &D : definitionsOf(VD, Ctx)) {
      const auto *Push = dyn_cast<CXXMemberCallExpr>(D.Value);
      if (D.K != Definition::Insert || Push->getNumArgs() != 1 ||
          !llvm::is_contained({StringRef("push_back"), StringRef("emplace_back")}, Push->getMethodDecl()->getName()))
        continue;
      if (M.mayRunBefore(Push, At) && isTensorType(Push->getArg(0)->getType()))
        if (MaybeLeaf L = tensor(Push->getArg(0), Push, Depth + 1))
          return L;
    }
    return std::nullopt;
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
      const Expr *Mark = nullptr;
      for (const Definition &D :
           definitionsIn(Other->getBody(), declRefExpr(to(varDecl(equalsNode(Other->getLoopVariable())))), Ctx))
        if (D.K == Definition::Mark && !(isa<CXXMemberCallExpr>(D.Value) &&
                                         cast<CXXMemberCallExpr>(D.Value)->getMethodDecl()->getName() == "detach_"))
          Mark = D.Value;
      if (!Mark)
        continue;
      const auto *Resolved = dyn_cast<CXXMemberCallExpr>(Mark);
      Loops.push_back(Other);
      Freezes[Other] = Resolved ? !markTurnsOn(Resolved) : !dependentMarkTurnsOn(cast<CallExpr>(Mark), Ctx);
    }
    llvm::SmallVector<const Stmt *, 2> Reaching = M.reachingAt(Loops, For);
    return !Reaching.empty() && llvm::all_of(Reaching, [&](const Stmt *L) { return Freezes.lookup(L); });
  }

  /// A function parameter: a leaf when a call outside a no-grad scope passes one (see arguments).
  MaybeLeaf argument(const ParmVarDecl *PVD, unsigned Depth, Want W) {
    MaybeLeaf L;
    arguments(PVD, [&](const Expr *Arg, const CallExpr *Call) {
      return Arg && !M.gradDisabledAt(Call) && (L = want(W, Arg, Call, Depth + 2)).has_value();
    });
    return L;
  }

  /// What holds leaves that require grad: module->parameters(), optimizer.parameters(),
  /// param_group.params(), {w, b}; module->named_parameters(), its values and its items.
  MaybeLeaf holder(const Expr *E, const Stmt *At, unsigned Depth) {
    E = strip(E);
    if (!E || Depth > MaxDepth)
      return std::nullopt;
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(E))
      return holder(SIL->getSubExpr(), At, Depth + 1);
    if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
      return holder(MTE->getSubExpr(), At, Depth + 1);
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
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      if (!MD || !MD->getIdentifier())
        return std::nullopt;
      StringRef Name = MD->getName();
      QualType ObjType = MCE->getImplicitObjectArgument()->getType();
      if ((Name == "parameters" && (isModuleType(ObjType) || isOptimizerType(ObjType))) ||
          (Name == "named_parameters" && isModuleType(ObjType)) ||
          (Name == "params" && isRecordNamed(MD->getParent(), "OptimizerParamGroup", "optim")))
        return Leaf{LeafKind::Parameter, MCE};
      if (isOrderedDict(ObjType)) // its values(), an item
        return holder(MCE->getImplicitObjectArgument(), At, Depth + 1);
      return returnedBy(MD, MCE, Depth, Want::Holder);
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E)) // `dict[0]`
      return OCE->getOperator() == OO_Subscript && isOrderedDict(OCE->getArg(0)->getType())
                 ? holder(OCE->getArg(0), At, Depth + 1)
                 : std::nullopt;
    // `model.parameters()` on a model of dependent type, in a template never instantiated.
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return CE->getNumArgs() == 0 && unresolvedMemberCallName(CE) == "parameters"
                 ? Leaf{LeafKind::Parameter, CE}
                 : returnedBy(CE->getDirectCallee(), CE, Depth, Want::Holder);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return var(dyn_cast<VarDecl>(DRE->getDecl()), At, Depth, Want::Holder);
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
      StringRef Name = Field->getName();
      bool ParamName = Name.contains("weight") || Name.contains("bias") ||
                       llvm::is_contained({StringRef("w_ih"), StringRef("w_hh"),
                                           StringRef("b_ih"), StringRef("b_hh")},
                                          Name);
      if (W == Want::Tensor && ParamName && isTensorType(Field->getType()) &&
          isModuleType(QualType(Field->getParent()->getTypeForDecl(), 0)))
        return Leaf{LeafKind::Parameter, ME};
      return std::nullopt;
    }
    if (!enter(Field))
      return std::nullopt;
    MaybeLeaf Result;
    const FieldDefs &Defs = defsOf(Field);
    for (const Expr *Value : Defs.Values)
      if ((Result = want(W, Value, Value, Depth + 1)))
        break;
    if (!Result && W == Want::Tensor)
      for (const CXXMemberCallExpr *Mark : Defs.Marks)
        if (markTurnsOn(Mark)) {
          Result = Leaf{LeafKind::Marked, Mark};
          break;
        }
    leave(Field);
    return Result;
  }

  const FieldDefs &defsOf(const FieldDecl *Field) {
    auto It = FieldCache.find(Field);
    if (It != FieldCache.end())
      return It->second;
    FieldDefs Defs;
    if (const Expr *Init = Field->getInClassInitializer())
      Defs.Values.push_back(Init);
    auto Ref = memberExpr(member(equalsNode(Field)));
    auto Matcher = stmt(anyOf(
        cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, ignoringParenImpCasts(Ref)))
            .bind("assign"),
        cxxMemberCallExpr(on(ignoringParenImpCasts(Ref)),
                          callee(cxxMethodDecl(hasAnyName("requires_grad_", "set_requires_grad"))))
            .bind("mark")));
    forEachUserDecl(Ctx, [&](Decl *D) {
      for (const BoundNodes &B : match(decl(forEachDescendant(Matcher)), *D, Ctx)) {
        if (const auto *Assign = B.getNodeAs<CXXOperatorCallExpr>("assign"))
          Defs.Values.push_back(Assign->getArg(1));
        else if (const auto *Mark = B.getNodeAs<CXXMemberCallExpr>("mark"))
          Defs.Marks.push_back(Mark);
      }
      for (const BoundNodes &B :
           match(decl(forEachDescendant(cxxConstructorDecl().bind("ctor"))), *D, Ctx))
        for (const CXXCtorInitializer *Init : B.getNodeAs<CXXConstructorDecl>("ctor")->inits())
          if (Init->isWritten() && Init->getMember() == Field)
            Defs.Values.push_back(Init->getInit());
    });
    return FieldCache.try_emplace(Field, std::move(Defs)).first->second;
  }

  llvm::DenseMap<const FieldDecl *, FieldDefs> &FieldCache;
};

} // namespace

std::optional<InplaceOp> AutogradModel::inplaceOp(const Expr *E) {
  if (!E)
    return std::nullopt;
  if (const auto *Call = dyn_cast<CallExpr>(E))
    if (std::optional<InplaceOp> Op = asInplaceOp(Call))
      return Op;
  std::optional<InplaceOp> Op = asDependentInplaceOp(E);
  // An object of dependent type proven a leaf tensor is an at::Tensor.
  if (Op && Op->OutOfPlace.empty() && isa<CallExpr>(E) &&
      recordHasMember(tensorClass(Ctx), StringRef(Op->Spelling).drop_back()))
    Op->OutOfPlace = StringRef(Op->Spelling).drop_back().str();
  return Op;
}

std::optional<LeafFact> AutogradModel::leafAt(const Expr *E, const Stmt *At) {
  return E && At ? LeafResolver(*this, P->Fields).tensor(E, At) : std::nullopt;
}

} // namespace torchtidy
