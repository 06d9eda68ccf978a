// A trainer class that standardizes raw features with per-feature scales computed once from
// the training set, then fits a regressor on the GPU when one is present.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  explicit RegressorImpl(int64_t features)
      : fc1(register_module("fc1", torch::nn::Linear(features, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Regressor);

class Trainer {
 public:
  Trainer(const torch::Tensor& inputs, const torch::Tensor& targets, torch::Device device)
      : device_(device),
        inputs_(inputs),
        targets_(targets),
        inverse_scale_(1.0 / inputs.std(0)),
        model_(inputs.size(1)),
        optimizer_(model_->parameters(), torch::optim::AdamOptions(1e-2)) {
    // Module::to() moves the parameters in place, so the optimizer keeps tracking them.
    model_->to(device_);
  }

  double fit(int64_t batch_size) {
    double last_loss = 0.0;
    for (int64_t start = 0; start + batch_size <= inputs_.size(0); start += batch_size) {
      probe::iteration();
      const torch::Tensor batch = inputs_.slice(0, start, start + batch_size).to(device_);
      const torch::Tensor target = targets_.slice(0, start, start + batch_size).to(device_);
      const torch::Tensor standardized = batch * inverse_scale_.to(device_);

      optimizer_.zero_grad();
      torch::Tensor loss = torch::mse_loss(model_->forward(standardized), target);
      loss.backward();
      optimizer_.step();
      last_loss = loss.item<double>();
    }
    return last_loss;
  }

 private:
  torch::Device device_;
  torch::Tensor inputs_;
  torch::Tensor targets_;
  torch::Tensor inverse_scale_;
  Regressor model_;
  torch::optim::Adam optimizer_;
};

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  const torch::Tensor scales = torch::logspace(-2, 3, 10);
  const torch::Tensor inputs = torch::randn({1280, 10}) * scales;
  const torch::Tensor targets = (inputs / scales).sum(1, /*keepdim=*/true);

  Trainer trainer(inputs, targets, device);
  std::printf("final loss %.4f on %s\n", trainer.fit(64), device.str().c_str());
  return 0;
}
