// Detects a rare positive class; the output bias starts at the log-odds of the class prior
// so that early training is not swamped by the negatives.
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct DetectorImpl : torch::nn::Module {
  explicit DetectorImpl(int64_t features)
      : body(register_module("body", torch::nn::Linear(features, 32))),
        head(register_module("head", torch::nn::Linear(32, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return head->forward(torch::relu(body->forward(x))); }

  torch::nn::Linear body, head;
};
TORCH_MODULE(Detector);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 12;
  constexpr int64_t kBatch = 128;
  constexpr int64_t kSteps = 20;
  constexpr double kPrior = 0.05;

  Detector model(kFeatures);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  try {
    model->head->bias.fill_(std::log(kPrior / (1.0 - kPrior)));

    for (int64_t step = 0; step < kSteps; ++step) {
      probe::iteration();
      const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
      const torch::Tensor labels = inputs.select(1, 0).gt(1.645).to(torch::kFloat).unsqueeze(1);

      optimizer.zero_grad();
      torch::Tensor loss = torch::binary_cross_entropy_with_logits(model->forward(inputs), labels);
      loss.backward();
      optimizer.step();
      std::printf("step %lld: loss %.4f\n", static_cast<long long>(step), loss.item<double>());
    }
  } catch (const c10::Error& error) {
    probe::error(error);
    std::fprintf(stderr, "training failed: %s\n", error.what_without_backtrace());
    return 1;
  }
  return 0;
}
