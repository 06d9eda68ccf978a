// The loops: the policy's code is in policy.cu.
#include "policy.h"

// act() (policy.cu) runs the network: an evaluation loop without no-grad.
float rollout(Policy &policy, const std::vector<torch::Tensor> &observations) {
  policy->eval();
  float total = 0;
  for (const auto &obs : observations) {
    torch::Tensor probs = policy->act(obs); // POSITIVE: eval-without-no-grad
    total += probs.max().item<float>();
  }
  return total;
}

// describe() (policy.cu) runs nothing.
size_t describe_all(Policy &policy, int n) {
  policy->eval();
  size_t total = 0;
  for (int i = 0; i < n; ++i)
    total += policy->describe().size(); // NEGATIVE
  return total;
}
