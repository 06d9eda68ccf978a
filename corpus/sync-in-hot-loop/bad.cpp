// A regression model trained on the GPU when one is present; the loss curve is recorded
// from every step.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  RegressorImpl(int64_t features, int64_t hidden)
      : hidden_layer(register_module("hidden_layer", torch::nn::Linear(features, hidden))),
        output_layer(register_module("output_layer", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return output_layer->forward(torch::relu(hidden_layer->forward(x))); }

  torch::nn::Linear hidden_layer, output_layer;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kBatch = 256;
  constexpr int64_t kSteps = 40;

  const torch::Tensor inputs = torch::randn({kSteps * kBatch, kFeatures});
  const torch::Tensor targets = inputs.sum(1, /*keepdim=*/true).sin();
  Regressor model(kFeatures, 64);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));

  std::vector<float> loss_curve;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor x = inputs.slice(0, step * kBatch, (step + 1) * kBatch).to(device);
    const torch::Tensor y = targets.slice(0, step * kBatch, (step + 1) * kBatch).to(device);
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    loss_curve.push_back(loss.item<float>());
  }
  std::printf("first loss %.4f, last loss %.4f on %s\n", loss_curve.front(), loss_curve.back(),
              device.str().c_str());
  return 0;
}
