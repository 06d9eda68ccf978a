// A policy-gradient agent on a toy bandit-like environment: a rollout buffer records the
// log-probabilities and rewards of every step, then one REINFORCE update per rollout.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct PolicyImpl : torch::nn::Module {
  explicit PolicyImpl(int64_t observations)
      : head(register_module("head", torch::nn::Linear(observations, 2))) {}

  torch::Tensor forward(const torch::Tensor& obs) { return torch::log_softmax(head->forward(obs), -1); }

  torch::nn::Linear head;
};
TORCH_MODULE(Policy);

class RolloutBuffer {
 public:
  explicit RolloutBuffer(torch::Device device)
      : log_probs_(torch::empty({0}, device)), rewards_(torch::empty({0}, device)) {}

  void add(const torch::Tensor& log_prob, const torch::Tensor& reward) {
    log_probs_ = torch::cat({log_probs_, log_prob.view({1})});
    rewards_ = torch::cat({rewards_, reward.view({1})});
  }

  torch::Tensor loss() const { return -(log_probs_ * (rewards_ - rewards_.mean())).sum(); }

 private:
  torch::Tensor log_probs_;
  torch::Tensor rewards_;
};

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kObservations = 8;
  constexpr int64_t kSteps = 2048;
  Policy policy(kObservations);
  policy->to(device);
  torch::optim::Adam optimizer(policy->parameters(), torch::optim::AdamOptions(1e-2));
  const torch::Tensor good_action = torch::randn({kObservations}, device);

  RolloutBuffer buffer(device);
  for (int64_t t = 0; t < kSteps; ++t) {
    probe::iteration();
    const torch::Tensor obs = torch::randn({kObservations}, device);
    const torch::Tensor log_probs = policy->forward(obs);
    const torch::Tensor action = torch::multinomial(log_probs.exp().detach(), 1).squeeze();
    const torch::Tensor reward = (action == (obs.dot(good_action) > 0)).to(torch::kFloat);
    buffer.add(log_probs.index({action}), reward);
  }
  optimizer.zero_grad();
  const torch::Tensor loss = buffer.loss();
  loss.backward();
  optimizer.step();
  std::printf("rollout of %lld steps, policy loss %.4f\n", static_cast<long long>(kSteps), loss.item<double>());
  return 0;
}
