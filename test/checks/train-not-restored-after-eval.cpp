// RUN: %tidy --checks='-*,torch-train-not-restored-after-eval' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-train-not-restored-after-eval' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <cstdio>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc(register_module("fc", torch::nn::Linear(4, 8))), drop(register_module("drop", torch::nn::Dropout(0.5))),
        out(register_module("out", torch::nn::Linear(8, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return out(drop(torch::relu(fc(x)))); }
  torch::nn::Linear fc;
  torch::nn::Dropout drop;
  torch::nn::Linear out;
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

float validate(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  model->eval();
  // CHECK: :[[@LINE-1]]:3: warning: 'model' is put in evaluation mode here and not back in training mode before the next training step: dropout stays off and batch norm keeps using its running statistics; consider calling model->train() at the start of each training phase [torch-train-not-restored-after-eval]
  // CHECK: note: evaluation called here
  // CHECK: note: next training step
  torch::NoGradGuard no_grad;
  return torch::mse_loss(model->forward(x), y).item<float>();
}

void trainEpoch(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x, const torch::Tensor &y) {
  for (int b = 0; b < 10; ++b) {
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
  }
}

void trainEpochInTrainingMode(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x,
                              const torch::Tensor &y) {
  model->train();
  trainEpoch(model, optimizer, x, y);
}

// ---- positives ----------------------------------------------------------------------------

void positiveEpochLoopWithValidation(Net &model, torch::optim::Adam &optimizer, torch::Tensor vx, torch::Tensor vy) {
  std::vector<float> history;
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto loader = makeLoader();
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model->forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
    }
    model->eval();
    // CHECK: :[[@LINE-1]]:5: warning: 'model' is put in evaluation mode here and not back in training mode
    // CHECK: :[[@LINE-5]]:7: note: next training step
    torch::NoGradGuard no_grad;
    history.push_back(torch::mse_loss(model->forward(vx), vy).item<float>());
  }
}
// FIXED: void positiveEpochLoopWithValidation(
// FIXED: for (int epoch = 0; epoch < 10; ++epoch) {
// FIXED-NEXT: model->train();

void positiveValidationHelper(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  int epoch = 0;
  while (epoch++ < 10) {
    trainEpoch(model, optimizer, x, y);
    float loss = validate(model, x, y);
    (void)loss;
  }
}

// Validation every few epochs: after the first one, training continues in evaluation mode.
void positiveValidationEveryFewEpochs(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 100; ++epoch) {
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
    if (epoch % 10 == 0) {
      model->eval();
      // CHECK: :[[@LINE-1]]:7: warning: 'model' is put in evaluation mode here
      // CHECK: :[[@LINE-5]]:5: note: next training step
      torch::NoGradGuard no_grad;
      (void)model->forward(x).sum().item<float>();
    }
  }
}
// FIXED: void positiveValidationEveryFewEpochs(
// FIXED: for (int epoch = 0; epoch < 100; ++epoch) {
// FIXED-NEXT: model->train();

class Trainer {
public:
  explicit Trainer(Net net) : net_(std::move(net)), optimizer_(net_->parameters(), 0.1) {}
  void fit(const torch::Tensor &x, const torch::Tensor &y, int epochs) {
    for (int epoch = 0; epoch < epochs; ++epoch) {
      optimizer_.zero_grad();
      torch::mse_loss(net_->forward(x), y).backward();
      optimizer_.step();
      net_->eval();
      // CHECK: :[[@LINE-1]]:7: warning: 'net_' is put in evaluation mode here
      // CHECK: :[[@LINE-4]]:7: note: next training step
      torch::NoGradGuard no_grad;
      losses_.push_back(torch::mse_loss(net_->forward(x), y).item<float>());
    }
  }

private:
  Net net_;
  torch::optim::SGD optimizer_;
  std::vector<float> losses_;
};

template <typename Model> void positiveTemplate(Model &model, torch::optim::SGD &optimizer, torch::Tensor x) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    model->forward(x).sum().backward();
    optimizer.step();
    model->eval();
    // CHECK: :[[@LINE-1]]:5: warning: 'model' is put in evaluation mode here
    // CHECK: :[[@LINE-4]]:5: note: next training step
    torch::NoGradGuard no_grad;
    (void)model->forward(x);
  }
}
template void positiveTemplate<Net>(Net &, torch::optim::SGD &, torch::Tensor);

// ---- negatives ----------------------------------------------------------------------------

void negativeTrainAtTopOfEpoch(Net &model, torch::optim::Adam &optimizer, torch::Tensor vx, torch::Tensor vy) {
  std::vector<float> history;
  for (int epoch = 0; epoch < 10; ++epoch) {
    model->train();
    auto loader = makeLoader();
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      torch::mse_loss(model->forward(batch.data), batch.target).backward();
      optimizer.step();
    }
    model->eval();
    torch::NoGradGuard no_grad;
    history.push_back(torch::mse_loss(model->forward(vx), vy).item<float>());
  }
}

void negativeTrainInTrainingHelper(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    trainEpochInTrainingMode(model, optimizer, x, y);
    model->eval();
    torch::NoGradGuard no_grad;
    (void)model->forward(x);
  }
}

