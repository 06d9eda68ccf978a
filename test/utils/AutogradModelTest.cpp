// Unit tests of utils/AutogradModel, one or more per query, on real LibTorch code.
#include "TestAST.h"
#include "utils/AutogradModel.h"

#include "clang/AST/ASTLambda.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy;

namespace {

const char *Code = R"cpp(
#include <torch/torch.h>
#include <ATen/Parallel.h>
#include <functional>
#include <future>
#include <thread>
struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);
void train_step(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  opt.zero_grad();
  torch::Tensor helper_loss = net->forward(x).sum();
  helper_loss.backward();
  opt.step();
}
void train(Net &net, torch::Tensor x) {
  torch::Tensor w = torch::zeros({4}, torch::requires_grad());
  torch::Tensor frozen = torch::ones({4});
  torch::Tensor scratch = torch::ones({4});
  torch::optim::SGD opt({w}, 0.1);
  std::vector<torch::Tensor> history;
  std::vector<torch::Tensor> per_iteration;
  for (int i = 0; i < 10; ++i) {
    torch::Tensor out = net->forward(x);
    torch::Tensor loss = (out * w).sum();
    loss.backward();
    opt.step();
    scratch.add_(1);
    torch::Tensor every_iter = frozen * 2;
    history.push_back(loss);
    per_iteration.push_back(loss);
    if (i % 5 == 0) {
      torch::Tensor every_fifth = loss.detach();
    }
    if (i > 3) {
      torch::Tensor conditional = loss.detach();
    }
    per_iteration.clear();
  }
  for (int j = 0; j < 3; ++j)
    train_step(net, opt, x);
}
void evaluate(Net &net, torch::Tensor x) {
  net->eval();
  for (int i = 0; i < 3; ++i) {
    torch::Tensor eval_out = net->forward(x);
  }
}
void evaluate_no_grad(Net &net, torch::Tensor x) {
  torch::NoGradGuard guard;
  torch::Tensor guarded = net->forward(x);
  std::thread worker([&] { torch::Tensor in_thread = net->forward(x); });
  worker.join();
  auto fut = std::async([&] { torch::Tensor in_async = net->forward(x); return in_async; });
  auto local = [&] { torch::Tensor in_lambda = net->forward(x); return in_lambda; };
  local();
}
struct Pool {
  template <typename F> void submit(F f) { f(); }
};
void worker_fn(Net &net, torch::Tensor x) { torch::Tensor in_worker_fn = net->forward(x); }
void launches(Net &net, torch::Tensor x, Pool &pool) {
  torch::NoGradGuard guard_launch;
  pool.submit([&] { torch::Tensor in_pool = net->forward(x); });
  auto job = [&] { torch::Tensor in_job = net->forward(x); };
  std::thread t(job);
  t.join();
  std::thread t2(worker_fn, std::ref(net), x);
  t2.join();
  at::launch([&] { torch::Tensor in_at_launch = net->forward(x); });
}
void helper_under_caller_guard(Net &net, torch::Tensor x) { torch::Tensor pred_in_callee = net->forward(x); }
void guarded_caller(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  helper_under_caller_guard(net, x);
}
void switched(Net &net, torch::Tensor x) {
  torch::GradMode::set_enabled(false);
  torch::Tensor after_switch = net->forward(x);
  torch::GradMode::set_enabled(true);
  torch::Tensor after_enable = net->forward(x);
}
struct Record { torch::Tensor value; int step; };
void aggregates(Net &net, torch::Tensor x) {
  torch::Tensor attached = net->forward(x);
  Record rec{attached, 1};
  Record plain{x, 2};
  auto pair = std::make_pair(1, attached);
  std::tuple<torch::Tensor, torch::Tensor> state_tuple{attached, attached};
  torch::Tensor retained = net->forward(x).sum();
  torch::Tensor unused = net->forward(x).sum();
  retained.backward();
  std::vector<Record> records;
  records.push_back(rec);
  records.push_back(plain);
  (void)unused;
}
using HiddenPair = std::tuple<torch::Tensor, torch::Tensor>;
torch::Tensor detach_hidden(const torch::Tensor &h) { return h.detach(); }
HiddenPair repackage_hidden(const HiddenPair &s) { return {std::get<0>(s).detach(), std::get<1>(s).detach()}; }
HiddenPair pass_hidden(const HiddenPair &s) { return s; }
torch::Tensor same_hidden(const torch::Tensor &h) { return h * 1; }
void recurrent(Net &net, torch::Tensor x) {
  torch::Tensor hid = net->forward(x);
  HiddenPair pair_state{hid, hid};
  auto cut_hid = detach_hidden(hid);
  auto kept_hid = same_hidden(hid);
  auto cut_pair = repackage_hidden(pair_state);
  auto kept_pair = pass_hidden(pair_state);
  auto made_cut = std::make_tuple(hid.detach(), x.detach());
  auto made_mixed = std::make_tuple(hid.detach(), hid);
  (void)cut_hid, (void)kept_hid, (void)cut_pair, (void)kept_pair, (void)made_cut, (void)made_mixed;
}
struct ChunkedImpl : torch::nn::Module {
  std::vector<torch::Tensor> forward_chunks(torch::Tensor x, torch::Tensor h) {
    std::vector<torch::Tensor> chunk_outs;
    for (int i = 0; i < 2; ++i)
      chunk_outs.push_back(x * h);
    x = torch::cat(chunk_outs, 0);
    return {x, h};
  }
};
void branches(bool c, torch::Tensor x) {
  torch::Tensor first = x + 1;
  if (c) {
    torch::Tensor maybe = x + 2;
  }
  torch::Tensor last = x + 3;
}
template <typename T> void generic(T &model, torch::Tensor x) {
  auto y = model.forward(x);
  y.backward();
}
void log_value(torch::Tensor t) { (void)t.item<float>(); }
void branches(torch::Tensor t) {
  if (t.sum().item<float>() > 0.5f)
    return;
  float logged = t.mean().item<float>();
  float checked = t.max().item<float>();
  bool stop = checked > 1.0f;
  (void)logged;
  (void)stop;
}
void backprop(torch::Tensor t) { t.backward(); }
void sums(Net &net, torch::Tensor x) {
  torch::Tensor logged_sum = torch::zeros({});
  torch::Tensor mean_backpropagated = torch::zeros({});
  torch::Tensor handed_over = torch::zeros({});
  torch::Tensor chained = torch::zeros({});
  for (int i = 0; i < 3; ++i) {
    chained = chained + net->forward(x).sum();
    logged_sum += net->forward(x).sum();
    mean_backpropagated += net->forward(x).sum();
    handed_over += net->forward(x).sum();
  }
  log_value(logged_sum);
  auto mean = mean_backpropagated / 3;
  mean.backward();
  backprop(handed_over);
}
torch::Tensor summed_and_returned(Net &net, torch::Tensor x) {
  torch::Tensor returned_sum = torch::zeros({});
  returned_sum += net->forward(x).sum();
  return returned_sum;
}
void per_step_helper() { int in_helper = 0; (void)in_helper; }
void per_step_loop(int n, bool enabled) {
  std::function<void()> callback = [] { int in_callback = 0; (void)in_callback; };
  for (int i = 0; i < n; ++i) {
    if (enabled && i % 100) { int mostly_when_enabled = 0; (void)mostly_when_enabled; }
    per_step_helper();
    callback();
    if (i % 100) { int mostly = 0; (void)mostly; }
    if (i % 100 == 0) { int rarely = 0; (void)rarely; }
  }
}
void epochs(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  for (int e = 0; e < 2; ++e) {
    for (int b = 0; b < 3; ++b)
      train_step(net, opt, x);
    torch::Tensor validation = net->forward(x);
  }
}
int next_index();
void retained_graphs(Net &net, torch::Tensor x) {
  for (int i = 0; i < 3; ++i)
    net->forward(x).sum().backward({}, /*retain_graph=*/true);
  for (int i = 0; i < 3; ++i)
    if (i % 2 == 0)
      net->forward(x).sum().backward();
  for (int i = 0; i < 3; ++i)
    net->forward(x).sum().backward({}, false);
}
void load_paths(const std::vector<std::string> &paths, const std::string &fixed) {
  for (const auto &path : paths) {
    std::string same_name = fixed + ".pt";
    std::string per_item = path + ".pt";
    std::string from_call = std::to_string(next_index());
    std::string joined = same_name + per_item + from_call;
  }
}
void once_outside_loops() { int outside = 0; (void)outside; }
void manual_clear(Net &net, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 2; ++i) {
    net->forward(x).sum().backward();
    opt.step();
    for (auto &p : net->parameters())
      p.mutable_grad().zero_();
  }
}
void clears(Net &net, torch::Tensor x, bool c) {
  std::vector<torch::Tensor> sometimes, always;
  for (int i = 0; i < 3; ++i) {
    sometimes.push_back(net->forward(x));
    always.push_back(net->forward(x));
    if (c) {
      sometimes.clear();
      always.clear();
    } else {
      always = {};
    }
  }
}
void redetached(Net &net, torch::Tensor x, bool c) {
  auto p = net->forward(x);
  p = p.detach();
  torch::Tensor stored_p = p;
  auto q = net->forward(x);
  if (c)
    q = q.detach();
  torch::Tensor stored_q = q;
}
template <typename Batch> void by_name(Net &net, Batch &batch) {
  auto dep_out = net->forward(batch.data);
  auto dep_detached = net->forward(batch.data).detach();
  auto dep_called = net(batch.data);
}
void metrics(std::vector<torch::Tensor> &preds, torch::Tensor y) {
  torch::nn::MSELoss criterion;
  torch::nn::ReLU relu;
  for (auto &p : preds)
    auto metric = criterion(relu(p), y);
}
void detached_reads(Net &net, torch::Tensor x, torch::Tensor w) {
  std::vector<torch::Tensor> kept_then_detached;
  kept_then_detached.push_back(net->forward(x));
  auto read_back = kept_then_detached[0].detach();
  (read_back * w).sum().backward();
}
void on_cpu(torch::Tensor x) {
  torch::Device cpu_dev(torch::kCPU);
  auto to_host = x.to(torch::kCPU, torch::kUInt8);
  auto to_half = x.to(torch::kHalf);
  auto to_var = x.to(cpu_dev);
}
void on_gpu(torch::Tensor x) { auto to_gpu = x.cuda(); }
void cpu_helper(torch::Tensor x) { auto in_cpu_helper = x * 2; }
void cpu_only_caller(torch::Tensor x) { cpu_helper(x); }
void gpu_helper(torch::Tensor x) { auto in_gpu_helper = x * 2; }
void gpu_caller(Net &net, torch::Tensor x) {
  net->to(torch::Device("cuda:0"));
  gpu_helper(x);
}
void score(Net &net, torch::Tensor x) { auto scored = net(x); }
void scores(Net &net, torch::Tensor x) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j)
      auto inner_scored = net(x);
    score(net, x);
  }
}
void options_in_loop(torch::Device options_device) {
  for (int i = 0; i < 3; ++i) {
    auto opts = torch::TensorOptions().device(options_device);
    (void)opts;
  }
}
struct Episode {
  torch::Tensor episode_loss;
  torch::Tensor logged_loss;
  void add(torch::Tensor l) { episode_loss += l; logged_loss += l; }
  void finish() { episode_loss.backward(); }
};
void scratch_step(Net &net, torch::Tensor x) {
  torch::Tensor in_step = torch::ones({4});
  net->forward(x + in_step).sum().backward();
}
void scratch_epochs(Net &net, torch::Tensor x, int n) {
  const int64_t width = 4;
  for (int e = 0; e < 2; ++e) {
    torch::Tensor per_epoch = torch::zeros({width});
    for (int b = 0; b < n; ++b) {
      torch::Tensor sized = torch::zeros({width, b});
      scratch_step(net, x);
    }
  }
}
torch::Tensor keeps_nothing(const torch::Tensor &t) { return t.sum(); }
std::vector<torch::Tensor> keeps(torch::Tensor x) {
  std::vector<torch::Tensor> kept;
  torch::Tensor last;
  for (int i = 0; i < 3; ++i) {
    torch::Tensor pushed = x + i;
    torch::Tensor assigned = x * i;
    torch::Tensor scratch_local = x - i;
    torch::Tensor copy = scratch_local;
    copy = scratch_local;
    kept.push_back(pushed);
    last = assigned;
    torch::Tensor summed = x * 2;
    torch::Tensor helped = x * 3;
    keeps_nothing(helped);
    torch::Tensor computed_from = x * 4;
    kept.push_back(computed_from + 1);
    summed.sum().backward();
  }
  return kept;
}
void cuts(Net &net, torch::Tensor x, torch::Tensor y) {
  auto attached_loss = torch::mse_loss(net->forward(x), y);
  auto detached_loss = torch::mse_loss(net->forward(x).detach(), y);
  torch::Tensor guarded_loss;
  {
    torch::NoGradGuard cut_guard;
    guarded_loss = torch::mse_loss(net->forward(x), y);
  }
  std::vector<float> values;
  values.push_back(net->forward(x).sum().item<float>());
  auto from_values = torch::tensor(values);
  auto plain_leaf = torch::zeros({4});
  auto mixed = net->forward(x).detach() + net->forward(x);
  torch::nn::MSELoss criterion;
  auto module_loss = criterion(net->forward(x).detach(), y);
  std::vector<torch::Tensor> all{attached_loss, detached_loss, guarded_loss, from_values, plain_leaf, mixed, module_loss};
}
struct CachingTrainer {
  Net net;
  torch::Tensor kept_out, trained_loss, shown;
  void step(torch::Tensor x) {
    kept_out = net->forward(x);
    trained_loss = kept_out.sum();
    trained_loss.backward();
    shown = net->forward(x);
  }
};
void update_weights(torch::Tensor x); // defined in another unit
void log_batch(torch::Tensor x);
void opaque_calls(torch::Tensor x) {
  update_weights(x);
  log_batch(x);
}
void inspect_tensor(const torch::Tensor &t) { (void)t.defined(); }
void report_all(const std::vector<torch::Tensor> &v) { for (const auto &t : v) inspect_tensor(t); }
void never_called(const torch::Tensor &alone) { inspect_tensor(alone); }
void reports_outputs(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> reported;
  for (int i = 0; i < 3; ++i) {
    reported.push_back(net->forward(x).sum());
    report_all(reported);
  }
}
// A lambda held in a local, called in a loop and once after it: the closure is argument 0.
void accumulate_through_lambda(torch::Tensor x, std::vector<torch::Tensor> batches) {
  auto add_into = [](torch::Tensor &total, const torch::Tensor &part) { total += part; };
  torch::Tensor lambda_sum = torch::zeros({});
  for (auto &b : batches)
    add_into(lambda_sum, b);
  if (batches.empty())
    lambda_sum = x;
  add_into(lambda_sum, x);
}
// Helpers that grow what their callers keep (loopKeeping).
struct Grower {
  torch::Tensor grown_field;
  void grow(const torch::Tensor &x) { grown_field = torch::cat({grown_field, x}); }
};
void grow_param(torch::Tensor &grown_param, const torch::Tensor &x) { grown_param = torch::cat({grown_param, x}); }
void grow_through(Grower &g, const torch::Tensor &x) { g.grow(x); }
void growers(Grower &g, torch::Tensor x) {
  torch::Tensor kept_table = torch::empty({0});
  for (int i = 0; i < 3; ++i) {
    torch::Tensor fresh_table = torch::empty({0});
    grow_param(fresh_table, x);
    grow_param(kept_table, x);
    grow_through(g, x);
  }
}
// Where a new object goes (receivingVariable).
void holders(Net &net) {
  torch::optim::SGD held_opt(net->parameters(), 0.1);
  std::unique_ptr<torch::optim::Optimizer> held_ptr;
  held_ptr = std::make_unique<torch::optim::SGD>(net->parameters(), 0.1);
  held_ptr.reset(new torch::optim::SGD(net->parameters(), 0.1));
  static torch::optim::SGD static_opt(net->parameters(), 0.1);
  std::vector<std::unique_ptr<torch::optim::Optimizer>> many;
  many.push_back(std::make_unique<torch::optim::SGD>(net->parameters(), 0.1));
}
// A std::function parameter called per step runs what the visible calls pass for it.
void run_steps(const std::vector<torch::Tensor> &xs, std::function<void(torch::Tensor)> on_step) {
  for (const auto &x : xs)
    on_step(x);
}
void host_sink(const torch::Tensor &t);
torch::Tensor h_make() { return torch::full({4}, 0.5); }
torch::Tensor h_wrap(std::vector<float> &b) { return torch::from_blob(b.data(), {4}); }
torch::Tensor h_values(const std::vector<float> &v) { return torch::tensor(v); }
void host_tensors(torch::Tensor dev, torch::TensorOptions opts, std::vector<float> &buf, bool c) {
  auto h_made = h_make() * 2;
  auto h_wrapped = h_wrap(buf);
  auto h_listed = h_values(buf);
  auto h_filled = torch::zeros({4});
  h_filled[0] = 1;
  host_sink(h_filled);
  auto h_factory = torch::zeros({4});
  auto h_sum = h_factory + torch::ones({4}) * 2;
  auto h_dtype = h_sum.to(torch::kDouble).sum();
  auto h_blob = torch::from_blob(buf.data(), {4});
  auto h_mixed = torch::tensor(0.5).mul(dev);
  auto h_opts = torch::ones({4}, opts);
  auto h_cuda = torch::ones({4}, torch::kCUDA);
  auto h_moved = h_factory.cuda();
  torch::Tensor h_later = torch::zeros({4});
  h_later = dev;
  torch::Tensor h_branch = torch::zeros({4});
  if (c)
    h_branch = torch::ones({4});
  torch::Tensor h_either = torch::zeros({4});
  if (c)
    h_either = dev;
  for (int i = 0; i < 3; ++i)
    h_factory = h_factory * 2;
  host_sink(h_later);
  host_sink(h_branch);
  host_sink(h_either);
  host_sink(h_factory);
}
void step_by_lambdas(const std::vector<torch::Tensor> &xs) {
  run_steps(xs, [](torch::Tensor t) { t.backward(); });
  auto held_step = [](torch::Tensor t) { (void)t.sum(); };
  run_steps(xs, held_step);
}
// Where a value goes (destinationOf).
torch::Tensor destinations(std::vector<torch::Tensor> &kept, std::vector<std::pair<torch::Tensor, int>> &pairs,
                           torch::Tensor x) {
  torch::Tensor d_var = x.relu();
  x.abs();
  kept.push_back(x.sin());
  d_var = x.cos();
  pairs.push_back(std::make_pair(x.tan(), 1));
  auto d_view = x.exp().view({2, 2});
  torch::Tensor(x.floor());
  torch::mse_loss(x.sqrt(), x);
  return x.neg();
}
)cpp";

class AutogradModelTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    AST = test::parseMainFile(Code, "model.cpp").release();
    ASSERT_NE(AST, nullptr);
    ASSERT_FALSE(AST->getDiagnostics().hasErrorOccurred());
  }
  static void TearDownTestSuite() { delete AST; }

  static ASTContext &ctx() { return AST->getASTContext(); }
  static AutogradModel &model() { return AutogradModel::get(ctx()); }
  static const VarDecl *var(StringRef Name) {
    auto M = match(findAll(varDecl(hasName(Name), unless(parmVarDecl())).bind("v")), ctx());
    EXPECT_FALSE(M.empty()) << Name.str();
    return M.empty() ? nullptr : M.front().getNodeAs<VarDecl>("v");
  }
  static const Stmt *declOf(StringRef Name) {
    auto Parents = ctx().getParents(*var(Name));
    return Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
  }
  static const Expr *ref(StringRef Name) {
    auto M = match(findAll(declRefExpr(to(varDecl(hasName(Name)))).bind("r")), ctx());
    EXPECT_FALSE(M.empty()) << Name.str();
    return M.empty() ? nullptr : M.front().getNodeAs<Expr>("r");
  }
  static const FunctionDecl *function(StringRef Name) {
    auto M = match(findAll(functionDecl(hasName(Name), isDefinition()).bind("f")), ctx());
    return M.empty() ? nullptr : M.front().getNodeAs<FunctionDecl>("f");
  }
  static const Stmt *loopIn(StringRef Function, unsigned Index = 0) {
    auto M = match(findAll(stmt(matchers::loopStmt(), hasAncestor(functionDecl(hasName(Function)))).bind("l")), ctx());
    return M.size() > Index ? M[Index].getNodeAs<Stmt>("l") : nullptr;
  }
  static const CallExpr *callOf(StringRef Name, StringRef InFunction) {
    auto M = match(findAll(callExpr(callee(functionDecl(hasName(Name))),
                                    hasAncestor(functionDecl(hasName(InFunction)))).bind("c")), ctx());
    return M.empty() ? nullptr : M.front().getNodeAs<CallExpr>("c");
  }
  /// The first call of the lambda held in the local `add_into`.
  static const CallExpr *callThroughAddInto() {
    auto M = match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                                               hasArgument(0, ignoringParenImpCasts(declRefExpr(
                                                                  to(varDecl(hasName("add_into")))))))
                               .bind("c")),
                   ctx());
    return M.empty() ? nullptr : M.front().getNodeAs<CallExpr>("c");
  }
  static ASTUnit *AST;
};
ASTUnit *AutogradModelTest::AST = nullptr;

