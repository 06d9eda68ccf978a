#include <torch/torch.h>

void train(torch::Tensor x) {
  auto y = x * ;
}
