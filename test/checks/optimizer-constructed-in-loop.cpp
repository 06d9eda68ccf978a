// RUN: %tidy --checks='-*,torch-optimizer-constructed-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-optimizer-constructed-in-loop' --fix-notes %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
// Plain --fix leaves a note's fix alone.
// RUN: cp %s %t.plain.cpp
// RUN: %tidy --checks='-*,torch-optimizer-constructed-in-loop' --fix %t.plain.cpp -- %torch_flags > /dev/null 2>&1
// RUN: diff %s %t.plain.cpp
#include <torch/torch.h>

#include <memory>
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

void positiveRangeForOverDataLoader(Net &net) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    // CHECK: :[[@LINE+1]]:24: warning: optimizer 'optimizer' is constructed in every iteration of a loop that steps it: its state (moment estimates, momentum buffers, step count) starts over at every step; consider constructing it once before the loop [torch-optimizer-constructed-in-loop]
    torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
  }
}
// FIXED: void positiveRangeForOverDataLoader(
// FIXED: auto loader = makeLoader();
// FIXED-NEXT: torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));

void positiveWhileLoopMakeUnique(Net &net, torch::Tensor x, torch::Tensor y, int steps) {
  int step = 0;
  while (step++ < steps) {
    auto optimizer = std::make_unique<torch::optim::RMSprop>(net->parameters(), torch::optim::RMSpropOptions(1e-3));
    // CHECK: :[[@LINE-1]]:22: warning: optimizer 'optimizer' is constructed in every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer->zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer->step();
  }
}
// FIXED: void positiveWhileLoopMakeUnique(
// FIXED: int step = 0;
// FIXED-NEXT: auto optimizer = std::make_unique<torch::optim::RMSprop>(net->parameters(), torch::optim::RMSpropOptions(1e-3));

void positiveForIndexSgdWithMomentum(Net &net, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 100; ++i) {
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    // CHECK: :[[@LINE-1]]:23: warning: optimizer 'sgd' is constructed in every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    sgd.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    sgd.step();
  }
}

void positiveAssignedToOuterPointer(Net &net, torch::Tensor x, torch::Tensor y) {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  for (int i = 0; i < 100; ++i) {
    optimizer = std::make_unique<torch::optim::Adam>(net->parameters());
    // CHECK: :[[@LINE-1]]:17: warning: optimizer 'optimizer' is constructed in every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer->zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer->step();
  }
}

// A per-step helper that builds its own optimizer, called once per batch.
void trainStep(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::AdamW optimizer(net->parameters(), torch::optim::AdamWOptions(1e-3));
  // CHECK: :[[@LINE-1]]:23: warning: optimizer 'optimizer' is constructed in every iteration
  optimizer.zero_grad();
  torch::mse_loss(net->forward(x), y).backward();
  optimizer.step();
}
void positiveHelperCalledFromLoop(Net &net) {
  auto loader = makeLoader();
  for (auto &batch : *loader)
    trainStep(net, batch.data, batch.target);
  // CHECK: :[[@LINE-1]]:5: note: the function that constructs it is called in every iteration of this loop
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
}

void stepHelper(torch::optim::Optimizer &optimizer) { optimizer.step(); }
void positiveSteppedThroughHelper(Net &net, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    torch::optim::Adagrad optimizer(net->parameters());
    // CHECK: :[[@LINE-1]]:27: warning: optimizer 'optimizer' is constructed in every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    stepHelper(optimizer);
  }
}

class Trainer {
public:
  explicit Trainer(Net net) : net_(std::move(net)) {}
  void fit(torch::Tensor x, torch::Tensor y, int epochs) {
    for (int epoch = 0; epoch < epochs; ++epoch) {
      torch::optim::Adam optimizer(net_->parameters(), torch::optim::AdamOptions(lr_));
      // CHECK: :[[@LINE-1]]:26: warning: optimizer 'optimizer' is constructed in every iteration
      // CHECK: :[[@LINE-3]]:5: note: loop starts here
      optimizer.zero_grad();
      torch::mse_loss(net_->forward(x), y).backward();
      optimizer.step();
    }
  }

private:
  Net net_;
  double lr_ = 1e-3;
};

template <typename Model>
void positiveTemplateInstantiated(Model &net, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    torch::optim::Adam optimizer(net->parameters());
    // CHECK: :[[@LINE-1]]:24: warning: optimizer 'optimizer' is constructed in every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer.step();
  }
}
template void positiveTemplateInstantiated<Net>(Net &, torch::Tensor, torch::Tensor);

void positiveLambda(Net &net, std::vector<torch::Tensor> &xs, torch::Tensor y) {
  auto step = [&](const torch::Tensor &x) {
    torch::optim::Adam optimizer(net->parameters());
    // CHECK: :[[@LINE-1]]:24: warning: optimizer 'optimizer' is constructed in every iteration
    optimizer.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer.step();
  };
  for (const auto &x : xs)
    step(x);
  // CHECK: :[[@LINE-1]]:5: note: the function that constructs it is called in every iteration of this loop
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
}

// ---- negatives ----------------------------------------------------------------------------

void negativeConstructedOnce(Net &net) {
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));
  auto loader = makeLoader();
  std::vector<float> losses;
  for (auto &batch : *loader) {
    net->zero_grad();
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<float>());
  }
}

void negativeHyperParameterSweep(torch::Tensor x, torch::Tensor y) {
  for (double lr : {1e-2, 1e-3, 1e-4}) {
    Net net;
    torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(lr));
    for (int step = 0; step < 100; ++step) {
      optimizer.zero_grad();
      torch::mse_loss(net->forward(x), y).backward();
      optimizer.step();
    }
  }
}

void negativeCrossValidationFoldRebuildsTheModel(Net &net, std::vector<torch::Tensor> &folds, torch::Tensor y) {
  for (auto &fold : folds) {
    net = Net();
    torch::optim::Adam optimizer(net->parameters());
    optimizer.zero_grad();
    torch::mse_loss(net->forward(fold), y).backward();
    optimizer.step();
  }
}

void negativeRebuiltPerEpochForANewLearningRate(Net &net) {
  auto loader = makeLoader();
  double lr = 1e-2;
  for (int epoch = 0; epoch < 10; ++epoch) {
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(lr).momentum(0.9));
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      torch::mse_loss(net->forward(batch.data), batch.target).backward();
      optimizer.step();
    }
    lr *= 0.5;
  }
}

void negativeStatelessSgd(Net &net, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 10; ++i) {
    torch::optim::SGD optimizer(net->parameters(), 0.01);
    optimizer.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer.step();
  }
}

void negativeRebuiltEveryKSteps(Net &net, torch::Tensor x, torch::Tensor y) {
  auto optimizer = std::make_unique<torch::optim::Adam>(net->parameters());
  for (int step = 0; step < 1000; ++step) {
    if (step % 100 == 0)
      optimizer = std::make_unique<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-3 / (1 + step)));
    optimizer->zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer->step();
  }
}

void negativeNeverStepped(std::vector<Net> &nets) {
  std::vector<std::unique_ptr<torch::optim::Adam>> optimizers;
  for (auto &net : nets)
    optimizers.push_back(std::make_unique<torch::optim::Adam>(net->parameters()));
}

void negativeOneOptimizerPerModelInAnEnsemble(std::vector<Net> &nets, torch::Tensor x, torch::Tensor y) {
  for (auto &net : nets) {
    torch::optim::Adam optimizer(net->parameters());
    for (int step = 0; step < 100; ++step) {
      optimizer.zero_grad();
      torch::mse_loss(net->forward(x), y).backward();
      optimizer.step();
    }
  }
}
