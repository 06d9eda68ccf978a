#include <torch/torch.h>

#include <vector>

void train(torch::nn::Linear &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  std::vector<torch::Tensor> losses;
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
  }
}
