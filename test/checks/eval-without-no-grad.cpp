// RUN: %tidy --checks='-*,torch-eval-without-no-grad' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --fix %t.cpp -- %torch_flags >/dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp

#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct PlainNet : torch::nn::Module {
  PlainNet() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(const torch::Tensor &x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

struct PairDataset : torch::data::datasets::Dataset<PairDataset> {
  torch::data::Example<> get(size_t) override {
    return {torch::randn({4}), torch::zeros({}, torch::kLong)};
  }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(PairDataset().map(torch::data::transforms::Stack<>()), 2);
}

// ---- positives ---------------------------------------------------------------------------

void positiveEvalRangeForLoader(Net &model) {
  auto loader = makeLoader();
  model->eval();
  int64_t correct = 0;
  for (auto &batch : *loader) {
    auto output = model->forward(batch.data);
    // CHECK: :[[@LINE-1]]:19: warning: model forward runs with autograd enabled in an evaluation loop; consider 'torch::NoGradGuard no_grad;' (or c10::InferenceMode) before the loop [torch-eval-without-no-grad]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    correct += output.argmax(1).eq(batch.target).sum().item<int64_t>();
  }
  std::printf("correct: %ld\n", static_cast<long>(correct));
}
// The guard scopes the rest of the block, which only prints.
// FIXED: int64_t correct = 0;
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: for (auto &batch : *loader) {

void positiveInferenceNoEvalCallOperator(Net &model, const std::vector<torch::Tensor> &inputs) {
  std::vector<torch::Tensor> predictions;
  for (const auto &x : inputs)
    predictions.push_back(model(x).argmax(1));
  // CHECK: :[[@LINE-1]]:27: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  std::printf("%zu\n", predictions.size());
}
// A tensor container is still used after the loop: no fix.
// FIXED: std::vector<torch::Tensor> predictions;
// FIXED-NEXT: for (const auto &x : inputs)

template <typename Loader> double evaluateTemplate(Net &model, Loader &loader) {
  model->eval();
  double loss = 0;
  for (auto &batch : loader) {
    auto output = model->forward(batch.data);
    // CHECK: :[[@LINE-1]]:19: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    loss += torch::nll_loss(output, batch.target).template item<double>();
  }
  return loss;
}

double positiveTemplateInstantiation(Net &model) {
  auto loader = makeLoader();
  return evaluateTemplate(model, *loader);
}

void positiveSharedPtrWhile(std::shared_ptr<PlainNet> net, torch::Tensor x) {
  net->eval();
  int steps = 0;
  while (steps < 10) {
    x = net->forward(x).tanh();
    // CHECK: :[[@LINE-1]]:9: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    ++steps;
  }
}

void positivePlainValueDo(torch::Tensor x) {
  PlainNet net;
  net.eval();
  int i = 0;
  do {
    auto y = net.forward(x);
    // CHECK: :[[@LINE-1]]:14: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    std::printf("%f\n", y.sum().item<float>());
  } while (++i < 3);
}

class Evaluator {
public:
  double run(const std::vector<torch::Tensor> &xs) {
    model_->eval();
    double total = 0;
    for (const auto &x : xs) {
      total += model_->forward(x).sum().item<double>();
      // CHECK: :[[@LINE-1]]:16: warning: model forward runs with autograd enabled
      // CHECK: :[[@LINE-3]]:5: note: loop starts here
      // CHECK: :[[@LINE-6]]:5: note: model put in eval mode here
    }
    return total;
  }

private:
  Net model_;
};

void positiveLambda(Net &model, const std::vector<torch::Tensor> &xs) {
  auto evaluate = [&](const std::vector<torch::Tensor> &batch) {
    for (const auto &x : batch)
      std::printf("%f\n", model(x).mean().item<float>());
    // CHECK: :[[@LINE-1]]:27: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
  };
  evaluate(xs);
}

void positiveTorchScript(torch::jit::Module &module, const std::vector<torch::Tensor> &xs) {
  module.eval();
  for (const auto &x : xs) {
    std::vector<torch::jit::IValue> inputs{x};
    auto out = module.forward(inputs).toTensor();
    // CHECK: :[[@LINE-1]]:16: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    std::printf("%f\n", out.sum().item<float>());
  }
}
// FIXED: module.eval();
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: for (const auto &x : xs) {

torch::Tensor predict(Net &model, const torch::Tensor &x) { return model->forward(x).argmax(1); }

void positiveHelperCalledPerBatch(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (size_t i = 0; i < xs.size(); ++i) {
    auto label = predict(model, xs[i]);
    // CHECK: :[[@LINE-1]]:18: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-7]]:68: note: the model forward runs here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    std::printf("%ld\n", static_cast<long>(label[0].item<int64_t>()));
  }
}

void positiveValidationInsideTrainingEpoch(Net &model, torch::optim::Optimizer &optimizer,
                                           const std::vector<torch::Tensor> &train,
                                           const std::vector<torch::Tensor> &valid) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    model->train();
    for (const auto &x : train) {
      optimizer.zero_grad();
      auto loss = model->forward(x).pow(2).mean();
      loss.backward();
      optimizer.step();
    }
    model->eval();
    double valid_loss = 0;
    for (const auto &x : valid)
      valid_loss += model->forward(x).pow(2).mean().item<double>();
    // CHECK: :[[@LINE-1]]:21: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
    // CHECK: :[[@LINE-6]]:5: note: model put in eval mode here
    std::printf("epoch %d: %f\n", epoch, valid_loss);
  }
}

void positiveGuardAfterForward(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs) {
    auto y = model->forward(x);
    // CHECK: :[[@LINE-1]]:14: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    torch::NoGradGuard no_grad;
    std::printf("%f\n", y.sum().item<float>());
  }
}

