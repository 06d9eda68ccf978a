// The provenance walk (Provenance.h) and the questions the model asks of it: a tensor's
// origin (originAt; for a value of dependent type, by the names of its calls, as outputCut
// reads them), and where its path to a model output was cut (outputCut). The leaf question
// (leafAt) is in ProvenanceLeaf.cpp.
#include "utils/Provenance.h"
#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"
#include "utils/ProvenanceWalk.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
/// The boolean argument \p Index of \p CE: true when defaulted, false when not a constant
/// (a runtime flag may well be false; precision first).
bool boolArgument(const CallExpr *CE, unsigned Index, ASTContext &Ctx) {
  if (CE->getNumArgs() <= Index || isa<CXXDefaultArgExpr>(CE->getArg(Index)))
    return true;
  const Expr *Arg = CE->getArg(Index)->IgnoreImplicit();
  // requires_grad(true) on TensorOptions converts to c10::optional<bool>.
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Arg); Construct && Construct->getNumArgs() == 1)
    Arg = Construct->getArg(0);
  bool Value = false;
  return !Arg->isValueDependent() && Arg->EvaluateAsBooleanCondition(Value, Ctx) && Value;
}

bool requestsGrad(const CallExpr *CE, ASTContext &Ctx) {
  const FunctionDecl *FD = CE->getDirectCallee();
  if (FD && FD->getIdentifier() && FD->getName() == "make_variable")
    return CE->getNumArgs() >= 2 && !isa<CXXDefaultArgExpr>(CE->getArg(1)) && boolArgument(CE, 1, Ctx);
  llvm::SmallVector<const Stmt *, 2> Options = {CE};
  for (const Expr *Arg : CE->arguments())
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Arg->IgnoreUnlessSpelledInSource()))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && VD->getInit() && isSameOrDerivedFrom(recordOf(VD->getType()), names::TensorOptions))
        Options.push_back(VD->getInit());
  auto Flag = callExpr(callee(functionDecl(hasName("requires_grad")))).bind("flag");
  return llvm::any_of(Options, [&](const Stmt *S) {
    return llvm::any_of(match(findAll(Flag), *S, Ctx),
                        [&](const BoundNodes &B) { return boolArgument(B.getNodeAs<CallExpr>("flag"), 0, Ctx); });
  });
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
  if (Mark->getNumArgs() == 0 || isa<CXXDefaultArgExpr>(Mark->getArg(0)))
    return Mark->getNumArgs() != 0 || Name == "requires_grad_";
  const Expr *Arg = Mark->getArg(0)->IgnoreImplicit();
  bool Value = false;
  if (Arg->isValueDependent() || Arg->isTypeDependent() || !Arg->EvaluateAsBooleanCondition(Value, Ctx))
    return std::nullopt;
  return Value;
}

