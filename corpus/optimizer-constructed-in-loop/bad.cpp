// Fits a small regression network with Adam. The optimizer is built inside the batch loop,
// next to the forward pass that uses it.
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  explicit RegressorImpl(int64_t features)
      : hidden(register_module("hidden", torch::nn::Linear(features, 32))),
        out(register_module("out", torch::nn::Linear(32, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return out->forward(torch::relu(hidden->forward(x))); }

  torch::nn::Linear hidden, out;
};
TORCH_MODULE(Regressor);

// How many steps Adam's moment estimates have seen (the largest count over the parameters).
int64_t adamSteps(torch::optim::Adam& optimizer) {
  int64_t steps = 0;
  for (auto& entry : optimizer.state())
    steps = std::max<int64_t>(steps, static_cast<torch::optim::AdamParamState&>(*entry.second).step());
  return steps;
}

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kFeatures = 8;
  const torch::Tensor inputs = torch::randn({1024, kFeatures}, device);
  const torch::Tensor targets = (inputs * torch::linspace(-1, 1, kFeatures, device)).sum(1, /*keepdim=*/true).tanh();

  Regressor model(kFeatures);
  model->to(device);
  for (int64_t start = 0; start < inputs.size(0); start += 32) {
    probe::iteration();
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(inputs.slice(0, start, start + 32)),
                                         targets.slice(0, start, start + 32));
    loss.backward();
    optimizer.step();
    probe::value("adam_steps", static_cast<double>(adamSteps(optimizer)));
    probe::value("loss", loss.detach());
  }
  std::printf("final loss %.4f\n", torch::mse_loss(model->forward(inputs), targets).item<double>());
  return 0;
}
