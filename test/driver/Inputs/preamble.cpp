// A training step whose file starts with LibTorch and standard headers (the automatic
// preamble) and then includes a project header (which stays in the main parse).
#include <torch/torch.h>

#include <vector>  // losses

#include "trainer.h"

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

void train(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  std::vector<torch::Tensor> losses;
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
  }
  trainInHeader(model, x, y);
}
