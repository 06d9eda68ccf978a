// What the questions of the provenance walk share (ProvenanceWalk.h): the definitions of a
// variable or field, the ones that reach a point, a function's returns and its callers'
// arguments; the facts about marks and parameter names the questions read; and the
// in-place ops that autograd refuses on a leaf that requires grad (AutogradModel::inplaceOp).
#include "utils/ProvenanceWalk.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

std::optional<bool> boolArgument(const CallExpr *CE, unsigned Index, ASTContext &Ctx) {
  if (CE->getNumArgs() <= Index || isa<CXXDefaultArgExpr>(CE->getArg(Index)))
    return true;
  const Expr *Arg = CE->getArg(Index)->IgnoreImplicit();
  // requires_grad(true) on TensorOptions converts to c10::optional<bool>.
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Arg); Construct && Construct->getNumArgs() == 1)
    Arg = Construct->getArg(0);
  bool Value = false;
  if (Arg->isValueDependent() || Arg->isTypeDependent() || !Arg->EvaluateAsBooleanCondition(Value, Ctx))
    return std::nullopt;
  return Value;
}

std::optional<bool> markFlag(const CallExpr *Mark, ASTContext &Ctx) {
  StringRef Name;
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Mark->getDirectCallee());
  if (isa<CXXMemberCallExpr>(Mark) && MD && MD->getIdentifier() && isTensorClass(MD->getParent()))
    Name = MD->getName();
  else if (!dependentMemberBase(Mark, Name, /*AllowArrow=*/true))
    return std::nullopt;
  if (!isMarkName(Name) || Name == "detach_")
    return Name == "detach_" ? std::optional(false) : std::nullopt;
  return Mark->getNumArgs() == 0 ? Name == "requires_grad_" : boolArgument(Mark, 0, Ctx);
}

bool isParameterFieldName(StringRef Name) {
  return Name.contains("weight") || Name.contains("bias") ||
         llvm::is_contained({StringRef("w_ih"), StringRef("w_hh"), StringRef("b_ih"), StringRef("b_hh")}, Name);
}

namespace {
/// `p.requires_grad_(flag)` on an object of dependent type, or with a dependent flag.
AST_MATCHER_P(CallExpr, dependentMarkOn, clang::ast_matchers::internal::Matcher<Expr>, Object) {
  StringRef Name;
  const Expr *Base = dependentMemberBase(&Node, Name);
  return Base && isMarkName(Name) && Object.matches(*Base->IgnoreParenImpCasts(), Finder, Builder);
}
} // namespace

// ---- definitions ---------------------------------------------------------------------------

std::vector<Definition> definitionsIn(const Stmt *Body, const clang::ast_matchers::internal::Matcher<Expr> &Target,
                                      ASTContext &Ctx) {
  std::vector<Definition> Defs;
  if (!Body)
    return Defs;
  auto T = ignoringParenImpCasts(expr(Target).bind("target"));
  auto Value = expr().bind("value");
  auto Write = stmt(anyOf(
      binaryOperation(hasOperatorName("="), hasLHS(T), hasRHS(Value)).bind("assign"),
      binaryOperation(isAssignmentOperator(), hasLHS(T), hasRHS(Value)).bind("compound"),
      callExpr(dependentMarkOn(expr(Target).bind("target"))).bind("mark"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(hasAnyName("requires_grad_", "set_requires_grad", "detach_"))))
          .bind("mark"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert", "emplace",
                                                               "push", "assign"))))
          .bind("insert"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(matchesName("_$")))).bind("mutate")));
  for (const BoundNodes &B : match(findAll(Write), *Body, Ctx)) {
    const auto *Given = B.getNodeAs<Expr>("value"); // an assignment's; a call's value is the call
    for (auto [Id, K] : {std::pair{"assign", Definition::Assign}, {"compound", Definition::Compound},
                         {"mark", Definition::Mark}, {"insert", Definition::Insert}, {"mutate", Definition::Mutate}})
      if (const auto *Site = B.getNodeAs<Expr>(Id))
        Defs.push_back({K, Site, B.getNodeAs<Expr>("target"), Given ? Given : Site});
  }
  return Defs;
}

