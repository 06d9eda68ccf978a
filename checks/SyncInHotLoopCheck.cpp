#include "SyncInHotLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

const std::vector<StringRef> DataDependentMethods(std::begin(names::DataDependentMethods),
                                                 std::end(names::DataDependentMethods));
const std::vector<StringRef> DataDependentFunctions(std::begin(names::DataDependentFunctions),
                                                   std::end(names::DataDependentFunctions));

/// A call in a template nobody instantiates, to a member named one of \p Names.
AST_MATCHER_P(CallExpr, dependentMemberCall, std::vector<StringRef>, Names) {
  StringRef Name = dependentMemberName(Node.getCallee());
  return !Name.empty() && llvm::is_contained(Names, Name);
}

/// What a matched call is, for the message; empty when it does not synchronize.
std::string describe(const Expr *Sync, AutogradModel &Model) {
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Sync))
    return Op->getOperator() == OO_LessLess ? "printing a tensor" : "";
  StringRef Name = Model.callShape(cast<CallExpr>(Sync)).Name;
  if (Name.empty())
    return "";
  if (Name == "synchronize")
    return "'torch::cuda::synchronize()'";
  return "'" + Name.str() + "()'";
}

/// The tensor a method call or printing operates on.
const Expr *operandOf(const Expr *Sync, AutogradModel &Model) {
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Sync))
    return Op->getArg(1);
  return Model.callShape(cast<CallExpr>(Sync)).Object;
}

/// Whether a call is itself a synchronizing tensor operation (host copy, item, data-dependent size).
bool isSyncingOp(const Expr *E) {
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier())
    return false;
  if (isa<CXXMemberCallExpr>(Call))
    return isTensorMethod(FD, {"cpu", "item"}) || isTensorMethod(FD, DataDependentMethods);
  return llvm::any_of(DataDependentFunctions,
                      [&](StringRef N) { return FD->getQualifiedNameAsString() == N.drop_front(2); });
}

/// A LibTorch factory (`torch::full({}, 0.1)`) whose arguments name no device and no
/// options that might: the tensor is created on the host.
bool isHostFactoryCall(const Expr *E) {
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call && !isa<CXXMemberCallExpr>(Call) ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || !isInSystemHeader(FD) || !isTensorType(Call->getType()) ||
      // from_blob wraps host memory.
      !(llvm::is_contained(names::HostFactories, FD->getName()) || FD->getName() == "from_blob"))
    return false;
  ASTContext &Ctx = FD->getASTContext();
  auto DeviceOrOptions = expr(anyOf(hasType(cxxRecordDecl(hasName(names::Device))),
                                    hasType(enumDecl(hasName(names::DeviceType))),
                                    declRefExpr(hasType(cxxRecordDecl(hasName(names::TensorOptions))))));
  return llvm::none_of(Call->arguments(), [&](const Expr *Arg) {
    return !match(findAll(DeviceOrOptions.bind("d")), *Arg, Ctx).empty();
  });
}

/// Whether the tensor \p E plainly lives on the host: it went through another synchronizing
/// op (reported there) or a local initialised so, following the chain of tensor methods.
bool plainlyOnHost(const Expr *E, unsigned Depth = 0) {
  while (E && Depth++ < 8) {
    E = E->IgnoreUnlessSpelledInSource();
    if (isSyncingOp(E))
      return true;
    if (const auto *M = dyn_cast<CXXMemberCallExpr>(E);
        M && isTensorMethod(M->getMethodDecl(), {M->getMethodDecl()->getName()}) &&
        !isTensorMethod(M->getMethodDecl(), {"to", "cuda"})) {
      E = M->getImplicitObjectArgument();
      continue;
    }
    if (isHostFactoryCall(E))
      return true;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (VD && VD->isLocalVarDecl() && VD->getInit() && !VD->getType()->isReferenceType() &&
          isTensorType(VD->getType()))
        return plainlyOnHost(VD->getInit(), Depth);
    }
    return false;
  }
  return false;
}

