// Serves scoring requests: the server turns autograd off once, then scores each request on a
// worker thread so that the accepting thread stays responsive.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <future>

#include "../probe/torchtidy_probe.h"

struct ScorerImpl : torch::nn::Module {
  ScorerImpl(int64_t features, int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return torch::sigmoid(fc2->forward(torch::relu(fc1->forward(x)))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Scorer);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 64;
  constexpr int64_t kBatch = 256;
  constexpr int64_t kRequests = 20;

  Scorer model(kFeatures, 256);
  model->to(device);
  model->eval();
  torch::NoGradGuard no_grad;

  double total = 0.0;
  for (int64_t request = 0; request < kRequests; ++request) {
    probe::iteration();
    const torch::Tensor features = torch::randn({kBatch, kFeatures}, device);
    auto pending = std::async(std::launch::async, [&model, &features] {
      torch::Tensor scores = model->forward(features);
      probe::output(scores);
      return scores.mean().item<double>();
    });
    total += pending.get();
  }
  std::printf("mean score over %lld requests: %.4f\n", static_cast<long long>(kRequests), total / kRequests);
  return 0;
}
