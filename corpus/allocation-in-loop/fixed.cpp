// A small GAN on a 2-D toy distribution: the discriminator is trained with smoothed real
// labels, the generator against them, a fixed batch size throughout.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

constexpr int64_t kLatent = 8;
constexpr int64_t kBatch = 64;
constexpr int64_t kSteps = 50;

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  torch::nn::Sequential generator(torch::nn::Linear(kLatent, 32), torch::nn::ReLU(), torch::nn::Linear(32, 2));
  torch::nn::Sequential discriminator(torch::nn::Linear(2, 32), torch::nn::LeakyReLU(), torch::nn::Linear(32, 1));
  generator->to(device);
  discriminator->to(device);
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(1e-3));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(1e-3));

  const torch::Tensor real_labels = torch::full({kBatch, 1}, 0.9, device);
  const torch::Tensor fake_labels = torch::zeros({kBatch, 1}, device);
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor real = torch::randn({kBatch, 2}, device) * 0.5 + 2.0;
    const torch::Tensor noise = torch::randn({kBatch, kLatent}, device);

    d_opt.zero_grad();
    const torch::Tensor fake = generator->forward(noise);
    const torch::Tensor d_loss =
        torch::binary_cross_entropy_with_logits(discriminator->forward(real), real_labels) +
        torch::binary_cross_entropy_with_logits(discriminator->forward(fake.detach()), fake_labels);
    d_loss.backward();
    d_opt.step();

    g_opt.zero_grad();
    const torch::Tensor g_loss = torch::binary_cross_entropy_with_logits(discriminator->forward(fake), real_labels);
    g_loss.backward();
    g_opt.step();
    if (step % 10 == 0) std::printf("step %lld d %.4f g %.4f\n", static_cast<long long>(step), d_loss.item<double>(), g_loss.item<double>());
  }
  return 0;
}