/// Whether the value computed at \p S decides a branch: it sits in a condition or a
/// comparison, or initialises a local that a condition or comparison later reads.
bool decidesBranch(const Stmt *S, ASTContext &Ctx, unsigned Depth = 1) {
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode P = parentOf(Child, Ctx); !P.getNodeKind().isNone(); Child = P, P = parentOf(P, Ctx)) {
    const Stmt *C = Child.get<Stmt>();
    if (const auto *If = P.get<IfStmt>())
      return C && C == If->getCond();
    if (const auto *W = P.get<WhileStmt>())
      return C && C == W->getCond();
    if (const auto *D = P.get<DoStmt>())
      return C && C == D->getCond();
    if (const auto *F = P.get<ForStmt>())
      return C && C == F->getCond();
    if (const auto *Sw = P.get<SwitchStmt>())
      return C && C == Sw->getCond();
    if (const auto *CO = P.get<ConditionalOperator>(); CO && C == CO->getCond())
      return true;
    if (const auto *BO = P.get<BinaryOperator>(); BO && (BO->isComparisonOp() || BO->isLogicalOp()))
      return true;
    if (const auto *UO = P.get<UnaryOperator>(); UO && UO->getOpcode() == UO_LNot)
      return true;
    if (const auto *Call = P.get<CallExpr>()) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (FD && FD->getIdentifier() && llvm::is_contained(std::initializer_list<StringRef>{"isnan", "isinf", "isfinite"}, FD->getName()))
        return true;
    }
    const VarDecl *Target = nullptr;
    if (const auto *VD = P.get<VarDecl>())
      Target = VD;
    else if (const auto *BO = P.get<BinaryOperator>(); BO && BO->isAssignmentOp())
      if (const auto *DRE = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
        Target = dyn_cast<VarDecl>(DRE->getDecl());
    if (Target) {
      if (Depth == 0 || !Target->isLocalVarDecl())
        return false;
      const FunctionDecl *Fn = enclosingFunction(S, Ctx);
      if (!Fn || !Fn->getBody())
        return false;
      auto Uses = match(findAll(declRefExpr(to(varDecl(equalsNode(Target)))).bind("use")), *Fn->getBody(), Ctx);
      return llvm::any_of(Uses, [&](const BoundNodes &B) {
        return decidesBranch(B.getNodeAs<DeclRefExpr>("use"), Ctx, Depth - 1);
      });
    }
    if (P.get<CompoundStmt>() || P.get<Decl>())
      return false;
  }
  return false;
}


/// Whether \p Cond holds the same value on every iteration of \p Loop (in the function \p Fn):
/// every variable it reads is loop-invariant and none is a parameter of a helper, and it calls
/// nothing. An interval guard (`step % N == 0`) never is.
bool invariantIn(const Expr *Cond, const Stmt *Loop, const FunctionDecl *Fn, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  if (!match(findAll(expr(anyOf(binaryOperator(hasAnyOperatorName("%", "%=")),
                                callExpr(unless(cxxOperatorCallExpr())))).bind("e")),
             *Cond, Ctx).empty())
    return false;
  for (const BoundNodes &B : match(findAll(declRefExpr(to(varDecl())).bind("r")), *Cond, Ctx)) {
    const auto *Ref = B.getNodeAs<DeclRefExpr>("r");
    if ((isa<ParmVarDecl>(Ref->getDecl()) && Ref->getDecl()->getDeclContext() != Fn) ||
        !Model.isLoopInvariant(Ref, Loop))
      return false;
  }
  return true;
}

