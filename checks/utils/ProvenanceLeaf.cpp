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
  const auto *DS = parentOf(VD, Ctx).get<DeclStmt>();
  const auto *For = DS ? parentOf(DS, Ctx).get<CXXForRangeStmt>() : nullptr;
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

bool isRecord(QualType T, StringRef QualifiedName) { return hasQualifiedName(recordOf(T), QualifiedName); }
bool isOrderedDict(QualType T) { return isRecord(T, "::torch::OrderedDict"); }
bool isOrderedDictItem(QualType T) { return isRecord(T, "::torch::OrderedDict::Item"); }

bool recordHasMember(const CXXRecordDecl *RD, StringRef Name) {
  return RD && !Name.empty() && !RD->lookup(DeclarationName(&RD->getASTContext().Idents.get(Name))).empty();
}

/// Only a tensor, or an object whose type is not known yet, can be an in-place target; the
/// resolver then has to prove it a leaf.
bool mayBeTensor(const Expr *E) { return E && (E->isTypeDependent() || isTensorType(E->getType())); }

const CXXRecordDecl *tensorClass(ASTContext &Ctx) {
  auto LookupIn = [&](const DeclContext *DC, StringRef Name) {
    DeclContext::lookup_result R = DC->lookup(DeclarationName(&Ctx.Idents.get(Name)));
    return R.empty() ? nullptr : R.front();
  };
  const auto *At = dyn_cast_or_null<NamespaceDecl>(LookupIn(Ctx.getTranslationUnitDecl(), "at"));
  const auto *RD = At ? dyn_cast_or_null<CXXRecordDecl>(LookupIn(At, "Tensor")) : nullptr;
  return RD ? RD->getDefinition() : nullptr;
}

using Leaf = LeafFact;
using MaybeLeaf = std::optional<Leaf>;


/// Decides whether an expression denotes a leaf tensor that requires grad (or a view of
/// one) at a given point. Local variables are followed flow-sensitively: the last
/// assignment or requires_grad mark before the point decides.
class LeafResolver : public ProvenanceWalk {
public:
  LeafResolver(AutogradModel &M, llvm::DenseMap<const FieldDecl *, std::vector<Definition>> &FieldCache)
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
      llvm::SmallVector<Definition, 2> Defs = reaching(ME, At, Incoming);
      return anyReaching(Defs, Incoming, At, Depth, Want::Tensor, [&] { return field(ME, Depth, Want::Tensor); });
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
    if (isTensorClass(MD->getParent())) {
      // `(a * b).requires_grad_()` on a graph-attached result leaves it a non-leaf.
      if (Name == "requires_grad_" || Name == "set_requires_grad")
        return markFlag(MCE, Ctx) == true && M.origin(Obj).Kind != TensorOrigin::GraphAttached
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
    if ((isRecord(T, "::std::vector") && (Name == "at" || Name == "front" || Name == "back")) ||
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
      if (isRecord(Obj->getType(), "::std::vector") || (isOrderedDict(Obj->getType()) && isTensorType(OCE->getType())))
        return holder(Obj, At, Depth + 1);
      return std::nullopt;
    case OO_Star:
    case OO_Arrow:
      if (isOrderedDictItem(Obj->getType()))
        return holder(Obj, At, Depth + 1);
      return std::nullopt;
    default:
      if (std::optional<InplaceOp> Op = M.inplaceOp(OCE); Op && !Op->IsAssignment)
        return tensor(Op->Target, At, Depth + 1);
      return std::nullopt;
    }
  }

