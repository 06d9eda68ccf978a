#include "step.h"

int main() {
  Net net;
  net->to(torch::kCUDA);
  torch::optim::SGD opt(net->parameters(), 0.01);
  float sum = 0;
  for (int i = 0; i < 100; ++i)
    sum += train_step(net, opt, torch::randn({8, 4}, torch::kCUDA));
  net->eval();
  for (int i = 0; i < 10; ++i)
    sum += eval_step(net, torch::randn({8, 4}, torch::kCUDA)); // NEGATIVE: eval-without-no-grad (no-grad inside)
  return sum > 0;
}
