// Trains a denoising autoencoder on synthetic images in [0, 1]; each batch is augmented with
// brightness jitter and Gaussian noise and was meant to be clamped back into [0, 1].
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct DenoiserImpl : torch::nn::Module {
  DenoiserImpl()
      : encode(register_module("encode", torch::nn::Linear(64, 16))),
        decode(register_module("decode", torch::nn::Linear(16, 64))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::sigmoid(decode->forward(torch::relu(encode->forward(x))));
  }

  torch::nn::Linear encode, decode;
};
TORCH_MODULE(Denoiser);

void augment(torch::Tensor& images) {
  images = images * (0.8 + 0.4 * torch::rand({images.size(0), 1}, images.options())) + 0.1 * torch::randn_like(images);
  images.clamp(0, 1);
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  const torch::Tensor clean = torch::rand({512, 64}, device);
  Denoiser model;
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  double last_loss = 0.0;
  for (int64_t start = 0; start < clean.size(0); start += 32) {
    probe::iteration();
    const torch::Tensor target = clean.slice(0, start, start + 32);
    torch::Tensor noisy = target.clone();
    augment(noisy);
    probe::value("input_max", noisy.max());

    optimizer.zero_grad();
    torch::Tensor loss = torch::binary_cross_entropy(model->forward(noisy), target);
    loss.backward();
    optimizer.step();
    if (start % 128 == 0)
      last_loss = loss.item<double>();
  }
  std::printf("loss %.4f\n", last_loss);
  return 0;
}
