// Outside the source root and the compile database tree: not the project's own.
#pragma once
#include <torch/torch.h>

inline void outsideFit(torch::nn::Linear &fc, const torch::Tensor &x) {
  torch::optim::SGD optimizer(fc->parameters(), 0.1);
  for (int step = 0; step < 5; ++step) {
    fc->forward(x).sum().backward();
    optimizer.step();
  }
}
