// The epoch loop, inline in a header: main.cpp's TU analyzes it, and calls validate()
// (eval.cpp) and host_batches() (data.cpp) only here.
#pragma once
#include "eval.h"

inline void fit(Net &net, torch::optim::SGD &opt, int epochs) {
  auto val = host_batches(4);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (auto &b : host_batches(100)) {
      opt.zero_grad();
      torch::mse_loss(net->forward(b.first), b.second).backward();
      opt.step();
    }
    validate(net, val); // POSITIVE: train-not-restored-after-eval
  }
}
