// Trains a Wasserstein critic to tell two Gaussian clouds apart, with weight clipping to
// keep it Lipschitz.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct CriticImpl : torch::nn::Module {
  explicit CriticImpl(int64_t features)
      : fc1(register_module("fc1", torch::nn::Linear(features, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return fc2->forward(torch::leaky_relu(fc1->forward(x), 0.2));
  }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Critic);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 2;
  constexpr int64_t kBatch = 64;
  constexpr int64_t kSteps = 20;
  constexpr double kClip = 0.01;

  Critic critic(kFeatures);
  critic->to(device);
  torch::optim::RMSprop optimizer(critic->parameters(), torch::optim::RMSpropOptions(5e-5));

  try {
    for (int64_t step = 0; step < kSteps; ++step) {
      probe::iteration();
      const torch::Tensor real = torch::randn({kBatch, kFeatures}, device) + 2.0;
      const torch::Tensor fake = torch::randn({kBatch, kFeatures}, device);

      optimizer.zero_grad();
      torch::Tensor loss = critic->forward(fake).mean() - critic->forward(real).mean();
      loss.backward();
      optimizer.step();

      for (auto& parameter : critic->parameters()) {
        parameter.clamp_(-kClip, kClip);
      }
      std::printf("step %lld: wasserstein estimate %.5f\n", static_cast<long long>(step), -loss.item<double>());
    }
  } catch (const c10::Error& error) {
    probe::error(error);
    std::fprintf(stderr, "training failed: %s\n", error.what_without_backtrace());
    return 1;
  }
  return 0;
}
