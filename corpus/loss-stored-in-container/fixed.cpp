// Fits a small regressor to synthetic data and keeps the value of every step's loss to
// report the loss curve at the end.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

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
  Regressor model(kFeatures, 64);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));

  std::vector<float> losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor targets = inputs.matmul(true_weights) + 0.1 * torch::randn({kBatch, 1}, device);

    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(inputs), targets);
    loss.backward();
    optimizer.step();

    losses.push_back(loss.item<float>());
    probe::keep(losses);
  }

  std::printf("loss: first %.4f, last %.4f over %zu steps\n", losses.front(),
              losses.back(), losses.size());
  return 0;
}
