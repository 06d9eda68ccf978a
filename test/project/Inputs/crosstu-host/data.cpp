#include "data.h"

// A constant fill made on the host on every call: a caller moving it to the device every
// iteration could make it there once (positive in train.cpp).
torch::Tensor smoothing_mask() { return torch::full({64, 10}, 0.01); }

// Host data: values, a wrapped buffer, a row filled in place, a device the caller names.
torch::Tensor from_values(const std::vector<float> &v) { return torch::tensor(v); }
torch::Tensor wrap_buffer(std::vector<float> &v) { return torch::from_blob(v.data(), {(int64_t)v.size()}); }
torch::Tensor filled_row(const std::vector<float> &v) {
  auto t = torch::zeros({(int64_t)v.size()});
  auto a = t.accessor<float, 1>();
  for (size_t j = 0; j < v.size(); ++j)
    a[j] = v[j];
  return t;
}
torch::Tensor mask_on(torch::Device device) { return torch::full({64, 10}, 0.01, device); }