std::vector<Definition> definitionsOf(const VarDecl *VD, ASTContext &Ctx) {
  std::vector<Definition> Defs;
  if (!VD)
    return Defs;
  if (const Expr *Init = VD->getInit())
    Defs.push_back({Definition::Init, Init, nullptr, Init});
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (FD && FD->hasBody())
    llvm::append_range(Defs, definitionsIn(FD->getBody(), declRefExpr(to(varDecl(equalsNode(VD)))), Ctx));
  return Defs;
}

std::optional<clang::ast_matchers::internal::Matcher<Expr>> writtenThrough(const ParmVarDecl *P,
                                                                          const FieldDecl *Field) {
  QualType T = P->getType();
  if (!(T->isLValueReferenceType() || T->isPointerType()) || T->getPointeeType().isConstQualified())
    return std::nullopt;
  QualType Pointee = T->getPointeeType();
  auto Ref = ignoringParenImpCasts(declRefExpr(to(parmVarDecl(equalsNode(P)))));
  if (isTensorType(Pointee) && !Field)
    return T->isPointerType() ? expr(unaryOperator(hasOperatorName("*"), hasUnaryOperand(Ref))) : expr(Ref);
  if (!Pointee->isRecordType() || isModuleType(Pointee) || isTensorType(Pointee))
    return std::nullopt;
  if (Field)
    return expr(memberExpr(ast_matchers::member(equalsNode(Field)), hasObjectExpression(Ref)));
  return expr(memberExpr(hasObjectExpression(Ref)));
}

llvm::SmallVector<const Expr *, 2> returnedValues(const FunctionDecl *FD, ASTContext &Ctx) {
  llvm::SmallVector<const Expr *, 2> Values;
  const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
  if (!Def || !Def->hasBody())
    return Values;
  for (const BoundNodes &B : match(findAll(returnStmt().bind("ret")), *Def->getBody(), Ctx)) {
    const auto *Ret = B.getNodeAs<ReturnStmt>("ret");
    if (Ret->getRetValue() && enclosingFunction(Ret, Ctx) == Def)
      Values.push_back(Ret->getRetValue());
  }
  return Values;
}

void ProvenanceWalk::into(const FunctionDecl *FD, const CallExpr *Call,
                          llvm::function_ref<void(const FunctionDecl *Def)> Walk) {
  const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
  if (!Def || !Def->hasBody() || isInSystemHeader(Def) || !enter(Def))
    return;
  Calls[Def] = Call;
  Walk(Def);
  Calls.erase(Def);
  leave(Def);
}

void ProvenanceWalk::returns(const FunctionDecl *FD, const CallExpr *Call, llvm::function_ref<bool(const Expr *)> Visit) {
  into(FD, Call, [&](const FunctionDecl *Def) {
    for (const Expr *Ret : returnedValues(Def, Ctx))
      if (Visit(Ret))
        break;
  });
}

void ProvenanceWalk::writes(const FunctionDecl *FD, const CallExpr *Call, unsigned Parm, const FieldDecl *Field,
                            llvm::function_ref<bool(const Expr *)> Visit) {
  into(FD, Call, [&](const FunctionDecl *Def) {
    auto Target = Parm < Def->getNumParams() ? writtenThrough(Def->getParamDecl(Parm), Field) : std::nullopt;
    if (!Target)
      return;
    for (const Definition &D : definitionsIn(Def->getBody(), *Target, Ctx))
      if (D.K == Definition::Assign && enclosingFunction(D.Site, Ctx) == Def && Visit(D.Value))
        break;
  });
}

