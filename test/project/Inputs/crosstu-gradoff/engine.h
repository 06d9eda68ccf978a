#pragma once
#include <torch/torch.h>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Engine {
  void nudge_bias(Net &net, const torch::Tensor &delta);
  void shift_weight(Net &net, const torch::Tensor &delta);
  void scale_weight(Net &net);
  void clip_weight(Net &net);
  void warmup(Net &net);
  void decay_bias(Net &net);
  void reset_bias(Net &net);
  void nudge_weight(Net &net, const torch::Tensor &delta);
  float accuracy(Net &net, const std::vector<torch::Tensor> &batches);
  float loss_on(Net &net, const std::vector<torch::Tensor> &batches);
};
