// Trains a regressor for a few epochs and validates after each one with an evaluation
// lambda.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  RegressorImpl(int64_t features, int64_t hidden)
      : body(register_module("body", torch::nn::Sequential(torch::nn::Linear(features, hidden), torch::nn::ReLU(),
                                                           torch::nn::Dropout(0.1), torch::nn::Linear(hidden, 1)))) {}

  torch::Tensor forward(const torch::Tensor& x) { return body->forward(x); }

  torch::nn::Sequential body;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kBatch = 256;
  constexpr int64_t kEpochs = 3;

  const torch::Tensor true_weights = torch::randn({kFeatures, 1}, device);
  const torch::Tensor train_inputs = torch::randn({2048, kFeatures}, device);
  const torch::Tensor train_targets = train_inputs.matmul(true_weights);
  const torch::Tensor valid_inputs = torch::randn({1024, kFeatures}, device);
  const torch::Tensor valid_targets = valid_inputs.matmul(true_weights);

  Regressor model(kFeatures, 512);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(1e-2).momentum(0.9));

  auto validate = [&]() {
    model->eval();
    torch::NoGradGuard no_grad;
    double squared_error = 0.0;
    for (int64_t start = 0; start < valid_inputs.size(0); start += kBatch) {
      probe::iteration();
      const torch::Tensor prediction = model->forward(valid_inputs.slice(0, start, start + kBatch));
      probe::output(prediction);
      squared_error += (prediction - valid_targets.slice(0, start, start + kBatch)).pow(2).sum().item<double>();
    }
    model->train();
    return squared_error / static_cast<double>(valid_inputs.size(0));
  };

  for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
    for (int64_t start = 0; start < train_inputs.size(0); start += kBatch) {
      optimizer.zero_grad();
      torch::Tensor loss = torch::mse_loss(model->forward(train_inputs.slice(0, start, start + kBatch)),
                                           train_targets.slice(0, start, start + kBatch));
      loss.backward();
      optimizer.step();
    }
    std::printf("epoch %lld: validation mse %.4f\n", static_cast<long long>(epoch), validate());
  }
  return 0;
}
