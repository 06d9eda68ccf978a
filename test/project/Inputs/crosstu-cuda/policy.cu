// The policy's host code next to the kernel it launches: act() runs the network.
#include "policy.h"

__global__ void clampKernel(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < 0)
    x[i] = 0;
}

PolicyImpl::PolicyImpl() { head = register_module("head", torch::nn::Linear(8, 4)); }

torch::Tensor PolicyImpl::act(torch::Tensor obs) {
  torch::Tensor logits = head(obs).contiguous();
  clampKernel<<<(logits.numel() + 255) / 256, 256>>>(logits.data_ptr<float>(), logits.numel());
  return logits.softmax(-1);
}

std::string PolicyImpl::describe() const { return "policy with " + std::to_string(head->options.out_features()) + " actions"; }