TEST_F(AutogradModelTest, OneModelPerContext) {
  EXPECT_EQ(&AutogradModel::get(ctx()), &model());
  EXPECT_EQ(&model().context(), &ctx());
}

TEST_F(AutogradModelTest, OneModelPerSettings) {
  ModelOptions Shallow;
  Shallow.CallDepth = 0;
  AutogradModel &M0 = AutogradModel::get(ctx(), Shallow);
  EXPECT_NE(&M0, &model());
  EXPECT_EQ(&M0, &AutogradModel::get(ctx(), Shallow));
  EXPECT_EQ(&AutogradModel::get(ctx(), ModelOptions()), &model());
  // CallDepth 0: the helper that steps (train_step) is not followed.
  EXPECT_EQ(model().sitesIn(function("train")->getBody(), LoopEventKind::Step).size(), 2u);
  EXPECT_EQ(M0.sitesIn(function("train")->getBody(), LoopEventKind::Step).size(), 1u);
}

TEST_F(AutogradModelTest, OpaqueTrainingCalls) {
  // A function defined in another unit and named like a training step is assumed to train.
  EXPECT_TRUE(model().isOpaqueTrainingCall(callOf("update_weights", "opaque_calls")));
  EXPECT_FALSE(model().isOpaqueTrainingCall(callOf("log_batch", "opaque_calls")));
  // A function defined here is read, not guessed from its name.
  EXPECT_FALSE(model().isOpaqueTrainingCall(callOf("train_step", "train")));
  ModelOptions Logging;
  Logging.TrainingCallNames = "^log_";
  AutogradModel &M = AutogradModel::get(ctx(), Logging);
  EXPECT_TRUE(M.isOpaqueTrainingCall(callOf("log_batch", "opaque_calls")));
  EXPECT_FALSE(M.isOpaqueTrainingCall(callOf("update_weights", "opaque_calls")));
}

TEST_F(AutogradModelTest, CallersOf) {
  EXPECT_EQ(model().callersOf(function("train_step")).size(), 2u); // train and epochs
  EXPECT_EQ(model().callersOf(function("helper_under_caller_guard")).size(), 1u);
  EXPECT_TRUE(model().callersOf(function("train")).empty());
}

TEST_F(AutogradModelTest, CalledFunctionThroughLambdaLocal) {
  auto M = match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                                             hasAncestor(functionDecl(hasName("evaluate_no_grad")))).bind("c")),
                 ctx());
  ASSERT_FALSE(M.empty());
  const FunctionDecl *FD = model().calledFunction(M.front().getNodeAs<CallExpr>("c"));
  ASSERT_NE(FD, nullptr);
  EXPECT_TRUE(cast<CXXMethodDecl>(FD)->getParent()->isLambda());
}

TEST_F(AutogradModelTest, ArgumentForThroughLambdaLocal) {
  const CallExpr *Call = callThroughAddInto();
  ASSERT_NE(Call, nullptr);
  const FunctionDecl *Lambda = model().calledFunction(Call);
  ASSERT_NE(Lambda, nullptr);
  ASSERT_EQ(Lambda->getNumParams(), 2u);
  const ParmVarDecl *Total = Lambda->getParamDecl(0), *Part = Lambda->getParamDecl(1);
  // The closure is argument 0 of the operator call: `total` is `lambda_sum`, not `add_into`.
  const Expr *Arg = argumentFor(Call, Total);
  ASSERT_NE(Arg, nullptr);
  EXPECT_EQ(torchtidy::namedDecl(Arg), var("lambda_sum"));
  EXPECT_EQ(parameterFor(Call, Lambda, Call->getArg(1)), Total);
  EXPECT_EQ(parameterFor(Call, Lambda, Call->getArg(2)), Part);
  EXPECT_EQ(parameterFor(Call, Lambda, Call->getArg(0)), nullptr);
  // A direct call passes no object.
  const CallExpr *Step = callOf("train_step", "train");
  ASSERT_NE(Step, nullptr);
  EXPECT_EQ(argumentFor(Step, function("train_step")->getParamDecl(0)), Step->getArg(0));
}

TEST_F(AutogradModelTest, CallsInLoops) {
  const CallExpr *Call = callThroughAddInto();
  ASSERT_NE(Call, nullptr);
  const FunctionDecl *Lambda = model().calledFunction(Call);
  EXPECT_EQ(model().callersOf(Lambda).size(), 2u);
  // Only the call in the range-for runs in a loop.
  auto Sites = model().callsInLoops(Lambda);
  ASSERT_EQ(Sites.size(), 1u);
  EXPECT_EQ(Sites[0].Loop, loopIn("accumulate_through_lambda"));
  EXPECT_TRUE(Sites[0].Via && model().enclosingLoop(Sites[0].Via) == Sites[0].Loop);
  EXPECT_TRUE(model().callsInLoops(function("train")).empty());
}

