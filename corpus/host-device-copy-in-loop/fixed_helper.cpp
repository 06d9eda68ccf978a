// A regressor over sliding windows of a signal. Each sample also gets its position in the
// window as an extra input feature, built once on the device before training. Runs on the GPU
// when one is present.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "../probe/torchtidy_probe.h"

struct WindowRegressorImpl : torch::nn::Module {
  explicit WindowRegressorImpl(int64_t features)
      : fc1(register_module("fc1", torch::nn::Linear(features, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(WindowRegressor);

// The position of every sample of a window of `rows` samples, scaled to [0, 1], made on `device`.
torch::Tensor window_positions(int64_t rows, torch::Device device) {
  return torch::linspace(0.0, 1.0, rows, torch::TensorOptions().device(device)).unsqueeze(1);
}

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  constexpr int64_t kFeatures = 16;
  constexpr int64_t kWindow = 256;
  constexpr int64_t kSteps = 20;

  const torch::Tensor signal = torch::sin(torch::linspace(0, 40, kSteps * kWindow * kFeatures)).reshape({-1, kFeatures});
  const torch::Tensor target = signal.sum(1, /*keepdim=*/true);
  WindowRegressor model(kFeatures + 1);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  const torch::Tensor positions = window_positions(kWindow, device);
  double last_loss = 0.0;
  for (int64_t step = 0; step < kSteps; ++step) {
    probe::iteration();
    const torch::Tensor window = signal.slice(0, step * kWindow, (step + 1) * kWindow).to(device);
    const torch::Tensor expected = target.slice(0, step * kWindow, (step + 1) * kWindow).to(device);
    const torch::Tensor inputs = torch::cat({window, positions}, 1);

    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model->forward(inputs), expected);
    loss.backward();
    optimizer.step();
    last_loss = loss.item<double>();
  }
  std::printf("final loss %.4f on %s\n", last_loss, device.str().c_str());
  return 0;
}
