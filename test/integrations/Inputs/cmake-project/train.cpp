// The in-place update on a leaf that requires grad: torch-inplace-on-leaf, an error-level check.
#include <torch/torch.h>

torch::Tensor train_step(const torch::Tensor &x) {
  auto w = torch::ones({3}, torch::requires_grad());
  w.add_(1);
  auto loss = (x * w).sum();
  loss.backward();
  return w.grad();
}
