// RUN: %tidy --checks='-*,torch-loss-accumulated-as-tensor' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-loss-accumulated-as-tensor' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <functional>
#include <iostream>
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

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForOverDataLoader() {
  Net net;
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  auto loader = makeLoader();
  torch::Tensor running_loss = torch::zeros({1});
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    running_loss += loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'running_loss' keeps the autograd graph of every iteration alive; consider accumulating '.item<double>()' or '.detach()' [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-5]]:33: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
    // FIXED: {{^}}    running_loss += loss.item<double>();{{$}}
  }
  std::cout << "mean loss " << running_loss.item<double>() / 2 << "\n";
}

void positiveWhileOutOfPlace(Net &net, torch::Tensor x, torch::Tensor y) {
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  torch::Tensor total = torch::zeros({});
  int step = 0;
  while (step++ < 100) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    optimizer.step();
    total = total + loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'total' keeps {{.*}} [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-5]]:33: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
    // FIXED: {{^}}    total = total + loss.item<double>();{{$}}
  }
  std::cout << total << "\n";
}

// An eval loop without a guard: every accumulated loss keeps its activations, too. The
// accumulator is printed as a tensor and handed to nothing, but read once as a tensor
// (`.mean()`), so no fix-it is offered.
void positiveEvalForIndexDetachFixIt(Net &net, const std::vector<torch::Tensor> &xs,
                                    const std::vector<torch::Tensor> &ys) {
  net->eval();
  torch::Tensor val_loss = torch::zeros({1});
  for (size_t i = 0; i < xs.size(); ++i) {
    val_loss.add_(torch::mse_loss(net->forward(xs[i]), ys[i]));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'val_loss' {{.*}} [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-2]]:35: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // FIXED: {{^}}    val_loss.add_(torch::mse_loss(net->forward(xs[i]), ys[i]).detach());{{$}}
  }
  std::cout << val_loss.mean() << "\n";
}

template <typename Model>
double positiveTemplate(Model &model, torch::optim::Optimizer &opt, torch::Tensor x, torch::Tensor y) {
  torch::Tensor epoch_loss = torch::zeros({});
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    epoch_loss -= -loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'epoch_loss' {{.*}} [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-5]]:42: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
    // FIXED: {{^}}    epoch_loss -= (-loss).item<double>();{{$}}
  }
  return epoch_loss.item<double>();
}
template double positiveTemplate<Net>(Net &, torch::optim::Optimizer &, torch::Tensor, torch::Tensor);

void positiveLambda(Net &net, torch::optim::Adam &opt, torch::Tensor x, torch::Tensor y) {
  torch::Tensor sum = torch::zeros({});
  auto trainStep = [&](int) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    sum += loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'sum' {{.*}} [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-5]]:33: note: the tensor became graph-attached here
    // FIXED: {{^}}    sum += loss.item<double>();{{$}}
  };
  for (int epoch = 0; epoch < 3; ++epoch)
    trainStep(epoch);
  std::cout << sum.item<float>() << "\n";
}

// A trainer whose per-step method adds into a member: the sum grows across calls.
class Trainer {
public:
  explicit Trainer(Net net) : net_(std::move(net)), opt_(net_->parameters(), 0.01) {}
  void trainStep(torch::Tensor x, torch::Tensor y) {
    opt_.zero_grad();
    torch::Tensor loss = torch::mse_loss(net_->forward(x), y);
    loss.backward();
    opt_.step();
    epoch_loss_ += loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'epoch_loss_' {{.*}} [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-5]]:42: note: the tensor became graph-attached here
    // FIXED: {{^}}    epoch_loss_ += loss.detach();{{$}}
  }
  void fit(torch::Tensor x, torch::Tensor y) {
    for (int i = 0; i < 100; ++i)
      trainStep(x, y);
    std::cout << "epoch loss " << epoch_loss_.item<float>() << "\n";
    epoch_loss_.zero_();
  }

private:
  Net net_;
  torch::optim::SGD opt_;
  torch::Tensor epoch_loss_ = torch::zeros({});
};

