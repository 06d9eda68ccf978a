#include "field.h"

torch::Tensor FieldImpl::forward(const torch::Tensor &x, bool fine) {
  torch::Tensor h = encode(x, 4);
  if (fine)
    h = h + encodeRarely(x, 4);
  return fc(h);
}
