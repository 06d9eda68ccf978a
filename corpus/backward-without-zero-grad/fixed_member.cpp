// A trainer class owning its model and optimizer; fit() walks the data set in mini-batches.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct DenoiserImpl : torch::nn::Module {
  explicit DenoiserImpl(int64_t features)
      : net(register_module("net", torch::nn::Sequential(torch::nn::Linear(features, 32), torch::nn::Tanh(),
                                                         torch::nn::Linear(32, features)))) {}

  torch::Tensor forward(const torch::Tensor& x) { return net->forward(x); }

  torch::nn::Sequential net;
};
TORCH_MODULE(Denoiser);

class Trainer {
 public:
  Trainer(int64_t features, torch::Device device)
      : model_(features), optimizer_(model_->parameters(), torch::optim::AdamOptions(1e-3)) {
    model_->to(device);
  }

  double fit(const torch::Tensor& clean, int64_t batch_size) {
    double last_loss = 0.0;
    for (int64_t start = 0; start + batch_size <= clean.size(0); start += batch_size) {
      probe::iteration();
      const torch::Tensor target = clean.slice(0, start, start + batch_size);
      const torch::Tensor noisy = target + 0.2 * torch::randn_like(target);

      model_->zero_grad();
      torch::Tensor loss = torch::mse_loss(model_->forward(noisy), target);
      loss.backward();
      probe::grads(model_->parameters());
      optimizer_.step();
      last_loss = loss.item<double>();
    }
    return last_loss;
  }

 private:
  Denoiser model_;
  torch::optim::Adam optimizer_;
};

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  const torch::Tensor clean = torch::sin(torch::linspace(0, 20, 640 * 24, device)).reshape({640, 24});
  Trainer trainer(24, device);
  std::printf("final denoising loss %.4f\n", trainer.fit(clean, 32));
  return 0;
}
