// Trains a plain (non-holder) module and scores it with a helper that runs batched
// inference.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct Scorer : torch::nn::Module {
  explicit Scorer(int64_t features)
      : fc1(register_module("fc1", torch::nn::Linear(features, 256))),
        fc2(register_module("fc2", torch::nn::Linear(256, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return torch::sigmoid(fc2->forward(torch::relu(fc1->forward(x)))); }

  torch::nn::Linear fc1, fc2;
};

// Fraction of samples whose predicted probability falls on the right side of 0.5.
double accuracy(Scorer& scorer, const torch::Tensor& inputs, const torch::Tensor& labels, int64_t batch) {
  int64_t correct = 0;
  for (int64_t start = 0; start < inputs.size(0); start += batch) {
    probe::iteration();
    const torch::Tensor probability = scorer.forward(inputs.slice(0, start, start + batch));
    probe::output(probability);
    correct += probability.gt(0.5).eq(labels.slice(0, start, start + batch)).sum().item<int64_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(inputs.size(0));
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 48;
  constexpr int64_t kBatch = 256;

  const torch::Tensor direction = torch::randn({kFeatures, 1}, device);
  const torch::Tensor inputs = torch::randn({2048, kFeatures}, device);
  const torch::Tensor labels = inputs.matmul(direction).gt(0);

  Scorer scorer(kFeatures);
  scorer.to(device);
  torch::optim::Adam optimizer(scorer.parameters(), torch::optim::AdamOptions(1e-3));
  for (int64_t start = 0; start < inputs.size(0); start += kBatch) {
    optimizer.zero_grad();
    torch::Tensor probability = scorer.forward(inputs.slice(0, start, start + kBatch));
    torch::Tensor loss = torch::binary_cross_entropy(probability, labels.slice(0, start, start + kBatch).to(torch::kFloat));
    loss.backward();
    optimizer.step();
  }

  const double score = accuracy(scorer, inputs, labels, kBatch);
  std::printf("training-set accuracy %.3f\n", score);
  return 0;
}
