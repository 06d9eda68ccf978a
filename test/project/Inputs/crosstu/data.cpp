#include "data.h"

std::vector<Batch> gpu_batches(int n) {
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i)
    out.emplace_back(torch::randn({16, 8}, torch::kCUDA), torch::randn({16, 1}, torch::kCUDA));
  return out;
}

std::vector<Batch> host_batches(int n) {
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i)
    out.emplace_back(torch::randn({16, 8}), torch::randn({16, 1}));
  return out;
}

torch::Tensor shuffled_rows(const torch::Tensor &x) {
  TORCH_CHECK(x.device().is_cpu(), "expects a CPU tensor");
  return x.index_select(0, torch::randperm(x.size(0))).to(x.device());
}
