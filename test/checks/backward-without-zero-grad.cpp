// RUN: %tidy --checks='-*,torch-backward-without-zero-grad' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-backward-without-zero-grad' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct PlainNet : torch::nn::Module {
  PlainNet() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};

struct ToyDataset : torch::data::datasets::Dataset<ToyDataset> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 64; }
};

struct MySGD : torch::optim::SGD {
  using torch::optim::SGD::SGD;
};

torch::Tensor lossOf(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  return torch::mse_loss(model(x), y);
}

// ---- positives ---------------------------------------------------------------------------

void positiveIndexLoop(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates into gradients that are never zeroed in this training loop; consider calling optimizer.zero_grad() at the top of each step [torch-backward-without-zero-grad]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}
// FIXED: void positiveIndexLoop(
// FIXED: optimizer.step();
// FIXED-NEXT: optimizer.zero_grad();

void positiveDataLoader(Net &model) {
  auto loader = torch::data::make_data_loader(
      ToyDataset().map(torch::data::transforms::Stack<>()), /*batch_size=*/8);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  model->train();
  for (auto &batch : *loader) {
    auto output = model->forward(batch.data);
    auto loss = torch::mse_loss(output, batch.target);
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}
// FIXED: void positiveDataLoader(
// FIXED: optimizer.step();
// FIXED-NEXT: optimizer.zero_grad();

// Zeroed once per epoch, stepped every batch: every batch after the first steps with the
// sum of all earlier batches' gradients.
void positiveZeroGradOncePerEpoch(Net &model, const std::vector<torch::Tensor> &batches,
                                  const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 3; ++epoch) {
    optimizer.zero_grad();
    for (const auto &x : batches) {
      auto loss = lossOf(model, x, y);
      loss.backward();
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
      // CHECK: :[[@LINE-4]]:5: note: loop starts here
      // CHECK: :[[@LINE+2]]:7: note: optimizer step is here
      // CHECK: :[[@LINE-7]]:5: note: zero_grad() is only called here, outside the loop
      optimizer.step();
    }
  }
}

void positiveZeroGradBeforeLoop(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  model->zero_grad();
  int i = 0;
  while (i++ < 100) {
    lossOf(model, x, y).backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE+2]]:5: note: optimizer step is here
    // CHECK: :[[@LINE-7]]:3: note: zero_grad() is only called here, outside the loop
    optimizer.step();
  }
}

void positiveDoWhile(std::shared_ptr<PlainNet> net, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::Adam optimizer(net->parameters());
  int step = 0;
  do {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  } while (++step < 50);
}

void positivePlainModuleValue(const torch::Tensor &x, const torch::Tensor &y) {
  PlainNet net;
  auto optimizer = std::make_unique<torch::optim::SGD>(net.parameters(), 0.1);
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net.forward(x), y);
    torch::autograd::backward({loss});
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer->step();
  }
}

void positiveOptimizerBaseReference(Net &model, torch::optim::Optimizer &optimizer,
                                    const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 10; ++i)
    if (i % 2 == 0) {
      lossOf(model, x, y).backward();
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
      // CHECK: :[[@LINE-4]]:3: note: loop starts here
      // CHECK: :[[@LINE+1]]:7: note: optimizer step is here
      optimizer.step();
    }
}

void positiveCustomOptimizer(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  MySGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int i = 0; i < 10; ++i) {
    lossOf(model, x, y).backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}

// Accumulation without ever clearing: the window never closes.
void positiveAccumulationWithoutZeroGrad(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 100; ++i) {
    lossOf(model, x, y).backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE+2]]:7: note: optimizer step is here
    if ((i + 1) % 4 == 0)
      optimizer.step();
  }
}

// The micro-batch loop only accumulates; the outer loop steps and never clears.
void positiveOuterStepWithoutZeroGrad(Net &model, const std::vector<torch::Tensor> &micro,
                                      const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int step = 0; step < 100; ++step) {
    for (const auto &x : micro)
      lossOf(model, x, y).backward();
    // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}

// backward() and step() in a helper, the loop in the caller: reported in the helper.
void trainStep(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x,
               const torch::Tensor &y) {
  auto loss = lossOf(model, x, y);
  loss.backward();
  // CHECK: :[[@LINE-1]]:3: warning: backward() accumulates
  // CHECK: :[[@LINE+7]]:3: note: loop starts here
  // CHECK: :[[@LINE+1]]:3: note: optimizer step is here
  optimizer.step();
}

void positiveHelperFromLoopWithoutBraces(Net &model, torch::optim::SGD &optimizer,
                                         const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 10; ++i)
    trainStep(model, optimizer, x, y);
}

