// Trains an imbalanced classifier on the GPU when one is present (on the CPU otherwise),
// weighting the loss by inverse class frequency.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

// Samples of three classes with a 70/20/10 split.
class ImbalancedDataset : public torch::data::datasets::Dataset<ImbalancedDataset> {
 public:
  ImbalancedDataset(int64_t samples, int64_t features)
      : labels_(torch::bucketize(torch::rand({samples}), torch::tensor({0.7, 0.9}))),
        inputs_(torch::randn({3, features}).index_select(0, labels_) + torch::randn({samples, features})) {}

  torch::data::Example<> get(size_t index) override {
    return {inputs_[static_cast<int64_t>(index)], labels_[static_cast<int64_t>(index)]};
  }

  torch::optional<size_t> size() const override { return static_cast<size_t>(labels_.size(0)); }

 private:
  torch::Tensor labels_;
  torch::Tensor inputs_;
};

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t classes)
      : hidden(register_module("hidden", torch::nn::Linear(features, 64))),
        logits(register_module("logits", torch::nn::Linear(64, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) { return logits->forward(torch::relu(hidden->forward(x))); }

  torch::nn::Linear hidden, logits;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 16;

  auto data_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      ImbalancedDataset(1280, kFeatures).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(64));

  Classifier model(kFeatures, 3);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor class_weights = torch::tensor({1.0f / 0.7f, 1.0f / 0.2f, 1.0f / 0.1f});

  double last_loss = 0.0;
  for (auto& batch : *data_loader) {
    probe::iteration();
    const torch::Tensor inputs = batch.data.to(device);
    const torch::Tensor labels = batch.target.to(device);

    optimizer.zero_grad();
    torch::Tensor logits = model->forward(inputs);
    const auto options = torch::nn::functional::CrossEntropyFuncOptions().weight(class_weights.to(device));
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, labels, options);
    loss.backward();
    optimizer.step();
    last_loss = loss.item<double>();
  }
  std::printf("final weighted loss %.4f on %s\n", last_loss, device.str().c_str());
  return 0;
}
