// Checks that report an absence (no zero_grad(), no no-grad guard, no train(), no detach) stay
// silent in a function whose body holds code the parser could not understand: the missing call
// may be what the compiler lost. Intact functions of the same broken TU are still analyzed.
// Plain CHECKs in source order (diagnostics come sorted by location): FileCheck does not apply
// --implicit-check-not between or after CHECK-DAG matches, so a DAG list would let any other
// warning pass. Any other warning fails, not the source lines clang 19 echoes under a
// diagnostic (they start with a space), nor another error (clang 19 recovers from SGDD with
// one error more than clang 16).
// RUN: not %tidy --checks='-*,torch-backward-without-zero-grad,torch-eval-without-no-grad,torch-train-not-restored-after-eval,torch-hidden-state-not-detached' %s -- %torch_flags 2>&1 | FileCheck --implicit-check-not='{{^([^ ].*)?warning}}:' %s

#include <torch/torch.h>

#include <vector>

// An optimizer of a misspelled type: its zero_grad() call is lost with it.
void brokenOptimizerType(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  torch::optim::SGDD opt(model->parameters(), 0.1);
  // CHECK: :[[@LINE-1]]:17: error: no member named 'SGDD' in namespace 'torch::optim'
  torch::optim::SGD sgd(model->parameters(), 0.1);
  for (const auto &x : batches) {
    opt.zero_grad();
    auto loss = model->forward(x).sum();
    loss.backward();
    sgd.step();
  }
}

// A misspelled zero_grad(): the call becomes a recovery expression.
void misspelledZeroGrad(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (const auto &x : batches) {
    opt.zero_gard();
    // CHECK: :[[@LINE-1]]:9: error: no member named 'zero_gard' in 'torch::optim::SGD'
    auto loss = model->forward(x).sum();
    loss.backward();
    opt.step();
  }
}

// An evaluation loop whose guard's type is misspelled.
float brokenGuard(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  model->eval();
  torch::NoGradGuardd no_grad;
  // CHECK: :[[@LINE-1]]:10: error: no type named 'NoGradGuardd' in namespace 'torch'
  float sum = 0;
  for (const auto &x : batches)
    sum += model->forward(x).sum().item<float>();
  return sum;
}

// The same shapes in intact functions of this TU are still reported.
void intactTrainingLoop(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (const auto &x : batches) {
    auto loss = model->forward(x).sum();
    loss.backward();
    // CHECK: :[[@LINE-1]]:5: warning: backward() accumulates into gradients that are never zeroed {{.*}} [torch-backward-without-zero-grad]
    opt.step();
  }
}

float intactEvaluation(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  model->eval();
  float sum = 0;
  for (const auto &x : batches)
    sum += model->forward(x).sum().item<float>();
  // CHECK: :[[@LINE-1]]:12: warning: model forward runs with autograd enabled in an evaluation loop{{.*}} [torch-eval-without-no-grad]
  return sum;
}
