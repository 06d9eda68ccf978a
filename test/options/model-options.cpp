// The model's settings (docs/options.md), read for a check or globally, in both front ends.
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=DEFAULT %s
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --config="{CheckOptions: {CallDepth: 0}}" %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=DEPTH0 %s
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --config="{CheckOptions: {torch-eval-without-no-grad.CallDepth: 0}}" %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=DEPTH0 %s
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --config="{CheckOptions: {UninstantiatedTemplates: false}}" %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=NOTEMPLATES %s
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --config="{CheckOptions: {torch-eval-without-no-grad.TrainingCallNames: '^predict'}}" %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=NAMES %s
// RUN: %tidy --checks='-*,torch-eval-without-no-grad' --config="{CheckOptions: {CallDepth: deep, torch-eval-without-no-grad.TrainingCallNames: '(unclosed'}}" %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='warning:' --check-prefix=INVALID %s

// INVALID-DAG: warning: invalid configuration value 'deep' for option 'torch-eval-without-no-grad.CallDepth'; expected a number from 0 to 8
// INVALID-DAG: warning: invalid configuration value '(unclosed' for option 'torch-eval-without-no-grad.TrainingCallNames'; expected a regular expression

#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

torch::Tensor runModel(Net &model, torch::Tensor x) { return model->forward(x); }

// The forward runs in a helper: followed at CallDepth 1 and more.
float evalThroughHelper(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  float sum = 0;
  for (const auto &x : xs) {
    auto y = runModel(model, x);
    // DEFAULT: model-options.cpp:[[@LINE-1]]:14: warning: model forward runs with autograd enabled in an evaluation loop
    // NOTEMPLATES: model-options.cpp:[[@LINE-2]]:14: warning: model forward
    // NAMES: model-options.cpp:[[@LINE-3]]:14: warning: model forward
    // INVALID: model-options.cpp:[[@LINE-4]]:14: warning: model forward
    sum += y.sum().item<float>();
  }
  return sum;
}

// A template nobody instantiates, read by the names of its calls.
template <typename Loader> float evalTemplate(Net &model, Loader &loader) {
  model->eval();
  float sum = 0;
  for (auto &batch : loader) {
    auto out = model->forward(batch.data);
    // DEFAULT: model-options.cpp:[[@LINE-1]]:16: warning: model forward
    // DEPTH0: model-options.cpp:[[@LINE-2]]:16: warning: model forward
    // NAMES: model-options.cpp:[[@LINE-3]]:16: warning: model forward
    // INVALID: model-options.cpp:[[@LINE-4]]:16: warning: model forward
    sum += out.sum().template item<float>();
  }
  return sum;
}

// Functions defined in another unit: one named like a training step, one not.
void fit_batch(torch::Tensor out);
void predict_batch(torch::Tensor out);

void trainOpaque(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (const auto &x : xs) {
    auto out = model->forward(x);
    // NAMES: model-options.cpp:[[@LINE-1]]:16: warning: model forward
    fit_batch(out);
  }
}

void predictOpaque(Net &model, const std::vector<torch::Tensor> &xs) {
  model->eval();
  for (const auto &x : xs) {
    auto out = model->forward(x);
    // DEFAULT: model-options.cpp:[[@LINE-1]]:16: warning: model forward
    // DEPTH0: model-options.cpp:[[@LINE-2]]:16: warning: model forward
    // NOTEMPLATES: model-options.cpp:[[@LINE-3]]:16: warning: model forward
    // INVALID: model-options.cpp:[[@LINE-4]]:16: warning: model forward
    predict_batch(out);
  }
}
