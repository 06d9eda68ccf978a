#pragma once
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc(register_module("fc", torch::nn::Linear(4, 2))), drop(register_module("drop", torch::nn::Dropout(0.5))) {}
  torch::Tensor forward(const torch::Tensor &x) { return torch::log_softmax(drop(fc(x)), 1); }
  torch::nn::Linear fc;
  torch::nn::Dropout drop;
};
TORCH_MODULE(Net);

// Scores the model on held-out data; takes the ModuleHolder by value (a copy sharing the module).
struct Tester {
  torch::Tensor x, y;
  float run(Net net);
};
