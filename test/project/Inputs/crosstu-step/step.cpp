#include "step.h"

// Runs the whole training step: the loop that calls it (loop.cpp) shows no backward() itself.
float train_step(Net &net, torch::optim::Optimizer &opt, const torch::Tensor &x) {
  opt.zero_grad();
  auto loss = net->forward(x).pow(2).mean();
  loss.backward();
  opt.step();
  return loss.item<float>(); // POSITIVE: sync-in-hot-loop, through the loop in loop.cpp
}

// Called on every iteration of an evaluation loop: no training step to stall.
float eval_step(Net &net, const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  return net->forward(x).mean().item<float>(); // NEGATIVE
}