/// The loop whose body, condition or increment contains \p S (looking through lambdas),
/// appending to \p Conds the conditions under which \p S runs within it. Null at the
/// function boundary, with \p Conds holding the conditions within the function.
const Stmt *loopAround(const Stmt *S, ASTContext &Ctx, std::vector<const Expr *> &Conds) {
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode P = parentOf(Child, Ctx); !P.getNodeKind().isNone(); Child = P, P = parentOf(P, Ctx)) {
    const Stmt *C = Child.get<Stmt>();
    if (const auto *PS = P.get<Stmt>()) {
      if (const auto *For = dyn_cast<ForStmt>(PS); For && C != For->getInit())
        return PS;
      if (const auto *Range = dyn_cast<CXXForRangeStmt>(PS); Range && C == Range->getBody())
        return PS;
      if (isa<WhileStmt>(PS) || isa<DoStmt>(PS))
        return PS;
      if (const auto *If = dyn_cast<IfStmt>(PS); If && C != If->getCond() && C != If->getInit())
        Conds.push_back(If->getCond());
      else if (const auto *CO = dyn_cast<ConditionalOperator>(PS); CO && C != CO->getCond())
        Conds.push_back(CO->getCond());
      else if (const auto *BO = dyn_cast<BinaryOperator>(PS); BO && BO->isLogicalOp() && C == BO->getRHS())
        Conds.push_back(BO->getLHS());
      else if (const auto *Sw = dyn_cast<SwitchStmt>(PS); Sw && C == Sw->getBody())
        Conds.push_back(Sw->getCond());
      continue;
    }
    if (const auto *D = P.get<Decl>()) {
      const auto *RD = dyn_cast<CXXRecordDecl>(D);
      bool InLambda = (RD && RD->isLambda()) ||
                      (isa<CXXMethodDecl>(D) && cast<CXXMethodDecl>(D)->getParent()->isLambda());
      if (!InLambda && !isa<VarDecl>(D))
        return nullptr;
    }
  }
  return nullptr;
}

/// Whether \p Fn shows that tensors live on an accelerator: a torch::Device value, a
/// non-CPU DeviceType, `.cuda()`, a CUDA query, or (for a method) a Device field.
bool mentionsDevice(const FunctionDecl *Fn, ASTContext &Ctx) {
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Fn))
    for (const FieldDecl *F : MD->getParent()->fields())
      if (isSameOrDerivedFrom(recordOf(F->getType()), names::Device))
        return true;
  if (!Fn->getBody())
    return false;
  auto Evidence = match(
      findAll(expr(anyOf(matchers::tensorMethodCall({"cuda"}), matchers::moduleMethodCall({"cuda"}),
                         callExpr(callee(functionDecl(hasAnyName("::torch::cuda::is_available",
                                                                 "::torch::cuda::device_count",
                                                                 "::torch::cuda::synchronize")))),
                         expr(hasType(cxxRecordDecl(hasName(names::Device)))),
                         expr(hasType(enumDecl(hasName(names::DeviceType))))))
                  .bind("e")),
      *Fn->getBody(), Ctx);
  for (const BoundNodes &B : Evidence) {
    const auto *E = B.getNodeAs<Expr>("e");
    Expr::EvalResult R;
    // torch::kCPU alone says nothing about an accelerator.
    if (E->getType()->isEnumeralType() && !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
        R.Val.getInt() == 0)
      continue;
    return true;
  }
  return false;
}

/// Where a synchronizing call runs every training step.
struct HotLoop {
  const Stmt *Loop = nullptr; ///< the training loop
  const Stmt *Via = nullptr;  ///< the call in that loop that reaches the sync, or null
  std::vector<const FunctionDecl *> Functions; ///< from the sync's function to the loop's
};

/// The loop in which \p S runs on every iteration (a training loop when \p TrainingOnly),
/// following calls of its function up to \p Depth callers. None when a guard that varies
/// per iteration (an interval, the step counter, another value) decides whether it runs.
std::optional<HotLoop> hotLoop(const Stmt *S, bool TrainingOnly, AutogradModel &Model, unsigned Depth,
                               std::vector<const Expr *> Conds = {}) {
  ASTContext &Ctx = Model.context();
  const FunctionDecl *Fn = enclosingFunction(S, Ctx);
  if (!Fn)
    return std::nullopt;
  for (const Stmt *L = loopAround(S, Ctx, Conds); L; L = loopAround(L, Ctx, Conds)) {
    if (TrainingOnly && !Model.runsEachIteration(L, {LoopEventKind::Backward, LoopEventKind::Step}))
      continue;
    if (!llvm::all_of(Conds, [&](const Expr *C) { return invariantIn(C, L, Fn, Model); }))
      return std::nullopt;
    return HotLoop{L, nullptr, {Fn}};
  }
  if (Depth == 0)
    return std::nullopt;
  for (const CallExpr *Call : Model.callersOf(Fn)) {
    if (enclosingFunction(Call, Ctx) == Fn)
      continue;
    if (auto Found = hotLoop(Call, TrainingOnly, Model, Depth - 1, Conds)) {
      if (!Found->Via)
        Found->Via = Call;
      Found->Functions.insert(Found->Functions.begin(), Fn);
      return Found;
    }
  }
  return std::nullopt;
}

} // namespace

