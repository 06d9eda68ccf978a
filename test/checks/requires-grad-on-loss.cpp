// RUN: %tidy --checks='-*,torch-requires-grad-on-loss' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

#include <iostream>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 3))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randint(3, {1}).squeeze()}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

// ---- positives ----------------------------------------------------------------------------

void positiveDetachedOutput(Net &net, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    opt.zero_grad();
    auto output = net->forward(batch.data).detach();
    auto loss = torch::nn::functional::cross_entropy(output, batch.target);
    loss.requires_grad_(true);
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad: '.detach()' cut it from the model's graph, so backward() stops at this tensor and the model gets no gradient; consider computing the loss from the model's output with autograd on and removing this call [torch-requires-grad-on-loss]
    // CHECK: :[[@LINE-4]]:19: note: the graph is cut here
    // CHECK: :[[@LINE-5]]:19: note: the model output it comes from
    loss.backward();
    opt.step();
  }
}

void positiveComputedUnderNoGrad(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y, int steps) {
  int step = 0;
  while (step++ < steps) {
    torch::Tensor loss;
    {
      torch::NoGradGuard no_grad;
      loss = torch::mse_loss(net->forward(x), y);
    }
    loss.set_requires_grad(true);
    // CHECK: :[[@LINE-1]]:10: warning: set_requires_grad() on a loss that does not require grad: it is computed under a no-grad scope, so backward()
    // CHECK: :[[@LINE-5]]:7: note: the graph is cut here
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

void positiveFromItemValues(Net &net, torch::optim::Adam &opt, const std::vector<torch::Tensor> &xs,
                            const std::vector<float> &targets) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<float> predictions;
    for (const auto &x : xs)
      predictions.push_back(net->forward(x).sum().item<float>());
    auto loss = torch::mse_loss(torch::tensor(predictions), torch::tensor(targets));
    loss.requires_grad_();
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad: '.item()' cut it from the model's graph
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

void positiveChained(Net &net, torch::Tensor x, torch::Tensor y) {
  torch::mse_loss(net->forward(x).detach(), y).requires_grad_().backward();
  // CHECK: :[[@LINE-1]]:48: warning: requires_grad_() on a loss that does not require grad
}

torch::Tensor positiveHelperReturnsLoss(Net &net, torch::Tensor x, torch::Tensor y) {
  torch::nn::MSELoss criterion;
  auto pred = net->forward(x).detach();
  auto loss = criterion(pred, y);
  loss.requires_grad_(true);
  // CHECK: :[[@LINE-1]]:8: warning: requires_grad_() on a loss that does not require grad
  return loss;
}

struct Trainer {
  Net net;
  torch::optim::SGD opt{net->parameters(), torch::optim::SGDOptions(0.1)};
  void step(const torch::Tensor &x, const torch::Tensor &y) {
    opt.zero_grad();
    auto scores = net->forward(x);
    auto loss = torch::nll_loss(torch::log_softmax(scores, 1).detach(), y);
    loss.requires_grad_(true);
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad
    loss.backward();
    opt.step();
  }
};

void positiveLambda(Net &net, torch::Tensor x, torch::Tensor y) {
  auto trainStep = [&] {
    auto out = net->forward(x).detach();
    auto loss = torch::mse_loss(out, y);
    loss.requires_grad_(true);
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad
    loss.backward();
  };
  for (int i = 0; i < 3; ++i)
    trainStep();
}

template <typename Model> void positiveTemplate(Model &model, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 3; ++i) {
    auto out = model->forward(x).detach();
    torch::Tensor loss = torch::mse_loss(out, y);
    loss.requires_grad_(true);
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad
    loss.backward();
  }
}
template void positiveTemplate<Net>(Net &, torch::Tensor, torch::Tensor);

template <typename Model> void positiveTemplateNeverInstantiated(Model &model, torch::Tensor x, torch::Tensor y) {
  auto out = model->forward(x).detach();
  torch::Tensor loss = torch::mse_loss(out, y);
  loss.requires_grad_(true);
  // CHECK: :[[@LINE-1]]:8: warning: requires_grad_() on a loss that does not require grad
  loss.backward();
}

// A cross-entropy written by hand from .item() values, then marked to get past the error.
torch::Tensor scratchCrossEntropy(torch::Tensor y_hat, torch::Tensor y) {
  std::vector<double> picked;
  for (int64_t i = 0; i < y_hat.size(0); ++i)
    picked.push_back(y_hat[i][y[i].item<int64_t>()].item<double>());
  torch::Tensor out = torch::from_blob(picked.data(), {static_cast<int64_t>(picked.size())}, torch::kDouble).clone();
  out.requires_grad_(true);
  // CHECK: :[[@LINE-1]]:7: warning: requires_grad_() on a loss that does not require grad: '.item()' cut it
  return -torch::log(out);
}
void positiveScratchModel(torch::Tensor X, torch::Tensor y) {
  auto W = torch::randn({4, 3}).requires_grad_();
  auto y_hat = torch::softmax(X.mm(W), 1);
  auto loss = scratchCrossEntropy(y_hat, y).mean();
  loss.backward();
}

// Marked, then scaled in place of itself before backward(): the mark reads the cut loss.
void positiveMarkedThenScaled(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y).detach();
    loss.requires_grad_();
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad: '.detach()' cut it from the model's graph
    // CHECK: :[[@LINE-3]]:17: note: the graph is cut here
    // CHECK: :[[@LINE-4]]:33: note: the model output it comes from
    loss = loss / 3;
    loss.backward();
    opt.step();
  }
}

