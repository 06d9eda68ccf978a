// Unit tests of utils/ProjectIndex and utils/Summaries: the summaries a TU contributes (on real
// LibTorch code), how the index resolves calls across TUs, and what the model answers with it.
#include "utils/AutogradModel.h"
#include "utils/ProjectIndex.h"
#include "utils/Summaries.h"
#include "utils/TorchMatchers.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy;

namespace {

const char *Header = R"cpp(
#include <torch/torch.h>
struct NetImpl : torch::nn::Module {
  NetImpl();
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);
void forward_into(Net &net, const torch::Tensor &x, torch::Tensor &out);
void predict_into(Net &net, const torch::Tensor &x, torch::Tensor &out);
torch::Tensor forces(Net &net, torch::Tensor pos);
std::vector<torch::Tensor> gpu_batches(int n);
std::vector<torch::Tensor> host_batches(int n);
float validate(Net &net, torch::Tensor x);
float validate_restoring(Net &net, torch::Tensor x);
void train_epoch(Net &net, torch::optim::SGD &opt, torch::Tensor x);
torch::Tensor predict(Net &net, torch::Tensor x);
torch::Tensor loss_of(const torch::Tensor &out, const torch::Tensor &y, int reduction);
torch::Tensor score_of(const torch::Tensor &out);
void fit(Net &net, torch::optim::SGD &opt, torch::Tensor x);
// A virtual call: what the overriders (in other TUs) do is what the call may do.
struct Agent {
  virtual ~Agent() = default;
  virtual void learn(Net &net, torch::optim::SGD &opt, torch::Tensor x) = 0;
};
struct Learner : Agent {
  void learn(Net &net, torch::optim::SGD &opt, torch::Tensor x) override;
};
struct Scorer : Agent {
  void learn(Net &net, torch::optim::SGD &opt, torch::Tensor x) override;
};
void fit_agent(Agent &agent, Net &net, torch::optim::SGD &opt, torch::Tensor x);
float per_step(Net &net, torch::Tensor x);
float once(Net &net, torch::Tensor x);
void run_epoch(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs);
void run_epoch_via(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs);
void epochs_of_fit(Net &net, torch::optim::SGD &opt, torch::Tensor x);
// Which parameters a function keeps beyond the call.
struct History {
  void set_last(const torch::Tensor &t);
  void remember(torch::Tensor t, int n);
  float read_only(const torch::Tensor &t);
  void scaled(const torch::Tensor &t);
  void learn();
  torch::Tensor last;
  std::vector<torch::Tensor> all;
};
void keep_through(History &h, torch::Tensor t);
void keep_elsewhere(History &h, torch::Tensor t);
void keep_recursively(History &h, torch::Tensor t, int n);
// In-place updates of parameters, and how train.cpp calls them (call_grad).
void nudge(Net &net);
void nudge_mixed(Net &net);
void nudge_uncalled(Net &net);
torch::Tensor detach_state(const torch::Tensor &h);
std::tuple<torch::Tensor, torch::Tensor> repackage(const std::tuple<torch::Tensor, torch::Tensor> &s);
torch::Tensor keep_state(const torch::Tensor &h);
torch::Tensor detach_if(const torch::Tensor &h, bool cut);
)cpp";

const char *Definitions = R"cpp(
NetImpl::NetImpl() { fc = register_module("fc", torch::nn::Linear(4, 1)); }
torch::Tensor NetImpl::forward(torch::Tensor x) { return fc(x); }
void forward_into(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x); }
void predict_into(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x).detach(); }
torch::Tensor forces(Net &net, torch::Tensor pos) {
  auto e = net->forward(pos).sum();
  return torch::autograd::grad({e}, {pos})[0];
}
std::vector<torch::Tensor> gpu_batches(int n) { return {torch::ones({n}).to(torch::kCUDA)}; }
std::vector<torch::Tensor> host_batches(int n) { return {torch::ones({n})}; }
float validate(Net &net, torch::Tensor x) {
  net->eval();
  torch::NoGradGuard g;
  return net->forward(x).sum().item<float>();
}
float validate_restoring(Net &net, torch::Tensor x) {
  float v = validate(net, x);
  net->train();
  return v;
}
torch::Tensor predict(Net &net, torch::Tensor x) { return net->forward(x) * 2; }
torch::Tensor loss_of(const torch::Tensor &out, const torch::Tensor &y, int reduction) {
  return torch::mse_loss(out, y, reduction);
}
torch::Tensor score_of(const torch::Tensor &out) { return out.detach().sum(); }
void Learner::learn(Net &net, torch::optim::SGD &opt, torch::Tensor x) { train_epoch(net, opt, x); }
void Scorer::learn(Net &net, torch::optim::SGD &opt, torch::Tensor x) { validate(net, x); }
void train_epoch(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  opt.zero_grad();
  net->forward(x).sum().backward();
  opt.step();
}
float per_step(Net &net, torch::Tensor x) { return net->forward(x.to(torch::kCUDA)).sum().item<float>(); }
float once(Net &net, torch::Tensor x) { return net->forward(x.to(torch::kCUDA)).sum().item<float>(); }
// Epoch functions: they train only in loops of their own (inline, through a callee of this TU,
// through fit of train.cpp).
void run_epoch(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs) {
  for (auto &x : xs) {
    opt.zero_grad();
    net->forward(x).sum().backward();
    opt.step();
  }
}
void run_epoch_via(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs) {
  for (auto &x : xs)
    train_epoch(net, opt, x);
}
void epochs_of_fit(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  for (int e = 0; e < 3; ++e)
    fit(net, opt, x);
}
void History::set_last(const torch::Tensor &t) { last = t; }
void History::remember(torch::Tensor t, int n) { all.push_back(std::move(t)); }
void History::scaled(const torch::Tensor &t) { all.push_back(t * 2); }
void History::learn() { for (auto &t : all) t.backward(); } // what it keeps feeds backward(): still kept
float History::read_only(const torch::Tensor &t) { return t.sum().item<float>(); }
void keep_through(History &h, torch::Tensor t) { h.remember(t, 1); }
torch::Tensor unkept(torch::Tensor t) { return t * 2; }
void keep_recursively(History &h, torch::Tensor t, int n) {
  if (n > 0)
    keep_recursively(h, unkept(t), n - 1);
}
void nudge(Net &net) { net->fc->bias.add_(1); }
void nudge_mixed(Net &net) { net->fc->bias.add_(1); }
void nudge_uncalled(Net &net) { net->fc->bias.add_(1); }
torch::Tensor detach_state(const torch::Tensor &h) { return h.detach(); }
std::tuple<torch::Tensor, torch::Tensor> repackage(const std::tuple<torch::Tensor, torch::Tensor> &s) {
  return {std::get<0>(s).detach(), std::get<1>(s).detach()};
}
torch::Tensor keep_state(const torch::Tensor &h) { return h * 1; }
torch::Tensor detach_if(const torch::Tensor &h, bool cut) { return cut ? h.detach() : h; }
)cpp";

