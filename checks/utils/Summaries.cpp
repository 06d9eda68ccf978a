#include "utils/Summaries.h"

#include "utils/Provenance.h"
#include "utils/TorchMatchers.h"
#include "utils/TorchNames.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/SourceManager.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <map>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {
/// Calls \p Fn for each call in \p Body of a user function that is no lambda, with its USR.
void forEachUserCall(AutogradModel &Model, const Stmt *Body,
                     llvm::function_ref<void(const CallExpr *, const FunctionDecl *, std::string)> Fn) {
  for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Body, Model.context())) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    const FunctionDecl *Callee = Model.calledFunction(Call);
    if (!Callee || isInSystemHeader(Callee) || isLambdaCallOperator(Callee))
      continue;
    if (std::string USR = usrOf(Callee); !USR.empty())
      Fn(Call, Callee, std::move(USR));
  }
}

/// The summary of \p FD, defined in this TU, by a \p Model that does not read the index itself.
FunctionSummary summarize(AutogradModel &Model, const FunctionDecl *FD) {
  ASTContext &Ctx = Model.context();
  FunctionSummary S;
  S.Name = FD->getQualifiedNameAsString();
  const Stmt *Body = FD->getBody();
  if (!Body)
    return S;
  uint32_t OwnLevel = 0;
  bool GradForward = false;
  for (const LoopEvent &E : Model.eventsIn(Body)) {
    S.Facts |= indexFact(E.Kind);
    GradForward |= E.Kind == LoopEventKind::Forward && !Model.gradDisabledAt(E.Site) && !Model.gradDisabledAt(E.Call);
    if (Model.atOwnLevel(E, nullptr))
      OwnLevel |= indexFact(E.Kind);
  }
  S.LoopedFacts = S.Facts & ~OwnLevel;
  if ((S.Facts & FunctionSummary::Forward) && !GradForward)
    S.Facts |= FunctionSummary::GradOffForward;
  if (!match(findAll(callExpr(callee(functionDecl(hasName("::torch::autograd::grad"))))), *Body, Ctx).empty())
    S.Facts |= FunctionSummary::Grad;
  if (Model.showsAccelerator(FD))
    S.Facts |= FunctionSummary::Accelerator;
  // What it returns and what it writes to its tensor reference parameters.
  for (const BoundNodes &B : match(findAll(returnStmt().bind("ret")), *Body, Ctx)) {
    const auto *Ret = B.getNodeAs<ReturnStmt>("ret");
    if (Ret->getRetValue() && Model.outermostFunction(Ret) == FD && isTensorType(Ret->getRetValue()->getType()) &&
        Model.isGraphAttached(Ret->getRetValue()))
      S.Facts |= FunctionSummary::ReturnsGraph;
  }
  // A tensor made on the host on every path: a caller's copy of it to the device is wasted.
  HostTensorQuery Host;
  Host.DeviceMakeable = true;
  Host.Scope = Body;
  llvm::SmallVector<const Expr *, 2> Returned = returnedValues(FD, Ctx);
  if (isTensorType(FD->getReturnType()) && !Returned.empty() &&
      llvm::all_of(Returned, [&](const Expr *R) { return Model.hostTensorSource(R, Host); }))
    S.Facts |= FunctionSummary::ReturnsHost;
  // A loss over the output it is handed: attached when the caller's argument is.
  if (!(S.Facts & FunctionSummary::ReturnsGraph) && isTensorType(FD->getReturnType()))
    for (unsigned I = 0; I < FD->getNumParams() && I < 32; ++I)
      if (Model.returnsGraphThrough(FD, I))
        S.GraphThroughParams |= 1u << I;
  // No graph in what it returns, even from an attached argument: a helper that detaches a state.
  if (canHoldGraph(FD->getReturnType()) && !(S.Facts & FunctionSummary::ReturnsGraph) && !S.GraphThroughParams &&
      !Returned.empty() && llvm::all_of(Returned, [&](const Expr *R) { return Model.isDetached(R); }))
    S.Facts |= FunctionSummary::ReturnsDetached;
  for (unsigned I = 0; I < FD->getNumParams() && I < 32; ++I) {
    std::optional<clang::ast_matchers::internal::Matcher<Expr>> Out = writtenThrough(FD->getParamDecl(I));
    if (!Out)
      continue;
    for (const Definition &D : definitionsIn(Body, *Out, Ctx))
      if (D.K == Definition::Assign && Model.isGraphAttached(D.Value))
        S.GraphOutParams |= 1u << I;
  }
  summarizeKeptParams(Model, FD, S);
  // The user functions it calls, whose facts the index joins to its own (through this TU's too).
  llvm::StringSet<> CalledOutsideLoops;
  forEachUserCall(Model, Body, [&](const CallExpr *Call, const FunctionDecl *Callee, std::string USR) {
    if (Callee == FD)
      return;
    if (!Model.enclosingLoop(Call)) {
      CalledOutsideLoops.insert(USR);
      if (runsOnEveryCall(Call, Ctx) && !llvm::is_contained(S.EveryCall, USR))
        S.EveryCall.push_back(USR);
    }
    if (!llvm::is_contained(S.Callees, USR))
      S.Callees.push_back(std::move(USR));
  });
  for (const std::string &C : S.Callees)
    if (!CalledOutsideLoops.contains(C))
      S.LoopedCallees.push_back(C);
  return S;
}