void positiveGuardInClosedBlock(Net &model, const std::vector<torch::Tensor> &xs) {
  {
    torch::NoGradGuard no_grad;
    model->forward(xs.front());
  }
  for (const auto &x : xs)
    std::printf("%f\n", model->forward(x).sum().item<float>());
  // CHECK: :[[@LINE-1]]:25: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
}

void positiveGradReenabled(Net &model, const std::vector<torch::Tensor> &xs) {
  torch::NoGradGuard no_grad;
  {
    torch::AutoGradMode enable_grad(true);
    for (const auto &x : xs)
      std::printf("%f\n", model->forward(x).sum().item<float>());
    // CHECK: :[[@LINE-1]]:27: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
  }
}

torch::Tensor positivePredictionsReturnedAfterEval(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  std::vector<torch::Tensor> outputs;
  for (const auto &x : xs)
    outputs.push_back(model->forward(x));
  // CHECK: :[[@LINE-1]]:23: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
  return torch::cat(outputs);
}

void testWithoutGuard(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs)
    std::printf("%f\n", model(x).sum().item<float>());
  // CHECK: :[[@LINE-1]]:25: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
}

void positiveCallerHasNoGuard(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  testWithoutGuard(model, xs);
}

void positiveSequentialBatchInference(torch::nn::Sequential &seq, torch::Tensor data) {
  seq->eval();
  for (int64_t i = 0; i < data.size(0); i += 2) {
    auto out = seq->forward(data.slice(0, i, i + 2));
    // CHECK: :[[@LINE-1]]:16: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-5]]:3: note: model put in eval mode here
    std::printf("%f\n", out.max().item<float>());
  }
}

// ---- negatives ---------------------------------------------------------------------------

void negativeGuardEarlier(Net &model, const std::vector<torch::Tensor> &xs) {
  torch::NoGradGuard no_grad;
  model->eval();
  for (const auto &x : xs)
    std::printf("%f\n", model->forward(x).sum().item<float>());
}

void negativeGuardInsideLoop(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (const auto &x : xs) {
    torch::NoGradGuard no_grad;
    std::printf("%f\n", model->forward(x).sum().item<float>());
  }
}

void negativeInferenceMode(Net &model, const std::vector<torch::Tensor> &xs) {
  c10::InferenceMode guard;
  for (const auto &x : xs)
    std::printf("%f\n", model(x).sum().item<float>());
}

void negativeAutoGradModeOff(Net &model, const std::vector<torch::Tensor> &xs) {
  torch::AutoGradMode disable(false);
  for (const auto &x : xs)
    std::printf("%f\n", model(x).sum().item<float>());
}

void negativeGradModeSetEnabled(Net &model, const std::vector<torch::Tensor> &xs) {
  torch::GradMode::set_enabled(false);
  for (const auto &x : xs)
    std::printf("%f\n", model(x).sum().item<float>());
  torch::GradMode::set_enabled(true);
}