TEST_F(AutogradModelTest, ValueUser) {
  // Past the temporary and the copy that carry it: the variable it initialises.
  const CallExpr *Zeros = callOf("zeros", "accumulate_through_lambda");
  ASSERT_NE(Zeros, nullptr);
  EXPECT_EQ(valueUser(Zeros, ctx()).get<VarDecl>(), var("lambda_sum"));
  // A call standing alone as the loop's body: its value goes nowhere.
  auto M = match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                                             hasArgument(2, ignoringParenImpCasts(declRefExpr(to(varDecl(hasName("b")))))))
                             .bind("c")),
                 ctx());
  ASSERT_FALSE(M.empty());
  const Stmt *Carried = nullptr;
  DynTypedNode User = valueUser(M.front().getNodeAs<Expr>("c"), ctx(), &Carried);
  EXPECT_NE(User.get<CXXForRangeStmt>(), nullptr);
  EXPECT_NE(Carried, nullptr);
}

TEST_F(AutogradModelTest, DestinationOf) {
  auto Of = [](StringRef Method, Through Carry = Through::Aggregates,
               llvm::function_ref<bool(const CXXMemberCallExpr *)> PassesOn = nullptr) {
    const CallExpr *Call = callOf(Method, "destinations");
    EXPECT_NE(Call, nullptr) << Method.str();
    return Call ? model().destinationOf(Call, Carry, PassesOn) : ValueDestination();
  };
  ValueDestination Init = Of("relu");
  EXPECT_EQ(Init.K, Destination::Variable);
  EXPECT_EQ(Init.Var, var("d_var"));
  EXPECT_EQ(Of("abs").K, Destination::Discarded);
  ValueDestination Stored = Of("sin");
  EXPECT_EQ(Stored.K, Destination::Stored);
  EXPECT_EQ(Stored.Site, callOf("push_back", "destinations"));
  EXPECT_EQ(torchtidy::namedDecl(Stored.Target)->getName(), "kept");
  ValueDestination Assigned = Of("cos");
  EXPECT_EQ(Assigned.K, Destination::Assigned);
  EXPECT_EQ(torchtidy::namedDecl(Assigned.Target), var("d_var"));
  // Through the pair into the container; past conversions only, an argument of make_pair.
  EXPECT_EQ(Of("tan").K, Destination::Stored);
  ValueDestination InPair = Of("tan", Through::Conversions);
  EXPECT_EQ(InPair.K, Destination::Argument);
  EXPECT_EQ(InPair.Site, callOf("make_pair", "destinations"));
  // A method call passes the value on only where PassesOn says so.
  EXPECT_EQ(Of("exp").K, Destination::Object);
  EXPECT_EQ(Of("exp", Through::Copies, [](const CXXMemberCallExpr *C) { return C->getMethodDecl()->getName() == "view"; })
                .Var,
            var("d_view"));
  // The functional cast is a user of its own only when nothing past copies is climbed.
  EXPECT_EQ(Of("floor", Through::Copies).K, Destination::Used);
  EXPECT_EQ(Of("floor", Through::Conversions).K, Destination::Discarded);
  ValueDestination Operand = Of("sqrt");
  EXPECT_EQ(Operand.K, Destination::Argument);
  EXPECT_EQ(Operand.Site, callOf("mse_loss", "destinations"));
  EXPECT_EQ(Operand.Value->IgnoreImplicit(), callOf("sqrt", "destinations"));
  EXPECT_EQ(Of("neg").K, Destination::Returned);
}

TEST_F(AutogradModelTest, DecidesBranch) {
  // Compared in an `if`'s condition.
  EXPECT_TRUE(decidesBranch(callOf("item", "branches"), ctx()));
  // Stored in a local nothing compares; stored in one that is compared.
  EXPECT_FALSE(decidesBranch(var("logged")->getInit(), ctx()));
  EXPECT_TRUE(decidesBranch(var("checked")->getInit(), ctx()));
  EXPECT_FALSE(decidesBranch(var("checked")->getInit(), ctx(), /*Depth=*/0));
}

TEST_F(AutogradModelTest, LifetimeAndConditions) {
  const FunctionDecl *Fn = function("accumulate_through_lambda");
  ASSERT_NE(Fn, nullptr);
  EXPECT_EQ(lifetimeScope(var("lambda_sum"), ctx()), Fn->getBody());
  EXPECT_EQ(lifetimeScope(Fn->getParamDecl(0), ctx()), Fn->getBody());
  auto Assign = match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("="),
                                                  hasAncestor(functionDecl(hasName("accumulate_through_lambda"))))
                                  .bind("a")),
                      ctx());
  ASSERT_FALSE(Assign.empty());
  EXPECT_TRUE(underConditionWithin(Assign.front().getNodeAs<Stmt>("a"), Fn->getBody(), ctx()));
  const CallExpr *Zeros = callOf("zeros", "accumulate_through_lambda");
  EXPECT_FALSE(underConditionWithin(Zeros, Fn->getBody(), ctx()));
}

TEST_F(AutogradModelTest, CallShape) {
  CallShape Step = model().callShape(callOf("step", "train"));
  EXPECT_TRUE(Step.Resolved);
  EXPECT_EQ(Step.Name, "step");
  EXPECT_NE(Step.Object, nullptr);
  auto M = match(findAll(callExpr(hasAncestor(functionDecl(hasName("generic")))).bind("c")), ctx());
  bool SawForward = false, SawBackward = false;
  for (const BoundNodes &B : M) {
    CallShape S = model().callShape(B.getNodeAs<CallExpr>("c"));
    EXPECT_FALSE(S.Resolved);
    SawForward |= S.Name == "forward" && S.Object;
    SawBackward |= S.Name == "backward" && S.Object;
  }
  EXPECT_TRUE(SawForward);
  EXPECT_TRUE(SawBackward);
}

TEST_F(AutogradModelTest, FindReachableThroughHelpers) {
  EXPECT_NE(model().findReachable(loopIn("train", 1), matchers::backwardCall()), nullptr);
  EXPECT_EQ(model().findReachable(loopIn("evaluate"), matchers::backwardCall()), nullptr);
}

TEST_F(AutogradModelTest, Order) {
  const Stmt *First = declOf("first"), *Maybe = declOf("maybe"), *Last = declOf("last");
  EXPECT_TRUE(model().mayRunBefore(First, Last));
  EXPECT_FALSE(model().mayRunBefore(Last, First));
  EXPECT_TRUE(model().mayRunBefore(Maybe, Last));
  EXPECT_TRUE(model().runsBeforeOnEveryPath(First, Last));
  EXPECT_TRUE(model().runsBeforeOnEveryPath(First, Maybe));
  EXPECT_FALSE(model().runsBeforeOnEveryPath(Maybe, Last));
  // Around a loop's back edge, a later statement runs before an earlier one.
  EXPECT_TRUE(model().mayRunBefore(declOf("every_iter"), declOf("out")));
  EXPECT_FALSE(model().runsBeforeOnEveryPath(declOf("every_iter"), declOf("out")));
  // Post-dominance: every path from the first statement to the exit runs the last one.
  EXPECT_TRUE(model().runsAfterOnEveryPath(First, Last));
  EXPECT_TRUE(model().runsAfterOnEveryPath(Maybe, Last));
  EXPECT_FALSE(model().runsAfterOnEveryPath(First, Maybe));
  EXPECT_FALSE(model().runsAfterOnEveryPath(Last, First));
  // A statement under a condition inside the loop does not follow every iteration.
  EXPECT_TRUE(model().runsAfterOnEveryPath(declOf("out"), declOf("every_iter")));
  EXPECT_FALSE(model().runsAfterOnEveryPath(declOf("out"), declOf("conditional")));
}

TEST_F(AutogradModelTest, GradMode) {
  GradModeFact Guarded = model().gradModeAt(declOf("guarded"));
  EXPECT_EQ(Guarded.Mode, GradMode::Off);
  EXPECT_EQ(Guarded.DecidedBy, declOf("guard"));
  EXPECT_EQ(model().gradModeAt(declOf("out")).Mode, GradMode::On);
  // The only caller holds the guard.
  GradModeFact Callee = model().gradModeAt(declOf("pred_in_callee"));
  EXPECT_EQ(Callee.Mode, GradMode::Off);
  EXPECT_EQ(Callee.DecidedBy, callOf("helper_under_caller_guard", "guarded_caller"));
  EXPECT_TRUE(model().gradDisabledAt(declOf("after_switch")));
  EXPECT_FALSE(model().gradDisabledAt(declOf("after_enable")));
  // A lambda run here inherits the guard; one run by another thread does not.
  EXPECT_TRUE(model().gradDisabledAt(declOf("in_lambda")));
  EXPECT_EQ(model().gradModeAt(declOf("in_thread")).Mode, GradMode::On);
  EXPECT_EQ(model().gradModeAt(declOf("in_async")).Mode, GradMode::On);
}

