// An autoencoder whose encoder weight is kept near-orthogonal by a penalty ||W Wᵀ - I||²
// computed in the per-step function of a small trainer class.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct AutoencoderImpl : torch::nn::Module {
  AutoencoderImpl(int64_t features, int64_t code)
      : encoder(register_module("encoder", torch::nn::Linear(features, code))),
        decoder(register_module("decoder", torch::nn::Linear(code, features))) {}

  torch::Tensor forward(const torch::Tensor& x) { return decoder->forward(torch::tanh(encoder->forward(x))); }

  torch::nn::Linear encoder, decoder;
};
TORCH_MODULE(Autoencoder);

class Trainer {
 public:
  Trainer(Autoencoder model, int64_t code, torch::Device device)
      : model_(model),
        optimizer_(model->parameters(), torch::optim::SGDOptions(0.05)),
        code_(code),
        device_(device) {}

  double step(const torch::Tensor& batch) {
    optimizer_.zero_grad();
    const torch::Tensor reconstruction = torch::mse_loss(model_->forward(batch), batch);
    const torch::Tensor weight = model_->encoder->weight;
    const torch::Tensor identity = torch::eye(code_, device_);
    const torch::Tensor penalty = (weight.matmul(weight.t()) - identity).pow(2).sum();
    const torch::Tensor loss = reconstruction + 1e-3 * penalty;
    loss.backward();
    optimizer_.step();
    return loss.item<double>();
  }

 private:
  Autoencoder model_;
  torch::optim::SGD optimizer_;
  int64_t code_;
  torch::Device device_;
};

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 64;
  constexpr int64_t kCode = 48;
  const torch::Tensor data = torch::randn({40 * 32, kFeatures}, device);
  Autoencoder model(kFeatures, kCode);
  model->to(device);
  Trainer trainer(model, kCode, device);
  double loss = 0;
  for (int64_t b = 0; b < 40; ++b) {
    probe::iteration();
    loss = trainer.step(data.slice(0, b * 32, (b + 1) * 32));
  }
  std::printf("final loss %.4f\n", loss);
  return 0;
}