const char *Uses = R"cpp(
void fit(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  std::vector<torch::Tensor> kept;
  for (int i = 0; i < 3; ++i) {
    torch::Tensor attached_out;
    forward_into(net, x, attached_out);
    torch::Tensor detached_out;
    predict_into(net, x, detached_out);
    kept.push_back(detached_out);
    torch::Tensor from_return = predict(net, x);
    kept.push_back(attached_out);
    train_epoch(net, opt, x);
  }
}
void fit_agent(Agent &agent, Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 3; ++i)
    agent.learn(net, opt, x);
}
float on_gpu() {
  float s = 0;
  for (auto &b : gpu_batches(3)) s += b.sum().item<float>();
  return s;
}
float on_host() {
  float s = 0;
  for (auto &b : host_batches(3)) s += b.sum().item<float>();
  return s;
}
void keep_elsewhere(History &h, torch::Tensor t) { keep_through(h, t); }
float steps(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  float s = 0;
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    net->forward(x).sum().backward();
    opt.step();
    s += per_step(net, x);
  }
  return s + once(net, x);
}
void epochs(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs) {
  for (int e = 0; e < 3; ++e)
    run_epoch(net, opt, xs);
}
static void nudge_guarded(Net &net) { nudge(net); } // runs where tune calls it, under the guard
void tune(Net &net) {
  {
    torch::NoGradGuard guard;
    nudge(net);
    nudge_guarded(net);
    nudge_mixed(net);
  }
  nudge_mixed(net);
}
void recur(Net &net, torch::Tensor x) {
  torch::Tensor h_state = net->forward(x);
  auto cut_state = detach_state(h_state);
  auto kept_state = keep_state(h_state);
  auto cut_tuple = repackage(std::make_tuple(h_state, h_state));
  (void)cut_state, (void)kept_state, (void)cut_tuple;
}
)cpp";

std::unique_ptr<ASTUnit> parse(const std::string &Code, StringRef Name) {
  std::vector<std::string> Args = {"-std=c++17", "-isystem", TORCHTIDY_TORCH_INCLUDE,
                                   "-include-pch", TORCHTIDY_TEST_PCH,
                                   "-resource-dir", TORCHTIDY_CLANG_RESOURCE_DIR};
  return tooling::buildASTFromCodeWithArgs(Code, Args, Name);
}

const FunctionDecl *function(ASTContext &Ctx, StringRef Name) {
  auto M = match(findAll(functionDecl(hasName(("::" + Name).str())).bind("f")), Ctx);
  return M.empty() ? nullptr : M.front().getNodeAs<FunctionDecl>("f");
}

uint32_t factsOf(const ProjectIndex &I, ASTContext &Ctx, StringRef Name) {
  std::optional<uint32_t> F = I.factsOf(usrOf(function(Ctx, Name)));
  EXPECT_TRUE(F.has_value()) << Name.str();
  return F.value_or(0);
}

class ProjectIndexTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Model = parse(std::string(Header) + Definitions, "model.cpp").release();
    Train = parse(std::string(Header) + Uses, "train.cpp").release();
    ASSERT_TRUE(Model && Train);
    ASSERT_FALSE(Model->getDiagnostics().hasErrorOccurred());
    ASSERT_FALSE(Train->getDiagnostics().hasErrorOccurred());
    // As the driver analyzes a TU: the matchers see the main file's declarations only.
    for (ASTUnit *U : {Model, Train}) {
      ASTContext &Ctx = U->getASTContext();
      std::vector<Decl *> Scope;
      forEachUserDecl(Ctx, [&](Decl *D) {
        if (Ctx.getSourceManager().isInMainFile(D->getLocation()))
          Scope.push_back(D);
      });
      Ctx.setTraversalScope(Scope);
    }
    Index = new ProjectIndex(summarizeTranslationUnit(Model->getASTContext()));
    Index->merge(summarizeTranslationUnit(Train->getASTContext()));
  }
  static void TearDownTestSuite() {
    ProjectIndex::clearForProcess();
    delete Model;
    delete Train;
    delete Index;
  }
  static ASTUnit *Model, *Train;
  static ProjectIndex *Index;
};
ASTUnit *ProjectIndexTest::Model = nullptr;
ASTUnit *ProjectIndexTest::Train = nullptr;
ProjectIndex *ProjectIndexTest::Index = nullptr;

using F = FunctionSummary;

