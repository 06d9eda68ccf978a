#include <torch/torch.h>

void update(torch::Tensor grad) {
  torch::Tensor w = torch::randn({4}, torch::requires_grad());
  w.sub_(grad);
}