void negativeFrozenParameters(Net &model, const std::vector<torch::Tensor> &xs) {
  for (auto &p : model->parameters())
    p.requires_grad_(false);
  for (const auto &x : xs)
    std::printf("%f\n", model(x).sum().item<float>());
}

template <typename Loader> void testUnderCallerGuard(Net &model, Loader &loader) {
  model->eval();
  int64_t correct = 0;
  for (const auto &batch : loader) {
    auto pred = model->forward(batch.data).argmax(1);
    correct += pred.eq(batch.target).sum().template item<int64_t>();
  }
  std::printf("%ld\n", static_cast<long>(correct));
}

void negativeGuardInCaller(Net &model) {
  auto loader = makeLoader();
  torch::NoGradGuard no_grad;
  testUnderCallerGuard(model, *loader);
}

void negativeFrozenEncoderInTrainingLoop(Net &encoder, Net &head, torch::optim::SGD &optimizer) {
  auto loader = makeLoader();
  encoder->eval();
  head->train();
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto features = encoder->forward(batch.data);
    auto loss = torch::nll_loss(head->forward(features), batch.target);
    loss.backward();
    optimizer.step();
  }
}

void trainStep(Net &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x) {
  optimizer.zero_grad();
  auto loss = model->forward(x).pow(2).mean();
  loss.backward();
  optimizer.step();
}

void negativeBackwardInHelper(Net &model, torch::optim::Optimizer &optimizer,
                              const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs) {
    auto before = model->forward(x).sum().item<float>();
    trainStep(model, optimizer, x);
    std::printf("%f\n", before);
  }
}

void negativeBackwardInLambda(Net &model, torch::optim::Adam &optimizer,
                              const std::vector<torch::Tensor> &xs) {
  auto step = [&](const torch::Tensor &x) {
    optimizer.zero_grad();
    auto loss = model(x).pow(2).mean();
    loss.backward();
    optimizer.step();
    return loss.item<float>();
  };
  for (const auto &x : xs)
    std::printf("%f\n", step(x));
}

void negativeBackpropThroughTime(Net &model, torch::optim::SGD &optimizer,
                                 const std::vector<torch::Tensor> &xs,
                                 const std::vector<torch::Tensor> &ys) {
  optimizer.zero_grad();
  torch::Tensor loss = torch::zeros({});
  for (size_t t = 0; t < xs.size(); ++t)
    loss += torch::mse_loss(model->forward(xs[t]), ys[t]);
  loss.backward();
  optimizer.step();
}

void negativeOutputsStackedThenBackward(Net &model, const std::vector<torch::Tensor> &xs) {
  std::vector<torch::Tensor> outputs;
  for (const auto &x : xs)
    outputs.push_back(model(x));
  auto loss = torch::stack(outputs).pow(2).mean();
  loss.backward();
}

void negativeTruncatedBpttInsideTraining(Net &model, torch::optim::SGD &optimizer,
                                         const std::vector<torch::Tensor> &seqs) {
  for (const auto &seq : seqs) {
    optimizer.zero_grad();
    torch::Tensor h = seq[0];
    for (int64_t t = 1; t < seq.size(0); ++t)
      h = model->forward(h + seq[t]);
    auto loss = h.pow(2).mean();
    loss.backward();
    optimizer.step();
  }
}

torch::Tensor sequenceLoss(Net &model, const torch::Tensor &seq) {
  torch::Tensor loss = torch::zeros({});
  for (int64_t t = 0; t < seq.size(0); ++t)
    loss = loss + model->forward(seq[t]).pow(2).mean();
  return loss;
}

void negativeLossHelperBackpropagatedByCaller(Net &model, torch::optim::SGD &optimizer,
                                              const std::vector<torch::Tensor> &seqs) {
  for (const auto &seq : seqs) {
    optimizer.zero_grad();
    sequenceLoss(model, seq).backward();
    optimizer.step();
  }
}

torch::Tensor negativeUnseenCallerLossHelper(Net &model, const std::vector<torch::Tensor> &xs,
                                             const std::vector<torch::Tensor> &ys) {
  torch::Tensor total = torch::zeros({});
  for (size_t i = 0; i < xs.size(); ++i)
    total += torch::mse_loss(model(xs[i]), ys[i]);
  return total;
}

