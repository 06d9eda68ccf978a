#include "field.h"

void train(Field &field, torch::optim::Optimizer &opt, const torch::Tensor &rays, int steps) {
  torch::Tensor warm = encodeOnce(rays, 4);
  for (int step = 0; step < steps; ++step) { // the training loop
    opt.zero_grad();
    torch::Tensor loss = (render(field, rays, step < 0) - warm).pow(2).mean();
    loss = loss + renderAfterWarmup(rays).sum() + renderLogged(rays, step).sum();
    loss.backward();
    opt.step();
  }
}
