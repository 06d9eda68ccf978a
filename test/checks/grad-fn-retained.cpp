// RUN: %tidy --checks='-*,torch-grad-fn-retained' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

using NodePtr = std::shared_ptr<torch::autograd::Node>;

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForOverDataLoader(Net &net, torch::optim::SGD &opt) {
  std::vector<NodePtr> history;
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target);
    loss.backward();
    opt.step();
    history.push_back(loss.grad_fn());
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'history' across loop iterations: every kept node pins its iteration's autograd graph; consider keeping plain data such as the node's name() [torch-grad-fn-retained]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
}

void positiveThroughLocal(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y, int steps) {
  std::vector<NodePtr> nodes;
  int step = 0;
  while (step++ < steps) {
    opt.zero_grad();
    auto out = net->forward(x);
    auto node = out.grad_fn();
    nodes.emplace_back(node);
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'nodes'
    // CHECK: :[[@LINE-6]]:3: note: loop starts here
    torch::mse_loss(out, y).backward();
    opt.step();
  }
}

void positiveMapByStep(Net &net, torch::Tensor x) {
  std::map<int, NodePtr> byStep;
  for (int i = 0; i < 10; ++i) {
    auto out = net->forward(x);
    byStep[i] = out.grad_fn();
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'byStep'
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}

void positivePairWithName(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<std::pair<std::string, NodePtr>> trace;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    trace.push_back({"step", loss.grad_fn()});
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'trace'
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    loss.backward();
  }
}

void positiveBestKeptUnderCondition(Net &net, torch::Tensor x, torch::Tensor y) {
  NodePtr best;
  float bestLoss = 1e9f;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    if (loss.item<float>() < bestLoss) {
      bestLoss = loss.item<float>();
      best = loss.grad_fn();
      // CHECK: :[[@LINE-1]]:7: warning: autograd node from grad_fn() is kept in 'best'
      // CHECK: :[[@LINE-6]]:3: note: loop starts here
    }
  }
}

struct Trainer {
  Net net;
  torch::optim::Adam opt{net->parameters(), torch::optim::AdamOptions(1e-3)};
  std::vector<NodePtr> nodes_;

  void step(const torch::Tensor &x, const torch::Tensor &y) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    nodes_.push_back(loss.grad_fn());
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'nodes_'
    // CHECK: :[[@LINE+6]]:5: note: loop starts here
    loss.backward();
    opt.step();
  }

  void fit(const torch::Tensor &x, const torch::Tensor &y) {
    for (int epoch = 0; epoch < 5; ++epoch)
      step(x, y);
  }
};

template <typename ModelT>
void positiveTemplateNeverInstantiated(ModelT &model, torch::Tensor x, torch::Tensor y) {
  std::vector<NodePtr> kept;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    kept.push_back(loss.grad_fn());
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'kept'
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
  }
}

void positiveLambdaStep(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<NodePtr> kept;
  for (int i = 0; i < 10; ++i) {
    auto trainStep = [&] {
      auto loss = torch::mse_loss(net->forward(x), y);
      loss.backward();
      kept.push_back(loss.grad_fn());
      // CHECK: :[[@LINE-1]]:7: warning: autograd node from grad_fn() is kept in 'kept'
      // CHECK: :[[@LINE-6]]:3: note: loop starts here
    };
    trainStep();
  }
}

// The last node, kept in an outer variable read after the loop: the previous graph stays alive
// while the next is recorded, and the last one beyond training.
std::string positiveOuterVariableReadAfter(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  NodePtr lastFn;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    lastFn = loss.grad_fn();
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'lastFn' across loop iterations
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    loss.backward();
    opt.step();
  }
  return lastFn ? lastFn->name() : std::string("none");
}

// The previous iteration's node, read by the next one before it is replaced.
void positiveOuterVariablePrevious(Net &net, torch::Tensor x, torch::Tensor y) {
  NodePtr previous;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    if (previous && previous->name() != loss.grad_fn()->name())
      break;
    previous = loss.grad_fn();
    // CHECK: :[[@LINE-1]]:5: warning: autograd node from grad_fn() is kept in 'previous' across loop iterations
    // CHECK: :[[@LINE-6]]:3: note: loop starts here
    loss.backward();
  }
}

// ---- negatives ----------------------------------------------------------------------------

// Only the node's name is kept: plain data.
void negativeNameOnly(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    names.push_back(loss.grad_fn()->name());
    loss.backward();
  }
}

// The last node, replaced every iteration: nothing accumulates.
void negativeLastNodeReplaced(Net &net, torch::Tensor x, torch::Tensor y) {
  NodePtr last;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    last = loss.grad_fn();
    loss.backward();
  }
}

// The node read only in the iteration that assigned it; the variable is dead afterwards.
void negativeOuterVariableReadSameIteration(Net &net, torch::Tensor x, torch::Tensor y) {
  NodePtr node;
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    node = loss.grad_fn();
    names.push_back(node->name());
    loss.backward();
  }
}

// A node kept after a loop that records no graph: nothing trains around it.
std::string negativeOuterVariableNoTraining(const std::vector<torch::Tensor> &outputs) {
  NodePtr last;
  for (const auto &out : outputs)
    last = out.grad_fn();
  return last ? last->name() : std::string();
}

// A container emptied at every iteration.
void negativeClearedEachIteration(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<NodePtr> stack;
  for (int i = 0; i < 10; ++i) {
    stack.clear();
    auto loss = torch::mse_loss(net->forward(x), y);
    stack.push_back(loss.grad_fn());
    loss.backward();
  }
}

// Walking one graph: the container lives only within the walk, outside any training loop.
int64_t negativeGraphWalk(const torch::Tensor &out) {
  std::vector<NodePtr> stack{out.grad_fn()};
  int64_t count = 0;
  while (!stack.empty()) {
    NodePtr node = stack.back();
    stack.pop_back();
    ++count;
    for (const auto &edge : node->next_edges())
      if (edge.function)
        stack.push_back(edge.function);
  }
  return count;
}

// Walking the graphs of several outputs of one forward, in a loop that records nothing.
int64_t negativeWalkOutputs(const std::vector<torch::Tensor> &outputs) {
  std::vector<NodePtr> roots;
  for (const auto &out : outputs)
    roots.push_back(out.grad_fn());
  return static_cast<int64_t>(roots.size());
}

// A weak_ptr keeps nothing alive.
void negativeWeak(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<std::weak_ptr<torch::autograd::Node>> seen;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    seen.push_back(loss.grad_fn());
    loss.backward();
  }
}

// Under no-grad there is no node to keep.
void negativeNoGrad(Net &net, torch::Tensor x) {
  torch::NoGradGuard noGrad;
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 10; ++i)
    nodes.push_back(net->forward(x).grad_fn());
}

// Checking for a graph without keeping it; .item() into a vector of floats.
void negativeCheckOnly(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<float> losses;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    if (loss.grad_fn() != nullptr)
      loss.backward();
    losses.push_back(loss.item<float>());
  }
}

// CHECK-NOT: warning:
