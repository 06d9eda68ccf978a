#pragma once
#include <torch/script.h>
#include <torch/torch.h>
#include <string>

// Scores a batch with a scripted module loaded from \p path (torch::jit::load).
double score_scripted(const std::string &path, const torch::Tensor &x);
// The mean score of a batch under the checkpoint saved at \p path.
double mean_score(const std::string &path, const torch::Tensor &x);
// Scores a batch with the module of a file name fixed here.
double score_default(const torch::Tensor &x);