  MaybeLeaf freeCall(const CallExpr *CE, const Stmt *At, unsigned Depth) {
    if (std::optional<InplaceOp> Op = M.inplaceOp(CE))
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

  /// The leaf one of \p Defs (see reaching) gives; with \p Incoming, else the one \p Otherwise
  /// finds.
  MaybeLeaf anyReaching(llvm::ArrayRef<Definition> Defs, bool Incoming, const Stmt *At, unsigned Depth, Want W,
                        llvm::function_ref<MaybeLeaf()> Otherwise) {
    for (const Definition &D : Defs)
      if (MaybeLeaf L = definedValue(D, At, Depth, W))
        return L;
    return Incoming ? Otherwise() : std::nullopt;
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
                 ? tensor(Call->getArg(0), Call, Depth + 1)
                 : std::nullopt;
    if (D.K == Definition::Compound)
      return std::nullopt;
    bool Dependent = Call && dependentMemberBase(Call, Name, /*AllowArrow=*/true);
    if ((Dependent && isMarkName(Name)) ||
        (isa<CXXMemberCallExpr>(D.Value) && isMarkName(Name) && isTensorClass(MD->getParent())))
      return W == Want::Tensor && markFlag(Call, Ctx) == true ? MaybeLeaf(Leaf{LeafKind::Marked, Call})
                 : std::nullopt;
    return want(W, D.Value, At, Depth + 1);
  }

  /// A variable at \p At: the leaf a definition that reaches At gives (see reaching).
  MaybeLeaf var(const VarDecl *VD, const Stmt *At, unsigned Depth, Want W) {
    if (!VD || !enter(VD))
      return std::nullopt;
    MaybeLeaf Result;
    bool Incoming = true;
    if (!VD->hasLocalStorage()) {
      Result = VD->getInit() ? want(W, VD->getInit(), At, Depth + 1) : std::nullopt;
    } else {
      llvm::SmallVector<Definition, 2> Defs = reaching(VD, At, Incoming);
      Result = anyReaching(Defs, Incoming, At, Depth, W, [&] { return incoming(VD, At, Depth, W); });
    }
    leave(VD);
    return Result;
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
        return Leaf{LeafKind::Parameter, MCE};
      if (isOrderedDict(MCE->getImplicitObjectArgument()->getType())) // its values(), an item
        return holder(MCE->getImplicitObjectArgument(), At, Depth + 1);
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      return MD && MD->getIdentifier() ? returnedBy(MD, MCE, Depth, Want::Holder) : std::nullopt;
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E)) // `dict[0]`
      return OCE->getOperator() == OO_Subscript && isOrderedDict(OCE->getArg(0)->getType())
                 ? holder(OCE->getArg(0), At, Depth + 1)
                 : std::nullopt;
    // `model.parameters()` on a model of dependent type, in a template never instantiated.
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return CE->getNumArgs() == 0 && !M.callShape(CE).Resolved && M.callShape(CE).Name == "parameters"
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
      if (W == Want::Tensor && isParameterFieldName(Field->getName()) && isTensorType(Field->getType()) &&
          isModuleType(QualType(Field->getParent()->getTypeForDecl(), 0)))
        return Leaf{LeafKind::Parameter, ME};
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
    auto [It, Inserted] = FieldCache.try_emplace(Field);
    std::vector<Definition> &Defs = It->second;
    if (!Inserted)
      return Defs;
    if (const Expr *Init = Field->getInClassInitializer())
      Defs.push_back({Definition::Init, Init, nullptr, Init});
    auto Function = functionDecl(hasBody(stmt().bind("body"))).bind("fn");
    forEachUserDecl(Ctx, [&](Decl *D) {
      std::vector<Definition> CtorInits;
      for (const BoundNodes &B : match(decl(eachOf(Function, forEachDescendant(Function))), *D, Ctx)) {
        for (const Definition &Def : definitionsIn(B.getNodeAs<Stmt>("body"), memberExpr(member(equalsNode(Field))), Ctx))
          Defs.push_back(Def);
        if (const auto *Ctor = B.getNodeAs<CXXConstructorDecl>("fn"))
          for (const CXXCtorInitializer *Init : Ctor->inits())
            if (Init->isWritten() && Init->getMember() == Field)
              CtorInits.push_back({Definition::Init, Init->getInit(), nullptr, Init->getInit()});
      }
      Defs.insert(Defs.end(), CtorInits.begin(), CtorInits.end());
    });
    return Defs;
  }

  llvm::DenseMap<const FieldDecl *, std::vector<Definition>> &FieldCache;
};

} // namespace

std::optional<InplaceOp> AutogradModel::inplaceOp(const Expr *E) {
  // `w -= lr * g`, also in a template nobody instantiates; `t[0] = x` (on an rvalue: fill_/copy_),
  // where `t = x` on an lvalue rebinds the handle.
  const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(E);
  const auto *BO = dyn_cast_or_null<BinaryOperator>(E);
  if ((OCE && OCE->isAssignmentOp() && OCE->getNumArgs() == 2) ||
      (BO && BO->isCompoundAssignmentOp() && BO->isTypeDependent())) {
    const Expr *Target = OCE ? OCE->getArg(0) : BO->getLHS();
    StringRef Spelling = OCE ? getOperatorSpelling(OCE->getOperator()) : BO->getOpcodeStr();
    const auto *MD = OCE ? dyn_cast_or_null<CXXMethodDecl>(OCE->getDirectCallee()) : nullptr;
    bool Resolved = OCE && OCE->getDirectCallee();
    if (Spelling == "<<=" || Spelling == ">>=" || (Resolved ? !MD || !isTensorClass(MD->getParent()) : !mayBeTensor(Target)))
      return std::nullopt;
    if (Spelling == "=")
      return Resolved && MD->getRefQualifier() == RQ_RValue ? std::optional(InplaceOp{Target, "=", "", true})
                                                            : std::nullopt;
    return InplaceOp{Target, Spelling.str(), Spelling.drop_back().str(), false};
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  if (!Call || OCE)
    return std::nullopt;
  CallShape Shape = callShape(Call);
  if (!isInplaceName(Shape.Name))
    return std::nullopt;
  StringRef Base = Shape.Name.drop_back(), Member;
  InplaceOp Op{Shape.Object, Shape.Name.str(), "", false};
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Shape.Callee);
  if (!Shape.Resolved) { // `w.mul_(scale)` on an object of dependent type
    if (!dependentMemberBase(Call, Member) || !mayBeTensor(Shape.Object))
      return std::nullopt;
  } else if (!MD) {
    // at::relu_(t) / torch::sigmoid_(t). torch::nn::init::*_ run under their own NoGradGuard
    // and torch::nn::utils::*_ touch gradients only: both live in nested namespaces.
    const FunctionDecl *FD = Shape.Callee;
    if (Call->getNumArgs() == 0 || !isTensorType(Call->getArg(0)->getType()) ||
        !(hasQualifiedName(FD, ("::at::" + Shape.Name).str()) || hasQualifiedName(FD, ("::torch::" + Shape.Name).str())))
      return std::nullopt;
    Op.Target = Call->getArg(0);
    if (!FD->getDeclContext()->lookup(DeclarationName(&Ctx.Idents.get(Base))).empty())
      Op.OutOfPlace = "torch::" + Base.str();
    return Op;
  } else if (!isTensorClass(MD->getParent()) || !Shape.Object) {
    return std::nullopt;
  }
  // An object of dependent type proven a leaf tensor is an at::Tensor.
  if (recordHasMember(MD ? MD->getParent() : tensorClass(Ctx), Base) ||
      recordHasMember(recordOf(Op.Target->getType()), Base))
    Op.OutOfPlace = Base.str();
  return Op;
}

std::optional<LeafFact> AutogradModel::leafAt(const Expr *E, const Stmt *At) {
  return E && At ? LeafResolver(*this, P->Fields).tensor(E, At) : std::nullopt;
}

} // namespace torchtidy
