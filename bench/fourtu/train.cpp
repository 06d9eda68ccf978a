#include "model.h"

double trainEpoch(Net &model, torch::optim::Optimizer &optimizer, int Steps) {
  std::vector<torch::Tensor> losses;
  model->train();
  for (int step = 0; step < Steps; ++step) {
    optimizer.zero_grad();
    auto target = torch::randint(0, 10, {64});
    auto loss = torch::nll_loss(model->forward(makeBatch(64)), target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
  }
  return torch::stack(losses).mean().item<double>();
}
