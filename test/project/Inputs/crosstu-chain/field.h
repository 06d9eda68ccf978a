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

// Early returns before the call (render.cpp): a warm-up leaves every later call to encode; an
// interval guard written as an early return selects every hundredth step.
torch::Tensor encodeAfterWarmup(const torch::Tensor &x, int64_t n);
torch::Tensor encodeEvery100(const torch::Tensor &x, int64_t n);
torch::Tensor renderAfterWarmup(const torch::Tensor &rays);
torch::Tensor renderLogged(const torch::Tensor &rays, int64_t step);