/// Records \p FD's calls of functions defined in other TUs: whether autograd is off at each,
/// and with \p Loops, those on every iteration of a loop here.
void addCallsElsewhere(AutogradModel &Model, const FunctionDecl *FD, ProjectIndex &Index, bool Loops) {
  ASTContext &Ctx = Model.context();
  const SourceManager &SM = Ctx.getSourceManager();
  static const std::pair<LoopCall::Query, std::vector<LoopEventKind>> Queries[] = {
      {LoopCall::AnyLoop, {}},
      {LoopCall::ModelLoop, {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step}},
      {LoopCall::TrainingLoop, {LoopEventKind::Backward, LoopEventKind::Step}}};
  forEachUserCall(Model, FD->getBody(), [&](const CallExpr *Call, const FunctionDecl *Callee, std::string USR) {
    // Only a callee whose body is elsewhere: this TU's checks see into the others themselves.
    if (Callee->hasBody())
      return;
    Index.addCallGrad(USR, Model.gradDisabledAt(Call) ? CalledGradOff : CalledGradOn);
    if (!Loops)
      return;
    std::map<std::pair<std::string, unsigned>, LoopCall> Found;
    for (const auto &[Query, Kinds] : Queries) {
      std::optional<PerIteration> Hot = Model.perIterationLoop(Call, Kinds);
      if (!Hot || !Hot->Loop)
        continue;
      PresumedLoc P = SM.getPresumedLoc(SM.getFileLoc(Hot->Loop->getBeginLoc()));
      if (P.isInvalid())
        continue;
      std::string Where = (llvm::Twine(P.getFilename()) + ":" + llvm::Twine(P.getLine())).str();
      LoopCall &C = Found[{Where, Hot->Calls}];
      C.Loop = Where;
      C.Calls = Hot->Calls;
      C.Queries |= Query;
      C.Accelerator = Model.mayUseAccelerator(Call);
      if (Hot->Calls == 0)
        for (unsigned I = 0; I < std::min(Callee->getNumParams(), 32u); ++I)
          if (const Expr *Arg = argumentFor(Call, Callee->getParamDecl(I));
              Arg && Model.sameEveryIteration(Arg, Hot->Loop))
            C.SameArgs |= 1u << I;
    }
    for (auto &[Key, C] : Found)
      Index.addLoopCall(USR, std::move(C));
  });
}
} // namespace

ProjectIndex summarizeTranslationUnit(ASTContext &Ctx, ModelOptions Options) {
  Options.UseProjectIndex = false;
  AutogradModel &Model = AutogradModel::get(Ctx, Options);
  const SourceManager &SM = Ctx.getSourceManager();
  ProjectIndex Index;
  auto Visit = [&](const FunctionDecl *FD) {
    if (!FD->doesThisDeclarationHaveABody() || FD->isDependentContext() || FD->isImplicit() ||
        isLambdaCallOperator(FD))
      return;
    // A project header's inline function is summarized where the header is the main file; its
    // calls count here too for the grad mode of their callees, lest a call with autograd on go
    // unseen (one this TU does not make counts so: the header's function runs unguarded here).
    if (!SM.isInMainFile(SM.getExpansionLoc(FD->getLocation()))) {
      addCallsElsewhere(Model, FD, Index, /*Loops=*/false);
      return;
    }
    std::string USR = usrOf(FD);
    addCallsElsewhere(Model, FD, Index, /*Loops=*/true);
    if (USR.empty())
      return;
    Index.add(USR, summarize(Model, FD));
    // A virtual call may run any overrider: each method this one overrides lists it as a callee.
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD)) {
      llvm::SmallVector<const CXXMethodDecl *, 4> Work(MD->overridden_methods());
      llvm::SmallPtrSet<const CXXMethodDecl *, 4> Seen;
      while (!Work.empty()) {
        const CXXMethodDecl *Base = Work.pop_back_val();
        if (!Seen.insert(Base).second || isInSystemHeader(Base))
          continue;
        Work.append(Base->overridden_methods().begin(), Base->overridden_methods().end());
        std::string BaseUSR = usrOf(Base);
        if (BaseUSR.empty())
          continue;
        FunctionSummary Dispatch;
        Dispatch.Name = Base->getQualifiedNameAsString();
        Dispatch.Callees = {USR};
        for (unsigned I = 0; I < FD->getNumParams() && I < 32; ++I)
          Dispatch.PassedParams.push_back({I, USR, I});
        Index.add(BaseUSR, std::move(Dispatch));
      }
    }
  };
  forEachUserDecl(Ctx, [&](Decl *D) {
    if (const auto *FD = dyn_cast<FunctionDecl>(D))
      Visit(FD);
    for (const BoundNodes &B : match(decl(forEachDescendant(functionDecl().bind("f"))), *D, Ctx))
      Visit(B.getNodeAs<FunctionDecl>("f"));
  });
  return Index;
}

} // namespace torchtidy