TEST_F(AutogradModelTest, ThreadLaunch) {
  EXPECT_NE(model().threadLaunchOf(declOf("in_thread")), nullptr);
  EXPECT_NE(model().threadLaunchOf(declOf("in_async")), nullptr);
  EXPECT_EQ(model().threadLaunchOf(declOf("in_lambda")), nullptr);
  EXPECT_EQ(model().threadLaunchOf(declOf("out")), nullptr);
  // A pool's submit, a closure held in a variable, a function handed to std::thread.
  for (StringRef Name : {"in_pool", "in_job", "in_worker_fn"}) {
    EXPECT_NE(model().threadLaunchOf(declOf(Name)), nullptr) << Name.str();
    EXPECT_EQ(model().gradModeAt(declOf(Name)).Mode, GradMode::On) << Name.str();
  }
  // at::launch copies the caller's thread-local state: the guard holds there.
  EXPECT_EQ(model().threadLaunchOf(declOf("in_at_launch")), nullptr);
  EXPECT_TRUE(model().gradDisabledAt(declOf("in_at_launch")));
}

TEST_F(AutogradModelTest, Origin) {
  EXPECT_EQ(model().originAt(var("out")->getInit()).Kind, TensorOrigin::GraphAttached);
  EXPECT_TRUE(model().isGraphAttached(var("loss")->getInit()));
  EXPECT_FALSE(model().isGraphAttached(var("guarded")->getInit()));
  EXPECT_TRUE(model().isRequiresGradLeaf(var("w")->getInit()));
  EXPECT_FALSE(model().isRequiresGradLeaf(var("frozen")->getInit()));
}

TEST_F(AutogradModelTest, OutputCut) {
  auto Cut = [](StringRef Name) { return model().outputCut(ref(Name)); };
  ASSERT_TRUE(Cut("attached_loss"));
  EXPECT_EQ(Cut("attached_loss")->Cut, nullptr);
  EXPECT_EQ(Cut("mixed")->Cut, nullptr);
  ASSERT_TRUE(Cut("detached_loss") && Cut("detached_loss")->Cut);
  EXPECT_TRUE(isa<CXXMemberCallExpr>(Cut("detached_loss")->Cut));
  ASSERT_TRUE(Cut("guarded_loss"));
  EXPECT_EQ(Cut("guarded_loss")->Cut, declOf("cut_guard"));
  // Through .item() into a vector of floats, then torch::tensor(values).
  ASSERT_TRUE(Cut("from_values") && Cut("from_values")->Cut);
  EXPECT_TRUE(isa<CXXMemberCallExpr>(Cut("from_values")->Cut));
  // A loss module has no graph of its own.
  ASSERT_TRUE(Cut("module_loss"));
  EXPECT_NE(Cut("module_loss")->Cut, nullptr);
  EXPECT_FALSE(Cut("plain_leaf"));
}

TEST_F(AutogradModelTest, AggregatesHoldingAGraph) {
  EXPECT_TRUE(canHoldGraph(var("state_tuple")->getType())); // elements in a template pack
  EXPECT_FALSE(canHoldGraph(ctx().IntTy));
  EXPECT_TRUE(model().isGraphAttached(ref("rec")));
  EXPECT_TRUE(model().isGraphAttached(var("pair")->getInit()));
  EXPECT_FALSE(model().isGraphAttached(ref("plain")));
}

TEST_F(AutogradModelTest, DetachedValues) {
  // A tensor, a tuple of tensors, as made here or returned by a user function.
  EXPECT_TRUE(model().isDetached(var("cut_hid")->getInit()));
  EXPECT_FALSE(model().isDetached(var("kept_hid")->getInit()));
  EXPECT_TRUE(model().isDetached(var("cut_pair")->getInit()));
  EXPECT_FALSE(model().isDetached(var("kept_pair")->getInit()));
  EXPECT_TRUE(model().isDetached(var("made_cut")->getInit()));
  EXPECT_FALSE(model().isDetached(var("made_mixed")->getInit()));
  EXPECT_FALSE(model().isDetached(ref("hid")));
}

TEST_F(AutogradModelTest, LoopKindsAndEvents) {
  const Stmt *Train = loopIn("train");
  ASSERT_NE(Train, nullptr);
  EXPECT_EQ(model().enclosingLoop(declOf("out")), Train);
  const LoopFacts &Facts = model().loop(Train);
  EXPECT_EQ(Facts.Kind, LoopKind::Training);
  ASSERT_TRUE(Facts.has(LoopEventKind::Backward));
  EXPECT_EQ(Facts.first(LoopEventKind::Backward)->Every, 1u);
  EXPECT_TRUE(Facts.has(LoopEventKind::Forward));
  EXPECT_FALSE(Facts.has(LoopEventKind::ZeroGrad));
  // Events reached through a helper: the site is the helper call.
  const LoopFacts &ViaHelper = model().loop(loopIn("train", 1));
  EXPECT_EQ(ViaHelper.Kind, LoopKind::Training);
  const LoopEvent *Zero = ViaHelper.first(LoopEventKind::ZeroGrad);
  ASSERT_NE(Zero, nullptr);
  EXPECT_EQ(Zero->Site, callOf("train_step", "train"));
  EXPECT_NE(Zero->Call, Zero->Site);
  EXPECT_EQ(model().loop(loopIn("evaluate")).Kind, LoopKind::Eval);
  // LibTorch's parameter-free modules (losses, activations) run no model forward.
  EXPECT_FALSE(model().loop(loopIn("metrics")).has(LoopEventKind::Forward));
  EXPECT_EQ(model().loop(loopIn("metrics")).Kind, LoopKind::Other);
  // A forward left unresolved by its dependent argument is one; its object is the module.
  EXPECT_FALSE(match(AutogradModel::event(LoopEventKind::Forward), *var("dep_called")->getInit(), ctx()).empty());
  CallShape Called = model().callShape(cast<CallExpr>(var("dep_called")->getInit()->IgnoreUnlessSpelledInSource()));
  EXPECT_EQ(containerRoot(Called.Object), cast<ValueDecl>(function("by_name")->getParamDecl(0)));
}

TEST_F(AutogradModelTest, Devices) {
  auto Move = [](StringRef Name) {
    return deviceMoveOf(cast<CXXMemberCallExpr>(var(Name)->getInit()->IgnoreUnlessSpelledInSource()), ctx());
  };
  EXPECT_EQ(Move("to_host"), DeviceKind::Host);
  EXPECT_EQ(Move("to_half"), std::nullopt); // a dtype conversion moves nothing
  EXPECT_EQ(Move("to_var"), DeviceKind::Unknown);
  EXPECT_EQ(Move("to_gpu"), DeviceKind::Accelerator);
  EXPECT_EQ(deviceKind(var("cpu_dev")->getInit(), ctx()), DeviceKind::Host);
  // A CPU device is no accelerator; a device chosen in a caller is.
  EXPECT_FALSE(model().mayUseAccelerator(declOf("to_half")));
  EXPECT_FALSE(model().mayUseAccelerator(declOf("in_cpu_helper")));
  EXPECT_TRUE(model().mayUseAccelerator(declOf("in_gpu_helper")));
}

TEST_F(AutogradModelTest, HostTensorSource) {
  auto Init = [](StringRef Name) { return var(Name)->getInit(); };
  auto LastRef = [](StringRef Name) {
    auto M = match(findAll(declRefExpr(to(varDecl(hasName(Name)))).bind("r")), ctx());
    return M.back().getNodeAs<Expr>("r");
  };
  auto Source = [](const Expr *E, const HostTensorQuery &Q = {}) { return model().hostTensorSource(E, Q); };
  // Factories, also through arithmetic with each other and tensor methods that keep the device.
  EXPECT_EQ(hostFactoryCall(Init("h_factory"), ctx()), Init("h_factory")->IgnoreUnlessSpelledInSource());
  EXPECT_NE(hostFactoryCall(Init("h_blob"), ctx()), nullptr);
  EXPECT_EQ(Source(Init("h_sum")), Init("h_factory")->IgnoreUnlessSpelledInSource());
  EXPECT_NE(Source(Init("h_dtype")), nullptr);
  // A device operand, options that name a device or may, a move to the device: not on the host.
  EXPECT_EQ(Source(Init("h_mixed")), nullptr);
  EXPECT_EQ(hostFactoryCall(Init("h_opts"), ctx()), nullptr);
  EXPECT_EQ(hostFactoryCall(Init("h_cuda"), ctx()), nullptr);
  EXPECT_EQ(Source(Init("h_moved")), nullptr);
  // Locals: every definition that reaches the read; one reading itself adds nothing.
  EXPECT_EQ(Source(LastRef("h_later")), nullptr);
  EXPECT_NE(Source(LastRef("h_branch")), nullptr);
  EXPECT_EQ(Source(LastRef("h_either")), nullptr);
  EXPECT_EQ(Source(LastRef("h_factory")), Init("h_factory")->IgnoreUnlessSpelledInSource());
  // User functions: every return of their bodies.
  auto Made = match(findAll(callExpr(callee(functionDecl(hasName("full")))).bind("c")), ctx());
  EXPECT_EQ(Source(Init("h_made")), Made.front().getNodeAs<Expr>("c"));
  EXPECT_NE(Source(Init("h_wrapped")), nullptr);
  EXPECT_NE(Source(Init("h_listed")), nullptr);
  EXPECT_NE(Source(LastRef("h_filled")), nullptr);
  // The question's own choices: no factory; only fills the device could make itself, so no
  // from_blob, no local filled in place, no torch::tensor(values) in a called function.
  HostTensorQuery NoFactories;
  NoFactories.Factories = false;
  EXPECT_EQ(Source(LastRef("h_branch"), NoFactories), nullptr);
  HostTensorQuery Makeable;
  Makeable.DeviceMakeable = true;
  EXPECT_NE(Source(Init("h_made"), Makeable), nullptr);
  EXPECT_EQ(Source(Init("h_wrapped"), Makeable), nullptr);
  EXPECT_EQ(Source(Init("h_listed"), Makeable), nullptr);
  EXPECT_EQ(Source(LastRef("h_filled"), Makeable), nullptr);
  // Made in the loop: the value before it does not count.
  HostTensorQuery InLoop;
  InLoop.Scope = loopIn("host_tensors");
  EXPECT_EQ(Source(LastRef("h_factory"), InLoop), nullptr);
}

