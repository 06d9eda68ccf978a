#include <torch/torch.h>

void never_zeroed(torch::nn::Linear &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int step = 0; step < 10; ++step) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
  }
}

void rebuilt_every_step(torch::nn::Linear &model, const torch::Tensor &x, const torch::Tensor &y) {
  for (int step = 0; step < 10; ++step) {
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
    optimizer.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    optimizer.step();
  }
}
