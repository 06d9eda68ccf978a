// Trains a small classifier on synthetic data and reports the mean loss of each epoch.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t classes)
      : fc1(register_module("fc1", torch::nn::Linear(features, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kClasses = 4;
  constexpr int64_t kBatch = 64;
  constexpr int64_t kSteps = 20;

  Classifier model(kFeatures, kClasses);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  torch::Tensor epoch_loss = torch::zeros({}, device);
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor labels = torch::randint(kClasses, {kBatch}, torch::TensorOptions(torch::kLong).device(device));

    optimizer.zero_grad();
    torch::Tensor loss = torch::cross_entropy_loss(model->forward(inputs), labels);
    loss.backward();
    optimizer.step();

    epoch_loss += loss.item<double>();
    probe::keep(epoch_loss);
  }

  std::printf("mean training loss %.4f\n", epoch_loss.item<double>() / kSteps);
  return 0;
}
