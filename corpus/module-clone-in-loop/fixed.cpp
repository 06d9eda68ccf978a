// A value network trained against a target network (as in DQN-style bootstrapping). The target
// is a clone of the online network, refreshed every kTargetUpdate steps.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct ValueNetImpl : torch::nn::Cloneable<ValueNetImpl> {
  ValueNetImpl(int64_t features, int64_t hidden) : features_(features), hidden_(hidden) { reset(); }

  void reset() override {
    hidden_layer = register_module("hidden_layer", torch::nn::Linear(features_, hidden_));
    output_layer = register_module("output_layer", torch::nn::Linear(hidden_, 1));
  }

  torch::Tensor forward(const torch::Tensor& x) { return output_layer->forward(torch::relu(hidden_layer->forward(x))); }

  int64_t features_, hidden_;
  torch::nn::Linear hidden_layer{nullptr}, output_layer{nullptr};
};
TORCH_MODULE(ValueNet);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 64;
  constexpr int64_t kBatch = 32;
  constexpr int64_t kSteps = 40;
  constexpr double kDiscount = 0.9;
  constexpr int64_t kTargetUpdate = 20;

  ValueNet online(kFeatures, 256);
  online->to(device);
  torch::optim::Adam optimizer(online->parameters(), torch::optim::AdamOptions(1e-3));
  const torch::Tensor states = torch::randn({kSteps * kBatch, kFeatures}, device);
  const torch::Tensor next_states = torch::randn({kSteps * kBatch, kFeatures}, device);
  const torch::Tensor rewards = torch::randn({kSteps * kBatch, 1}, device);

  auto target = std::dynamic_pointer_cast<ValueNetImpl>(online->clone());
  std::vector<float> loss_curve;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    if (step % kTargetUpdate == 0) target = std::dynamic_pointer_cast<ValueNetImpl>(online->clone());
    const torch::Tensor s = states.slice(0, step * kBatch, (step + 1) * kBatch);
    const torch::Tensor s_next = next_states.slice(0, step * kBatch, (step + 1) * kBatch);
    const torch::Tensor r = rewards.slice(0, step * kBatch, (step + 1) * kBatch);
    torch::Tensor bootstrap;
    {
      torch::NoGradGuard no_grad;
      bootstrap = r + kDiscount * target->forward(s_next);
    }
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(online->forward(s), bootstrap);
    loss.backward();
    optimizer.step();
    loss_curve.push_back(loss.item<float>());
  }
  std::printf("first loss %.4f, last loss %.4f\n", loss_curve.front(), loss_curve.back());
  return 0;
}
