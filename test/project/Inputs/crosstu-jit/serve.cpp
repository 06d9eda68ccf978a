#include "scorer.h"

#include <vector>

// A scripted scorer loaded on every request, from the same file (POSITIVE in scorer.cpp).
double serve_requests(const torch::Tensor &x) {
  double total = 0;
  int served = 0;
  while (served++ < 1000)
    total += score_scripted("scorer.pt", x);
  return total;
}

// Each checkpoint of a list scored once: a different file on every iteration (NEGATIVE).
double compare_checkpoints(const std::vector<std::string> &paths, const torch::Tensor &x) {
  double best = 0;
  for (const auto &path : paths)
    best = std::max(best, mean_score(path, x));
  return best;
}

// A file name fixed inside the helper, which a loop calls on every iteration (POSITIVE).
double serve_default(const std::vector<torch::Tensor> &batches) {
  double total = 0;
  for (const auto &batch : batches)
    total += score_default(batch);
  return total;
}
