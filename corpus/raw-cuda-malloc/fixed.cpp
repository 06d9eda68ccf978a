// A regression model whose batches are staged through a device buffer before the forward: the
// buffer is a tensor, so LibTorch's caching allocator hands the same block back every step.
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct RegressorImpl : torch::nn::Module {
  RegressorImpl(int64_t features, int64_t hidden)
      : hidden_layer(register_module("hidden_layer", torch::nn::Linear(features, hidden))),
        output_layer(register_module("output_layer", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return output_layer->forward(torch::relu(hidden_layer->forward(x))); }

  torch::nn::Linear hidden_layer, output_layer;
};
TORCH_MODULE(Regressor);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 256;
  constexpr int64_t kBatch = 1024;
  constexpr int64_t kSteps = 40;

  const torch::Tensor inputs = torch::randn({kSteps * kBatch, kFeatures}, device);
  const torch::Tensor targets = inputs.sum(1, /*keepdim=*/true).sin();
  Regressor model(kFeatures, 512);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));

  constexpr int64_t kWarmup = 5;
  // Timed over the steps after the warm-up, to the end of the work they queued on the GPU: a
  // step that synchronizes the device stops the host from queueing the next one meanwhile.
  std::chrono::steady_clock::time_point timed;
  std::vector<torch::Tensor> losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    if (step == kWarmup) timed = std::chrono::steady_clock::now();
    const auto start = std::chrono::steady_clock::now();
    const torch::Tensor batch = inputs.slice(0, step * kBatch, (step + 1) * kBatch).contiguous();
    torch::Tensor x = torch::empty({kBatch, kFeatures}, torch::TensorOptions().device(device));
    x.copy_(batch);
    const torch::Tensor y = targets.slice(0, step * kBatch, (step + 1) * kBatch);
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.detach());
    probe::value("step_ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  if (device.is_cuda()) torch::cuda::synchronize();
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - timed;
  probe::value("ms_per_step", elapsed.count() / static_cast<double>(kSteps - kWarmup));
  std::printf("first loss %.4f, last loss %.4f on %s\n", losses.front().item<float>(), losses.back().item<float>(),
              device.str().c_str());
  return 0;
}