void negativeInputGradients(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs) {
    auto input = x.clone().requires_grad_(true);
    auto score = model->forward(input).sum();
    auto saliency = torch::autograd::grad({score}, {input})[0];
    std::printf("%f\n", saliency.abs().max().item<float>());
  }
}

struct GeneratorImpl : torch::nn::Module {
  GeneratorImpl() : fc(register_module("fc", torch::nn::Linear(2, 4))) {}
  torch::Tensor forward(torch::Tensor z) { return torch::tanh(fc(z)); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Generator);

void negativeGanStyle(Generator &generator, Net &discriminator, torch::optim::Adam &g_opt,
                      torch::optim::Adam &d_opt) {
  auto loader = makeLoader();
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    int64_t batch_index = 0;
    for (auto &batch : *loader) {
      discriminator->zero_grad();
      auto real_output = discriminator->forward(batch.data);
      auto d_loss_real = torch::relu(1 - real_output).mean();
      d_loss_real.backward();
      auto noise = torch::randn({batch.data.size(0), 2});
      auto fake = generator->forward(noise);
      auto d_loss_fake = torch::relu(1 + discriminator->forward(fake.detach())).mean();
      d_loss_fake.backward();
      d_opt.step();
      generator->zero_grad();
      auto g_loss = -discriminator->forward(fake).mean();
      g_loss.backward();
      g_opt.step();
      if (++batch_index % 100 == 0) {
        auto samples = generator->forward(torch::randn({8, 2}));
        torch::save(samples, "samples.pt");
      }
    }
  }
}

void negativeGradientAccumulation(Net &model, torch::optim::SGD &optimizer,
                                  const std::vector<torch::Tensor> &xs) {
  model->train();
  size_t i = 0;
  for (const auto &x : xs) {
    auto loss = model->forward(x.to(torch::kCPU)).pow(2).mean() / 4;
    loss.backward();
    if (++i % 4 == 0) {
      optimizer.step();
      model->zero_grad();
    }
  }
}

void negativeLbfgsClosure(Net &model, torch::optim::LBFGS &optimizer, const torch::Tensor &x) {
  for (int i = 0; i < 5; ++i) {
    auto closure = [&] {
      optimizer.zero_grad();
      auto loss = model->forward(x).pow(2).mean();
      loss.backward();
      return loss;
    };
    optimizer.step(closure);
  }
}

void negativeLoopWithoutForward(Net &model, torch::nn::Sequential &seq) {
  for (int i = 0; i < 3; ++i)
    seq->push_back(torch::nn::Linear(4, 4));
  for (const auto &p : model->named_parameters())
    std::printf("%s\n", p.key().c_str());
}

torch::Tensor guardedPredict(Net &model, const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  return model->forward(x);
}

void negativeGuardedHelper(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs)
    std::printf("%f\n", guardedPredict(model, x).sum().item<float>());
}

void negativeGuardedLambdaCall(Net &model, const std::vector<torch::Tensor> &xs) {
  auto evaluate = [&] {
    for (const auto &x : xs)
      std::printf("%f\n", model(x).sum().item<float>());
  };
  torch::NoGradGuard no_grad;
  evaluate();
}

void negativeTrainAndTestLikeMnist(Net &model, torch::optim::SGD &optimizer) {
  auto train_loader = makeLoader();
  auto test_loader = makeLoader();
  std::vector<float> losses;
  for (size_t epoch = 1; epoch <= 2; ++epoch) {
    model->train();
    for (auto &batch : *train_loader) {
      optimizer.zero_grad();
      auto output = model->forward(batch.data);
      auto loss = torch::nll_loss(output, batch.target);
      loss.backward();
      optimizer.step();
      losses.push_back(loss.item<float>());
    }
    torch::NoGradGuard no_grad;
    model->eval();
    for (const auto &batch : *test_loader)
      losses.push_back(model->forward(batch.data).sum().item<float>());
  }
}

struct StackImpl : torch::nn::Module {
  StackImpl() {
    for (int i = 0; i < 3; ++i)
      layers->push_back(torch::nn::Linear(4, 4));
    register_module("layers", layers);
  }
  // A module's own forward loops over its layers in whatever mode its caller runs.
  torch::Tensor forward(torch::Tensor x) {
    for (const auto &layer : *layers)
      x = layer->as<torch::nn::Linear>()->forward(x).relu();
    return x;
  }
  double evaluate(const std::vector<torch::Tensor> &xs) {
    eval();
    double total = 0;
    for (const auto &x : xs)
      total += forward(x).sum().item<double>();
    // CHECK: :[[@LINE-1]]:16: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
    // CHECK: :[[@LINE-6]]:5: note: model put in eval mode here
    return total;
  }
  torch::nn::ModuleList layers;
};
TORCH_MODULE(Stack);

