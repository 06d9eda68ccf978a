#include "field.h"

torch::Tensor render(Field &field, const torch::Tensor &rays, bool fine) {
  torch::Tensor rgb = field->forward(rays, fine);
  return rgb.sigmoid();
}
