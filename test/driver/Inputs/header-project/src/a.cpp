// Spells the header's path with '..': clang-tidy 16 would match a header filter against
// "../src/../include/loop.hpp"; torchtidy matches the absolute, normalized path.
#include "../include/loop.hpp"
#include "net.hpp"
#include <vendored.hpp>

void trainA(Net &model, torch::nn::Linear &fc, const torch::Tensor &x, const torch::Tensor &y) {
  trainEpochs(model, x, y);
  vendoredFit(fc, x);
}
