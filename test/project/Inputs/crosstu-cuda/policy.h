// A policy declared here, defined in the CUDA source policy.cu.
#pragma once
#include <torch/torch.h>

struct PolicyImpl : torch::nn::Module {
  PolicyImpl();
  torch::Tensor act(torch::Tensor obs);
  std::string describe() const;
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Policy);
