#pragma once
#include <torch/torch.h>
#include <vector>

torch::Tensor smoothing_mask();
torch::Tensor from_values(const std::vector<float> &v);
torch::Tensor wrap_buffer(std::vector<float> &v);
torch::Tensor filled_row(const std::vector<float> &v);
torch::Tensor mask_on(torch::Device device);
