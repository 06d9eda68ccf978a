// A trainer class that records the loss of each step in a history indexed by step, to
// print a smoothed loss after training.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

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
  Trainer(int64_t features, int64_t steps, torch::Device device)
      : model_(features, 8),
        optimizer_(model_->parameters(), torch::optim::AdamOptions(1e-3)),
        data_(torch::randn({256, features}, device)),
        loss_history_(static_cast<size_t>(steps)) {
    model_->to(device);
  }

  void fit() {
    for (size_t step = 0; step < loss_history_.size(); ++step) {
      probe::iteration();
      const torch::Tensor batch = data_.index_select(0, torch::randint(data_.size(0), {64}, data_.options().dtype(torch::kLong)));
      optimizer_.zero_grad();
      torch::Tensor loss = torch::mse_loss(model_->forward(batch), batch);
      loss.backward();
      optimizer_.step();

      loss_history_[step] = loss;
      probe::keep(loss_history_);
    }
  }

  double smoothedLoss(size_t window) const {
    double sum = 0.0;
    for (size_t i = loss_history_.size() - window; i < loss_history_.size(); ++i)
      sum += loss_history_[i].item<double>();
    return sum / static_cast<double>(window);
  }

 private:
  Autoencoder model_;
  torch::optim::Adam optimizer_;
  torch::Tensor data_;
  std::vector<torch::Tensor> loss_history_;
};

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  Trainer trainer(/*features=*/32, /*steps=*/20, device);
  trainer.fit();
  std::printf("smoothed reconstruction loss %.4f\n", trainer.smoothedLoss(5));
  return 0;
}
