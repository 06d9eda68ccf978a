// Third-party code kept in the tree and included with -I (not -isystem).
#pragma once
#include <torch/torch.h>

inline void vendoredFit(torch::nn::Linear &fc, const torch::Tensor &x) {
  torch::optim::SGD optimizer(fc->parameters(), 0.1);
  for (int step = 0; step < 5; ++step) {
    fc->forward(x).sum().backward();
    optimizer.step();
  }
}