void ProvenanceWalk::arguments(const ParmVarDecl *Parm,
                               llvm::function_ref<bool(const Expr *Arg, const CallExpr *Call)> Visit) {
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Parm->getParentFunctionOrMethod());
  if (auto It = Calls.find(FD); It != Calls.end()) {
    Visit(argumentFor(It->second, Parm), It->second);
    return;
  }
  for (const CallExpr *Call : FD ? M.callersOf(FD) : llvm::ArrayRef<const CallExpr *>())
    if (Visit(argumentFor(Call, Parm), Call))
      return;
}

const Expr *ProvenanceWalk::followedArgument(const ParmVarDecl *Parm) const {
  auto It = Calls.find(dyn_cast_or_null<FunctionDecl>(Parm->getParentFunctionOrMethod()));
  return It == Calls.end() ? nullptr : argumentFor(It->second, Parm);
}

ProvenanceWalk::Reaching ProvenanceWalk::reaching(const clang::ast_matchers::internal::Matcher<Expr> &Target,
                                                  llvm::function_ref<bool(const Expr *)> Same, const Stmt *Body,
                                                  const Stmt *At, const Stmt *Start) {
  llvm::SmallVector<const Stmt *, 4> Sites;
  llvm::DenseMap<const Stmt *, Definition> DefAt;
  llvm::SmallVector<Definition, 2> Others;
  Reaching R;
  for (const Definition &D : definitionsIn(Body, Target, Ctx)) {
    if (Same && !Same(D.Target))
      continue;
    // What an assignment writes denotes the value it gives; what a mark writes, the value it
    // marks, marked.
    if (D.Target == At && D.K == Definition::Assign)
      return {{D}, false};
    if (D.Target == At && D.K == Definition::Mark)
      Others.push_back(D);
    else if ((D.K == Definition::Assign || D.K == Definition::Mark) && DefAt.try_emplace(D.Site, D).second)
      Sites.push_back(D.Site);
    else if ((D.K == Definition::Compound || D.K == Definition::Insert) && M.mayRunBefore(D.Site, At))
      Others.push_back(D);
  }
  if (Start)
    Sites.push_back(Start);
  R.Incoming = !Start && llvm::none_of(Sites, [&](const Stmt *S) { return M.runsBeforeOnEveryPath(S, At); });
  // Named: a range-for keeps only llvm::reverse's range alive, not the vector it views.
  llvm::SmallVector<const Stmt *, 2> Reached = M.reachingAt(Sites, At);
  for (const Stmt *Site : llvm::reverse(Reached)) {
    if (Site == Start)
      R.Incoming = true;
    else
      R.Defs.push_back(DefAt.find(Site)->second);
  }
  // A declaration with no order to \p At (no CFG holds both) cannot rule its value out.
  R.Incoming |= Start && M.reachingAt({Start}, At).empty();
  R.Defs.append(Others.begin(), Others.end());
  return R;
}

ProvenanceWalk::Reaching ProvenanceWalk::reaching(const VarDecl *VD, const Stmt *At) {
  const auto *Owner = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!Owner || !Owner->hasBody())
    return {};
  const Stmt *Declared = isa<ParmVarDecl>(VD) ? nullptr : parentOf(VD, Ctx).get<DeclStmt>();
  return reaching(declRefExpr(to(varDecl(equalsNode(VD)))), nullptr, Owner->getBody(), At, Declared);
}

ProvenanceWalk::Reaching ProvenanceWalk::reaching(const VarDecl *VD, const FieldDecl *Field, const Stmt *At) {
  const auto *Owner = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!Owner || !Owner->hasBody())
    return {};
  auto Whole = ignoringParenImpCasts(declRefExpr(to(varDecl(equalsNode(VD)))));
  return reaching(memberExpr(member(equalsNode(Field)), hasObjectExpression(Whole)), nullptr, Owner->getBody(), At,
                  nullptr);
}

ProvenanceWalk::Reaching ProvenanceWalk::reaching(const MemberExpr *ME, const Stmt *At) {
  const FunctionDecl *FD = enclosingFunction(At, Ctx);
  if (!FD || !FD->hasBody())
    return {};
  return reaching(memberExpr(member(equalsNode(ME->getMemberDecl()))), [&](const Expr *E) { return sameExpr(E, ME); },
                  FD->getBody(), At, nullptr);
}

