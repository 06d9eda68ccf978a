// A small training step with an in-place update on a leaf that requires grad: torchtidy
// must flag `w.add_(1)` with torch-inplace-on-leaf.
#include <torch/torch.h>

torch::Tensor train_step(const torch::Tensor &x) {
  auto w = torch::ones({3}, torch::requires_grad());
  w.add_(1);
  auto loss = (x * w).sum();
  loss.backward();
  return w.grad();
}
