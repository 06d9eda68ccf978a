// Trains a classifier with gradient accumulation: four micro-batches per optimizer step.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t classes)
      : hidden(register_module("hidden", torch::nn::Linear(features, 64))),
        logits(register_module("logits", torch::nn::Linear(64, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) { return logits->forward(torch::relu(hidden->forward(x))); }

  torch::nn::Linear hidden, logits;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 20;
  constexpr int64_t kClasses = 5;
  constexpr int64_t kMicroBatch = 16;
  constexpr int64_t kAccumulation = 4;
  constexpr int64_t kMicroSteps = 20;

  const torch::Tensor centres = torch::randn({kClasses, kFeatures}, device) * 2;
  Classifier model(kFeatures, kClasses);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(1e-3).momentum(0.9));

  double window_loss = 0.0;
  for (int64_t micro_step = 0; micro_step < kMicroSteps; ++micro_step) {
    probe::iteration();
    const torch::Tensor labels = torch::randint(kClasses, {kMicroBatch}, torch::TensorOptions(torch::kLong).device(device));
    const torch::Tensor inputs = centres.index_select(0, labels) + torch::randn({kMicroBatch, kFeatures}, device);

    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(inputs), labels) / kAccumulation;
    loss.backward();
    probe::grads(model->parameters());
    window_loss += loss.item<double>();

    if ((micro_step + 1) % kAccumulation == 0) {
      optimizer.step();
      optimizer.zero_grad();
      std::printf("step %lld: loss %.4f\n", static_cast<long long>(micro_step / kAccumulation), window_loss);
      window_loss = 0.0;
    }
  }
  return 0;
}