TEST_F(ProjectIndexTest, SummariesOfTheDefiningUnit) {
  ASTContext &Ctx = Model->getASTContext();
  EXPECT_TRUE(factsOf(*Index, Ctx, "forces") & F::Grad);
  EXPECT_TRUE(factsOf(*Index, Ctx, "forces") & F::Forward);
  EXPECT_TRUE(factsOf(*Index, Ctx, "gpu_batches") & F::Accelerator);
  EXPECT_FALSE(factsOf(*Index, Ctx, "host_batches") & F::Accelerator);
  EXPECT_EQ(factsOf(*Index, Ctx, "validate") & (F::Eval | F::Train | F::Forward), F::Eval | F::Forward);
  EXPECT_TRUE(factsOf(*Index, Ctx, "validate_restoring") & F::Train);
  EXPECT_EQ(factsOf(*Index, Ctx, "train_epoch") & (F::Backward | F::Step | F::ZeroGrad),
            F::Backward | F::Step | F::ZeroGrad);
  EXPECT_EQ(Index->graphOutParamsOf(function(Ctx, "forward_into")), 1u << 2);
  EXPECT_EQ(Index->graphOutParamsOf(function(Ctx, "predict_into")), 0u);
  EXPECT_TRUE(factsOf(*Index, Ctx, "predict") & F::ReturnsGraph);
  EXPECT_FALSE(factsOf(*Index, Ctx, "host_batches") & F::ReturnsGraph);
  // A loss over what it is handed: attached through either tensor; a score that detaches is not.
  EXPECT_EQ(Index->graphThroughParamsOf(function(Ctx, "loss_of")), 3u);
  EXPECT_EQ(Index->graphThroughParamsOf(function(Ctx, "score_of")), 0u);
  EXPECT_EQ(Index->graphThroughParamsOf(function(Ctx, "predict")), 0u); // returns_graph says it all
  // No graph in what it returns, whatever it is handed: a detached copy, a tuple of them.
  EXPECT_TRUE(factsOf(*Index, Ctx, "detach_state") & F::ReturnsDetached);
  EXPECT_TRUE(factsOf(*Index, Ctx, "repackage") & F::ReturnsDetached);
  EXPECT_FALSE(factsOf(*Index, Ctx, "keep_state") & F::ReturnsDetached);
  EXPECT_FALSE(factsOf(*Index, Ctx, "detach_if") & F::ReturnsDetached); // the argument itself on one path
  EXPECT_FALSE(factsOf(*Index, Ctx, "predict") & F::ReturnsDetached);
  EXPECT_TRUE(Index->consulted().count(usrOf(function(Ctx, "loss_of"))));
  // The epoch functions train, but only in loops of their own: a loop calling them does not
  // run a step on each of its iterations. train_epoch (one step) does.
  constexpr uint32_t Trains = F::Backward | F::Step;
  for (StringRef Epoch : {"run_epoch", "run_epoch_via", "epochs_of_fit"}) {
    EXPECT_EQ(factsOf(*Index, Ctx, Epoch) & Trains, Trains) << Epoch.str();
    EXPECT_EQ(Index->ownLevelFactsOf(function(Ctx, Epoch)) & Trains, 0u) << Epoch.str();
  }
  EXPECT_EQ(Index->find(usrOf(function(Ctx, "run_epoch")))->LoopedFacts & Trains, Trains);
  EXPECT_EQ(Index->ownLevelFactsOf(function(Ctx, "train_epoch")) & Trains, Trains);
  // Only the main file's definitions: the declarations of the header are not summaries.
  EXPECT_EQ(Index->find(usrOf(function(Ctx, "fit"))) != nullptr, true); // defined in train.cpp
}

TEST_F(ProjectIndexTest, KeptParameters) {
  ASTContext &Ctx = Model->getASTContext();
  auto Keeps = [&](StringRef Fn, unsigned I) { return Index->keepsParam(function(Ctx, Fn), I); };
  EXPECT_TRUE(Keeps("History::set_last", 0)); // into a member
  EXPECT_TRUE(Keeps("History::remember", 0)); // moved into a member vector
  EXPECT_FALSE(Keeps("History::scaled", 0)); // a new tensor made from it is kept, not it
  EXPECT_FALSE(Keeps("History::remember", 1)); // no tensor
  EXPECT_FALSE(Keeps("History::read_only", 0));
  EXPECT_FALSE(Keeps("unkept", 0)); // handed back: the caller follows it
  EXPECT_TRUE(Keeps("keep_through", 1)); // passed to a keeping function of this TU
  EXPECT_FALSE(Keeps("keep_through", 0));
  EXPECT_FALSE(Keeps("keep_recursively", 1));
  // keep_elsewhere (train.cpp) passes it on to keep_through (model.cpp), which keeps it.
  const FunctionDecl *Elsewhere = function(Train->getASTContext(), "keep_elsewhere");
  const FunctionSummary *S = Index->find(usrOf(Elsewhere));
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->KeptParams, 0u);
  EXPECT_TRUE(llvm::is_contained(S->PassedParams, (PassedParam{1, usrOf(function(Ctx, "keep_through")), 1})));
  EXPECT_TRUE(Index->keepsParam(Elsewhere, 1));
  EXPECT_FALSE(Index->keepsParam(Elsewhere, 0));
  EXPECT_TRUE(Index->consulted().count(usrOf(Elsewhere)));
}

TEST_F(ProjectIndexTest, FactsFollowCalleesIntoOtherUnits) {
  // fit (train.cpp) calls train_epoch (model.cpp): its facts include backward().
  EXPECT_TRUE(factsOf(*Index, Model->getASTContext(), "fit") & F::Backward);
}

