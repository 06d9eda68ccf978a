#include "nn.h"

#include <cstdio>

// Helpers of this TU around the functions of nn.cpp.
static float expand(Net &net) { return predict(net, torch::rand({1, 4})).item<float>(); }
static float expand_guarded(Net &net) { return guarded_predict(net, torch::rand({1, 4})).item<float>(); }
static torch::Tensor learn(Net &net, torch::optim::Optimizer &opt, const torch::Tensor &x) {
  return improve(net, opt, x);
}

float search(Net &net, int simulations) {
  float total = 0;
  net->eval();
  for (int i = 0; i < simulations; ++i)
    total += expand(net); // POSITIVE: eval-without-no-grad, the forward of nn.cpp through expand()
  for (int i = 0; i < simulations; ++i)
    total += expand_guarded(net); // NEGATIVE: guarded_predict runs with autograd off
  return total;
}

void train(Net &net, torch::optim::Optimizer &opt) {
  net->to(torch::kCUDA);
  net->train();
  for (int step = 0; step < 1000; ++step) {
    auto loss = learn(net, opt, torch::randn({8, 4}, torch::kCUDA));
    std::printf("%f\n", loss.item<float>()); // POSITIVE: sync-in-hot-loop, a training step through learn()
  }
}
