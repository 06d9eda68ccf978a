#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

void train(Net &model, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
  }
}