TEST_F(AutogradModelTest, OwnLevelEvent) {
  // The nested loop's forward is the inner loop's; the helper call runs one at the outer level.
  const LoopEvent *Own = model().ownLevelEvent(loopIn("scores"), {LoopEventKind::Forward});
  ASSERT_NE(Own, nullptr);
  EXPECT_EQ(Own->Site, callOf("score", "scores"));
  EXPECT_NE(Own->Call, Own->Site);
  EXPECT_EQ(model().ownLevelEvent(loopIn("scores"), {LoopEventKind::Backward}), nullptr);
}

TEST_F(AutogradModelTest, EventsIn) {
  // The step in the first loop, and the helper call that steps in the second.
  auto Steps = model().sitesIn(function("train")->getBody(), LoopEventKind::Step);
  ASSERT_EQ(Steps.size(), 2u);
  EXPECT_EQ(Steps[1], callOf("train_step", "train"));
  // Clearing gradients by hand is a ZeroGrad event too.
  const LoopFacts &Manual = model().loop(loopIn("manual_clear"));
  ASSERT_TRUE(Manual.has(LoopEventKind::ZeroGrad));
  EXPECT_TRUE(Manual.has(LoopEventKind::Step));
}

TEST_F(AutogradModelTest, TrainingLoopOf) {
  EXPECT_EQ(model().trainingLoopOf(declOf("every_iter")), loopIn("train"));
  // train_step runs inside the second loop of its caller.
  EXPECT_EQ(model().trainingLoopOf(declOf("helper_loss")), loopIn("train", 1));
  EXPECT_EQ(model().trainingLoopOf(declOf("eval_out")), nullptr);
}

TEST_F(AutogradModelTest, IntervalGuards) {
  const Stmt *Train = loopIn("train");
  EXPECT_EQ(model().everyNth(declOf("every_iter"), Train), 1u);
  EXPECT_EQ(model().everyNth(declOf("every_fifth"), Train), 5u);
  EXPECT_EQ(model().everyNth(declOf("conditional"), Train), 0u);
}

TEST_F(AutogradModelTest, PerIterationLoop) {
  const Stmt *Loop = loopIn("per_step_loop");
  EXPECT_EQ(model().everyNth(declOf("mostly"), Loop), 1u);
  EXPECT_EQ(model().everyNth(declOf("mostly_when_enabled"), Loop), 1u);
  EXPECT_EQ(model().everyNth(declOf("rarely"), Loop), 100u);
  std::optional<PerIteration> Helper = model().perIterationLoop(declOf("in_helper"));
  ASSERT_TRUE(Helper);
  EXPECT_EQ(Helper->Loop, Loop);
  EXPECT_EQ(Helper->Via, callOf("per_step_helper", "per_step_loop"));
  // A callback held in a std::function local.
  std::optional<PerIteration> Callback = model().perIterationLoop(declOf("in_callback"));
  ASSERT_TRUE(Callback);
  EXPECT_EQ(Callback->Loop, Loop);
  EXPECT_NE(Callback->Via, nullptr);
  EXPECT_TRUE(model().perIterationLoop(declOf("mostly")));
  EXPECT_FALSE(model().perIterationLoop(declOf("rarely")));
  EXPECT_FALSE(model().perIterationLoop(declOf("outside")));
}

TEST_F(AutogradModelTest, IteratesSteps) {
  EXPECT_TRUE(model().iteratesSteps(loopIn("train")));
  EXPECT_TRUE(model().iteratesSteps(loopIn("train", 1))); // through train_step
  EXPECT_TRUE(model().iteratesSteps(loopIn("evaluate")));
  EXPECT_FALSE(model().iteratesSteps(loopIn("epochs")));   // trains in its nested loop
  EXPECT_TRUE(model().iteratesSteps(loopIn("epochs", 1)));
  EXPECT_FALSE(model().iteratesSteps(loopIn("per_step_loop")));
}

TEST_F(AutogradModelTest, FreesGraphsEachIteration) {
  EXPECT_TRUE(model().freesGraphsEachIteration(loopIn("train")));
  EXPECT_TRUE(model().freesGraphsEachIteration(loopIn("train", 1))); // through train_step
  EXPECT_FALSE(model().freesGraphsEachIteration(loopIn("evaluate")));
  EXPECT_FALSE(model().freesGraphsEachIteration(loopIn("epochs"))); // backward in its nested loop
  EXPECT_FALSE(model().freesGraphsEachIteration(loopIn("retained_graphs")));    // retain_graph
  EXPECT_FALSE(model().freesGraphsEachIteration(loopIn("retained_graphs", 1))); // every other iteration
  EXPECT_TRUE(model().freesGraphsEachIteration(loopIn("retained_graphs", 2)));  // retain_graph=false
  EXPECT_FALSE(model().freesGraphsEachIteration(nullptr));
}

TEST_F(AutogradModelTest, SameEveryIteration) {
  const Stmt *Loop = loopIn("load_paths");
  EXPECT_TRUE(model().sameEveryIteration(ref("fixed"), Loop));
  EXPECT_TRUE(model().sameEveryIteration(var("same_name")->getInit(), Loop));
  EXPECT_TRUE(model().sameEveryIteration(ref("same_name"), Loop));
  EXPECT_FALSE(model().sameEveryIteration(ref("path"), Loop));
  EXPECT_FALSE(model().sameEveryIteration(ref("per_item"), Loop));
  EXPECT_FALSE(model().sameEveryIteration(var("from_call")->getInit(), Loop));
}

TEST_F(AutogradModelTest, LoopInvariance) {
  const Stmt *Train = loopIn("train");
  EXPECT_NE(model().invariantEntity(ref("frozen"), Train), nullptr);
  // Written in place in the loop.
  EXPECT_EQ(model().invariantEntity(ref("scratch"), Train), nullptr);
  // Owned by the optimizer whose step() runs every iteration.
  EXPECT_EQ(model().invariantEntity(ref("w"), Train), nullptr);
  // Declared inside.
  EXPECT_EQ(model().invariantEntity(var("loss")->getInit(), Train), nullptr);
  // Handed to a forwarding reference (TensorOptions::device(Args&&...)): read, not written.
  EXPECT_NE(model().invariantEntity(ref("options_device"), loopIn("options_in_loop")), nullptr);
}

