#include "loop.hpp"
#include "net.hpp"
#include <outside.hpp>
#include <sysfit.hpp>

void trainB(Net &model, torch::nn::Linear &fc, const torch::Tensor &x, const torch::Tensor &y) {
  trainEpochs(model, x, y);
  outsideFit(fc, x);
  systemFit(fc, x);
}
