#include <torch/torch.h>

#include <vector>

void train(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches) {
  torch::optim::SGD opt(model->parameters(), 0.1);
  for (const auto &x : batches) {
    auto loss = model->forward(x).sum();
    loss.backward();
    opt.step();
  }
}

int broken() {
  int a = undeclared_one;
  int b = undeclared_two;
  return a + b;
}