void negativeLossModuleOnStoredPredictions(const std::vector<torch::Tensor> &predictions,
                                           const std::vector<torch::Tensor> &targets) {
  torch::nn::CrossEntropyLoss criterion;
  double total = 0;
  for (size_t i = 0; i < predictions.size(); ++i)
    total += criterion(predictions[i], targets[i]).item<double>();
  std::printf("%f\n", total);
}

torch::Tensor negativeUnrolledSequenceReturned(Net &cell, const std::vector<torch::Tensor> &steps) {
  std::vector<torch::Tensor> outputs;
  for (const auto &x : steps)
    outputs.push_back(cell->forward(x));
  return torch::stack(outputs);
}

// Policy gradient: each step's log-probability is stashed by a lambda and backpropagated
// when the episode ends, outside the step loop.
void negativeEpisodeStepsBackpropagatedLater(Net &policy, torch::optim::Adam &optimizer) {
  std::vector<torch::Tensor> log_probs;
  std::vector<float> rewards;
  auto act = [&](const torch::Tensor &state) {
    auto probs = torch::softmax(policy->forward(state), -1);
    auto action = probs.multinomial(1).item<int64_t>();
    log_probs.push_back(probs[action].log());
    return action;
  };
  auto finishEpisode = [&] {
    auto loss = -torch::stack(log_probs).sum();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    log_probs.clear();
    rewards.clear();
  };
  for (int episode = 0; episode < 10; ++episode) {
    auto state = torch::randn({4});
    for (int t = 0; t < 100; ++t) {
      auto action = act(state);
      rewards.push_back(static_cast<float>(action));
      state = torch::randn({4});
    }
    finishEpisode();
  }
}

// Defined in another translation unit.
void trainOnBatch(Net &model, const torch::Tensor &loss);

void negativeOpaqueTrainingHelper(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs) {
    auto loss = model->forward(x).pow(2).mean();
    trainOnBatch(model, loss);
  }
}

void negativeChecksThatOutputsRecordGraph(Net &model, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs) {
    auto y = model->forward(x);
    if (!y.requires_grad() || !y.grad_fn())
      std::printf("no graph\n");
  }
}

// Function templates nobody instantiates (the pytorch/examples mnist shape): calls with
// dependent arguments stay unresolved and are recognised on module-typed objects.
template <typename DataLoader>
void positiveUninstantiatedEvalLoop(Net &model, torch::Device device, DataLoader &data_loader,
                                    size_t dataset_size) {
  model->eval();
  double test_loss = 0;
  int64_t num_correct = 0;
  for (const auto &batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);
    // CHECK: :[[@LINE-1]]:19: warning: model forward runs with autograd enabled
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE-8]]:3: note: model put in eval mode here
    test_loss += torch::nll_loss(output, targets, {}, torch::Reduction::Sum).template item<float>();
    num_correct += output.argmax(1).eq(targets).sum().template item<int64_t>();
  }
  test_loss /= dataset_size;
  std::printf("loss %.4f acc %.3f\n", test_loss, static_cast<double>(num_correct) / dataset_size);
}
// FIXED: int64_t num_correct = 0;
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: for (const auto &batch : data_loader) {

template <typename DataLoader>
void positiveUninstantiatedCallOperator(Net &model, DataLoader &loader,
                                        std::vector<torch::Tensor> &preds) {
  model->eval();
  for (auto &batch : loader)
    preds.push_back(model(batch.data).argmax(1));
  // CHECK: :[[@LINE-1]]:21: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  // CHECK: :[[@LINE-5]]:3: note: model put in eval mode here
}

template <typename DataLoader>
void negativeUninstantiatedEvalLoopWithGuard(Net &model, torch::Device device,
                                             DataLoader &data_loader) {
  torch::NoGradGuard no_grad;
  model->eval();
  double test_loss = 0;
  for (const auto &batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);
    test_loss += torch::nll_loss(output, targets).template item<float>();
  }
}

