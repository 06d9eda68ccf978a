// Fits a small regressor. The loss helper is shared with evaluation, which turns autograd off
// around its own call, so that training backpropagates through the model.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  RegressorImpl(int64_t features, int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Regressor);

torch::Tensor batch_loss(Regressor& model, const torch::Tensor& inputs, const torch::Tensor& targets) {
  return torch::mse_loss(model->forward(inputs), targets);
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 16;
  constexpr int64_t kBatch = 128;
  constexpr int64_t kSteps = 20;

  const torch::Tensor true_weights = torch::randn({kFeatures, 1}, device);
  Regressor model(kFeatures, 64);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));

  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor targets = inputs.matmul(true_weights);

    optimizer.zero_grad();
    torch::Tensor loss = batch_loss(model, inputs, targets);
    loss.backward();
    probe::grads(model->parameters());
    probe::value("loss", loss.detach());
    optimizer.step();
  }

  torch::NoGradGuard no_grad;
  const torch::Tensor fresh = torch::randn({kBatch, kFeatures}, device);
  torch::Tensor final_loss = batch_loss(model, fresh, fresh.matmul(true_weights));
  std::printf("loss on a fresh batch: %.4f\n", final_loss.item<float>());
  return 0;
}
