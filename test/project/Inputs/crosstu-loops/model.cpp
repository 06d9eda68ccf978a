#include "model.h"

Splats::Splats(torch::Device d) : device(d), means(torch::randn({16, 3}, d).requires_grad_()) {
  opt = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{means}, 1e-3);
}

// Called on every training step by train.cpp.
torch::Tensor Splats::forward(int step) {
  torch::Tensor view = torch::eye(4, device); // POSITIVE: allocation-in-loop (train.cpp's loop)
  torch::Tensor projected = project();
  torch::Tensor radii = means.norm(2, {-1});
  if (radii.sum().item<float>() == 0.0f) // POSITIVE: sync-in-hot-loop (train.cpp's loop)
    return torch::zeros({4, 4}, device);
  if (step % 100 == 0)
    std::cout << radii.max().item<float>() << "\n"; // NEGATIVE: every 100 steps
  torch::Tensor mask = torch::ones({16}, device); // NEGATIVE: after a return that may be taken
  return torch::matmul(view.index({torch::indexing::Slice(0, 3), torch::indexing::Slice(0, 3)}), means.t()) +
         projected.sum() + mask.sum();
}

// Called by forward, so on every training step too, through a helper of this TU.
torch::Tensor Splats::project() {
  torch::Tensor scale = torch::ones({3}, device); // POSITIVE: allocation-in-loop (through forward)
  return means * scale;
}

// Called on every iteration of an evaluation loop under no_grad (eval.cpp): no training step.
float Splats::score() {
  torch::NoGradGuard guard;
  torch::Tensor buf = torch::zeros({4, 4}, device); // NEGATIVE: the loop runs no model
  return means.sum().item<float>() + buf.sum().item<float>(); // NEGATIVE: no training loop
}

// Called once, outside any loop (main.cpp).
float Splats::report() {
  torch::Tensor buf = torch::zeros({4, 4}, device); // NEGATIVE: called once
  return means.mean().item<float>() + buf.sum().item<float>(); // NEGATIVE: called once
}

// Called inside the training loop only every 10 steps (train.cpp).
torch::Tensor Splats::render(int step) {
  torch::Tensor bg = torch::zeros({3}, device); // NEGATIVE: the call is under an interval
  return bg + means.sum().item<float>(); // NEGATIVE: the call is under an interval
}

void Splats::zeroGrad() { opt->zero_grad(); }
void Splats::step() { opt->step(); }
