// Trains a small classifier and keeps the name of each step's grad_fn() so that the structure
// of the graph can be printed at the end.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl(int64_t features, int64_t hidden, int64_t classes)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Classifier);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 16;
  constexpr int64_t kClasses = 4;
  constexpr int64_t kBatch = 64;
  constexpr int64_t kSteps = 20;

  Classifier model(kFeatures, 32, kClasses);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  std::vector<std::string> graph_roots;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor inputs = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor labels = torch::randint(kClasses, {kBatch}, torch::TensorOptions(torch::kLong).device(device));

    optimizer.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(inputs), labels);
    loss.backward();
    optimizer.step();

    graph_roots.push_back(loss.grad_fn()->name());
    probe::keep(graph_roots);
  }

  std::printf("last step's graph ends in %s; %zu steps recorded\n", graph_roots.back().c_str(),
              graph_roots.size());
  return 0;
}
