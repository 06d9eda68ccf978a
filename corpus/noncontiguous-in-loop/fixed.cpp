// Nearest-neighbour classification of query batches against a bank of training features
// (cosine similarity), with a small projection network in front.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kBank = 4096;
  constexpr int64_t kDim = 64;
  constexpr int64_t kBatch = 32;
  constexpr int64_t kBatches = 30;

  torch::nn::Linear projection(kDim, kDim);
  projection->to(device);
  projection->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor bank = torch::nn::functional::normalize(
      torch::randn({kBank, kDim}, device), torch::nn::functional::NormalizeFuncOptions().dim(1));
  const torch::Tensor bank_labels = torch::randint(10, {kBank}, torch::TensorOptions(torch::kLong).device(device));
  const torch::Tensor bank_t = bank.t().contiguous();

  int64_t agree = 0;
  for (int64_t b = 0; b < kBatches; ++b) {
    probe::iteration();
    const torch::Tensor queries = torch::nn::functional::normalize(
        projection->forward(torch::randn({kBatch, kDim}, device)), torch::nn::functional::NormalizeFuncOptions().dim(1));
    const torch::Tensor similarity = torch::mm(queries, bank_t);
    const torch::Tensor nearest = similarity.argmax(1);
    agree += bank_labels.index_select(0, nearest).eq(0).sum().item<int64_t>();
  }
  std::printf("%lld of %lld queries matched class 0\n", static_cast<long long>(agree),
              static_cast<long long>(kBatch * kBatches));
  return 0;
}
