// harness: address-sanitizer
// Parses a dataset of feature rows into tensors once, then fits a linear model on them.
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

// Stands in for parsing one line of a CSV file.
std::vector<float> parse_row(int64_t index, int64_t features) {
  std::vector<float> values(features);
  for (int64_t j = 0; j < features; ++j) values[j] = std::sin(0.1f * static_cast<float>(index * features + j));
  return values;
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kRows = 8;
  constexpr int64_t kSteps = 16;

  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < kRows; ++i) {
    std::vector<float> values = parse_row(i, kFeatures);
    rows.push_back(torch::from_blob(values.data(), {kFeatures}).clone());
  }

  torch::nn::Linear model(kFeatures, 1);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor& row = rows[step % kRows];
    probe::read(row);
    optimizer.zero_grad();
    torch::Tensor loss = (model->forward(row.unsqueeze(0).to(device)) - 1.0).pow(2).mean();
    loss.backward();
    optimizer.step();
  }
  std::printf("trained on %zu rows\n", rows.size());
  return 0;
}