template <typename Model, typename Optim>
void trainTemplate(Model &model, Optim &optimizer, const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}

void positiveTemplateInstantiation(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  trainTemplate(model, optimizer, x, y);
}

void positiveLambdaLoop(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto fit = [&](int epochs) {
    for (int e = 0; e < epochs; ++e) {
      auto loss = lossOf(model, x, y);
      loss.backward();
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
      // CHECK: :[[@LINE-4]]:5: note: loop starts here
      // CHECK: :[[@LINE+1]]:7: note: optimizer step is here
      optimizer.step();
    }
  };
  fit(3);
}

void positiveLambdaStepCalledFromLoop(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto step = [&] {
    lossOf(model, x, y).backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE+4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  };
  for (int i = 0; i < 10; ++i)
    step();
}

// Templates nobody instantiates in this file are analysed by name.
template <typename DataLoader>
void positiveUninstantiatedTemplate(Net &model, DataLoader &loader, torch::optim::Optimizer &optimizer) {
  for (auto &batch : loader) {
    auto loss = torch::nll_loss(model->forward(batch.data), batch.target);
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    optimizer.step();
  }
}

template <typename Model, typename Optim>
struct TemplateTrainer {
  void fit(const std::vector<torch::Tensor> &batches) {
    for (const auto &x : batches) {
      torch::autograd::backward({model_->forward(x).sum()});
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
      // CHECK: :[[@LINE-3]]:5: note: loop starts here
      // CHECK: :[[@LINE+1]]:7: note: optimizer step is here
      optimizer_.step();
    }
  }
  Model model_;
  Optim optimizer_;
};

class Trainer {
public:
  Trainer() : optimizer_(std::make_unique<torch::optim::Adam>(model_->parameters())) {}
  void fit(const torch::Tensor &x, const torch::Tensor &y) {
    for (int epoch = 0; epoch < epochs_; ++epoch) {
      auto loss = torch::mse_loss(model_(x), y);
      loss.backward();
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates
      // CHECK: :[[@LINE-4]]:5: note: loop starts here
      // CHECK: :[[@LINE+1]]:7: note: optimizer step is here
      optimizer_->step();
    }
  }

private:
  Net model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int epochs_ = 10;
};

// ---- negatives ---------------------------------------------------------------------------

void negativeZeroGradAtTop(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    auto loss = lossOf(model, x, y);
    loss.backward();
    optimizer.step();
  }
}

void negativeModuleZeroGrad(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 10; ++epoch) {
    model->zero_grad();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeZeroGradAfterStep(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 10; ++epoch) {
    lossOf(model, x, y).backward();
    optimizer.step();
    optimizer.zero_grad();
  }
}

void negativeAccumulationWindow(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  const int k = 4;
  for (int i = 0; i < 100; ++i) {
    auto loss = lossOf(model, x, y) / k;
    loss.backward();
    if (i % k == 0) {
      optimizer.step();
      optimizer.zero_grad();
    }
  }
}

void clearGradients(torch::optim::Optimizer &optimizer) { optimizer.zero_grad(); }

