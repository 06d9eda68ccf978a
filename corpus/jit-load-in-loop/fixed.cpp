// A small inference service: a TorchScript scorer answers a queue of requests. The model file
// is loaded once, before the request loop.
#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../probe/torchtidy_probe.h"

// Writes the scorer a training job would have exported (a linear layer and a softmax).
std::string exportScorer(int64_t features, int64_t classes) {
  torch::jit::Module scorer("Scorer");
  scorer.register_parameter("weight", torch::randn({classes, features}), /*is_buffer=*/false);
  scorer.register_parameter("bias", torch::zeros({classes}), /*is_buffer=*/false);
  scorer.define(R"JIT(
def forward(self, x):
    return (x.matmul(self.weight.t()) + self.bias).softmax(-1)
)JIT");
  const std::string path = (std::filesystem::temp_directory_path() / "torchtidy_scorer.pt").string();
  scorer.save(path);
  return path;
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 512;
  constexpr int64_t kClasses = 256;
  constexpr int64_t kRequests = 30;
  const std::string model_path = exportScorer(kFeatures, kClasses);
  std::vector<torch::Tensor> requests;
  for (int64_t i = 0; i < kRequests; ++i) requests.push_back(torch::randn({1, kFeatures}, device));

  torch::NoGradGuard no_grad;
  torch::jit::Module scorer = torch::jit::load(model_path, device);
  scorer.eval();
  std::vector<int64_t> answers;
  for (const torch::Tensor& request : requests) {
    probe::iteration();
    const auto start = std::chrono::steady_clock::now();
    answers.push_back(scorer.forward({request}).toTensor().argmax(-1).item<int64_t>());
    probe::value("request_ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("answered %zu requests, first class %lld\n", answers.size(), static_cast<long long>(answers.front()));
  return 0;
}