// The loss over the argmax of the output: no graph to the model, though nothing cut one.
void positiveLossFromArgmax(Net &net, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    opt.zero_grad();
    auto out = net->forward(batch.data);
    auto pred = out.argmax(1).to(torch::kFloat);
    auto loss = torch::mse_loss(pred, batch.target.to(torch::kFloat));
    loss.requires_grad_(true);
    // CHECK: :[[@LINE-1]]:10: warning: requires_grad_() on a loss that does not require grad: it is computed from the model's output only through ops autograd does not record (argmax, comparisons, rounding), so backward() stops at this tensor
    // CHECK: :[[@LINE-4]]:17: note: the graph is cut here
    // CHECK: :[[@LINE-6]]:16: note: the model output it comes from
    loss.backward();
    opt.step();
  }
}

// ---- negatives ----------------------------------------------------------------------------

// A leaf the user optimizes.
void negativeLeafToOptimize(torch::Tensor target) {
  auto w = torch::zeros({4}).requires_grad_();
  torch::optim::SGD opt({w}, 0.1);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::mse_loss(w, target).backward();
    opt.step();
  }
}

// Unfreezing parameters.
void negativeUnfreeze(Net &net) {
  for (auto &p : net->parameters())
    p.requires_grad_(true);
}

// Saliency: the input requires grad before the forward.
torch::Tensor negativeSaliency(Net &net, torch::Tensor input) {
  input.requires_grad_(true);
  auto out = net->forward(input);
  out.max().backward();
  return input.grad().abs();
}

// WGAN-GP: the interpolate of real and (detached) generated samples is an input of the critic.
torch::Tensor negativeGradientPenalty(Net &generator, Net &critic, torch::Tensor real, torch::Tensor noise) {
  auto fake = generator->forward(noise);
  auto alpha = torch::rand({real.size(0), 1});
  auto interpolated = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(true);
  auto scores = critic->forward(interpolated);
  auto grads = torch::autograd::grad({scores}, {interpolated}, {torch::ones_like(scores)}, true, true)[0];
  return ((grads.norm(2, 1) - 1).pow(2)).mean();
}

// Features of a frozen backbone, fed to a trainable head.
void negativeFrozenBackbone(Net &backbone, Net &head, torch::Tensor x, torch::Tensor y) {
  auto features = backbone->forward(x).detach();
  features.requires_grad_(true);
  auto loss = torch::mse_loss(head->forward(features), y);
  loss.backward();
}

// A lambda called through a local: its parameter takes the argument after the lambda object.
void positiveLossThroughLambdaParameter(Net &net, torch::Tensor x, torch::Tensor y) {
  auto toLoss = [&](torch::Tensor out) { return torch::mse_loss(out.detach(), y); };
  auto loss = toLoss(net->forward(x));
  loss.requires_grad_(true);
  // CHECK: :[[@LINE-1]]:8: warning: requires_grad_() on a loss that does not require grad
  loss.backward();
}

void negativeAttachedThroughLambdaParameter(Net &net, torch::Tensor x, torch::Tensor y) {
  auto toLoss = [&](torch::Tensor out) { return torch::mse_loss(out, y); };
  auto loss = toLoss(net->forward(x));
  loss.requires_grad_(true);
  loss.backward();
}

// Redundant but harmless: the loss is attached already.
// The local is given the model's attached loss again before backward(): the marked value is
// never backpropagated.
void negativeMarkedThenReplaced(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  auto loss = torch::mse_loss(net->forward(x), y).detach();
  loss.requires_grad_();
  std::cout << loss.item<float>() << std::endl;
  loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
  opt.step();
}

void negativeAttachedLoss(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.requires_grad_(true);
  loss.backward();
  opt.step();
}

// requires_grad_(false), and a mark that is never backpropagated.
void negativeOffAndUnused(Net &net, torch::Tensor x, std::vector<float> &log) {
  auto out = net->forward(x).detach();
  out.requires_grad_(false);
  auto snapshot = net->forward(x).detach().requires_grad_();
  log.push_back(snapshot.sum().item<float>());
}

// A loss over the argmax of the output only reported, never backpropagated nor returned.
void negativeArgmaxMetricMarked(Net &net, torch::Tensor x, torch::Tensor y, std::vector<float> &log) {
  auto pred = net->forward(x).argmax(1).to(torch::kFloat);
  auto err = torch::mse_loss(pred, y);
  err.requires_grad_(true);
  log.push_back(err.item<float>());
}

// A leaf made from the argmax of an output on purpose and optimized: no loss.
void negativeLeafFromArgmax(Net &net, torch::Tensor x) {
  auto start = net->forward(x).argmax(1).to(torch::kFloat).requires_grad_();
  torch::optim::SGD opt({start}, 0.1);
  auto objective = (start * start).sum();
  objective.backward();
  opt.step();
}

// CHECK-NOT: warning:
