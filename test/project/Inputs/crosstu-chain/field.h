#pragma once
#include <torch/torch.h>

// The shape of a NeRF trainer (Gatsby23/nerf-libtorch): the training loop (train.cpp) renders
// through volume rendering (render.cpp), which runs the radiance field (field.cpp), which
// encodes its input (encode.cpp): each call on every call of the one above it.
torch::Tensor encode(const torch::Tensor &x, int64_t n);
torch::Tensor encodeRarely(const torch::Tensor &x, int64_t n);
torch::Tensor encodeOnce(const torch::Tensor &x, int64_t n);

struct FieldImpl : torch::nn::Module {
  FieldImpl() : fc(register_module("fc", torch::nn::Linear(4, 3))) {}
  torch::Tensor forward(const torch::Tensor &x, bool fine);
  torch::nn::Linear fc;
};
TORCH_MODULE(Field);

torch::Tensor render(Field &field, const torch::Tensor &rays, bool fine);
