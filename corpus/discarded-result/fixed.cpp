// Fits a small regressor on synthetic data and keeps every batch's predictions to report the
// epoch's R^2 at the end. The predictions were meant to be detached before they are kept.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  explicit RegressorImpl(int64_t features)
      : hidden(register_module("hidden", torch::nn::Linear(features, 16))),
        out(register_module("out", torch::nn::Linear(16, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return out->forward(torch::tanh(hidden->forward(x))); }

  torch::nn::Linear hidden, out;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 6;
  constexpr int64_t kBatch = 32;
  const torch::Tensor inputs = torch::randn({640, kFeatures}, device);
  const torch::Tensor targets = inputs.sum(1, /*keepdim=*/true).sin();

  Regressor model(kFeatures);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));

  std::vector<torch::Tensor> predictions;
  for (int64_t start = 0; start + kBatch <= inputs.size(0); start += kBatch) {
    probe::iteration();
    const torch::Tensor x = inputs.slice(0, start, start + kBatch);
    const torch::Tensor y = targets.slice(0, start, start + kBatch);
    optimizer.zero_grad();
    torch::Tensor prediction = model->forward(x);
    torch::Tensor loss = torch::mse_loss(prediction, y);
    loss.backward();
    optimizer.step();

    predictions.push_back(prediction.detach());
    probe::keep(predictions);
  }

  const torch::Tensor predicted = torch::cat(predictions);
  const torch::Tensor seen = targets.slice(0, 0, predicted.size(0));
  const double r2 = 1.0 - ((predicted - seen).pow(2).sum() / (seen - seen.mean()).pow(2).sum()).item<double>();
  std::printf("training R^2 %.3f over %zu batches\n", r2, predictions.size());
  return 0;
}
