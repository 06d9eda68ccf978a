// RUN: %tidy --checks='-*,torch-graph-cached-in-member' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-graph-cached-in-member' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <iostream>
#include <memory>
#include <vector>

// ---- positives ----------------------------------------------------------------------------

// The classic: forward keeps its last activation "for visualization".
struct EncoderImpl : torch::nn::Module {
  EncoderImpl()
      : fc1(register_module("fc1", torch::nn::Linear(8, 16))),
        fc2(register_module("fc2", torch::nn::Linear(16, 4))) {}
  torch::Tensor forward(torch::Tensor x) {
    auto h = torch::relu(fc1->forward(x));
    last_hidden_ = h;
    // CHECK: :[[@LINE-1]]:18: warning: graph-attached tensor is cached in member 'last_hidden_': it keeps the autograd graph of the call that computed it alive until the member is overwritten; consider caching '.detach()' or nothing [torch-graph-cached-in-member]
    // CHECK: :[[@LINE-3]]:26: note: autograd records the graph here
    return fc2->forward(h);
  }
  torch::Tensor hidden() const { return last_hidden_; }
  torch::nn::Linear fc1, fc2;
  torch::Tensor last_hidden_;
};
// FIXED: torch::Tensor forward(
// FIXED: auto h = torch::relu(fc1->forward(x));
// FIXED-NEXT: last_hidden_ = h.detach();
TORCH_MODULE(Encoder);

// A side channel: estimation() stores what energy() reads later.
struct MixtureImpl : torch::nn::Module {
  MixtureImpl() : head(register_module("head", torch::nn::Linear(4, 3))) {}
  torch::Tensor estimation(const torch::Tensor &z) {
    auto gamma = torch::softmax(head->forward(z), 1);
    gamma_ = gamma;
    // CHECK: :[[@LINE-1]]:12: warning: graph-attached tensor is cached in member 'gamma_'
    mu_ = (gamma.unsqueeze(-1) * z.unsqueeze(1)).sum(0) / gamma.sum(0).unsqueeze(-1);
    // CHECK: :[[@LINE-1]]:9: warning: graph-attached tensor is cached in member 'mu_'
    return gamma;
  }
  torch::Tensor energy_just_before(const torch::Tensor &z) { return (z.unsqueeze(1) - mu_).pow(2).sum(-1); }
  torch::nn::Linear head;
  torch::Tensor gamma_, mu_;
};
// FIXED: torch::Tensor estimation(
// FIXED: auto gamma = torch::softmax(head->forward(z), 1);
// FIXED-NEXT: gamma_ = gamma.detach();

// A running statistic updated from the batch with autograd on: a chain across calls.
struct RunningNormImpl : torch::nn::Module {
  RunningNormImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {
    running_mean_ = register_buffer("running_mean", torch::zeros({4}));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = fc->forward(x);
    running_mean_ = 0.9 * running_mean_ + 0.1 * y.mean(0);
    // CHECK: :[[@LINE-1]]:19: warning: graph-attached tensor computed from member 'running_mean_' is stored back into it: every call chains its autograd graph onto the previous ones, which are never freed; consider computing the update under torch::NoGradGuard or from '.detach()'
    return y - running_mean_;
  }
  torch::nn::Linear fc;
  torch::Tensor running_mean_;
};

// A forward that builds its input in a member, then overwrites it with the layer's output: only
// the second write outlives the call, and the member it reads is this call's, not the previous
// call's (no chain across calls).
struct ConcatHeadImpl : torch::nn::Module {
  ConcatHeadImpl() : lin(register_module("lin", torch::nn::Linear(6, 2))) {}
  torch::Tensor forward(torch::Tensor s, torch::Tensor a) {
    x = torch::cat({torch::flatten(s, 1), torch::flatten(a, 1)}, -1);
    x = lin(x);
    // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor is cached in member 'x': it keeps the autograd graph of the call that computed it alive until the member is overwritten; consider caching '.detach()' or nothing [torch-graph-cached-in-member]
    return x;
  }
  torch::nn::Linear lin;
  torch::Tensor x;
};
// FIXED: x = torch::cat({torch::flatten(s, 1), torch::flatten(a, 1)}, -1);
// FIXED-NEXT: x = lin(x).detach();

// Cleared on some calls only: on the others the graph outlives the call.
struct MaybeClearImpl : torch::nn::Module {
  MaybeClearImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(torch::Tensor x, bool keep) {
    last_ = fc->forward(x);
    // CHECK: :[[@LINE-1]]:11: warning: graph-attached tensor is cached in member 'last_'
    if (!keep)
      last_ = torch::Tensor();
    return x;
  }
  torch::nn::Linear fc;
  torch::Tensor last_;
};
// FIXED: last_ = fc->forward(x).detach();

