// A stand-in for <torch/torch.h> with the one type hostile-deep-chain.test needs: the test
// is about the shape of the code (a chain thousands of calls deep), not LibTorch's semantics,
// and parsing LibTorch would cost more than the chain.
#pragma once
namespace at {
class Tensor {
public:
  Tensor();
  Tensor(const Tensor &);
  ~Tensor();
  Tensor add(int) const;
};
} // namespace at
namespace torch {
using at::Tensor;
} // namespace torch