void negativeTrainAfterValidation(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    trainEpoch(model, optimizer, x, y);
    model->eval();
    {
      torch::NoGradGuard no_grad;
      (void)model->forward(x);
    }
    model->train(true);
  }
}

// A separate evaluation copy of the model goes to eval mode, never the trained one.
void negativeSeparateEvalModel(Net &model, Net &eval_model, torch::optim::SGD &optimizer, torch::Tensor x,
                               torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    trainEpoch(model, optimizer, x, y);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < model->parameters().size(); ++i)
      eval_model->parameters()[i].copy_(model->parameters()[i]);
    eval_model->eval();
    (void)eval_model->forward(x);
  }
}

// A frozen feature extractor kept in eval mode while the head trains.
void negativeFrozenEncoder(Net &encoder, Net &head, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    encoder->eval();
    head->train();
    optimizer.zero_grad();
    torch::Tensor features;
    {
      torch::NoGradGuard no_grad;
      features = encoder->forward(x);
    }
    torch::mse_loss(head->forward(features.repeat({1, 4}).narrow(1, 0, 4)), y).backward();
    optimizer.step();
  }
}

// Evaluation after training is over.
void negativeTestAfterTraining(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch)
    trainEpoch(model, optimizer, x, y);
  model->eval();
  torch::NoGradGuard no_grad;
  std::vector<float> predictions;
  for (int i = 0; i < 4; ++i)
    predictions.push_back(model->forward(x).sum().item<float>());
}

// A validation helper that switches back to training mode itself.
float validateAndRestore(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  model->eval();
  torch::NoGradGuard no_grad;
  float loss = torch::mse_loss(model->forward(x), y).item<float>();
  model->train();
  return loss;
}

void negativeHelperRestores(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    trainEpoch(model, optimizer, x, y);
    (void)validateAndRestore(model, x, y);
  }
}

// The same in a lambda that captures the model.
void negativeLambdaRestores(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  auto validate = [&]() {
    model->eval();
    torch::NoGradGuard no_grad;
    float loss = torch::mse_loss(model->forward(x), y).item<float>();
    model->train();
    return loss;
  };
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
    std::printf("%f\n", validate());
  }
}

// A lambda that evaluates and leaves the model in evaluation mode.
void positiveLambdaDoesNotRestore(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  auto validate = [&]() {
    model->eval();
    // CHECK: :[[@LINE-1]]:5: warning: 'model' is put in evaluation mode here
    torch::NoGradGuard no_grad;
    return torch::mse_loss(model->forward(x), y).item<float>();
  };
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
    std::printf("%f\n", validate());
  }
}

// A ModuleHolder taken by value is a copy sharing the module: its eval() is the caller's model's.
float validateByValue(Net model, const torch::Tensor &x, const torch::Tensor &y) {
  model->eval();
  // CHECK: :[[@LINE-1]]:3: warning: 'model' is put in evaluation mode here and not back in training mode
  // CHECK: note: evaluation called here
  // CHECK: note: next training step
  torch::NoGradGuard no_grad;
  return torch::mse_loss(model->forward(x), y).item<float>();
}

void positiveValidationByValue(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    trainEpoch(model, optimizer, x, y);
    std::printf("%f\n", validateByValue(model, x, y));
  }
}

// A fold's helper trains, then tests with eval(), two calls below the fold loop: from the second
// fold on the model trains in evaluation mode (RobbinDG/SLI-App's K-fold cross-validation).
float testFold(Net model, const torch::Tensor &x, const torch::Tensor &y) {
  model->eval();
  // CHECK: :[[@LINE-1]]:3: warning: 'model' is put in evaluation mode here and not back in training mode
  // CHECK: note: evaluation called here
  // CHECK: note: next training step
  torch::NoGradGuard no_grad;
  return torch::mse_loss(model->forward(x), y).item<float>();
}
float trainFold(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x, const torch::Tensor &y) {
  trainEpoch(model, optimizer, x, y);
  return testFold(model, x, y);
}
void positiveFoldTrainsThenTests(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int fold = 0; fold < 5; ++fold)
    std::printf("%f\n", trainFold(model, optimizer, x, y));
}

// The same, but the fold's training starts with train(): every fold trains in training mode.
float trainFoldInTrainingMode(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x,
                              const torch::Tensor &y) {
  trainEpochInTrainingMode(model, optimizer, x, y);
  return validate(model, x, y);
}
void negativeFoldStartsWithTrain(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int fold = 0; fold < 5; ++fold)
    std::printf("%f\n", trainFoldInTrainingMode(model, optimizer, x, y));
}

// Tested first, then trained with train() restored by the helper: nothing to report.
float testThenTrain(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x, const torch::Tensor &y) {
  float before = validateAndRestore(model, x, y);
  trainEpoch(model, optimizer, x, y);
  return before;
}
void negativeTestThenTrainFolds(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int fold = 0; fold < 5; ++fold)
    std::printf("%f\n", testThenTrain(model, optimizer, x, y));
}

// Tested once after all folds: no training step follows.
void negativeTestAfterFolds(Net &model, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int fold = 0; fold < 5; ++fold)
    trainEpoch(model, optimizer, x, y);
  std::printf("%f\n", testFold(model, x, y));
}
