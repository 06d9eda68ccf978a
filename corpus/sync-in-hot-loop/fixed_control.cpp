// A GAN-style alternating update: the discriminator only trains while its loss is above a
// threshold; the decision is refreshed every kCheckInterval steps and kept in between.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct DiscriminatorImpl : torch::nn::Module {
  explicit DiscriminatorImpl(int64_t features)
      : hidden(register_module("hidden", torch::nn::Linear(features, 32))),
        out(register_module("out", torch::nn::Linear(32, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return out->forward(torch::leaky_relu(hidden->forward(x), 0.2)); }

  torch::nn::Linear hidden, out;
};
TORCH_MODULE(Discriminator);

constexpr int64_t kCheckInterval = 10;

void trainDiscriminator(Discriminator& disc, torch::optim::Adam& optimizer, const torch::Tensor& real,
                        const torch::Tensor& fake, float threshold, int64_t step, bool& train_disc) {
  optimizer.zero_grad();
  torch::Tensor loss = torch::binary_cross_entropy_with_logits(disc->forward(real), torch::ones_like(real.narrow(1, 0, 1))) +
                       torch::binary_cross_entropy_with_logits(disc->forward(fake), torch::zeros_like(fake.narrow(1, 0, 1)));
  loss.backward();
  if (step % kCheckInterval == 0)
    train_disc = loss.item<float>() > threshold;
  if (train_disc)
    optimizer.step();
}

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 16;
  constexpr int64_t kBatch = 128;
  constexpr int64_t kSteps = 40;

  Discriminator disc(kFeatures);
  disc->to(device);
  torch::optim::Adam optimizer(disc->parameters(), torch::optim::AdamOptions(2e-4));
  const torch::Tensor center = torch::linspace(-1, 1, kFeatures).to(device);
  bool train_disc = true;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    torch::Tensor real = center + 0.1 * torch::randn({kBatch, kFeatures}, torch::TensorOptions().device(device));
    torch::Tensor fake = torch::randn({kBatch, kFeatures}, torch::TensorOptions().device(device));
    trainDiscriminator(disc, optimizer, real, fake, 0.3f, step, train_disc);
  }
  std::printf("trained %ld steps on %s\n", static_cast<long>(kSteps), device.str().c_str());
  return 0;
}
