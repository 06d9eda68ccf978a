#include "eval.h"

float validate(Net &net, const std::vector<Batch> &batches) {
  net->eval();
  torch::NoGradGuard no_grad;
  float total = 0;
  for (const auto &b : batches)
    total += torch::mse_loss(net->forward(b.first), b.second).item<float>();
  return total / batches.size();
}

float validate_restoring(Net &net, const std::vector<Batch> &batches) {
  float loss = validate(net, batches);
  net->train();
  return loss;
}
