// Linear regression with hand-written gradient descent on a weight tensor that requires
// grad.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 8;
  constexpr int64_t kSteps = 20;
  constexpr double kLearningRate = 0.1;

  // The last column is a constant 1 so that the weights include the bias.
  const torch::Tensor inputs = torch::cat({torch::randn({512, kFeatures}, device), torch::ones({512, 1}, device)}, 1);
  const torch::Tensor targets = inputs.matmul(torch::randn({kFeatures + 1, 1}, device));
  torch::Tensor weights = torch::zeros({kFeatures + 1, 1}, torch::requires_grad().device(device));

  try {
    for (int64_t step = 0; step < kSteps; ++step) {
      probe::iteration();
      torch::Tensor loss = (inputs.matmul(weights) - targets).pow(2).mean();
      loss.backward();
      {
        torch::NoGradGuard no_grad;
        weights -= kLearningRate * weights.grad();
      }
      weights.grad().zero_();
      std::printf("step %lld: loss %.5f\n", static_cast<long long>(step), loss.item<double>());
    }
  } catch (const c10::Error& error) {
    probe::error(error);
    std::fprintf(stderr, "training failed: %s\n", error.what_without_backtrace());
    return 1;
  }
  return 0;
}