TEST_F(AutogradModelTest, OutlivesIteration) {
  const Stmt *Train = loopIn("train");
  auto Pushes = match(cxxMemberCallExpr(callee(functionDecl(hasName("push_back"))),
                                        hasAncestor(functionDecl(hasName("train")))).bind("c"), ctx());
  ASSERT_EQ(Pushes.size(), 2u);
  const Stmt *ToHistory = Pushes[0].getNodeAs<Stmt>("c"), *ToPerIteration = Pushes[1].getNodeAs<Stmt>("c");
  EXPECT_TRUE(model().outlivesIteration(var("history"), Train));
  EXPECT_FALSE(model().outlivesIteration(var("per_iteration"), Train));
  EXPECT_FALSE(model().outlivesIteration(var("out"), Train));
  EXPECT_TRUE(model().outlivesIteration(var("chained"), loopIn("sums")));
  // Without a write: only a clear that runs on every iteration empties it.
  EXPECT_TRUE(model().outlivesIteration(var("always"), loopIn("clears")));
  EXPECT_TRUE(model().outlivesIteration(var("history"), Train, ToHistory));
  EXPECT_FALSE(model().outlivesIteration(var("per_iteration"), Train, ToPerIteration));
  EXPECT_FALSE(model().outlivesIteration(var("out"), Train, declOf("out")));
  // Reassigned from itself: what it held is kept.
  auto Chain = match(cxxOperatorCallExpr(hasOverloadedOperatorName("="),
                                         hasArgument(0, declRefExpr(to(varDecl(hasName("chained"))))))
                         .bind("a"), ctx());
  ASSERT_FALSE(Chain.empty());
  EXPECT_TRUE(model().outlivesIteration(var("chained"), loopIn("sums"), Chain.front().getNodeAs<Stmt>("a")));
  // Cleared later in the iteration: on one path only, or on every path.
  auto Stores = match(cxxMemberCallExpr(callee(functionDecl(hasName("push_back"))),
                                        hasAncestor(functionDecl(hasName("clears")))).bind("c"), ctx());
  ASSERT_EQ(Stores.size(), 2u);
  EXPECT_TRUE(model().outlivesIteration(var("sometimes"), loopIn("clears"), Stores[0].getNodeAs<Stmt>("c")));
  EXPECT_FALSE(model().outlivesIteration(var("always"), loopIn("clears"), Stores[1].getNodeAs<Stmt>("c")));
}

TEST_F(AutogradModelTest, ContainerStores) {
  auto Pushes = match(cxxMemberCallExpr(callee(functionDecl(hasName("push_back"))),
                                        hasAncestor(functionDecl(hasName("aggregates")))).bind("c"), ctx());
  ASSERT_EQ(Pushes.size(), 2u);
  std::optional<ContainerStore> S = model().containerStore(Pushes[0].getNodeAs<Expr>("c"));
  ASSERT_TRUE(S.has_value());
  EXPECT_EQ(containerRoot(S->Container), var("records"));
  ASSERT_EQ(S->Values.size(), 1u);
  EXPECT_TRUE(model().isGraphAttached(S->Values[0])); // records.push_back(rec)
  EXPECT_FALSE(model().containerStore(var("pair")->getInit()).has_value());
  EXPECT_TRUE(canHoldGraph(var("rec")->getType()));
  EXPECT_FALSE(canHoldGraph(ctx().IntTy));
}

TEST_F(AutogradModelTest, ReachesBackward) {
  // Backpropagated after a statement, in its function.
  auto backpropagatedAfter = [](const ValueDecl *D, const Stmt *After) {
    FateQuery Later;
    Later.After = After;
    return model().fateOf(D, Later) == ValueFate::Backpropagated;
  };
  EXPECT_TRUE(backpropagatedAfter(var("retained"), declOf("retained")));
  EXPECT_FALSE(backpropagatedAfter(var("unused"), declOf("unused")));
  // `out` feeds `loss`, which is backpropagated.
  EXPECT_TRUE(backpropagatedAfter(var("out"), declOf("out")));
  // Fields of `this` are followed like variables.
  auto FieldRef = [](StringRef Name) {
    return selectFirst<MemberExpr>("m", match(findAll(memberExpr(member(hasName(Name))).bind("m")), ctx()));
  };
  for (StringRef Name : {"trained_loss", "kept_out"})
    EXPECT_TRUE(backpropagatedAfter(FieldRef(Name)->getMemberDecl(), FieldRef(Name))) << Name.str();
  EXPECT_FALSE(backpropagatedAfter(FieldRef("shown")->getMemberDecl(), FieldRef("shown")));
  EXPECT_EQ(model().fateOf(var("records")), ValueFate::Contained);
  // Through a braced return of a module's method: the module's output.
  EXPECT_EQ(model().fateOf(var("chunk_outs")), ValueFate::Backpropagated);
  // Read back detached: the backward() after it reaches none of the kept graphs.
  EXPECT_EQ(model().fateOf(var("kept_then_detached")), ValueFate::Contained);
  // Handed to helpers by const reference: what other callers pass them (never_called's
  // `alone`, whose own callers are unknown) is not this container.
  EXPECT_EQ(model().fateOf(var("reported")), ValueFate::Contained);
}

TEST_F(AutogradModelTest, FlowSensitiveOrigin) {
  EXPECT_EQ(model().originAt(var("stored_p")->getInit()).Kind, TensorOrigin::Detached);
  EXPECT_TRUE(model().isGraphAttached(var("stored_q")->getInit()));
  // In a template nobody instantiates, by the names of the calls.
  EXPECT_EQ(model().originAt(var("dep_out")->getInit()).Kind, TensorOrigin::GraphAttached);
  EXPECT_NE(model().originAt(var("dep_detached")->getInit()).Kind, TensorOrigin::GraphAttached);
}

TEST_F(AutogradModelTest, MayRunBeforeAvoiding) {
  const Stmt *Backward = callOf("backward", "train");
  const Stmt *Step = callOf("step", "train");
  const Stmt *Push = callOf("push_back", "train"); // history.push_back(loss), after the step
  ASSERT_TRUE(Backward && Step && Push);
  EXPECT_TRUE(model().mayRunBeforeAvoiding(Backward, Push, {}));
  EXPECT_FALSE(model().mayRunBeforeAvoiding(Backward, Push, {Step}));
  // Around the loop's back edge, the next iteration's backward() is in the way.
  EXPECT_TRUE(model().mayRunBeforeAvoiding(Push, Step, {}));
  EXPECT_FALSE(model().mayRunBeforeAvoiding(Push, Step, {Backward}));
}

TEST_F(AutogradModelTest, MayRunInLaterIteration) {
  const Stmt *Backward = callOf("backward", "train");
  const Stmt *Step = callOf("step", "train");
  const Stmt *Push = callOf("push_back", "train"); // history.push_back(loss), after the step
  ASSERT_TRUE(Backward && Step && Push);
  // The next iteration's backward() runs after this one's push_back.
  EXPECT_TRUE(model().mayRunInLaterIteration(Push, Backward, {}));
  // The step after the backward() of the same iteration does not count ...
  EXPECT_TRUE(model().mayRunBeforeAvoiding(Backward, Step, {Push}));
  EXPECT_FALSE(model().mayRunInLaterIteration(Backward, Step, {Push}));
  // ... the next iteration's does, unless the way round the loop is blocked.
  EXPECT_TRUE(model().mayRunInLaterIteration(Backward, Step, {}));
  EXPECT_FALSE(model().mayRunInLaterIteration(Push, Step, {Backward}));
}

TEST_F(AutogradModelTest, FeedsGradient) {
  // Meant to carry gradients: backpropagated, returned or handed on, with the uses this unit shows.
  auto feedsGradient = [](const ValueDecl *D) {
    FateQuery Visible;
    Visible.FieldsEscape = false;
    return model().fateOf(D, Visible) != ValueFate::Contained;
  };
  EXPECT_FALSE(feedsGradient(var("logged_sum")));
  // Through a tensor computed from it, and through a helper that backpropagates.
  EXPECT_TRUE(feedsGradient(var("mean_backpropagated")));
  EXPECT_TRUE(feedsGradient(var("handed_over")));
  EXPECT_TRUE(feedsGradient(var("returned_sum")));
  auto field = [](StringRef Name) {
    auto M = match(findAll(fieldDecl(hasName(Name)).bind("f")), ctx());
    return M.empty() ? nullptr : M.front().getNodeAs<FieldDecl>("f");
  };
  // Backpropagated in another method of the class.
  EXPECT_TRUE(feedsGradient(field("episode_loss")));
  EXPECT_FALSE(feedsGradient(field("logged_loss")));
}

TEST_F(AutogradModelTest, RunsEachIteration) {
  // The epoch loop steps only in its nested batch loop.
  EXPECT_EQ(model().ownLevelEvent(loopIn("scratch_epochs"), {LoopEventKind::Backward}), nullptr);
  EXPECT_NE(model().ownLevelEvent(loopIn("scratch_epochs", 1), {LoopEventKind::Backward}), nullptr);
  EXPECT_EQ(model().ownLevelEvent(loopIn("scratch_epochs", 1), {LoopEventKind::Step}), nullptr);
}

TEST_F(AutogradModelTest, LoopRunning) {
  const std::vector<LoopEventKind> Steps = {LoopEventKind::Backward, LoopEventKind::Step};
  LoopSite Direct = model().loopRunning(declOf("every_iter"), Steps);
  EXPECT_EQ(Direct.Loop, loopIn("train"));
  EXPECT_EQ(Direct.Via, nullptr);
  // In a helper: the caller's batch loop, through the call.
  LoopSite Helper = model().loopRunning(declOf("in_step"), Steps);
  EXPECT_EQ(Helper.Loop, loopIn("scratch_epochs", 1));
  EXPECT_EQ(Helper.Via, callOf("scratch_step", "scratch_epochs"));
  // Once per epoch is not every step.
  EXPECT_EQ(model().loopRunning(declOf("per_epoch"), Steps).Loop, nullptr);
}

