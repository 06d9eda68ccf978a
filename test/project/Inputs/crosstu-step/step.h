// A training step and an evaluation step, defined in step.cpp; the loops are in loop.cpp.
#pragma once
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(const torch::Tensor &x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

float train_step(Net &net, torch::optim::Optimizer &opt, const torch::Tensor &x);
float eval_step(Net &net, const torch::Tensor &x);
