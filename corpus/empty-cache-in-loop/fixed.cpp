// An MLP trained on the GPU that hands the memory it cached back to the driver by emptying the
// CUDA caching allocator once, when training is over. Builds against a CUDA LibTorch only.
#include <torch/torch.h>

#include <c10/cuda/CUDACachingAllocator.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t features, int64_t hidden)
      : input(register_module("input", torch::nn::Linear(features, hidden))),
        middle(register_module("middle", torch::nn::Linear(hidden, hidden))),
        output(register_module("output", torch::nn::Linear(hidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return output->forward(torch::relu(middle->forward(torch::relu(input->forward(x)))));
  }

  torch::nn::Linear input, middle, output;
};
TORCH_MODULE(Mlp);

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 256;
  constexpr int64_t kBatch = 512;
  constexpr int64_t kSteps = 40;

  Mlp model(kFeatures, 2048);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  constexpr int64_t kWarmup = 5;
  // Timed over the steps after the warm-up, to the end of the work they queued on the GPU: a
  // step that synchronizes the device stops the host from queueing the next one meanwhile.
  std::chrono::steady_clock::time_point timed;
  std::vector<torch::Tensor> losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    if (step == kWarmup) timed = std::chrono::steady_clock::now();
    const auto start = std::chrono::steady_clock::now();
    const torch::Tensor x = torch::randn({kBatch, kFeatures}, device);
    const torch::Tensor y = x.sum(1, /*keepdim=*/true).sin();
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.detach());
    probe::value("step_ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  // Once, after training: whatever runs next on this GPU gets the cached blocks back.
  c10::cuda::CUDACachingAllocator::emptyCache();
  if (device.is_cuda()) torch::cuda::synchronize();
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - timed;
  probe::value("ms_per_step", elapsed.count() / static_cast<double>(kSteps - kWarmup));
  std::printf("first loss %.4f, last loss %.4f on %s\n", losses.front().item<float>(), losses.back().item<float>(),
              device.str().c_str());
  return 0;
}