TEST_F(ProjectIndexTest, VirtualCallsReachEveryOverrider) {
  // Agent::learn has no body anywhere: a call of it may run what Learner::learn (train_epoch:
  // backward, step, zero_grad) or Scorer::learn (validate: eval) runs, each in model.cpp.
  ASTContext &Ctx = Train->getASTContext();
  const FunctionSummary *Dispatch = Index->find(usrOf(function(Ctx, "Agent::learn")));
  ASSERT_NE(Dispatch, nullptr);
  EXPECT_EQ(Dispatch->Callees.size(), 2u);
  uint32_t Learn = factsOf(*Index, Ctx, "Agent::learn");
  EXPECT_EQ(Learn & (F::Backward | F::Step | F::ZeroGrad | F::Eval), F::Backward | F::Step | F::ZeroGrad | F::Eval);
  EXPECT_TRUE(factsOf(*Index, Ctx, "fit_agent") & F::Backward);
  // An overrider's own summary is its own: Scorer::learn does not train.
  EXPECT_FALSE(factsOf(*Index, Model->getASTContext(), "Scorer::learn") & F::Backward);
}

TEST_F(ProjectIndexTest, TheModelAnswersCallsIntoOtherUnits) {
  ProjectIndex::setForProcess(std::make_shared<ProjectIndex>(*Index));
  ASTContext &Ctx = Train->getASTContext();
  AutogradModel &M = AutogradModel::get(Ctx);
  ASSERT_NE(M.index(), nullptr);
  auto Ref = [&](StringRef Name) {
    auto R = match(findAll(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("push_back"))),
                                             hasArgument(0, ignoringImplicit(declRefExpr(to(varDecl(hasName(Name)))).bind("r"))))),
                   Ctx);
    return R.empty() ? nullptr : R.front().getNodeAs<Expr>("r");
  };
  auto VarRef = [&](StringRef Name) {
    auto R = match(findAll(declRefExpr(to(varDecl(hasName(Name)))).bind("r")), Ctx);
    return R.empty() ? nullptr : R.back().getNodeAs<Expr>("r");
  };
  auto Init = [&](StringRef Name) {
    auto R = match(findAll(varDecl(hasName(Name)).bind("v")), Ctx);
    return R.empty() ? nullptr : R.front().getNodeAs<VarDecl>("v")->getInit();
  };
  EXPECT_TRUE(M.isGraphAttached(Ref("attached_out")));
  EXPECT_FALSE(M.isGraphAttached(Ref("detached_out")));
  EXPECT_TRUE(M.isGraphAttached(Init("from_return")));
  // What a function of model.cpp returns holds no graph: a tensor, a tuple.
  EXPECT_TRUE(M.isDetached(Init("cut_state")));
  EXPECT_EQ(M.originAt(Init("cut_state")).Kind, TensorOrigin::Detached);
  EXPECT_TRUE(M.isDetached(Init("cut_tuple")));
  EXPECT_FALSE(M.isDetached(Init("kept_state")));
  // The loop in fit trains through train_epoch of model.cpp.
  const FunctionDecl *Fit = function(Ctx, "fit");
  auto Loops = match(findAll(forStmt().bind("l")), *Fit->getBody(), Ctx);
  ASSERT_FALSE(Loops.empty());
  EXPECT_EQ(M.loop(Loops.front().getNodeAs<Stmt>("l")).Kind, LoopKind::Training);
  // The loop in fit_agent trains through a virtual call whose overriders are in model.cpp.
  auto AgentLoops = match(findAll(forStmt().bind("l")), *function(Ctx, "fit_agent")->getBody(), Ctx);
  ASSERT_FALSE(AgentLoops.empty());
  EXPECT_EQ(M.loop(AgentLoops.front().getNodeAs<Stmt>("l")).Kind, LoopKind::Training);
  // Each iteration of fit's loop is a step (train_epoch steps once per call); an epoch loop
  // around run_epoch of model.cpp, which steps in its own batch loop, is not.
  const std::vector<LoopEventKind> Steps{LoopEventKind::Backward, LoopEventKind::Step};
  EXPECT_NE(M.ownLevelEvent(Loops.front().getNodeAs<Stmt>("l"), Steps), nullptr);
  auto EpochLoops = match(findAll(forStmt().bind("l")), *function(Ctx, "epochs")->getBody(), Ctx);
  ASSERT_FALSE(EpochLoops.empty());
  EXPECT_EQ(M.ownLevelEvent(EpochLoops.front().getNodeAs<Stmt>("l"), Steps), nullptr);
  EXPECT_FALSE(M.iteratesSteps(EpochLoops.front().getNodeAs<Stmt>("l")));
  EXPECT_TRUE(M.mayUseAccelerator(function(Ctx, "on_gpu")->getBody()));
  EXPECT_FALSE(M.mayUseAccelerator(function(Ctx, "on_host")->getBody()));
  // What was asked, for the result cache.
  EXPECT_TRUE(M.index()->consulted().count(usrOf(function(Ctx, "train_epoch"))));
}