template <typename DataLoader>
void negativeUninstantiatedTrainLoop(Net &model, torch::Device device, DataLoader &data_loader,
                                     torch::optim::Optimizer &optimizer) {
  model->train();
  for (auto &batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();
  }
}

// backward() on a loss of dependent type is still a backward pass.
template <typename DataLoader>
void negativeUninstantiatedDependentBackward(Net &model, DataLoader &data_loader) {
  model->eval();
  for (auto &batch : data_loader) {
    auto loss = model->forward(batch.data).sum();
    loss.backward();
  }
}

template <typename DataLoader>
void negativeUninstantiatedBackpropAfterLoop(Net &model, DataLoader &data_loader) {
  model->eval();
  std::vector<torch::Tensor> outputs;
  for (auto &batch : data_loader)
    outputs.push_back(model->forward(batch.data));
  torch::stack(outputs).sum().backward();
}

// A model of dependent type is known by its calls' names, as in every check: eval(), then
// forward() in a loop that trains nothing.
template <typename Model, typename DataLoader>
void positiveUninstantiatedDependentModel(Model &model, DataLoader &data_loader) {
  model.eval();
  for (auto &batch : data_loader)
    auto output = model.forward(batch.data);
  // CHECK: :[[@LINE-1]]:19: warning: model forward runs with autograd enabled
}

// An instantiated template is analysed through its instantiation, once.
template <typename Inputs>
void positiveInstantiatedTemplate(Net &model, const Inputs &inputs) {
  model->eval();
  for (const auto &x : inputs)
    auto y = model->forward(x);
  // CHECK: :[[@LINE-1]]:14: warning: model forward runs with autograd enabled
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  // CHECK: :[[@LINE-5]]:3: note: model put in eval mode here
}

void instantiateTemplate(Net &model, const std::vector<torch::Tensor> &xs) {
  positiveInstantiatedTemplate(model, xs);
}

// ---- the shared autograd model: flow, not names; the note names the module that runs

void positiveEvalLoopBeforeTrainingLoopReusingItsVariables(Net &model, torch::optim::SGD &opt,
                                                             const torch::Tensor &x, const torch::Tensor &y) {
  torch::Tensor output, loss;
  model->eval();
  float total = 0;
  for (int i = 0; i < 3; ++i) {
    output = model->forward(x);
    // CHECK: :[[@LINE-1]]:14: warning: model forward runs with autograd enabled in an evaluation loop; consider 'torch::NoGradGuard no_grad;' (or c10::InferenceMode) before the loop [torch-eval-without-no-grad]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:3: note: model put in eval mode here
    loss = torch::mse_loss(output, y);
    total += loss.item<float>();
  }
  model->train();
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    output = model->forward(x);
    loss = torch::mse_loss(output, y);
    loss.backward();
    opt.step();
  }
  std::printf("%f\n", total);
}

void negativeLoopLossBackpropagatedAfterConditionalScaling(Net &model, const torch::Tensor &x,
                                                            const torch::Tensor &y, bool scale) {
  torch::Tensor loss = torch::zeros({});
  for (int t = 0; t < 3; ++t)
    loss = loss + torch::mse_loss(model->forward(x), y);
  if (scale)
    loss = loss * 0.5;
  loss.backward();
}

void negativeLoopLossRescaledThenBackpropagated(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::Tensor loss = torch::zeros({});
  for (int t = 0; t < 3; ++t)
    loss = loss + torch::mse_loss(model->forward(x), y);
  loss = loss / 3;
  loss.backward();
}

torch::Tensor predictWith(Net &net, const torch::Tensor &x) { return net->forward(x); }

void positiveNoteNamesTheModuleRun(Net &student, Net &teacher, const std::vector<torch::Tensor> &inputs) {
  student->eval();
  teacher->eval();
  std::vector<float> scores;
  for (const auto &x : inputs)
    scores.push_back(predictWith(student, x).sum().item<float>());
  // CHECK: :[[@LINE-1]]:22: warning: model forward runs with autograd enabled in an evaluation loop; consider 'torch::NoGradGuard no_grad;' (or c10::InferenceMode) before the loop [torch-eval-without-no-grad]
  // CHECK: :[[@LINE-9]]:70: note: the model forward runs here
  // CHECK: :[[@LINE-4]]:3: note: loop starts here
  // CHECK: :[[@LINE-8]]:3: note: model put in eval mode here
}

