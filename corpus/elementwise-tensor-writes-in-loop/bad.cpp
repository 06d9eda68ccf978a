// A logistic-regression model trained on tabular records parsed into plain C++ rows; each
// batch is turned into a tensor before the step.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "../probe/torchtidy_probe.h"

constexpr int64_t kFeatures = 16;
constexpr int64_t kBatch = 32;
constexpr int64_t kBatches = 20;

struct Record {
  std::vector<float> features;
  float label;
};

std::vector<Record> makeRecords() {
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<Record> records(kBatch * kBatches);
  for (Record& r : records) {
    for (int64_t j = 0; j < kFeatures; ++j) r.features.push_back(normal(rng));
    r.label = r.features[0] + r.features[1] > 0 ? 1.0f : 0.0f;
  }
  return records;
}

// Copies batch b of the records into the host tensors that the step then moves to the device.
void fillBatch(const std::vector<Record>& records, int64_t b, torch::Tensor& inputs, torch::Tensor& targets) {
  for (int64_t i = 0; i < kBatch; ++i) {
    const Record& r = records[b * kBatch + i];
    for (int64_t j = 0; j < kFeatures; ++j) inputs[i][j] = r.features[j];
    targets[i][0] = r.label;
  }
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  const std::vector<Record> records = makeRecords();
  torch::nn::Linear model(kFeatures, 1);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));

  torch::Tensor inputs = torch::empty({kBatch, kFeatures});
  torch::Tensor targets = torch::empty({kBatch, 1});
  for (int64_t b = 0; b < kBatches; ++b) {
    probe::iteration();
    fillBatch(records, b, inputs, targets);
    optimizer.zero_grad();
    const torch::Tensor loss = torch::binary_cross_entropy_with_logits(model->forward(inputs.to(device)), targets.to(device));
    loss.backward();
    optimizer.step();
    probe::value("loss", loss.detach());
  }
  return 0;
}