TEST_F(ProjectIndexTest, LoopCallsFlowFromTheLoopToTheCallee) {
  // train.cpp's training loop calls per_step (model.cpp) on every step; once() runs once.
  ASTContext &Ctx = Model->getASTContext();
  std::optional<LoopCall> C = Index->loopCalling(usrOf(function(Ctx, "per_step")), LoopCall::TrainingLoop, 3);
  ASSERT_TRUE(C.has_value());
  ASTContext &TrainCtx = Train->getASTContext();
  const Stmt *Loop =
      match(findAll(forStmt().bind("l")), *function(TrainCtx, "steps")->getBody(), TrainCtx).front().getNodeAs<Stmt>("l");
  EXPECT_EQ(C->Loop, "train.cpp:" + std::to_string(TrainCtx.getSourceManager().getPresumedLineNumber(Loop->getBeginLoc())));
  EXPECT_EQ(C->Queries, unsigned(LoopCall::AnyLoop | LoopCall::ModelLoop | LoopCall::TrainingLoop));
  EXPECT_EQ(C->Calls, 0u);
  EXPECT_EQ(C->SameArgs, 2u); // x is the same on every iteration; net, which the loop trains, is not
  EXPECT_FALSE(Index->loopCalling(usrOf(function(Ctx, "once")), LoopCall::AnyLoop, 3).has_value());
  // model.cpp's model: item() in per_step runs on every step of that loop, out of sight.
  ProjectIndex::setForProcess(std::make_shared<ProjectIndex>(*Index));
  // A model of its own (summarizing made one with the default options before the index was set).
  ModelOptions Opts;
  Opts.ProjectIndexPath = "set for the process";
  AutogradModel &M = AutogradModel::get(Ctx, Opts);
  ASSERT_NE(M.index(), nullptr);
  auto Item = [&](StringRef Fn) {
    return match(findAll(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("item")))).bind("i")),
                 *function(Ctx, Fn)->getBody(), Ctx)
        .front()
        .getNodeAs<Stmt>("i");
  };
  std::optional<PerIteration> Hot =
      M.perIterationLoop(Item("per_step"), {LoopEventKind::Backward, LoopEventKind::Step}, /*AcrossTUs=*/true);
  ASSERT_TRUE(Hot.has_value());
  EXPECT_EQ(Hot->Loop, nullptr);
  EXPECT_EQ(Hot->Entry->getCanonicalDecl(), function(Ctx, "per_step")->getCanonicalDecl());
  EXPECT_EQ(Hot->Calls, 1u);
  EXPECT_FALSE(M.perIterationLoop(Item("per_step"), {LoopEventKind::Backward, LoopEventKind::Step}).has_value());
  EXPECT_FALSE(M.perIterationLoop(Item("once"), {}, /*AcrossTUs=*/true).has_value());
  ProjectIndex::clearForProcess();
}

TEST_F(ProjectIndexTest, GradModeFlowsFromTheCallsToTheCallee) {
  // train.cpp calls nudge only with autograd off (a guard, a caller under it), nudge_mixed
  // once without; nobody calls nudge_uncalled.
  ASTContext &Ctx = Model->getASTContext();
  auto USR = [&](StringRef Fn) { return usrOf(function(Ctx, Fn)); };
  EXPECT_EQ(Index->gradOffAtCalls(USR("nudge")), std::optional<bool>(true));
  EXPECT_EQ(Index->gradOffAtCalls(USR("nudge_mixed")), std::optional<bool>(false));
  EXPECT_EQ(Index->gradOffAtCalls(USR("nudge_uncalled")), std::nullopt);
  // Only calls of bodies the caller's TU does not hold: model.cpp's own calls are its own.
  EXPECT_EQ(Index->gradOffAtCalls(USR("train_epoch")), std::optional<bool>(false)); // fit's call
  EXPECT_EQ(Index->gradOffAtCalls(USR("keep_through")), std::optional<bool>(false)); // keep_elsewhere's call
  EXPECT_EQ(Index->gradOffAtCalls(USR("unkept")), std::nullopt); // called in model.cpp only
  // model.cpp's model: the update in nudge runs with autograd off, the others as without the index.
  ProjectIndex::setForProcess(std::make_shared<ProjectIndex>(*Index));
  ModelOptions Opts;
  Opts.ProjectIndexPath = "set for the process, grad mode";
  AutogradModel &M = AutogradModel::get(Ctx, Opts);
  ASSERT_NE(M.index(), nullptr);
  auto Update = [&](StringRef Fn) {
    return match(findAll(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("add_")))).bind("u")),
                 *function(Ctx, Fn)->getBody(), Ctx)
        .front()
        .getNodeAs<Stmt>("u");
  };
  EXPECT_TRUE(M.gradDisabledAt(Update("nudge")));
  EXPECT_EQ(M.gradModeAt(Update("nudge")).DecidedBy, nullptr);
  EXPECT_FALSE(M.gradDisabledAt(Update("nudge_mixed")));
  EXPECT_FALSE(M.gradDisabledAt(Update("nudge_uncalled")));
  // Each answer recorded, for the result cache.
  EXPECT_NE(M.index()->consulted().lookup("call-grad " + USR("nudge")), 0u);
  EXPECT_NE(M.index()->consulted().lookup("call-grad " + USR("nudge_mixed")), 0u);
  EXPECT_TRUE(M.index()->consulted().count("call-grad " + USR("nudge_uncalled")));
  ProjectIndex::clearForProcess();
}