bool ProvenanceWalk::sameExpr(const Expr *A, const Expr *B) const {
  llvm::FoldingSetNodeID IA, IB;
  strip(A)->Profile(IA, Ctx, /*Canonical=*/true);
  strip(B)->Profile(IB, Ctx, /*Canonical=*/true);
  return IA == IB;
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

// ---- in-place ops --------------------------------------------------------------------------

namespace {

/// Methods ending in '_' that autograd's in-place check guards: not those that change metadata
/// (requires_grad, names, sharing), detach, or fail with an error of their own that no
/// NoGradGuard avoids (resize_).
bool isInplaceName(StringRef Name) {
  static const llvm::StringSet<> Exempt = {
      "requires_grad_", "detach_", "rename_", "share_memory_", "resize_", "resize_as_",
      "resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_"};
  return Name.size() > 1 && Name.ends_with("_") && !Name.starts_with("_") && !Exempt.contains(Name);
}

/// What \p DC declares under \p Name (its first declaration), if anything.
const NamedDecl *lookupIn(const DeclContext *DC, StringRef Name) {
  if (!DC || Name.empty())
    return nullptr;
  DeclContext::lookup_result R = DC->lookup(DeclarationName(&cast<Decl>(DC)->getASTContext().Idents.get(Name)));
  return R.empty() ? nullptr : R.front();
}

/// Only a tensor, or an object whose type is not known yet, can be an in-place target; the
/// leaf question then has to prove it a leaf.
bool mayBeTensor(const Expr *E) { return E && (E->isTypeDependent() || isTensorType(E->getType())); }

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
    if (lookupIn(FD->getDeclContext(), Base))
      Op.OutOfPlace = "torch::" + Base.str();
    return Op;
  } else if (!isTensorClass(MD->getParent()) || !Shape.Object) {
    return std::nullopt;
  }
  // An object of dependent type proven a leaf tensor is an at::Tensor.
  const auto *Tensor = MD ? MD->getParent()
                          : dyn_cast_or_null<CXXRecordDecl>(lookupIn(
                                dyn_cast_or_null<NamespaceDecl>(lookupIn(Ctx.getTranslationUnitDecl(), "at")), "Tensor"));
  if (lookupIn(Tensor, Base) || lookupIn(recordOf(Op.Target->getType()), Base))
    Op.OutOfPlace = Base.str();
  return Op;
}

// ---- what the origin walk asks of calls and types (Provenance.cpp) --------------------------

const CXXForRangeStmt *rangeForOf(const VarDecl *VD, ASTContext &Ctx) {
  const auto *DS = parentOf(VD, Ctx).get<DeclStmt>();
  const auto *For = DS ? parentOf(DS, Ctx).get<CXXForRangeStmt>() : nullptr;
  return For && For->getLoopVarStmt() == DS ? For : nullptr;
}

bool requestsGrad(const CallExpr *CE, ASTContext &Ctx) {
  const FunctionDecl *FD = CE->getDirectCallee();
  if (FD && FD->getIdentifier() && FD->getName() == "make_variable")
    return CE->getNumArgs() >= 2 && !isa<CXXDefaultArgExpr>(CE->getArg(1)) && boolArgument(CE, 1, Ctx) == true;
  llvm::SmallVector<const Stmt *, 2> Options = {CE};
  for (const Expr *Arg : CE->arguments())
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Arg->IgnoreUnlessSpelledInSource()))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && VD->getInit() && isSameOrDerivedFrom(recordOf(VD->getType()), names::TensorOptions))
        Options.push_back(VD->getInit());
  auto Flag = callExpr(callee(functionDecl(hasName("requires_grad")))).bind("flag");
  return llvm::any_of(Options, [&](const Stmt *S) {
    return llvm::any_of(match(findAll(Flag), *S, Ctx), [&](const BoundNodes &B) {
      return boolArgument(B.getNodeAs<CallExpr>("flag"), 0, Ctx) == true;
    });
  });
}

