// A network wrapper whose prediction and training step are defined in nn.cpp; search.cpp
// reaches them only through helpers of its own (zjeffer/connect4-deep-rl's MCTS shape).
#pragma once
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(const torch::Tensor &x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

torch::Tensor predict(Net &net, const torch::Tensor &x);
torch::Tensor guarded_predict(Net &net, const torch::Tensor &x);
torch::Tensor improve(Net &net, torch::optim::Optimizer &opt, const torch::Tensor &x);