// A module method other than forward that loops over chunks through a sub-module is part of
// the module's computation (Omegastick/pytorch-cpp-rl forward_gru), whoever calls it.
struct ChunkedGruImpl : torch::nn::Module {
  ChunkedGruImpl() : gru(register_module("gru", torch::nn::GRU(5, 10))) {}
  torch::Tensor forward_gru(torch::Tensor x, torch::Tensor h, const std::vector<int64_t> &cuts) {
    std::vector<torch::Tensor> outs;
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      outs.push_back(std::get<0>(gru(x.slice(0, cuts[i], cuts[i + 1]), h)));
    return torch::cat(outs, 0);
  }
  torch::nn::GRU gru;
};
TORCH_MODULE(ChunkedGru);
torch::Tensor negativeModuleHelperLoop(ChunkedGru &net) {
  return net->forward_gru(torch::rand({12, 1, 5}), torch::rand({1, 1, 10}), {0, 6, 12});
}

// The batch loop trains through the training step its only caller passes as a std::function
// (sotlampr/bert-linux-gnu): not an evaluation loop.
void batchLoopWithCallback(Net &net, std::vector<torch::Tensor> &batches, std::function<void(torch::Tensor)> callback) {
  for (auto &b : batches) {
    auto loss = net->forward(b).pow(2).mean();
    callback(loss);
  }
}
void negativeTrainingStepThroughStdFunction(Net &net, std::vector<torch::Tensor> &batches,
                                            torch::optim::Optimizer &opt) {
  auto callback = [&](torch::Tensor loss) {
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  batchLoopWithCallback(net, batches, callback);
}

// The last output leaves the loop and is backpropagated, after it, by the step the only
// caller passes as a std::function: a guard before the loop would make that backward() throw.
void lastOutputToCallback(Net &net, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
                          std::function<void(torch::Tensor)> done) {
  torch::Tensor last;
  for (auto &b : batches) {
    last = net->forward(b).mean();
    losses.push_back(last.item<float>());
  }
  done(last);
}
void negativeBackwardAfterLoopThroughStdFunction(Net &net, std::vector<torch::Tensor> &batches,
                                                 std::vector<float> &losses, torch::optim::Optimizer &opt) {
  lastOutputToCallback(net, batches, losses, [&](torch::Tensor loss) {
    opt.zero_grad();
    loss.backward();
    opt.step();
  });
}
// The same loop whose callback only logs: an evaluation loop.
void lastOutputToLogger(Net &net, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
                        std::function<void(torch::Tensor)> done) {
  torch::Tensor last;
  for (auto &b : batches) {
    last = net->forward(b).mean();
    // CHECK: :[[@LINE-1]]:12: warning: model forward runs with autograd enabled in an evaluation loop
    losses.push_back(last.item<float>());
  }
  done(last);
}
void positiveLoggingCallbackAfterLoop(Net &net, std::vector<torch::Tensor> &batches, std::vector<float> &losses) {
  lastOutputToLogger(net, batches, losses, [](torch::Tensor loss) { std::printf("%f\n", loss.item<float>()); });
}

// A guarded prediction first, then a forward with autograd on: the second is reported.
void positiveForwardAfterAGuardedHelper(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (const auto &x : xs) {
    auto guarded = guardedPredict(model, x);
    auto raw = model->forward(x);
    // CHECK: :[[@LINE-1]]:16: warning: model forward runs with autograd enabled in an evaluation loop
    std::printf("%f %f\n", guarded.sum().item<float>(), raw.sum().item<float>());
  }
}

// Only argmax labels leave the loop: integers, which no caller can backpropagate.
torch::Tensor positiveReturnedLabels(Net &model, const std::vector<torch::Tensor> &xs) {
  std::vector<torch::Tensor> labels;
  for (const auto &x : xs)
    labels.push_back(model->forward(x).argmax(1));
  // CHECK: :[[@LINE-1]]:22: warning: model forward runs with autograd enabled in an evaluation loop
  return torch::cat(labels);
}

// Greedy decoding: the tokens appended are data; `src` only gives their dtype (an in-place fill
// of a tensor computed with `src` writes no graph into `src`).
torch::Tensor positiveGreedyDecode(Net &model, torch::Tensor &src, int64_t steps) {
  torch::Tensor ys = torch::zeros({1, 1}, torch::kLong);
  for (int64_t i = 0; i < steps; ++i) {
    torch::Tensor next = model->forward(src).argmax(1);
    // CHECK: :[[@LINE-1]]:26: warning: model forward runs with autograd enabled in an evaluation loop
    ys = torch::cat({ys, torch::ones({1, 1}).toType(src.scalar_type()).fill_(next.item<int64_t>())}, 0);
  }
  return ys;
}

// The outputs are written into rows of a returned tensor: the caller may backpropagate them.
torch::Tensor negativeOutputsCopiedIntoReturnedRows(Net &model, const std::vector<torch::Tensor> &xs) {
  torch::Tensor out = torch::zeros({int64_t(xs.size()), 2});
  for (size_t i = 0; i < xs.size(); ++i)
    out.select(0, int64_t(i)).copy_(model->forward(xs[i]).squeeze(0));
  return out;
}

struct DecoderImpl : torch::nn::Module {
  DecoderImpl() : enc(register_module("enc", torch::nn::Linear(4, 4))), dec(register_module("dec", torch::nn::Linear(4, 4))) {}
  torch::Tensor encode(torch::Tensor &src) { return enc(src); }
  torch::Tensor decode(torch::Tensor &tgt, torch::Tensor &memory) { return dec(tgt.to(torch::kFloat) + memory); }
  torch::nn::Linear enc, dec;
};
TORCH_MODULE(Decoder);

// Greedy decoding over an encoder output the loop re-binds and hands to a method by non-const
// reference: its uses in the loop are not uses after it; only the tokens are returned.
torch::Tensor positiveGreedyDecodeOverMemory(Decoder &model, torch::Tensor &src, const torch::Device &device) {
  torch::Tensor memory = model->encode(src);
  torch::Tensor ys = torch::zeros({1, 4}, torch::kLong);
  for (int i = 0; i < 8; ++i) {
    memory = memory.to(device);
    torch::Tensor out = model->decode(ys, memory);
    // CHECK: :[[@LINE-1]]:25: warning: model forward runs with autograd enabled in an evaluation loop
    ys = torch::cat({ys, out.argmax(1).view({1, 4})}, 0);
  }
  return ys;
}

// The re-bound encoder output itself is returned: the caller may backpropagate it.
torch::Tensor negativeDecodeReturnsMemory(Decoder &model, torch::Tensor &src, const torch::Device &device) {
  torch::Tensor memory = model->encode(src);
  torch::Tensor ys = torch::zeros({1, 4}, torch::kLong);
  for (int i = 0; i < 8; ++i) {
    memory = memory.to(device);
    ys = torch::cat({ys, model->decode(ys, memory).argmax(1).view({1, 4})}, 0);
  }
  return memory;
}

// Each worker thread starts with autograd on whatever the guard here says (grad mode is
// thread-local): torch-grad-mode-not-inherited-by-thread reports the forward; a guard before
// this loop is already there and cannot help.
void negativeForwardOnThreadsStartedInLoop(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  torch::NoGradGuard no_grad;
  std::vector<std::thread> workers;
  std::vector<torch::Tensor> results(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    workers.emplace_back([&, i] { results[i] = model->forward(xs[i]); });
  for (auto &worker : workers)
    worker.join();
}

// The whole evaluation loop runs on the worker thread: a guard before it, on that thread, helps.
void positiveLoopOnWorkerThread(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  std::thread worker([&] {
    for (const auto &x : xs)
      std::printf("%f\n", model->forward(x).sum().item<float>());
    // CHECK: :[[@LINE-1]]:27: warning: model forward runs with autograd enabled in an evaluation loop
  });
  worker.join();
}
// FIXED: std::thread worker([&] {
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: for (const auto &x : xs)

// The helper also runs on a thread elsewhere; here the loop runs it on its own thread.
float predictSum(Net &model, const torch::Tensor &x) { return model->forward(x).sum().item<float>(); }
void positiveHelperAlsoRunOnAThreadElsewhere(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (const auto &x : xs)
    std::printf("%f\n", predictSum(model, x));
  // CHECK: :[[@LINE-1]]:25: warning: model forward runs with autograd enabled in an evaluation loop
}
void predictInBackground(Net &model, const torch::Tensor &x) {
  std::thread worker([&] { std::printf("%f\n", predictSum(model, x)); });
  worker.join();
}

