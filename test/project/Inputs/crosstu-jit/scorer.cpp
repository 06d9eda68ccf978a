#include "scorer.h"

double score_scripted(const std::string &path, const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  torch::jit::script::Module scorer = torch::jit::load(path);
  return scorer.forward({x}).toTensor().sum().item<double>();
}

double mean_score(const std::string &path, const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  torch::jit::script::Module checkpoint = torch::jit::load(path);
  return checkpoint.forward({x}).toTensor().mean().item<double>();
}

double score_default(const torch::Tensor &x) {
  torch::NoGradGuard no_grad;
  auto scorer = torch::jit::load("default.pt");
  return scorer.forward({x}).toTensor().sum().item<double>();
}