// A helper called from the loop adds into the caller's accumulator.
void addStep(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y, torch::Tensor &acc) {
  opt.zero_grad();
  auto out = net->forward(x);
  auto loss = (out - y).pow(2).mean();
  loss.backward();
  opt.step();
  acc += loss;
  // CHECK: :[[@LINE-1]]:3: warning: graph-attached tensor accumulated into 'acc' {{.*}} [torch-loss-accumulated-as-tensor]
  // CHECK: :[[@LINE-6]]:14: note: the tensor became graph-attached here
  // FIXED: {{^}}  acc += loss.detach();{{$}}
}

void positiveHelperCalledFromLoop(Net &net, torch::Tensor x, torch::Tensor y) {
  torch::optim::SGD opt(net->parameters(), 0.1);
  torch::Tensor acc = torch::zeros({});
  for (int i = 0; i < 10; ++i)
    addStep(net, opt, x, y, acc);
  std::cout << acc.item<double>() << "\n";
}

// ---- negatives ----------------------------------------------------------------------------

void negativeItem(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  double total = 0;
  torch::Tensor total_t = torch::zeros({});
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    total += loss.item<double>();
    total_t += loss.item<double>();
  }
  std::cout << total << total_t << "\n";
}

void negativeDetach(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  torch::Tensor total = torch::zeros({});
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    total += loss.detach();
    total = total + loss.detach();
  }
  std::cout << total << "\n";
}

// Summing the losses of a step and calling backward() once is gradient accumulation.
void negativeBackwardOnce(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    opt.zero_grad();
    torch::Tensor loss_sum = torch::zeros({});
    for (auto &x : xs)
      loss_sum += torch::mse_loss(net->forward(x), y);
    loss_sum.backward();
    opt.step();
  }
}

// Accumulated over the whole epoch, averaged, then backpropagated (a full-batch objective).
void negativeBackwardOfDerived(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs, torch::Tensor y) {
  torch::Tensor total;
  for (int epoch = 0; epoch < 10; ++epoch) {
    total = torch::zeros({});
    for (auto &x : xs)
      total = total + torch::mse_loss(net->forward(x), y);
    auto mean = total / static_cast<double>(xs.size());
    opt.zero_grad();
    mean.backward();
    opt.step();
  }
}

// Time steps of one sequence summed and returned: the caller backpropagates.
torch::Tensor negativeReturned(Net &net, const std::vector<torch::Tensor> &steps, torch::Tensor y) {
  torch::Tensor loss = torch::zeros({});
  for (const auto &x : steps)
    loss += torch::mse_loss(net->forward(x), y);
  return loss;
}

void negativeUnderNoGrad(Net &net, std::vector<torch::Tensor> xs, torch::Tensor y) {
  torch::NoGradGuard no_grad;
  torch::Tensor total = torch::zeros({});
  for (auto &x : xs)
    total += torch::mse_loss(net->forward(x), y);
  std::cout << total.item<float>() << "\n";
}

void evalHelper(Net &net, std::vector<torch::Tensor> xs, torch::Tensor y, torch::Tensor &total) {
  for (auto &x : xs)
    total += torch::mse_loss(net->forward(x), y);
}

void negativeGuardInCaller(Net &net, std::vector<torch::Tensor> xs, torch::Tensor y) {
  torch::Tensor total = torch::zeros({});
  {
    torch::NoGradGuard no_grad;
    evalHelper(net, xs, y, total);
  }
  std::cout << total.item<float>() << "\n";
}

// Accumulation inside the loop body into a local of the iteration: gone at its end.
void negativePerIterationAccumulator(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::Tensor loss = torch::mse_loss(net->forward(x), y);
    torch::Tensor reg = torch::zeros({});
    for (const auto &p : net->parameters())
      reg += p.pow(2).sum();
    (loss + 1e-4 * reg).backward();
    opt.step();
  }
}

// Accumulating into a container of plain numbers and into a counter: not tensors.
void negativeVectorOfFloats(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  std::vector<float> history;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    history.push_back(loss.item<float>());
    if (i % 5 == 0)
      std::cout << loss.item<float>() << "\n";
  }
}

// Batches and data tensors added up (a running mean of the inputs) are not graph-attached.
void negativeDataAccumulation(std::vector<torch::Tensor> batches) {
  torch::Tensor sum = torch::zeros({4});
  for (auto &b : batches)
    sum += b.mean(0);
  std::cout << sum / static_cast<double>(batches.size()) << "\n";
}

