// A small project for bench/project: every translation unit starts with this header, which
// includes LibTorch (as real projects do), not with <torch/torch.h> itself.
#pragma once
#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc1(register_module("fc1", torch::nn::Linear(784, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    return torch::log_softmax(fc2->forward(torch::relu(fc1->forward(x.view({-1, 784})))), 1);
  }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

torch::Tensor makeBatch(int64_t Size);
double trainEpoch(Net &model, torch::optim::Optimizer &optimizer, int Steps);
double evaluate(Net &model, int Steps);