SyncInHotLoopCheck::SyncInHotLoopCheck(StringRef Name, clang::tidy::ClangTidyContext *Context)
    : TorchCheck(Name, Context), TrainingLoopsOnly(getBoolOption(Options, "TrainingLoopsOnly", true)),
      IgnoreCpuOnly(getBoolOption(Options, "IgnoreCpuOnly", true)) {}

void SyncInHotLoopCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) {
  TorchCheck::storeOptions(Opts);
  storeBoolOption(Options, Opts, "TrainingLoopsOnly", TrainingLoopsOnly);
  storeBoolOption(Options, Opts, "IgnoreCpuOnly", IgnoreCpuOnly);
}

void SyncInHotLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  std::vector<StringRef> Methods = {"item", "cpu"};
  Methods.insert(Methods.end(), DataDependentMethods.begin(), DataDependentMethods.end());
  std::vector<StringRef> Functions = {"::torch::cuda::synchronize", "::cudaDeviceSynchronize"};
  Functions.insert(Functions.end(), DataDependentFunctions.begin(), DataDependentFunctions.end());
  Finder->addMatcher(
      expr(unless(isExpansionInSystemHeader()),
           anyOf(matchers::tensorMethodCall(Methods),
                 callExpr(unless(cxxMemberCallExpr()), callee(functionDecl(hasAnyName(Functions)))),
                 callExpr(dependentMemberCall(Methods)),
                 cxxOperatorCallExpr(hasOverloadedOperatorName("<<"), hasArgument(1, matchers::isTensorExpr()))))
          .bind("sync"),
      this);
}

void SyncInHotLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = *Result.SourceManager;
  const auto *Sync = Result.Nodes.getNodeAs<Expr>("sync");
  SourceLocation Loc = Sync->getExprLoc();
  if (Loc.isMacroID() && !SM.isMacroArgExpansion(Loc))
    return;
  AutogradModel &Model = model(Ctx);
  std::string What = describe(Sync, Model);
  const Expr *Operand = operandOf(Sync, Model);
  if (What.empty() || (Operand && plainlyOnHost(Operand)))
    return;
  if (isa<CallExpr>(Sync) && !cast<CallExpr>(Sync)->getDirectCallee() && !isa<CXXOperatorCallExpr>(Sync)) {
    // Read by name only where no instantiation shows the resolved call.
    const FunctionDecl *Fn = enclosingFunction(Sync, Ctx);
    if (!Fn || !isUninstantiatedPattern(Fn))
      return;
  }
  std::optional<HotLoop> Hot = hotLoop(Sync, TrainingLoopsOnly, Model, Model.depth());
  if (!Hot)
    return;
  if (IgnoreCpuOnly) {
    // Plainly CPU-only code: nothing in the path from the loop to the sync, nor in the
    // loop function's callers, puts a tensor on a device.
    std::vector<const FunctionDecl *> Scope = Hot->Functions;
    for (const CallExpr *Caller : Model.callersOf(Scope.back()))
      if (const FunctionDecl *F = enclosingFunction(Caller, Ctx))
        Scope.push_back(F);
    if (llvm::none_of(Scope, [&](const FunctionDecl *F) { return mentionsDevice(F, Ctx); }))
      return;
  }
  StringRef Step = TrainingLoopsOnly ? "training step" : "iteration";
  if (decidesBranch(Sync, Ctx))
    diag(SM.getFileLoc(Loc), "%0 synchronizes the host with the device on every %1 and is needed for "
                             "control flow; consider checking it every N steps")
        << What << Step;
  else
    diag(SM.getFileLoc(Loc), "%0 synchronizes the host with the device on every %1; consider doing it "
                             "every N steps or keeping the value on the device")
        << What << Step;
  if (Hot->Via)
    diag(Hot->Via->getBeginLoc(), "called on every %0 here", DiagnosticIDs::Note) << Step;
  diag(Hot->Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
