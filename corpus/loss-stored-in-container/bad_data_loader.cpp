// Trains a classifier with a data loader over an in-memory dataset and collects the
// epoch's predictions to report the training accuracy.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

// Points drawn around one centre per class.
class BlobDataset : public torch::data::datasets::Dataset<BlobDataset> {
 public:
  BlobDataset(int64_t samples, int64_t features, int64_t classes)
      : labels_(torch::randint(classes, {samples}, torch::kLong)),
        inputs_(torch::randn({classes, features}).index_select(0, labels_) * 3 +
                torch::randn({samples, features})) {}

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
      : hidden(register_module("hidden", torch::nn::Linear(features, 32))),
        logits(register_module("logits", torch::nn::Linear(32, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) { return logits->forward(torch::relu(hidden->forward(x))); }

  torch::nn::Linear hidden, logits;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 8;
  constexpr int64_t kClasses = 4;

  auto dataset = BlobDataset(640, kFeatures, kClasses).map(torch::data::transforms::Stack<>());
  auto data_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(32));

  Classifier model(kFeatures, kClasses);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));

  std::vector<torch::Tensor> predictions;
  std::vector<torch::Tensor> labels;
  for (auto& batch : *data_loader) {
    probe::iteration();
    const torch::Tensor inputs = batch.data.to(device);
    const torch::Tensor targets = batch.target.to(device);
    optimizer.zero_grad();
    torch::Tensor output = model->forward(inputs);
    torch::Tensor loss = torch::nn::functional::cross_entropy(output, targets);
    loss.backward();
    optimizer.step();

    predictions.push_back(output);
    labels.push_back(targets);
    probe::keep(predictions);
  }

  const torch::Tensor predicted = torch::cat(predictions).argmax(1);
  const double accuracy = predicted.eq(torch::cat(labels)).to(torch::kFloat).mean().item<double>();
  std::printf("training accuracy %.3f over %zu batches\n", accuracy, predictions.size());
  return 0;
}
