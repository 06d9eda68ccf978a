#include "model.h"

float evaluate(Splats &model, int n) {
  torch::NoGradGuard guard;
  float total = 0;
  for (int i = 0; i < n; ++i) // an evaluation loop, no_grad
    total += model.score();
  return total;
}
