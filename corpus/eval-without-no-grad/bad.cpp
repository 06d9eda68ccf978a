// Trains a classifier with dropout on synthetic clusters, then measures its accuracy on a
// held-out set.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t hidden, int64_t classes)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        dropout(register_module("dropout", torch::nn::Dropout(0.2))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return fc2->forward(dropout->forward(torch::relu(fc1->forward(x))));
  }

  torch::nn::Linear fc1;
  torch::nn::Dropout dropout;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 64;
  constexpr int64_t kClasses = 10;
  constexpr int64_t kBatch = 256;
  constexpr int64_t kSamples = 2560;

  const torch::Tensor centres = torch::randn({kClasses, kFeatures}, device);
  const torch::Tensor train_labels = torch::randint(kClasses, {kSamples}, torch::TensorOptions(torch::kLong).device(device));
  const torch::Tensor train_inputs = centres.index_select(0, train_labels) + 0.5 * torch::randn({kSamples, kFeatures}, device);
  const torch::Tensor test_labels = torch::randint(kClasses, {kSamples}, torch::TensorOptions(torch::kLong).device(device));
  const torch::Tensor test_inputs = centres.index_select(0, test_labels) + 0.5 * torch::randn({kSamples, kFeatures}, device);

  Classifier model(kFeatures, 512, kClasses);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  model->train();
  for (int64_t start = 0; start < kSamples; start += kBatch) {
    optimizer.zero_grad();
    torch::Tensor logits = model->forward(train_inputs.slice(0, start, start + kBatch));
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, train_labels.slice(0, start, start + kBatch));
    loss.backward();
    optimizer.step();
  }

  model->eval();
  int64_t correct = 0;
  for (int64_t start = 0; start < kSamples; start += kBatch) {
    probe::iteration();
    const torch::Tensor logits = model->forward(test_inputs.slice(0, start, start + kBatch));
    probe::output(logits);
    correct += logits.argmax(1).eq(test_labels.slice(0, start, start + kBatch)).sum().item<int64_t>();
  }
  std::printf("test accuracy %.3f\n", static_cast<double>(correct) / kSamples);
  return 0;
}