// A trainer that keeps the last prediction for its progress report.
struct Trainer {
  Encoder model;
  torch::optim::SGD opt{model->parameters(), torch::optim::SGDOptions(0.01)};
  torch::Tensor last_prediction_;

  void step(const torch::Tensor &x, const torch::Tensor &y) {
    opt.zero_grad();
    auto prediction = model->forward(x);
    auto loss = torch::mse_loss(prediction, y);
    loss.backward();
    opt.step();
    last_prediction_ = prediction;
    // CHECK: :[[@LINE-1]]:22: warning: graph-attached tensor is cached in member 'last_prediction_'
  }
  void report() { std::cout << last_prediction_.mean().item<float>() << "\n"; }
};

// Inside a lambda of a method.
struct Agent {
  std::shared_ptr<EncoderImpl> policy = std::make_shared<EncoderImpl>();
  torch::Tensor last_logits_;
  torch::Tensor act(const torch::Tensor &obs) {
    auto run = [&] {
      last_logits_ = policy->forward(obs);
      // CHECK: :[[@LINE-1]]:20: warning: graph-attached tensor is cached in member 'last_logits_'
    };
    run();
    return last_logits_.argmax(1);
  }
};

// A module template that nobody instantiates.
template <int Width> struct WideImpl : torch::nn::Module {
  WideImpl() : fc(register_module("fc", torch::nn::Linear(Width, Width))) {}
  torch::Tensor forward(torch::Tensor x) {
    out_ = fc->forward(x);
    // CHECK: :[[@LINE-1]]:10: warning: graph-attached tensor is cached in member 'out_'
    return out_;
  }
  torch::nn::Linear fc;
  torch::Tensor out_;
};

// ---- negatives ----------------------------------------------------------------------------

struct DetachedCacheImpl : torch::nn::Module {
  DetachedCacheImpl() : fc(register_module("fc", torch::nn::Linear(8, 4))) {}
  torch::Tensor forward(torch::Tensor x) {
    auto out = fc->forward(x);
    last_ = out.detach();
    input_ = x;
    scratch_ = torch::zeros({4});
    return out;
  }
  torch::nn::Linear fc;
  torch::Tensor last_, input_, scratch_;
};

// A buffer updated under no-grad, and one updated from detached values.
struct BatchStatsImpl : torch::nn::Module {
  BatchStatsImpl() {
    mean_ = register_buffer("mean", torch::zeros({4}));
    var_ = register_buffer("var", torch::ones({4}));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = x * weight_;
    {
      torch::NoGradGuard no_grad;
      mean_ = 0.9 * mean_ + 0.1 * y.mean(0);
    }
    var_ = 0.9 * var_ + 0.1 * y.detach().var(0);
    return (y - mean_) / var_.sqrt();
  }
  torch::Tensor weight_ = register_parameter("weight", torch::ones({4}));
  torch::Tensor mean_, var_;
};

// The step's loss kept in a member and backpropagated right away.
struct LossMemberTrainer {
  Encoder model;
  torch::optim::Adam opt{model->parameters(), torch::optim::AdamOptions(1e-3)};
  torch::Tensor loss_;
  std::vector<float> history_;
  void step(const torch::Tensor &x, const torch::Tensor &y) {
    opt.zero_grad();
    loss_ = torch::mse_loss(model->forward(x), y);
    loss_.backward();
    opt.step();
    history_.push_back(loss_.item<float>());
  }
};

// A method only ever called under a guard.
struct Evaluator {
  torch::nn::Linear model{8, 4};
  torch::Tensor last_output_;
  void predict(const torch::Tensor &x) { last_output_ = model->forward(x); }
  void run(const torch::Tensor &x) {
    torch::NoGradGuard no_grad;
    model->eval();
    predict(x);
  }
};

// A plain data holder that is no module and drives none.
struct Batch {
  torch::Tensor data, target;
  void set(const torch::Tensor &d, const torch::Tensor &t) {
    data = d * 2;
    target = t;
  }
};

// A scratch member written twice and cleared before the forward returns: nothing outlives the call.
struct BatchMeanImpl : torch::nn::Module {
  BatchMeanImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(torch::Tensor x) {
    auto y = fc->forward(x);
    scratch_ = y.mean(0);
    scratch_ = y - scratch_;
    scratch_ = torch::Tensor();
    return y;
  }
  torch::nn::Linear fc;
  torch::Tensor scratch_;
};

// CHECK-NOT: warning:
