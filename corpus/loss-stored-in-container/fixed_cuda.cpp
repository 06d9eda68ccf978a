// Trains a denoising autoencoder on the GPU when one is present (on the CPU otherwise) and
// keeps the reconstruction error of every step for a report at the end.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct AutoencoderImpl : torch::nn::Module {
  AutoencoderImpl(int64_t features, int64_t code)
      : encoder(register_module("encoder", torch::nn::Linear(features, code))),
        decoder(register_module("decoder", torch::nn::Linear(code, features))) {}

  torch::Tensor forward(const torch::Tensor& x) { return decoder->forward(torch::relu(encoder->forward(x))); }

  torch::nn::Linear encoder, decoder;
};
TORCH_MODULE(Autoencoder);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 256;
  constexpr int64_t kBatch = 256;
  constexpr int64_t kSteps = 20;

  Autoencoder model(kFeatures, 32);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  const auto options = torch::TensorOptions().device(device);

  std::vector<float> errors;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor clean = torch::rand({kBatch, kFeatures}, options);
    const torch::Tensor noisy = clean + 0.1 * torch::randn_like(clean);

    optimizer.zero_grad();
    const torch::Tensor reconstruction = model->forward(noisy);
    torch::Tensor loss = torch::mse_loss(reconstruction, clean);
    loss.backward();
    optimizer.step();

    errors.push_back(torch::l1_loss(reconstruction, clean).item<float>());
    probe::keep(errors);
  }

  std::printf("mean absolute error: first %.4f, last %.4f on %s\n", errors.front(),
              errors.back(), device.str().c_str());
  return 0;
}
