// A model whose methods run per-step work (defined in model.cpp); the loops that call them
// are in train.cpp, eval.cpp and main.cpp.
#pragma once
#include <torch/torch.h>

struct Splats {
  torch::Device device;
  torch::Tensor means;
  std::unique_ptr<torch::optim::Adam> opt;
  explicit Splats(torch::Device d);
  torch::Tensor forward(int step);
  torch::Tensor render(int step);
  torch::Tensor project();
  float score();
  float report();
  void zeroGrad();
  void step();
};
