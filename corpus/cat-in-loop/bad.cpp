// Embeddings of a whole dataset, extracted batch by batch with a trained encoder and gathered
// into one tensor for a nearest-neighbour index.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct EncoderImpl : torch::nn::Module {
  EncoderImpl(int64_t features, int64_t dim)
      : hidden(register_module("hidden", torch::nn::Linear(features, 2 * dim))),
        project(register_module("project", torch::nn::Linear(2 * dim, dim))) {}

  torch::Tensor forward(const torch::Tensor& x) { return project->forward(torch::relu(hidden->forward(x))); }

  torch::nn::Linear hidden, project;
};
TORCH_MODULE(Encoder);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 32;
  constexpr int64_t kDim = 128;
  constexpr int64_t kBatch = 32;
  constexpr int64_t kBatches = 300;

  const torch::Tensor dataset = torch::randn({kBatches * kBatch, kFeatures}, device);
  Encoder encoder(kFeatures, kDim);
  encoder->to(device);
  encoder->eval();
  torch::NoGradGuard no_grad;

  torch::Tensor embeddings = torch::empty({0, kDim}, device);
  for (int64_t b = 0; b < kBatches; ++b) {
    probe::iteration();
    const torch::Tensor batch = dataset.slice(0, b * kBatch, (b + 1) * kBatch);
    embeddings = torch::cat({embeddings, encoder->forward(batch)});
  }
  std::printf("%lld embeddings of size %lld, mean norm %.4f\n", static_cast<long long>(embeddings.size(0)),
              static_cast<long long>(embeddings.size(1)), embeddings.norm(2, 1).mean().item<double>());
  return 0;
}