void negativeHelperZeroes(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    clearGradients(optimizer);
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeLambdaZeroes(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto reset = [&] { model->zero_grad(); };
  for (int i = 0; i < 10; ++i) {
    reset();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeStdFunctionZeroes(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  std::function<void()> reset = [&] { optimizer.zero_grad(); };
  for (int i = 0; i < 10; ++i) {
    reset();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeManualZero(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    for (auto &p : model->parameters())
      if (p.grad().defined())
        p.grad().zero_();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeManualMutableGradZero(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    lossOf(model, x, y).backward();
    optimizer.step();
    for (auto &p : model->parameters())
      p.mutable_grad().zero_();
  }
}

void negativeManualDetachThenZero(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    for (auto &p : model->parameters()) {
      if (p.grad().defined()) {
        p.grad().detach_();
        p.grad().zero_();
      }
    }
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeGradsSetToUndefined(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    for (auto &p : model->parameters())
      p.mutable_grad() = torch::Tensor();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeGradsReset(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    for (auto &pair : model->named_parameters())
      pair.value().mutable_grad().reset();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeGradsOverwritten(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    {
      torch::NoGradGuard no_grad;
      for (auto &group : optimizer.param_groups())
        for (auto &p : group.params())
          if (p.grad().defined())
            p.grad().data().copy_(torch::zeros_like(p));
    }
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeSingleBackward(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto loss = lossOf(model, x, y);
  loss.backward();
  optimizer.step();
}

void negativeZeroGradInInnerLoop(Net &model, const std::vector<torch::Tensor> &batches,
                                 const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (const auto &x : batches) {
      optimizer.zero_grad();
      lossOf(model, x, y).backward();
      optimizer.step();
    }
  }
}

void negativePureAccumulationLoop(Net &model, const std::vector<torch::Tensor> &micro,
                                  const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int step = 0; step < 100; ++step) {
    for (const auto &x : micro)
      lossOf(model, x, y).backward();
    optimizer.step();
    optimizer.zero_grad();
  }
}

void negativeZeroGradBeforeAccumulation(Net &model, const std::vector<torch::Tensor> &micro,
                                        const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    for (const auto &x : micro) {
      auto loss = lossOf(model, x, y) / static_cast<double>(micro.size());
      loss.backward();
    }
    optimizer.step();
  }
}

void negativeGradientCheckWithoutStep(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 3; ++i) {
    model->zero_grad();
    lossOf(model, x, y).backward();
  }
  for (int i = 0; i < 3; ++i)
    lossOf(model, x, y).backward();
}

void negativeAutogradGrad(const torch::Tensor &x, const torch::Tensor &y) {
  auto w = torch::zeros({4, 1}, torch::requires_grad());
  torch::optim::SGD optimizer({w}, 0.1);
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(x.matmul(w), y);
    auto grads = torch::autograd::grad({loss}, {w});
    w.mutable_grad() = grads[0];
    optimizer.step();
  }
}

void trainEpoch(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x,
                const torch::Tensor &y) {
  for (int i = 0; i < 10; ++i) {
    optimizer.zero_grad();
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeEpochLoopAroundTrainingFunction(Net &model, const torch::Tensor &x,
                                              const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 5; ++epoch)
    trainEpoch(model, optimizer, x, y);
}

template <typename Model, typename Optim>
void trainTemplateZeroed(Model &model, Optim &optimizer, const torch::Tensor &x,
                         const torch::Tensor &y) {
  for (int i = 0; i < 10; ++i) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
  }
}

void negativeTemplateInstantiation(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::Adam optimizer(model->parameters());
  trainTemplateZeroed(model, optimizer, x, y);
}

template <typename DataLoader, typename Optim>
void negativeUninstantiatedTemplate(Net &model, DataLoader &loader, Optim &optimizer) {
  for (auto &batch : loader) {
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
  }
}

template <typename Model, typename Optim>
void negativeUninstantiatedManualZero(Model &model, Optim &optimizer, const torch::Tensor &x) {
  for (int i = 0; i < 10; ++i) {
    for (auto &p : model->parameters())
      p.grad().data().zero_();
    model->forward(x).sum().backward();
    optimizer.step();
  }
}

template <typename Model>
void clearModelGradients(Model &model) {
  for (auto &p : model->parameters())
    p.mutable_grad() = torch::Tensor();
}

template <typename Model>
void negativeUninstantiatedHelperZeroes(Model &model, torch::optim::SGD &optimizer,
                                        const torch::Tensor &x) {
  for (int i = 0; i < 10; ++i) {
    clearModelGradients(model);
    model->forward(x).sum().backward();
    optimizer.step();
  }
}

template <typename Model>
void negativeGenericLambda(Model &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x) {
  auto step = [&](auto &m) {
    m->zero_grad();
    m->forward(x).sum().backward();
    optimizer.step();
  };
  for (int i = 0; i < 10; ++i)
    step(model);
}

class ZeroingTrainer {
public:
  ZeroingTrainer() : optimizer_(model_->parameters(), 0.01) {}
  void fit(const torch::Tensor &x, const torch::Tensor &y) {
    for (int epoch = 0; epoch < 10; ++epoch) {
      optimizer_.zero_grad();
      torch::mse_loss(model_->forward(x), y).backward();
      optimizer_.step();
    }
  }

private:
  Net model_;
  torch::optim::SGD optimizer_;
};

// A zero_grad wrapper defined in another translation unit.
void zero_grads(torch::optim::Optimizer &optimizer);

void negativeWrapperDefinedElsewhere(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int i = 0; i < 10; ++i) {
    zero_grads(optimizer);
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeLbfgsClosure(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::LBFGS optimizer(model->parameters(), torch::optim::LBFGSOptions(1));
  auto closure = [&] {
    optimizer.zero_grad();
    auto loss = lossOf(model, x, y);
    loss.backward();
    return loss;
  };
  for (int i = 0; i < 10; ++i)
    optimizer.step(closure);
}

// A hyper-parameter sweep: each iteration trains a fresh model with a fresh optimizer once.
void negativeFreshOptimizerPerIteration(const torch::Tensor &x, const torch::Tensor &y) {
  for (double lr : {0.1, 0.01, 0.001}) {
    Net model;
    torch::optim::SGD optimizer(model->parameters(), lr);
    lossOf(model, x, y).backward();
    optimizer.step();
  }
}

void negativeSchedulerStepOnly(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  torch::optim::StepLR scheduler(optimizer, /*step_size=*/10);
  for (int i = 0; i < 10; ++i) {
    lossOf(model, x, y).backward();
    scheduler.step();
  }
}

// The shape of the official LibTorch examples (mnist, dcgan): model->zero_grad() per network,
// an evaluation loop under NoGradGuard, losses logged with item().
void negativeDcganStyle(Net &generator, Net &discriminator, const torch::Tensor &real,
                        const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  std::vector<float> history;
  for (int64_t batch_index = 0; batch_index < 100; ++batch_index) {
    discriminator->zero_grad();
    auto d_loss = torch::relu(1 - discriminator->forward(real)).mean() +
                  torch::relu(1 + discriminator->forward(generator->forward(noise).detach())).mean();
    d_loss.backward();
    d_opt.step();

    generator->zero_grad();
    auto g_loss = -discriminator->forward(generator->forward(noise)).mean();
    g_loss.backward();
    g_opt.step();
    history.push_back(g_loss.item<float>());
  }
}

void negativeMnistStyle(Net &model, torch::Device device) {
  auto loader = torch::data::make_data_loader(
      ToyDataset().map(torch::data::transforms::Stack<>()), /*batch_size=*/8);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  for (size_t epoch = 1; epoch <= 10; ++epoch) {
    model->train();
    for (auto &batch : *loader) {
      auto data = batch.data.to(device), targets = batch.target.to(device);
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model->forward(data), targets);
      loss.backward();
      optimizer.step();
    }
    torch::NoGradGuard no_grad;
    model->eval();
    double test_loss = 0;
    for (const auto &batch : *loader)
      test_loss += torch::mse_loss(model->forward(batch.data), batch.target).item<double>();
  }
}

// ---- several optimizers, each zeroed by name -----------------------------------------------

// A GAN step that zeroes the discriminator's optimizer but not the generator's: the
// generator keeps stepping with the sum of every earlier iteration's gradients.
void positiveGanOneOptimizerNotZeroed(Net &generator, Net &discriminator, int64_t n,
                                      int64_t steps) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int64_t step = 0; step < steps; ++step) {
    d_opt.zero_grad();
    auto fake = generator->forward(torch::randn({n, 4}));
    auto d_loss = torch::mse_loss(discriminator->forward(fake.detach()), torch::zeros({n, 1}));
    d_loss.backward();
    d_opt.step();
    auto g_loss = torch::mse_loss(discriminator->forward(fake), torch::ones({n, 1}));
    g_loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates into gradients of 'g_opt' that are never zeroed in this training loop; consider calling g_opt.zero_grad() before this step [torch-backward-without-zero-grad]
    // CHECK: :[[@LINE-9]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    g_opt.step();
  }
}

struct GanTrainer {
  GanTrainer(Net g, Net d)
      : generator(g), discriminator(d),
        g_opt_(g->parameters(), torch::optim::AdamOptions(2e-4)),
        d_opt_(d->parameters(), torch::optim::AdamOptions(2e-4)) {}

  void positiveMembersOnlyGeneratorZeroed(const torch::Tensor &noise, int64_t steps) {
    for (int64_t step = 0; step < steps; ++step) {
      auto d_loss = discriminator->forward(generator->forward(noise).detach()).mean();
      d_loss.backward();
      // CHECK: :[[@LINE-1]]:7: warning: backward() accumulates into gradients of 'd_opt_' that are never zeroed in this training loop; consider calling d_opt_.zero_grad() before this step
      // CHECK: :[[@LINE-4]]:5: note: loop starts here
      // CHECK: :[[@LINE+1]]:7: note: optimizer step is here
      d_opt_.step();
      this->g_opt_.zero_grad();
      auto g_loss = -discriminator->forward(generator->forward(noise)).mean();
      g_loss.backward();
      g_opt_.step();
    }
  }

  void negativeMembersBothZeroed(const torch::Tensor &noise, int64_t steps) {
    for (int64_t step = 0; step < steps; ++step) {
      d_opt_.zero_grad();
      discriminator->forward(generator->forward(noise).detach()).mean().backward();
      d_opt_.step();
      g_opt_.zero_grad();
      (-discriminator->forward(generator->forward(noise)).mean()).backward();
      g_opt_.step();
    }
  }

  Net generator, discriminator;
  torch::optim::Adam g_opt_, d_opt_;
};

void negativeGanBothOptimizersZeroed(Net &generator, Net &discriminator,
                                     const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int step = 0; step < 100; ++step) {
    d_opt.zero_grad();
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    g_opt.zero_grad();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
}

// One optimizer stepped twice per iteration and zeroed once is a different question (and
// usually intended): this rule only compares distinct optimizers.
void negativeOneOptimizerSteppedTwice(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
    torch::mse_loss(model->forward(x * 2), y).backward();
    optimizer.step();
  }
}

void zero_grads(torch::optim::Optimizer &a, torch::optim::Optimizer &b) {
  a.zero_grad();
  b.zero_grad();
}

void clearAll(Net &generator, Net &discriminator) {
  generator->zero_grad();
  discriminator->zero_grad();
}

void resetGrads(torch::optim::Optimizer &opt) { opt.zero_grad(); }

// The discriminator's optimizer zeroed through a helper handed it, the generator's never.
void positiveGanOtherOptimizerZeroedByHelper(Net &generator, Net &discriminator, const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int step = 0; step < 100; ++step) {
    resetGrads(d_opt);
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates into gradients of 'g_opt' that are never zeroed in this training loop; consider calling g_opt.zero_grad() before this step [torch-backward-without-zero-grad]
    // CHECK: :[[@LINE-6]]:3: note: loop starts here
    // CHECK: :[[@LINE+1]]:5: note: optimizer step is here
    g_opt.step();
  }
}

