#include "net.h"

float Tester::run(Net net) {
  net->eval();
  torch::NoGradGuard no_grad;
  return torch::nll_loss(net->forward(x), y).item<float>();
}