TEST(ProjectIndex, CallGradMergesAcrossUnits) {
  // Three TUs call f, g, h of a fourth: f under guards in two of them, g with autograd on in
  // one of three, h with it on only.
  ProjectIndex A, B, C;
  A.addCallGrad("c:@F@f", CalledGradOff);
  B.addCallGrad("c:@F@f", CalledGradOff);
  A.addCallGrad("c:@F@g", CalledGradOff);
  B.addCallGrad("c:@F@g", CalledGradOn);
  C.addCallGrad("c:@F@g", CalledGradOff);
  C.addCallGrad("c:@F@h", CalledGradOn);
  C.addCallGrad("c:@F@none", 0);
  ProjectIndex I;
  for (const ProjectIndex *U : {&A, &B, &C})
    I.merge(*U);
  EXPECT_FALSE(I.empty());
  EXPECT_EQ(I.gradOffAtCalls("c:@F@f"), std::optional<bool>(true));
  EXPECT_EQ(I.gradOffAtCalls("c:@F@g"), std::optional<bool>(false));
  EXPECT_EQ(I.gradOffAtCalls("c:@F@h"), std::optional<bool>(false));
  EXPECT_EQ(I.gradOffAtCalls("c:@F@none"), std::nullopt);
  EXPECT_EQ(I.gradOffAtCalls("c:@F@missing"), std::nullopt);
  // The same bytes whatever order the TUs merged in.
  ProjectIndex Reversed;
  for (const ProjectIndex *U : {&C, &B, &A})
    Reversed.merge(*U);
  EXPECT_EQ(Reversed.toJSONText(), I.toJSONText());
  // Each answer is recorded; another TU's call with autograd on changes f's, a call under a
  // guard changes nothing of g's.
  ASSERT_EQ(I.consulted().size(), 5u);
  for (const auto &K : I.consulted())
    EXPECT_EQ(Reversed.answerHash(K.getKey()), K.getValue()) << K.getKey().str();
  ProjectIndex More = I;
  More.addCallGrad("c:@F@f", CalledGradOn);
  More.addCallGrad("c:@F@g", CalledGradOff);
  EXPECT_NE(More.answerHash("call-grad c:@F@f"), I.consulted().lookup("call-grad c:@F@f"));
  EXPECT_EQ(More.answerHash("call-grad c:@F@g"), I.consulted().lookup("call-grad c:@F@g"));
  // Without B, g is called under guards only.
  ProjectIndex WithoutB;
  WithoutB.merge(A);
  WithoutB.merge(C);
  EXPECT_NE(WithoutB.answerHash("call-grad c:@F@g"), I.consulted().lookup("call-grad c:@F@g"));
  EXPECT_EQ(WithoutB.gradOffAtCalls("c:@F@g"), std::optional<bool>(true));
  // Through JSON.
  llvm::Expected<ProjectIndex> Back = ProjectIndex::fromJSON(I.toJSONText());
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->toJSONText(), I.toJSONText());
  EXPECT_EQ(Back->gradOffAtCalls("c:@F@f"), std::optional<bool>(true));
  EXPECT_EQ(Back->gradOffAtCalls("c:@F@g"), std::optional<bool>(false));
  for (const char *Bad : {R"({"torchtidy_index": 1, "functions": {}, "call_grad": []})",
                          R"({"torchtidy_index": 1, "functions": {}, "call_grad": {"u": ["maybe"]}})",
                          R"({"torchtidy_index": 1, "functions": {}, "call_grad": {"u": "off"}})"}) {
    llvm::Expected<ProjectIndex> R = ProjectIndex::fromJSON(Bad);
    EXPECT_FALSE(bool(R)) << Bad;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST(ProjectIndex, LoopCallsMergeRecursionAndMissingUnits) {
  auto Call = [](std::string Loop, uint32_t Queries, unsigned Calls) {
    LoopCall C;
    C.Loop = std::move(Loop);
    C.Queries = Queries;
    C.Calls = Calls;
    return C;
  };
  // Two TUs call f in their loops; one of them twice over (kept once).
  ProjectIndex A, B;
  A.addLoopCall("c:@F@f", Call("b.cpp:9", LoopCall::AnyLoop, 2));
  A.addLoopCall("c:@F@f", Call("b.cpp:9", LoopCall::AnyLoop, 2));
  LoopCall SameFile = Call("a.cpp:4", LoopCall::AnyLoop | LoopCall::TrainingLoop, 0);
  SameFile.SameArgs = 2;
  B.addLoopCall("c:@F@f", SameFile);
  // Recursion across TUs: f's loop calls g, g's loop calls f; each answer is one call away.
  B.addLoopCall("c:@F@g", Call("a.cpp:4", LoopCall::AnyLoop, 0));
  A.addLoopCall("c:@F@f", Call("g.cpp:2", LoopCall::AnyLoop, 0));
  ProjectIndex I;
  I.merge(A);
  I.merge(B);
  EXPECT_TRUE(I.find("c:@F@f") == nullptr); // the callee's own TU is missing from the database
  std::optional<LoopCall> First = I.loopCalling("c:@F@f", LoopCall::AnyLoop, 3);
  ASSERT_TRUE(First.has_value());
  EXPECT_EQ(First->Loop, "a.cpp:4"); // the first by place, whatever order the TUs merged in
  EXPECT_EQ(First->SameArgs, 2u);
  EXPECT_EQ(I.loopCalling("c:@F@f", LoopCall::TrainingLoop, 0)->Loop, "a.cpp:4");
  EXPECT_FALSE(I.loopCalling("c:@F@f", LoopCall::ModelLoop, 3).has_value());
  EXPECT_FALSE(I.loopCalling("c:@F@g", LoopCall::TrainingLoop, 3).has_value());
  EXPECT_FALSE(I.loopCalling("c:@F@h", LoopCall::AnyLoop, 3).has_value());
  ProjectIndex Reversed;
  Reversed.merge(B);
  Reversed.merge(A);
  EXPECT_EQ(Reversed.toJSONText(), I.toJSONText());
  // Each lookup is recorded with its answer: a TU is stale only when its answer changes.
  ASSERT_EQ(I.consulted().size(), 5u);
  for (const auto &K : I.consulted())
    EXPECT_EQ(Reversed.answerHash(K.getKey()), K.getValue()) << K.getKey().str();
  // Without B, f's first loop is another one: the answer changed.
  EXPECT_NE(A.answerHash((llvm::Twine("loop-calls ") + llvm::Twine(unsigned(LoopCall::AnyLoop)) + " 3 c:@F@f").str()),
            I.consulted().lookup((llvm::Twine("loop-calls ") + llvm::Twine(unsigned(LoopCall::AnyLoop)) + " 3 c:@F@f").str()));
  // A new loop that does not change the answer (a later place) leaves it the same.
  ProjectIndex More = I;
  More.addLoopCall("c:@F@f", Call("z.cpp:1", LoopCall::AnyLoop, 0));
  for (const auto &K : I.consulted())
    EXPECT_EQ(More.answerHash(K.getKey()), K.getValue()) << K.getKey().str();
  // Through JSON.
  llvm::Expected<ProjectIndex> Back = ProjectIndex::fromJSON(I.toJSONText());
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->toJSONText(), I.toJSONText());
  for (const char *Bad : {R"({"torchtidy_index": 1, "functions": {}, "loop_calls": []})",
                          R"({"torchtidy_index": 1, "functions": {}, "loop_calls": {"u": [{"loop": "a:1", "loops": ["hot"], "calls": 0}]}})",
                          R"({"torchtidy_index": 1, "functions": {}, "loop_calls": {"u": [{"loop": "a:1", "loops": [], "calls": -1}]}})",
                          R"({"torchtidy_index": 1, "functions": {}, "loop_calls": {"u": [{"loop": "a:1", "loops": [], "calls": 0, "same_args": -1}]}})"}) {
    llvm::Expected<ProjectIndex> R = ProjectIndex::fromJSON(Bad);
    EXPECT_FALSE(bool(R)) << Bad;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST(ProjectIndex, EveryCallChainsReachTheLoop) {
  auto Summary = [](std::string Name, std::vector<std::string> Every) {
    FunctionSummary S;
    S.Name = std::move(Name);
    S.EveryCall = std::move(Every);
    return S;
  };
  LoopCall L;
  L.Loop = "train.cpp:5";
  L.Queries = LoopCall::AnyLoop | LoopCall::ModelLoop | LoopCall::TrainingLoop;
  L.SameArgs = 1;
  // train.cpp's loop calls render; render calls forward and forward calls encode on every call
  // of theirs, each in its own TU: encode runs on every iteration, two calls further down.
  ProjectIndex Train, Render, Field, Cycle;
  Train.addLoopCall("c:@F@render", L);
  Render.add("c:@F@render", Summary("render", {"c:@F@forward"}));
  Field.add("c:@F@forward", Summary("forward", {"c:@F@encode"}));
  // A cycle of every-call callers that reaches no loop ends.
  Cycle.add("c:@F@a", Summary("a", {"c:@F@b"}));
  Cycle.add("c:@F@b", Summary("b", {"c:@F@a"}));
  ProjectIndex I;
  for (const ProjectIndex *Part : {&Field, &Cycle, &Render, &Train})
    I.merge(*Part);
  std::optional<LoopCall> C = I.loopCalling("c:@F@encode", LoopCall::TrainingLoop, 0);
  ASSERT_TRUE(C.has_value());
  EXPECT_EQ(C->Loop, "train.cpp:5");
  EXPECT_EQ(C->Calls, 2u);
  EXPECT_EQ(C->SameArgs, 0u); // the loop's arguments are render's, not encode's
  EXPECT_EQ(I.loopCalling("c:@F@render", LoopCall::TrainingLoop, 0)->Calls, 0u);
  EXPECT_EQ(I.loopCalling("c:@F@render", LoopCall::TrainingLoop, 0)->SameArgs, 1u);
  EXPECT_FALSE(I.loopCalling("c:@F@a", LoopCall::AnyLoop, 3).has_value());
  // The answer depends on the middle of the chain: without render's summary it is gone.
  std::string Key = (llvm::Twine("loop-calls ") + llvm::Twine(unsigned(LoopCall::TrainingLoop)) + " 0 c:@F@encode").str();
  ProjectIndex Broken;
  Broken.merge(Field);
  Broken.merge(Train);
  EXPECT_EQ(Broken.answerHash(Key), 0u);
  EXPECT_NE(I.consulted().lookup(Key), 0u);
  // Six every-call callers are followed, not seven.
  ProjectIndex Long;
  Long.addLoopCall("c:@F@f0", L);
  for (int N = 0; N < 7; ++N)
    Long.add("c:@F@f" + std::to_string(N), Summary("f", {"c:@F@f" + std::to_string(N + 1)}));
  EXPECT_EQ(Long.loopCalling("c:@F@f6", LoopCall::AnyLoop, 0)->Calls, 6u);
  EXPECT_FALSE(Long.loopCalling("c:@F@f7", LoopCall::AnyLoop, 0).has_value());
  // Through JSON, the edges stay.
  llvm::Expected<ProjectIndex> Back = ProjectIndex::fromJSON(I.toJSONText());
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->toJSONText(), I.toJSONText());
  EXPECT_EQ(Back->loopCalling("c:@F@encode", LoopCall::TrainingLoop, 0)->Loop, "train.cpp:5");
}

TEST(ProjectIndex, MergeRecursionAndMissingUnits) {
  ProjectIndex I;
  F A, B, C, E, G;
  A.Callees = {"c:@F@b"};
  B.Facts = F::Backward;
  C.Callees = {"c:@F@missing"}; // a TU not in the compilation database
  E.Callees = {"c:@F@g"};
  G.Callees = {"c:@F@e"}; // mutual recursion
  G.Facts = F::Step;
  I.add("c:@F@a", A);
  I.add("c:@F@b", B);
  I.add("c:@F@c", C);
  I.add("c:@F@e", E);
  I.add("c:@F@g", G);
  EXPECT_EQ(I.factsOf("c:@F@a"), F::Backward);
  EXPECT_EQ(I.factsOf("c:@F@c"), 0u);
  EXPECT_EQ(I.factsOf("c:@F@e"), F::Step);
  EXPECT_EQ(I.factsOf("c:@F@missing"), std::nullopt);
  EXPECT_EQ(I.answerHash("c:@F@missing"), 0u);
  // The answer for a depends on b's summary.
  uint64_t Before = I.answerHash("c:@F@a");
  ProjectIndex J = I;
  F B2;
  B2.Facts = F::Backward | F::Eval;
  ProjectIndex Other;
  Other.add("c:@F@b", B2);
  J.merge(Other);
  EXPECT_NE(J.answerHash("c:@F@a"), Before);
}

TEST(ProjectIndex, KeptParametersThroughCalleesRecursionAndMerge) {
  // a passes its parameter 0 to b's 1; b its 1 to c's 0 (kept) and back to a (recursion), its 0
  // to itself; d passes to a TU missing from the database.
  F A, B, C, D;
  A.PassedParams = {{0, "c:@F@b", 1}};
  B.PassedParams = {{1, "c:@F@c", 0}, {1, "c:@F@a", 0}, {0, "c:@F@b", 0}};
  C.KeptParams = 1u << 0;
  D.PassedParams = {{0, "c:@F@missing", 0}};
  ProjectIndex I;
  for (auto [USR, S] : {std::pair("c:@F@a", A), std::pair("c:@F@b", B), std::pair("c:@F@d", D)})
    I.add(USR, S);
  // keepsParam asks of declarations (extern "C": USRs without parameter types).
  std::unique_ptr<ASTUnit> AST = tooling::buildASTFromCode(R"(extern "C" { void a(int); void b(int, int); void d(int); })");
  auto Keeps = [&](const ProjectIndex &I, StringRef USR, unsigned P) {
    const FunctionDecl *FD = function(AST->getASTContext(), USR.drop_front(strlen("c:@F@")));
    EXPECT_EQ(usrOf(FD), USR.str());
    return I.keepsParam(FD, P);
  };
  EXPECT_FALSE(Keeps(I, "c:@F@a", 0)); // c's summary is missing: not known to keep it
  uint64_t Before = I.answerHash("c:@F@a");
  ProjectIndex WithC = I;
  WithC.add("c:@F@c", C);
  EXPECT_NE(WithC.answerHash("c:@F@a"), Before); // c's summary changes a's answer
  EXPECT_TRUE(Keeps(WithC, "c:@F@a", 0));
  EXPECT_TRUE(Keeps(WithC, "c:@F@b", 1));
  EXPECT_FALSE(Keeps(WithC, "c:@F@b", 0)); // only to itself
  EXPECT_FALSE(Keeps(WithC, "c:@F@d", 0));
  // Two definitions that disagree: the union, marked.
  F Other = A;
  Other.KeptParams = 1u << 2;
  Other.PassedParams = {{1, "c:@F@d", 0}};
  WithC.add("c:@F@a", Other);
  const FunctionSummary *Merged = WithC.find("c:@F@a");
  EXPECT_TRUE(Merged->Conflicting);
  EXPECT_EQ(Merged->KeptParams, 1u << 2);
  EXPECT_EQ(Merged->PassedParams.size(), 2u);
  // Through JSON.
  llvm::Expected<ProjectIndex> Back = ProjectIndex::fromJSON(WithC.toJSONText());
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back->find("c:@F@a"), *Merged);
  EXPECT_EQ(Back->toJSONText(), WithC.toJSONText());
  for (const char *Bad : {R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": [], "kept_params": -1}}})",
                          R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": [], "passed_params": [{"param": 0, "callee": "c:@F@g", "callee_param": 32}]}}})",
                          R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": [], "passed_params": [{"param": 0}]}}})"}) {
    llvm::Expected<ProjectIndex> R = ProjectIndex::fromJSON(Bad);
    EXPECT_FALSE(bool(R)) << Bad;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST(ProjectIndex, DisagreeingDefinitionsKeepEveryFact) {
  ProjectIndex I;
  F One, Two;
  One.Facts = F::Eval;
  Two.Facts = F::Train;
  I.add("c:@F@h", One);
  I.add("c:@F@h", One);
  EXPECT_FALSE(I.find("c:@F@h")->Conflicting);
  I.add("c:@F@h", Two);
  EXPECT_TRUE(I.find("c:@F@h")->Conflicting);
  EXPECT_EQ(I.factsOf("c:@F@h"), F::Eval | F::Train);
  // A fact or a callee one definition has outside its loops is not looped in the merge.
  F Looped, Plain;
  Looped.Facts = Plain.Facts = F::Backward;
  Looped.LoopedFacts = F::Backward;
  Looped.Callees = Plain.Callees = {"c:@F@step"};
  Looped.LoopedCallees = {"c:@F@step"};
  I.add("c:@F@e", Looped);
  EXPECT_EQ(I.find("c:@F@e")->LoopedFacts, F::Backward);
  I.add("c:@F@e", Plain);
  EXPECT_EQ(I.find("c:@F@e")->LoopedFacts, 0u);
  EXPECT_TRUE(I.find("c:@F@e")->LoopedCallees.empty());
}

TEST(ProjectIndex, JsonRoundTripAndRefusals) {
  ProjectIndex I;
  F S;
  S.Name = "ns::f";
  S.Facts = F::Forward | F::ReturnsGraph;
  S.GraphOutParams = 5;
  S.GraphThroughParams = 2;
  S.KeptParams = 6;
  S.PassedParams = {{0, "c:@F@g", 1}};
  S.Callees = {"c:@F@g", "c:@F@h"};
  S.LoopedFacts = F::Forward;
  S.LoopedCallees = {"c:@F@h"};
  I.add("c:@F@f", S);
  std::string Text = I.toJSONText();
  llvm::Expected<ProjectIndex> Back = ProjectIndex::fromJSON(Text);
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  ASSERT_NE(Back->find("c:@F@f"), nullptr);
  EXPECT_EQ(*Back->find("c:@F@f"), S);
  for (const char *Bad : {"{}", R"({"torchtidy_index": 2, "functions": {}})",
                          R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": ["flies"]}}})",
                          R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": [], "graph_out_params": -1}}})",
                          R"({"torchtidy_index": 1, "functions": {"u": {"name": "f", "facts": [], "looped_facts": ["x"]}}})",
                          "[", "\"x\""}) {
    llvm::Expected<ProjectIndex> R = ProjectIndex::fromJSON(Bad);
    EXPECT_FALSE(bool(R)) << Bad;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

} // namespace