// Each optimizer zeroed through the helper.
void negativeGanBothZeroedByHelper(Net &generator, Net &discriminator, const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int step = 0; step < 100; ++step) {
    resetGrads(d_opt);
    resetGrads(g_opt);
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
}

void negativeGanZeroedThroughHelpers(Net &generator, Net &discriminator,
                                     const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int step = 0; step < 100; ++step) {
    zero_grads(d_opt, g_opt);
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
  for (int step = 0; step < 100; ++step) {
    d_opt.zero_grad();
    clearAll(generator, discriminator);
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
}

// One optimizer zeroed by name, the other cleared through the module or by hand: either may
// cover the other optimizer's parameters, so the loop is trusted.
void negativeGanOtherClearings(Net &generator, Net &discriminator, const torch::Tensor &noise) {
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  for (int step = 0; step < 100; ++step) {
    d_opt.zero_grad();
    generator->zero_grad();
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
  for (int step = 0; step < 100; ++step) {
    d_opt.zero_grad();
    for (auto &p : generator->parameters())
      if (p.grad().defined())
        p.mutable_grad().zero_();
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt.step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
}

// Optimizers reached through a pointer or a reference may alias: no identity to compare.
void negativeGanOptimizerThroughPointer(Net &generator, Net &discriminator,
                                        torch::optim::Optimizer &g_opt,
                                        const torch::Tensor &noise) {
  auto d_opt = std::make_unique<torch::optim::Adam>(discriminator->parameters());
  torch::optim::Adam &d_ref = *d_opt;
  for (int step = 0; step < 100; ++step) {
    d_ref.zero_grad();
    discriminator->forward(generator->forward(noise).detach()).mean().backward();
    d_opt->step();
    (-discriminator->forward(generator->forward(noise)).mean()).backward();
    g_opt.step();
  }
}
