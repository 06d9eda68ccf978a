#include "SyncInHotLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"


using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

const std::vector<StringRef> DataDependentMethods(std::begin(names::DataDependentMethods),
                                                 std::end(names::DataDependentMethods));
const std::vector<StringRef> DataDependentFunctions(std::begin(names::DataDependentFunctions),
                                                   std::end(names::DataDependentFunctions));

/// `t.cpu()`, `t.to(torch::kCPU)`: a copy of a tensor to the host.
bool isHostCopy(const Expr *E, ASTContext &Ctx) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(E);
  return Call && deviceMoveOf(Call, Ctx) == DeviceKind::Host;
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
  if (Name == "to") // `.to(torch::kCPU)`: a copy to the host, like `.cpu()`
    return isHostCopy(Sync, Model.context()) ? "'to()' to the host" : "";
  return "'" + Name.str() + "()'";
}

/// The tensor a method call or printing operates on.
const Expr *operandOf(const Expr *Sync, AutogradModel &Model) {
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Sync))
    return Op->getArg(1);
  return Model.callShape(cast<CallExpr>(Sync)).Object;
}

/// Whether a call is itself a synchronizing tensor operation (host copy, item, data-dependent size).
bool isSyncingOp(const Expr *E, ASTContext &Ctx) {
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier())
    return false;
  if (isa<CXXMemberCallExpr>(Call))
    return isHostCopy(Call, Ctx) || isTensorMethod(FD, {"item"}) || isTensorMethod(FD, DataDependentMethods);
  return llvm::any_of(DataDependentFunctions,
                      [&](StringRef N) { return FD->getQualifiedNameAsString() == N.drop_front(2); });
}

/// Whether the tensor \p E plainly lives on the host (AutogradModel::hostTensorSource): made by
/// a host factory, or it went through another synchronizing op (reported there).
bool plainlyOnHost(const Expr *E, AutogradModel &Model) {
  auto Synced = [&](const Expr *S) { return isSyncingOp(S, Model.context()); };
  HostTensorQuery Q;
  Q.OnHost = Synced;
  return Model.hostTensorSource(E, Q) != nullptr;
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
  std::vector<StringRef> Resolved = Methods;
  Resolved.push_back("to"); // to the host only (see describe)
  std::vector<StringRef> Functions = {"::torch::cuda::synchronize", "::cudaDeviceSynchronize"};
  Functions.insert(Functions.end(), DataDependentFunctions.begin(), DataDependentFunctions.end());
  Finder->addMatcher(
      expr(unless(matchers::isExpansionInSystemHeader()),
           anyOf(matchers::tensorMethodCall(Resolved),
                 callExpr(unless(cxxMemberCallExpr()), callee(functionDecl(hasAnyName(Functions)))),
                 callExpr(matchers::dependentMemberCall(Methods)),
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
  if (What.empty() || (Operand && plainlyOnHost(Operand, Model)))
    return;
  if (isa<CallExpr>(Sync) && !cast<CallExpr>(Sync)->getDirectCallee() && !isa<CXXOperatorCallExpr>(Sync)) {
    // Read by name only where no instantiation shows the resolved call.
    const FunctionDecl *Fn = enclosingFunction(Sync, Ctx);
    if (!Fn || !isUninstantiatedPattern(Fn))
      return;
  }
  // The loop that runs it on every iteration: a training loop (or any loop), through helpers;
  // none under an interval guard or another condition that varies per iteration.
  // The loop may be in another translation unit that calls this function (the project index).
  std::optional<PerIteration> Hot =
      TrainingLoopsOnly
          ? Model.perIterationLoop(Sync, {LoopEventKind::Backward, LoopEventKind::Step}, /*AcrossTUs=*/true)
          : Model.perIterationLoop(Sync, {}, /*AcrossTUs=*/true);
  // Plainly CPU-only code: nothing around it puts a tensor on an accelerator.
  if (!Hot || (IgnoreCpuOnly && !Model.mayUseAccelerator(Sync) && !(Hot->Across && Hot->Across->Accelerator)))
    return;
  StringRef Step = TrainingLoopsOnly ? "training step" : "iteration";
  if (decidesBranch(Sync, Ctx))
    diag(SM.getFileLoc(Loc), "%0 synchronizes the host with the device on every %1 and is needed for "
                             "control flow; consider checking it every N steps")
        << What << Step;
  else
    diag(SM.getFileLoc(Loc), "%0 synchronizes the host with the device on every %1; consider doing it "
                             "every N steps or keeping the value on the device")
        << What << Step;
  noteLoop(*Hot, Step);
}

} // namespace torchtidy
