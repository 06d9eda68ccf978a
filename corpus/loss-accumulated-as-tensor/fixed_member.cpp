// A small trainer class: step() trains on one batch and keeps a running loss for logging.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  explicit RegressorImpl(int64_t features)
      : fc1(register_module("fc1", torch::nn::Linear(features, 128))),
        fc2(register_module("fc2", torch::nn::Linear(128, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::tanh(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Regressor);

class Trainer {
 public:
  Trainer(int64_t features, torch::Device device)
      : model_(features),
        optimizer_(model_->parameters(), torch::optim::SGDOptions(1e-2)),
        running_loss_(torch::zeros({}, device)) {
    model_->to(device);
  }

  void step(const torch::Tensor& inputs, const torch::Tensor& targets) {
    optimizer_.zero_grad();
    torch::Tensor loss = torch::mse_loss(model_->forward(inputs), targets);
    loss.backward();
    optimizer_.step();
    running_loss_ += loss.detach();
    ++steps_;
    probe::keep(running_loss_);
  }

  double meanLoss() const { return running_loss_.item<double>() / steps_; }

 private:
  Regressor model_;
  torch::optim::SGD optimizer_;
  torch::Tensor running_loss_;
  int64_t steps_ = 0;
};

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 16;
  Trainer trainer(kFeatures, device);
  for (int64_t i = 0; i < 20; ++i) {
    probe::iteration();
    torch::Tensor x = torch::randn({256, kFeatures}, device);
    trainer.step(x, x.sum(1, /*keepdim=*/true));
  }
  std::printf("mean training loss %.4f\n", trainer.meanLoss());
  return 0;
}
