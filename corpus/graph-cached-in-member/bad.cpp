// Trains an autoencoder whose encoder keeps its last code in a member, so that the training
// loop can report how spread out the codes are.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct AutoencoderImpl : torch::nn::Module {
  AutoencoderImpl(int64_t features, int64_t code)
      : encoder(register_module("encoder", torch::nn::Linear(features, code))),
        decoder(register_module("decoder", torch::nn::Linear(code, features))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor code = torch::tanh(encoder->forward(x));
    last_code_ = code;
    return decoder->forward(code);
  }

  torch::nn::Linear encoder, decoder;
  torch::Tensor last_code_;
};
TORCH_MODULE(Autoencoder);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kBatch = 64;
  constexpr int64_t kSteps = 20;

  Autoencoder model(kFeatures, 8);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);

    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(inputs), inputs);
    loss.backward();
    optimizer.step();

    probe::keep(model->last_code_);
    if (step % 5 == 0)
      std::printf("step %lld: loss %.4f, code std %.4f\n", static_cast<long long>(step), loss.item<float>(),
                  model->last_code_.std().item<float>());
  }
  return 0;
}