TEST_F(AutogradModelTest, ReadsOnlyInvariants) {
  EXPECT_TRUE(model().readsOnlyInvariants(var("per_epoch")->getInit(), loopIn("scratch_epochs", 1)));
  // Reads the batch loop's counter.
  EXPECT_FALSE(model().readsOnlyInvariants(var("sized")->getInit(), loopIn("scratch_epochs", 1)));
  EXPECT_TRUE(model().readsOnlyInvariants(var("every_iter")->getInit(), loopIn("train")));
}

TEST_F(AutogradModelTest, FateBeyondAScope) {
  auto Escapes = [&](StringRef Var, const Stmt *Scope) {
    FateQuery Q;
    Q.Scope = Scope;
    Q.Derived = false;
    return model().fateOf(var(Var), Q) == ValueFate::Escapes;
  };
  const Stmt *Body = loopBody(loopIn("keeps"));
  EXPECT_TRUE(Escapes("pushed", Body));
  EXPECT_TRUE(Escapes("assigned", Body));
  // Copied only into another local of the iteration.
  EXPECT_FALSE(Escapes("scratch_local", Body));
  EXPECT_TRUE(Escapes("kept", function("keeps")->getBody()));
  // Handed to a helper that keeps nothing, or backpropagated: not kept beyond the iteration.
  EXPECT_FALSE(Escapes("summed", Body));
  EXPECT_FALSE(Escapes("helped", Body));
  // Only what is computed from it is kept.
  EXPECT_FALSE(Escapes("computed_from", Body));
}


TEST_F(AutogradModelTest, LoopKeeping) {
  auto Assigns = [&](StringRef Fn) {
    return match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasAncestor(functionDecl(hasName(Fn))))
                             .bind("a")),
                 ctx());
  };
  // A reference parameter: the call whose argument outlives the loop (kept_table), not the one
  // passing a table declared in the loop (fresh_table).
  const FunctionDecl *GrowParam = function("grow_param");
  auto InParam = Assigns("grow_param");
  ASSERT_FALSE(InParam.empty());
  LoopSite Site = model().loopKeeping(InParam.front().getNodeAs<Stmt>("a"), GrowParam->getParamDecl(0));
  EXPECT_EQ(Site.Loop, loopIn("growers"));
  ASSERT_NE(Site.Via, nullptr);
  EXPECT_EQ(objectRoot(Site.Via->getArg(0)), var("kept_table"));
  // A field: the loop around a caller of the helper's caller; Via is the call in that loop.
  auto InField = Assigns("grow");
  ASSERT_FALSE(InField.empty());
  const auto *Field = cast<FieldDecl>(objectRoot(InField.front().getNodeAs<CXXOperatorCallExpr>("a")->getArg(0)));
  EXPECT_EQ(Field->getName(), "grown_field");
  Site = model().loopKeeping(InField.front().getNodeAs<Stmt>("a"), Field);
  EXPECT_EQ(Site.Loop, loopIn("growers"));
  EXPECT_EQ(Site.Via, callOf("grow_through", "growers"));
  // Elements and computed values have no root object.
  EXPECT_EQ(objectRoot(callOf("empty", "growers")), nullptr);
}

TEST_F(AutogradModelTest, ReceivingVariable) {
  EXPECT_EQ(receivingVariable(var("held_opt")->getInit(), ctx()), var("held_opt"));
  // Assigned (through the unique_ptr<SGD> to unique_ptr<Optimizer> conversion), or reset with.
  // In source order, each once (matching visits some nodes more than once).
  auto Distinct = [&](const auto &Matcher) {
    llvm::SmallVector<const Expr *, 2> Found;
    for (const BoundNodes &B : match(findAll(expr(Matcher, isExpansionInMainFile(),
                                                 hasAncestor(functionDecl(hasName("holders"))))
                                                .bind("e")),
                                     ctx()))
      if (!llvm::is_contained(Found, B.getNodeAs<Expr>("e")))
        Found.push_back(B.getNodeAs<Expr>("e"));
    llvm::sort(Found, [](const Expr *A, const Expr *B) { return A->getBeginLoc() < B->getBeginLoc(); });
    return Found;
  };
  auto MakeUnique = Distinct(callExpr(callee(functionDecl(hasName("make_unique")))));
  ASSERT_EQ(MakeUnique.size(), 2u);
  EXPECT_EQ(receivingVariable(MakeUnique[0], ctx()), var("held_ptr"));
  auto New = Distinct(cxxNewExpr());
  ASSERT_EQ(New.size(), 1u);
  EXPECT_EQ(receivingVariable(New.front(), ctx()), var("held_ptr"));
  // A static is initialised once; an element of a container is no variable.
  EXPECT_EQ(receivingVariable(var("static_opt")->getInit(), ctx()), nullptr);
  EXPECT_EQ(receivingVariable(MakeUnique[1], ctx()), nullptr);
}

TEST_F(AutogradModelTest, CallsThroughStdFunctionParameter) {
  auto M = match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                                             hasArgument(0, ignoringParenImpCasts(declRefExpr(
                                                                to(parmVarDecl(hasName("on_step")))))))
                             .bind("c")),
                 ctx());
  ASSERT_FALSE(M.empty());
  const auto *Call = M.front().getNodeAs<CallExpr>("c");
  // One lambda per call site of run_steps: a temporary, and a local holding one.
  auto Runs = model().calledFunctions(Call);
  ASSERT_EQ(Runs.size(), 2u);
  for (const FunctionDecl *Fn : Runs) {
    EXPECT_TRUE(isLambdaCallOperator(Fn));
    EXPECT_TRUE(llvm::is_contained(model().callersOf(Fn), Call));
  }
  // Two candidates: no single function.
  EXPECT_FALSE(isLambdaCallOperator(model().calledFunction(Call)));
  // The loop trains through the first lambda.
  EXPECT_EQ(model().loop(loopIn("run_steps")).Kind, LoopKind::Training);
}

TEST(CalledFunctions, UnresolvedCallCandidates) {
  std::unique_ptr<ASTUnit> AST = test::parseMainFile(R"cpp(
void step(int);
void step(double);
template <typename T> void run(T x) { step(x); }
)cpp", "candidates.cpp");
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const auto *Call = selectFirst<CallExpr>("c", match(findAll(callExpr(callee(unresolvedLookupExpr())).bind("c")), Ctx));
  ASSERT_NE(Call, nullptr);
  // Nothing resolves the call in the uninstantiated template; either overload may run.
  AutogradModel &M = AutogradModel::get(Ctx);
  EXPECT_EQ(M.calledFunction(Call), nullptr);
  EXPECT_EQ(M.calledFunctions(Call).size(), 2u);
}

TEST(ForwardCall, DependentMemberNotStdForward) {
  std::unique_ptr<ASTUnit> AST = test::parseMainFile(R"cpp(
template <typename M, typename T> auto run(M &model, T &&x) { return model.forward(std::forward<T>(x)); }
)cpp", "forward.cpp");
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  const auto *Run = selectFirst<FunctionDecl>("f", match(findAll(functionDecl(hasName("::run")).bind("f")), Ctx));
  ASSERT_TRUE(Run && Run->getBody());
  // The member named forward on a model of dependent type is one; std::forward, free, is not.
  auto Forwards = match(findAll(stmt(AutogradModel::forwardCall()).bind("c")), *Run->getBody(), Ctx);
  ASSERT_EQ(Forwards.size(), 1u);
  EXPECT_EQ(dependentMemberName(Forwards.front().getNodeAs<CallExpr>("c")->getCallee()), "forward");
}

TEST(Order, WithoutOneCFG) {
  std::unique_ptr<ASTUnit> AST = test::parseMainFile(R"cpp(
void run() {
  auto f = [] { int in_lambda = 1; (void)in_lambda; };
  int after = 2;
  (void)after;
}
)cpp", "order.cpp");
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();
  auto Decl = [&](StringRef Name) {
    return selectFirst<DeclStmt>("d", match(findAll(declStmt(has(varDecl(hasName(Name)))).bind("d")), Ctx));
  };
  const DeclStmt *InLambda = Decl("in_lambda"), *After = Decl("after");
  ASSERT_TRUE(InLambda && After);
  // No CFG holds both: mayRunBefore falls back on source order, mayRunBeforeAvoiding sees no path.
  AutogradModel &M = AutogradModel::get(Ctx);
  EXPECT_TRUE(M.mayRunBefore(InLambda, After));
  EXPECT_FALSE(M.mayRunBefore(After, InLambda));
  EXPECT_FALSE(M.mayRunBeforeAvoiding(InLambda, After, {}));
}

} // namespace
