// RUN: %tidy --checks='-*,torch-zero-grad-between-backward-and-step' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-zero-grad-between-backward-and-step' --fix-notes %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
// Plain --fix leaves a note's fix alone.
// RUN: cp %s %t.plain.cpp
// RUN: %tidy --checks='-*,torch-zero-grad-between-backward-and-step' --fix %t.plain.cpp -- %torch_flags > /dev/null 2>&1
// RUN: diff %s %t.plain.cpp
#include <torch/torch.h>

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

// Straight-line code: no loop is needed for the step to apply cleared gradients.
void positiveStraightLine(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
  optimizer.zero_grad();
  // CHECK: :[[@LINE-1]]:3: warning: zero_grad() runs after backward() and before step(): the step applies cleared gradients; consider zeroing before the forward pass or after step() [torch-zero-grad-between-backward-and-step]
  // CHECK: :[[@LINE-3]]:3: note: backward() runs here
  // CHECK: :[[@LINE+1]]:3: note: step() runs here
  optimizer.step();
}
// FIXED: void positiveStraightLine(
// FIXED: optimizer.step();
// FIXED-NEXT: optimizer.zero_grad();

void positiveRangeForOverDataLoader() {
  Net net;
  torch::optim::Adam optimizer(net->parameters(), 1e-3);
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target);
    loss.backward();
    net->zero_grad();
    // CHECK: :[[@LINE-1]]:5: warning: zero_grad() runs after backward() and before step(){{.*}} [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-3]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    optimizer.step();
  }
}
// FIXED: void positiveRangeForOverDataLoader(
// FIXED: optimizer.step();
// FIXED-NEXT: net->zero_grad();

void positiveWhile(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  int step = 0;
  while (step++ < 100) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    if (step % 10 == 0)
      std::cout << loss.item<float>() << "\n";
    opt.zero_grad();
    // CHECK: :[[@LINE-1]]:5: warning: zero_grad() runs after backward() and before step(){{.*}} [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-5]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    opt.step();
  }
}

// The backward pass in a helper called from the step.
torch::Tensor lossAndBackward(Net &net, torch::Tensor x, torch::Tensor y) {
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
  return loss;
}

class Trainer {
public:
  explicit Trainer(Net net) : net_(std::move(net)), opt_(net_->parameters(), 0.01) {}
  void trainStep(torch::Tensor x, torch::Tensor y) {
    lossAndBackward(net_, x, y);
    opt_.zero_grad();
    // CHECK: :[[@LINE-1]]:5: warning: zero_grad() runs after backward() and before step(){{.*}} [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-3]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    opt_.step();
  }

private:
  Net net_;
  torch::optim::SGD opt_;
};

template <typename Model>
void positiveTemplate(Model &model, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    torch::mse_loss(model->forward(x), y).backward();
    opt.zero_grad();
    // CHECK: :[[@LINE-1]]:5: warning: zero_grad() runs after backward() and before step(){{.*}} [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-3]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    opt.step();
  }
}
template void positiveTemplate<Net>(Net &, torch::optim::SGD &, torch::Tensor, torch::Tensor);

void positiveLambda(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  auto step = [&] {
    torch::mse_loss(net->forward(x), y).backward();
    opt.zero_grad();
    // CHECK: :[[@LINE-1]]:5: warning: zero_grad() runs after backward() and before step(){{.*}} [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-3]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    opt.step();
  };
  for (int i = 0; i < 10; ++i)
    step();
}

// A helper of this file clears the gradients between backward() and step().
void clearGradients(torch::optim::Optimizer &opt) { opt.zero_grad(); }

void positiveThroughHelper(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    clearGradients(opt);
    // CHECK: :[[@LINE-1]]:5: warning: 'clearGradients' clears the gradients after backward() and before step(): the step applies cleared gradients; consider zeroing before the forward pass or after step() [torch-zero-grad-between-backward-and-step]
    // CHECK: :[[@LINE-3]]:5: note: backward() runs here
    // CHECK: :[[@LINE+1]]:5: note: step() runs here
    opt.step();
  }
}
// FIXED: void positiveThroughHelper(
// FIXED: opt.step();
// FIXED-NEXT: clearGradients(opt);

// ---- negatives ----------------------------------------------------------------------------

void negativeZeroGradFirst(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    opt.step();
  }
}

void negativeZeroGradAfterStep(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    torch::mse_loss(net->forward(x), y).backward();
    opt.step();
    net->zero_grad();
  }
}

// Gradient accumulation: zeroed only when the window closes, after the step.
void negativeAccumulation(Net &net, torch::optim::SGD &opt, std::vector<torch::Tensor> xs, torch::Tensor y) {
  for (size_t i = 0; i < xs.size(); ++i) {
    (torch::mse_loss(net->forward(xs[i]), y) / 4).backward();
    if ((i + 1) % 4 == 0) {
      opt.step();
      opt.zero_grad();
    }
  }
}

// step() of the previous batch, then zero_grad(), then this batch's backward().
void negativeStepBeforeBackward(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  opt.step();
  opt.zero_grad();
  torch::mse_loss(net->forward(x), y).backward();
}

// A GAN: the discriminator's optimizer is zeroed between the generator's backward() and the
// generator's step(); they own different parameters.
void negativeGanDifferentOptimizers(Net &gen, Net &disc, torch::Tensor noise, torch::Tensor real) {
  torch::optim::Adam g_opt(gen->parameters(), 2e-4);
  torch::optim::Adam d_opt(disc->parameters(), 2e-4);
  for (int i = 0; i < 10; ++i) {
    auto fake = gen->forward(noise);
    d_opt.zero_grad();
    auto d_loss = torch::softplus(disc->forward(fake.detach())).mean() +
                  torch::softplus(-disc->forward(real)).mean();
    d_loss.backward();
    d_opt.step();
    g_opt.zero_grad();
    auto g_loss = torch::softplus(-disc->forward(fake)).mean();
    g_loss.backward();
    d_opt.zero_grad();
    g_opt.step();
  }
}

// The DCGAN tutorial's shape: modules zeroed, two optimizers stepped.
void negativeDcgan(Net &gen, Net &disc, torch::optim::Adam &g_opt, torch::optim::Adam &d_opt,
                   torch::Tensor noise, torch::Tensor real) {
  for (int i = 0; i < 10; ++i) {
    disc->zero_grad();
    torch::softplus(-disc->forward(real)).mean().backward();
    auto fake = gen->forward(noise);
    torch::softplus(disc->forward(fake.detach())).mean().backward();
    d_opt.step();
    gen->zero_grad();
    torch::softplus(-disc->forward(fake)).mean().backward();
    g_opt.step();
  }
}

// Two losses, each zeroed, backpropagated and stepped in turn.
void negativeTwoPhases(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  torch::mse_loss(net->forward(x), y).backward();
  opt.step();
  opt.zero_grad();
  torch::l1_loss(net->forward(x), y).backward();
  opt.step();
}
// The helper at the top of the iteration, before the forward.
void negativeHelperFirst(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    clearGradients(opt);
    torch::mse_loss(net->forward(x), y).backward();
    opt.step();
  }
}

// A helper that zeroes only inside a loop of its own, between its own steps.
void stepEach(torch::optim::SGD &opt, std::vector<torch::Tensor> &losses) {
  for (auto &loss : losses) {
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}
void negativeHelperLoopsItself(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  torch::mse_loss(net->forward(x), y).backward();
  std::vector<torch::Tensor> more{torch::mse_loss(net->forward(x), y)};
  stepEach(opt, more);
  opt.step();
}