bool isParameterFieldName(StringRef Name) {
  return Name.contains("weight") || Name.contains("bias") ||
         llvm::is_contained({StringRef("w_ih"), StringRef("w_hh"), StringRef("b_ih"), StringRef("b_hh")}, Name);
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
      cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, T), hasArgument(1, Value)).bind("assign"),
      binaryOperator(isAssignmentOperator(), hasLHS(T), hasRHS(Value)).bind("assign"),
      callExpr(dependentMarkOn(expr(Target).bind("target"))).bind("mark"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(hasAnyName("requires_grad_", "set_requires_grad", "detach_"))))
          .bind("mark"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert", "emplace",
                                                               "push", "assign"))))
          .bind("insert"),
      cxxMemberCallExpr(on(T), callee(cxxMethodDecl(matchesName("_$")))).bind("mutate")));
  for (const BoundNodes &B : match(findAll(Write), *Body, Ctx)) {
    const auto *Defined = B.getNodeAs<Expr>("target");
    if (const auto *Assign = B.getNodeAs<Stmt>("assign")) {
      bool Plain = isa<BinaryOperator>(Assign) ? cast<BinaryOperator>(Assign)->getOpcode() == BO_Assign
                                               : cast<CXXOperatorCallExpr>(Assign)->getOperator() == OO_Equal;
      Defs.push_back({Plain ? Definition::Assign : Definition::Compound, Assign, Defined, B.getNodeAs<Expr>("value")});
      continue;
    }
    for (auto [Id, K] : {std::pair{"mark", Definition::Mark}, {"insert", Definition::Insert}, {"mutate", Definition::Mutate}})
      if (const auto *Call = B.getNodeAs<Expr>(Id))
        Defs.push_back({K, Call, Defined, Call});
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
    for (const Definition &D : definitionsIn(FD->getBody(), declRefExpr(to(varDecl(equalsNode(VD)))), Ctx))
      Defs.push_back(D);
  return Defs;
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

void ProvenanceWalk::returns(const FunctionDecl *FD, const CallExpr *Call, llvm::function_ref<bool(const Expr *)> Visit) {
  const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
  if (!Def || isInSystemHeader(Def) || !enter(Def))
    return;
  Calls[Def] = Call;
  for (const Expr *Ret : returnedValues(Def, Ctx))
    if (Visit(Ret))
      break;
  Calls.erase(Def);
  leave(Def);
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

llvm::SmallVector<Definition, 2> ProvenanceWalk::reaching(const clang::ast_matchers::internal::Matcher<Expr> &Target,
                                                         llvm::function_ref<bool(const Expr *)> Same, const Stmt *Body,
                                                         const Stmt *At, const Stmt *Start, bool &Incoming) {
  llvm::SmallVector<const Stmt *, 4> Sites;
  llvm::DenseMap<const Stmt *, Definition> DefAt;
  llvm::SmallVector<Definition, 2> Reaching, Others;
  for (const Definition &D : definitionsIn(Body, Target, Ctx)) {
    if (!Same(D.Target))
      continue;
    // What an assignment writes denotes the value it gives; what a mark writes, the value it
    // marks, marked.
    if (D.Target == At && D.K == Definition::Assign) {
      Incoming = false;
      return {D};
    }
    if (D.Target == At && D.K == Definition::Mark)
      Others.push_back(D);
    else if ((D.K == Definition::Assign || D.K == Definition::Mark) && DefAt.try_emplace(D.Site, D).second)
      Sites.push_back(D.Site);
    else if ((D.K == Definition::Compound || D.K == Definition::Insert) && M.mayRunBefore(D.Site, At))
      Others.push_back(D);
  }
  if (Start)
    Sites.push_back(Start);
  Incoming = !Start && llvm::none_of(Sites, [&](const Stmt *S) { return M.runsBeforeOnEveryPath(S, At); });
  for (const Stmt *Site : llvm::reverse(M.reachingAt(Sites, At))) {
    if (Site == Start)
      Incoming = true;
    else
      Reaching.push_back(DefAt.find(Site)->second);
  }
  // A declaration with no order to \p At (no CFG holds both) cannot rule its value out.
  Incoming |= Start && M.reachingAt({Start}, At).empty();
  Reaching.append(Others.begin(), Others.end());
  return Reaching;
}

llvm::SmallVector<Definition, 2> ProvenanceWalk::reaching(const VarDecl *VD, const Stmt *At, bool &Incoming) {
  Incoming = true;
  const auto *Owner = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!Owner || !Owner->hasBody())
    return {};
  const Stmt *Declared = isa<ParmVarDecl>(VD) ? nullptr : parentOf(VD, Ctx).get<DeclStmt>();
  return reaching(declRefExpr(to(varDecl(equalsNode(VD)))), [](const Expr *) { return true; }, Owner->getBody(), At,
                  Declared, Incoming);
}

llvm::SmallVector<Definition, 2> ProvenanceWalk::reaching(const MemberExpr *ME, const Stmt *At, bool &Incoming) {
  Incoming = true;
  const FunctionDecl *FD = enclosingFunction(At, Ctx);
  if (!FD || !FD->hasBody())
    return {};
  return reaching(memberExpr(member(equalsNode(ME->getMemberDecl()))), [&](const Expr *E) { return sameExpr(E, ME); },
                  FD->getBody(), At, nullptr, Incoming);
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

namespace {

// ---- origin --------------------------------------------------------------------------------

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
  static const llvm::StringSet<> Others = {"empty_strided", "bernoulli", "zeros_like", "ones_like", "empty_like",
                                           "full_like", "rand_like", "randn_like", "randint_like", "from_file",
                                           "load", "make_variable"};
  return llvm::is_contained(names::HostFactories, Name) || llvm::is_contained(names::HostMemoryWrappers, Name) ||
         Others.contains(Name);
}

/// std::tuple / std::pair: module forwards (LSTM, GRU) return their tensors in one.
bool isTupleLike(QualType T) {
  return hasQualifiedName(recordOf(T), "::std::tuple") || hasQualifiedName(recordOf(T), "::std::pair");
}

/// The ordering of the lattice: a value is as attached as its most attached source.
int rank(TensorOrigin K) { return static_cast<int>(K); }

/// Tensor-typed arguments, including those inside braced lists (torch::cat({a, b})).
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

/// torch::nn's loss modules (MSELoss, CrossEntropyLoss, ...): no parameters of their own.
/// \p Module is the holder (`criterion(out, y)`) or the pointer to the Impl (`criterion->`).
bool isLossModule(const Expr *Module) {
  QualType T = Module->IgnoreParenImpCasts()->getType();
  if (T->isPointerType())
    T = T->getPointeeType();
  const CXXRecordDecl *RD = recordOf(T);
  return RD && RD->getIdentifier() && RD->getName().contains("Loss") && isInSystemHeader(RD);
}

/// The lattice walk: a value is as attached as its most attached definition. Asked for cuts
/// (AutogradModel::outputCut), it follows what autograd does not record too (numbers taken
/// out with .item(), containers of them, parameters through their callers, calls left
/// unresolved in templates) and records the model output or loss a value is computed from,
/// and where every path to that output's graph was cut.
class OriginWalk : public ProvenanceWalk {
public:
  OriginWalk(AutogradModel &M, bool Cuts = false) : ProvenanceWalk(M), Cuts(Cuts) {}

  OriginResult classify(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > MaxDepth)
      return {};
    E = E->IgnoreUnlessSpelledInSource();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return ref(DRE, Depth);
    if (Cuts)
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
      return member(ME);
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
  /// The origin of the more attached of \p A and \p B; the output either is computed from,
  /// cut only when every path to it is.
  static OriginResult join(OriginResult A, const OriginResult &B) {
    OriginResult R = rank(B.Kind) > rank(A.Kind) ? B : A;
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
  /// The op \p At makes a value with no graph (detach, item, a factory over plain numbers).
  static void cutAt(OriginResult &R, const Stmt *At) {
    if (R.Output && !R.Cut)
      R.Cut = At;
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
    if (Cuts && !R.Output && isTensorType(DRE->getType())) {
      TensorOrigin K = M.originAt(DRE).Kind;
      if (K == TensorOrigin::GraphAttached || K == TensorOrigin::RequiresGradLeaf)
        R.Output = DRE;
    }
    return R;
  }

  /// The result of a differentiable op over \p Obj and the tensors among Op's arguments:
  /// attached when any input requires grad, unless the op runs where autograd is off.
  OriginResult derived(const CallExpr *Op, const Expr *Obj, unsigned Depth) {
    llvm::SmallVector<const Expr *, 4> Inputs;
    if (Obj)
      Inputs.push_back(Obj);
    for (const Expr *Arg : Op->arguments())
      tensorArgs(Arg, Inputs);
    OriginResult R{TensorOrigin::Data, Op};
    for (const Expr *In : Inputs) {
      OriginResult I = classify(In, Depth + 1);
      if (I.Kind == TensorOrigin::GraphAttached || I.Kind == TensorOrigin::RequiresGradLeaf) {
        R = I.Kind == TensorOrigin::GraphAttached ? I : OriginResult{TensorOrigin::GraphAttached, Op, I.Chain};
        R.Kind = TensorOrigin::GraphAttached;
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
    if (Obj && isModuleType(Obj->getType()) && Name == "forward")
      return noGradAware({TensorOrigin::GraphAttached, MCE}, MCE);
    if (Name == "toTensor") // TorchScript: module.forward(inputs).toTensor()
      return classify(Obj, Depth + 1);
    if (isTensorMethod(MD, {Name})) {
      if (Name == "requires_grad_" || Name == "set_requires_grad")
        return {markFlag(MCE, Ctx) == true ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, MCE};
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
    return derived(OCE, nullptr, Depth);
  }

  OriginResult call(const CallExpr *CE, unsigned Depth) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD || !FD->getIdentifier())
      return {};
    StringRef Name = FD->getName();
    if (!isInSystemHeader(FD))
      return userFunction(FD, Depth, CE);
    if (isFactory(Name))
      return {requestsGrad(CE, Ctx) ? TensorOrigin::RequiresGradLeaf : TensorOrigin::Data, CE};
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
    if (Forward || (!Shape.Resolved && Shape.Name == "forward"))
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
    cutAt(R, Call);
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
    if (const auto *Call = dyn_cast_or_null<CallExpr>(Source); Call && I == 1 && !Cuts) {
      static const llvm::StringSet<> WithIndices = {"max", "min", "sort", "topk", "kthvalue",
                                                    "mode", "median", "nanmedian", "cummax", "cummin"};
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (Callee && Callee->getIdentifier() && WithIndices.contains(Callee->getName()) && isInSystemHeader(Callee))
        return {TensorOrigin::Data, Call};
    }
    return classify(Tuple, Depth + 1);
  }

  /// A tensor returned by a function of the user's: as attached as what it returns.
  /// One defined in another TU: as the project index says (graph-attached, or unknown).
  OriginResult userFunction(const FunctionDecl *FD, unsigned Depth, const CallExpr *Call) {
    const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
    if (FD && !Def && M.index() && !isInSystemHeader(FD)) {
      std::optional<uint32_t> Facts = M.index()->factsOf(FD);
      if (Facts && (*Facts & FunctionSummary::ReturnsGraph))
        return {TensorOrigin::GraphAttached, Call};
      return {};
    }
    OriginResult R;
    returns(FD, Call, [&](const Expr *Ret) {
      R = join(R, through(Ret, classify(Ret, Depth + 1)));
      return false;
    });
    return R;
  }

  /// Asked for cuts, a parameter: as attached as what the calls pass for it (see arguments).
  OriginResult parameter(const ParmVarDecl *Parm, unsigned Depth) {
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

  /// Parameters of a module: linear->weight, conv->bias, this->weight inside the module.
  OriginResult member(const MemberExpr *ME) {
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field || !isTensorType(Field->getType()))
      return {};
    QualType BaseType = ME->getBase()->IgnoreUnlessSpelledInSource()->getType();
    if (ME->isArrow() && BaseType->isPointerType())
      BaseType = BaseType->getPointeeType();
    bool OwnerIsModule = isModuleType(QualType(Field->getParent()->getTypeForDecl(), 0)) || isModuleType(BaseType);
    if (OwnerIsModule && isParameterFieldName(Field->getName()))
      return {TensorOrigin::RequiresGradLeaf, ME};
    return {};
  }

  /// A local at \p Use: the most attached of its definitions that reach it (initializer,
  /// assignments, marks; asked for cuts, of any type, and what is inserted into it).
  OriginResult var(const VarDecl *VD, const Expr *Use, unsigned Depth) {
    if (const auto *Parm = dyn_cast_or_null<ParmVarDecl>(VD); Parm && Cuts)
      return parameter(Parm, Depth);
    if (OriginResult Range = Cuts ? OriginResult{} : rangeVar(VD); Range.Kind != TensorOrigin::Unknown)
      return Range;
    if (!VD || isa<ParmVarDecl>(VD) || !VD->isLocalVarDecl() ||
        !(Cuts || isTensorType(VD->getType()) || isTupleLike(VD->getType())) ||
        (VD->getType()->isReferenceType() && !VD->getInit()))
      return {};
    bool Incoming = true;
    llvm::SmallVector<Definition, 2> Defs = reaching(VD, Use, Incoming);
    OriginResult R{TensorOrigin::Data, nullptr};
    // Each definition is entered once: `x = x * w` reads the definitions that reach its `x`.
    if (const Expr *Init = VD->getInit(); Init && Incoming && enter(Init)) {
      R = through(Init, classify(Init, Depth + 1));
      leave(Init);
    }
    for (const Definition &D : Defs) {
      if (!enter(D.Site))
        continue;
      if (D.K == Definition::Assign || D.K == Definition::Compound) {
        OriginResult A = through(D.Value, classify(D.Value, Depth + 1));
        if (D.K == Definition::Compound && A.Kind == TensorOrigin::RequiresGradLeaf)
          A.Kind = TensorOrigin::GraphAttached;
        R = join(R, A);
      } else if (D.K == Definition::Mark && isa<CXXMemberCallExpr>(D.Value) && !Cuts) {
        R = join(R, through(D.Value, classify(D.Value, Depth + 1)));
      } else if (D.K == Definition::Insert && Cuts) {
        for (const Expr *Arg : cast<CallExpr>(D.Value)->arguments())
          R = join(R, classify(Arg, Depth + 1));
      }
      leave(D.Site);
    }
    if (M.index() && !Cuts)
      R = join(R, writtenByOtherUnits(VD));
    return R;
  }

  /// \p VD handed by reference to a function of another TU that assigns it a graph-attached
  /// tensor (`forward_into(x, out)`; the project index's out-parameters).
  OriginResult writtenByOtherUnits(const VarDecl *VD) {
    OriginResult R;
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (!FD || !FD->hasBody())
      return R;
    auto Ref = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
    for (const BoundNodes &B : match(findAll(callExpr(hasAnyArgument(Ref)).bind("call")), *FD->getBody(), Ctx)) {
      const auto *Call = B.getNodeAs<CallExpr>("call");
      const FunctionDecl *Callee = Call->getDirectCallee();
      if (!Callee || Callee->getDefinition() || isInSystemHeader(Callee))
        continue;
      uint32_t Out = M.index()->graphOutParamsOf(Callee);
      for (const Expr *Arg : Call->arguments()) {
        const auto *Named = dyn_cast<DeclRefExpr>(Arg->IgnoreImplicit());
        const ParmVarDecl *Parm = Named && Named->getDecl() == VD ? parameterFor(Call, Callee, Arg) : nullptr;
        if (Parm && Parm->getFunctionScopeIndex() < 32 && (Out & (1u << Parm->getFunctionScopeIndex())))
          R = join(R, {TensorOrigin::GraphAttached, Call});
      }
    }
    return R;
  }

  /// `for (auto &p : model->parameters())`: every element is a parameter (see listsParameters).
  OriginResult rangeVar(const VarDecl *VD) {
    const CXXForRangeStmt *For = VD ? rangeForOf(VD, Ctx) : nullptr;
    const auto *MCE = For ? dyn_cast<CXXMemberCallExpr>(For->getRangeInit()->IgnoreUnlessSpelledInSource()) : nullptr;
    if (MCE && isTensorType(VD->getType()) && listsParameters(MCE))
      return {TensorOrigin::RequiresGradLeaf, MCE};
    return {};
  }

  /// Whether the walk is asked for cuts.
  bool Cuts;
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

bool AutogradModel::isGraphAttached(const Expr *E) {
  if (E && isTensorType(E->getType()))
    return originAt(E).Kind == TensorOrigin::GraphAttached;
  // An aggregate, pair or tuple is as attached as its most attached part.
  E = E ? E->IgnoreParenImpCasts()->IgnoreImplicit()->IgnoreParenImpCasts() : nullptr;
  if (const auto *Cast = dyn_cast_or_null<CXXFunctionalCastExpr>(E)) // `Record{loss, step}`
    E = Cast->getSubExpr()->IgnoreImplicit();
  auto AnyAttached = [&](auto Range) {
    return llvm::any_of(Range, [&](const Expr *Part) { return Part && isGraphAttached(Part); });
  };
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (const auto *IL = dyn_cast_or_null<InitListExpr>(E))
    return AnyAttached(IL->inits());
  if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(E))
    return AnyAttached(Construct->arguments());
  if (FD && FD->isInStdNamespace() && FD->getIdentifier() &&
      llvm::is_contained({StringRef("make_pair"), StringRef("make_tuple"), StringRef("forward_as_tuple")}, FD->getName()))
    return AnyAttached(Call->arguments());
  return VD && VD->hasLocalStorage() && VD->getInit() && VD->getInit() != E && isGraphAttached(VD->getInit());
}

bool AutogradModel::isRequiresGradLeaf(const Expr *E) {
  return E && originAt(E).Kind == TensorOrigin::RequiresGradLeaf;
}

std::optional<OutputCut> AutogradModel::outputCut(const Expr *E) {
  OriginResult R = OriginWalk(*this, /*Cuts=*/true).classify(E);
  if (!R.Output)
    return std::nullopt;
  return OutputCut{R.Output, R.Cut};
}

} // namespace torchtidy
