#include "field.h"

torch::Tensor encode(const torch::Tensor &x, int64_t n) {
  auto freqs = torch::arange(n).to(torch::kFloat).to(torch::kCUDA); // per step, four calls down
  return x * freqs.sum();
}

torch::Tensor encodeRarely(const torch::Tensor &x, int64_t n) {
  auto freqs = torch::arange(n).to(torch::kFloat).to(torch::kCUDA); // called under a condition
  return x * freqs.sum();
}

torch::Tensor encodeOnce(const torch::Tensor &x, int64_t n) {
  auto freqs = torch::arange(n).to(torch::kFloat).to(torch::kCUDA); // called once, before training
  return x * freqs.sum();
}

torch::Tensor encodeAfterWarmup(const torch::Tensor &x, int64_t n) {
  auto freqs = torch::arange(n).to(torch::kFloat).to(torch::kCUDA); // per step after the warm-up
  return x * freqs.sum();
}

torch::Tensor encodeEvery100(const torch::Tensor &x, int64_t n) {
  auto freqs = torch::arange(n).to(torch::kFloat).to(torch::kCUDA); // every hundredth step
  return x * freqs.sum();
}
