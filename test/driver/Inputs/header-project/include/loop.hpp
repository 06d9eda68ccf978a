// The project's training loop lives in a header that both translation units include.
#pragma once
#include <torch/torch.h>

template <typename Model>
void trainEpochs(Model &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01); std::vector<torch::Tensor> losses, history;
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss); history.push_back(loss); // two findings on one line
  }
}