// Module parameters summed for an L2 penalty that is backpropagated with the loss.
void negativePenaltyBackpropagated(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::Tensor loss = torch::mse_loss(net->forward(x), y);
    for (const auto &p : net->parameters())
      loss = loss + 1e-4 * p.norm();
    loss.backward();
    opt.step();
  }
}

// Policy-gradient loss summed over an episode and backpropagated at its end.
struct Policy {
  Net net;
  torch::Tensor episode_loss_ = torch::zeros({});
  void observe(torch::Tensor obs, float reward) { episode_loss_ += -net->forward(obs).sum() * reward; }
  void finish(torch::optim::Optimizer &opt) {
    opt.zero_grad();
    episode_loss_.backward();
    opt.step();
    episode_loss_ = torch::zeros({});
  }
};

void negativeEpisodeLoss(Policy &policy, torch::optim::Adam &opt, torch::Tensor obs) {
  for (int t = 0; t < 100; ++t)
    policy.observe(obs, 1.0f);
  policy.finish(opt);
}

// ---- returned accumulators and struct members ------------------------------------------------

using Batches = std::vector<torch::data::Example<>>;

// An epoch's total returned to the caller, in a loop that backpropagates each loss: the graphs it
// sums are spent, so no caller can want its gradient (before, any returned total was taken as
// meant for a later backward()).
torch::Tensor positiveReturnedEpochTotal(Net &net, Batches &loader, torch::optim::Optimizer &opt) {
  torch::Tensor total = torch::zeros({});
  for (auto &b : loader) {
    auto loss = torch::nll_loss(net->forward(b.data), b.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    total += loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'total' keeps the autograd graph of every iteration alive; consider accumulating '.item<double>()' or '.detach()' [torch-loss-accumulated-as-tensor]
    // CHECK: :[[@LINE-6]]:33: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
    // FIXED: {{^}}    total += loss.detach();{{$}}
  }
  return total;
}

torch::Tensor positiveReturnedEpochSum(Net &net, Batches &loader, torch::optim::Optimizer &opt) {
  torch::Tensor total = torch::zeros({});
  for (auto &b : loader) {
    auto loss = torch::nll_loss(net->forward(b.data), b.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    total = total + loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'total' {{.*}} [torch-loss-accumulated-as-tensor]
    // FIXED: {{^}}    total = total + loss.detach();{{$}}
  }
  return total;
}

double negativeReturnedNumber(Net &net, Batches &loader, torch::optim::Optimizer &opt) {
  double total = 0;
  for (auto &b : loader) {
    auto loss = torch::nll_loss(net->forward(b.data), b.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    total += loss.item<float>();
  }
  return total;
}

torch::Tensor negativeReturnedDetachedTotal(Net &net, Batches &loader, torch::optim::Optimizer &opt) {
  torch::Tensor total = torch::zeros({});
  for (auto &b : loader) {
    auto loss = torch::nll_loss(net->forward(b.data), b.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    total += loss.detach();
  }
  return total;
}

torch::Tensor negativeReturnedValidationTotal(Net &net, Batches &loader) {
  torch::NoGradGuard no_grad;
  torch::Tensor total = torch::zeros({});
  for (auto &b : loader)
    total += torch::nll_loss(net->forward(b.data), b.target);
  return total;
}

// The loss member of the struct a module's forward returns.
struct StepOutput {
  torch::Tensor logits;
  torch::Tensor loss;
};
struct LossNetImpl : torch::nn::Module {
  LossNetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  StepOutput forward(torch::Tensor x, torch::Tensor t) {
    auto logits = fc(x);
    return {logits, torch::mse_loss(logits, t)};
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(LossNet);

void positiveMemberOfForwardOutput(LossNet &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor t) {
  torch::Tensor running = torch::zeros({});
  torch::Tensor detached = torch::zeros({});
  for (int i = 0; i < 10; ++i) {
    auto o = net->forward(x, t);
    opt.zero_grad();
    o.loss.backward();
    opt.step();
    running += o.loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor accumulated into 'running' {{.*}} [torch-loss-accumulated-as-tensor]
    // FIXED: {{^}}    running += o.loss.item<double>();{{$}}
    detached += o.loss.detach();
  }
  std::cout << running.item<double>() << detached.item<double>() << "\n";
}
