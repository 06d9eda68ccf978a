// A classifier with dropout, validated after every epoch. Validation switches the model to
// evaluation mode and nothing switches it back, so from the second epoch on it trains with
// dropout off.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t hidden, int64_t classes)
      : hidden_layer(register_module("hidden_layer", torch::nn::Linear(features, hidden))),
        dropout(register_module("dropout", torch::nn::Dropout(0.5))),
        output_layer(register_module("output_layer", torch::nn::Linear(hidden, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return output_layer->forward(dropout->forward(torch::relu(hidden_layer->forward(x))));
  }

  torch::nn::Linear hidden_layer;
  torch::nn::Dropout dropout;
  torch::nn::Linear output_layer;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 20, kClasses = 4, kBatch = 32, kBatches = 8, kEpochs = 4;
  const torch::Tensor inputs = torch::randn({kBatches * kBatch, kFeatures}, device);
  const torch::Tensor labels = inputs.narrow(1, 0, kClasses).argmax(1);
  const torch::Tensor val_inputs = torch::randn({64, kFeatures}, device);
  const torch::Tensor val_labels = val_inputs.narrow(1, 0, kClasses).argmax(1);

  Classifier model(kFeatures, 64, kClasses);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  std::vector<float> val_accuracy;
  for (int64_t epoch = 0; epoch < kEpochs; ++epoch) {
    for (int64_t b = 0; b < kBatches; ++b) {
      probe::iteration();
      const torch::Tensor x = inputs.slice(0, b * kBatch, (b + 1) * kBatch);
      const torch::Tensor y = labels.slice(0, b * kBatch, (b + 1) * kBatch);
      optimizer.zero_grad();
      const torch::Tensor logits = model->forward(x);
      {
        // The same batch again: with dropout on, the two forwards differ.
        torch::NoGradGuard no_grad;
        probe::value("dropout_active", torch::equal(logits.detach(), model->forward(x)) ? 0.0 : 1.0);
      }
      torch::nn::functional::cross_entropy(logits, y).backward();
      optimizer.step();
    }
    model->eval();
    torch::NoGradGuard no_grad;
    val_accuracy.push_back(model->forward(val_inputs).argmax(1).eq(val_labels).to(torch::kFloat).mean().item<float>());
  }
  std::printf("validation accuracy after the last epoch %.3f\n", val_accuracy.back());
  return 0;
}
