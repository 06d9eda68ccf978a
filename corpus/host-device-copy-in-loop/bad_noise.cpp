// A denoising autoencoder: every step corrupts the clean batch with fresh Gaussian noise
// and learns to undo it. Runs on the GPU when one is present.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct DenoisingAutoencoderImpl : torch::nn::Module {
  DenoisingAutoencoderImpl(int64_t features, int64_t code)
      : encoder(register_module("encoder", torch::nn::Linear(features, code))),
        decoder(register_module("decoder", torch::nn::Linear(code, features))) {}

  torch::Tensor forward(const torch::Tensor& x) { return decoder->forward(torch::relu(encoder->forward(x))); }

  torch::nn::Linear encoder, decoder;
};
TORCH_MODULE(DenoisingAutoencoder);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 64;
  constexpr int64_t kBatch = 128;
  constexpr int64_t kSteps = 20;

  const torch::Tensor signals = torch::sin(torch::linspace(0, 50, kSteps * kBatch * kFeatures)).reshape({-1, kFeatures});
  DenoisingAutoencoder model(kFeatures, 16);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  double last_loss = 0.0;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor clean = signals.slice(0, step * kBatch, (step + 1) * kBatch).to(device);
    const torch::Tensor noise = torch::randn({kBatch, kFeatures}).to(device);

    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(clean + 0.3 * noise), clean);
    loss.backward();
    optimizer.step();
    last_loss = loss.item<double>();
  }
  std::printf("final reconstruction loss %.4f on %s\n", last_loss, device.str().c_str());
  return 0;
}
