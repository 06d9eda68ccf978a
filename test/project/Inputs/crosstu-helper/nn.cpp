#include "nn.h"

torch::Tensor predict(Net &net, const torch::Tensor &x) { return net->forward(x); }

torch::Tensor guarded_predict(Net &net, const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  return net->forward(x);
}

// One optimizer step; returns the loss.
torch::Tensor improve(Net &net, torch::optim::Optimizer &opt, const torch::Tensor &x) {
  opt.zero_grad();
  auto loss = net->forward(x).pow(2).mean();
  loss.backward();
  opt.step();
  return loss.detach();
}
