// Fits a small regression network; gradients are cleared in the middle of the step.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  RegressorImpl(int64_t features, int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 16;
  constexpr int64_t kBatch = 128;
  constexpr int64_t kSteps = 20;

  const torch::Tensor true_weights = torch::randn({kFeatures, 1}, device);
  Regressor model(kFeatures, 32);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(1e-2));

  float first_loss = 0.0f, last_loss = 0.0f;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor targets = inputs.matmul(true_weights);

    torch::Tensor loss = torch::mse_loss(model->forward(inputs), targets);
    loss.backward();
    optimizer.zero_grad();
    probe::grads(model->parameters());
    optimizer.step();
    last_loss = loss.item<float>();
    if (step == 0)
      first_loss = last_loss;
  }

  std::printf("training loss %.4f -> %.4f\n", first_loss, last_loss);
  return 0;
}