bool listsParameters(const CXXMemberCallExpr *Call) {
  const CXXMethodDecl *MD = Call->getMethodDecl();
  if (!MD || !MD->getIdentifier())
    return false;
  StringRef Name = MD->getName();
  QualType ObjType = Call->getImplicitObjectArgument()->getType();
  return (Name == "parameters" && (isModuleType(ObjType) || isOptimizerType(ObjType))) ||
         (Name == "named_parameters" && isModuleType(ObjType)) ||
         (Name == "params" && hasQualifiedName(MD->getParent(), "::torch::optim::OptimizerParamGroup"));
}

bool isNonDifferentiable(StringRef Name) {
  static const llvm::StringSet<> Names = {
      "detach", "data", "variable_data", "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt",
      "ge", "le", "isnan", "isinf", "isfinite", "nonzero", "sign", "logical_and", "logical_or",
      "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not", "round", "floor",
      "ceil", "trunc", "grad", "mutable_grad", "eq_", "bincount", "bucketize", "searchsorted",
      "one_hot", "multinomial", "topk_indices", "unique", "equal"}; // *_like: see isFactory
  return Names.contains(Name);
}

bool isFactory(StringRef Name) {
  static const llvm::StringSet<> Others = {"empty_strided", "bernoulli", "zeros_like", "ones_like", "empty_like",
                                           "full_like", "rand_like", "randn_like", "randint_like", "from_file",
                                           "load", "make_variable"};
  return llvm::is_contained(names::HostFactories, Name) || llvm::is_contained(names::HostMemoryWrappers, Name) ||
         Others.contains(Name);
}

bool isTupleLike(QualType T) {
  return hasQualifiedName(recordOf(T), "::std::tuple") || hasQualifiedName(recordOf(T), "::std::pair");
}

void tensorArgs(const Expr *E, llvm::SmallVectorImpl<const Expr *> &Out) {
  E = E->IgnoreUnlessSpelledInSource();
  if (const auto *IL = dyn_cast<InitListExpr>(E)) {
    for (const Expr *Init : IL->inits())
      tensorArgs(Init, Out);
  } else if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(E)) {
    tensorArgs(SIL->getSubExpr(), Out);
  } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    for (const Expr *Arg : Construct->arguments())
      tensorArgs(Arg, Out);
  } else if (isTensorType(E->getType())) {
    Out.push_back(E);
  }
}

bool isRecord(QualType T, StringRef QualifiedName) { return hasQualifiedName(recordOf(T), QualifiedName); }

bool isOrderedDict(QualType T) { return isRecord(T, "::torch::OrderedDict"); }

bool isOrderedDictItem(QualType T) { return isRecord(T, "::torch::OrderedDict::Item"); }

bool isLossModule(const Expr *Module) {
  QualType T = Module->IgnoreParenImpCasts()->getType();
  if (T->isPointerType())
    T = T->getPointeeType();
  const CXXRecordDecl *RD = recordOf(T);
  return RD && RD->getIdentifier() && RD->getName().contains("Loss") && isInSystemHeader(RD);
}

bool aggregateParts(const Expr *&E, llvm::SmallVectorImpl<const Expr *> &Parts) {
  E = E->IgnoreParenImpCasts()->IgnoreImplicit()->IgnoreParenImpCasts();
  if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E))
    E = Cast->getSubExpr()->IgnoreImplicit();
  if (const auto *IL = dyn_cast<InitListExpr>(E)) {
    Parts.append(IL->inits().begin(), IL->inits().end());
    return true;
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    Parts.append(Construct->arg_begin(), Construct->arg_end());
    return true;
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->isInStdNamespace() || !FD->getIdentifier() ||
      !llvm::is_contained({StringRef("make_pair"), StringRef("make_tuple"), StringRef("forward_as_tuple")},
                          FD->getName()))
    return false;
  Parts.append(Call->arg_begin(), Call->arg_end());
  return true;
}

} // namespace torchtidy
