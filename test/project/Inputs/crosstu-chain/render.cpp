#include "field.h"

torch::Tensor render(Field &field, const torch::Tensor &rays, bool fine) {
  torch::Tensor rgb = field->forward(rays, fine);
  return rgb.sigmoid();
}

int64_t rendered = 0;
torch::Tensor renderAfterWarmup(const torch::Tensor &rays) {
  if (++rendered < 100) // a warm-up: every call after the hundredth encodes
    return rays;
  return encodeAfterWarmup(rays, 4);
}

torch::Tensor renderLogged(const torch::Tensor &rays, int64_t step) {
  if (step % 100 != 0) // an interval guard written as an early return
    return rays;
  return encodeEvery100(rays, 4);
}
