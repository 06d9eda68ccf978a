#pragma once
#include <torch/torch.h>
#include <tuple>

using LstmState = std::tuple<torch::Tensor, torch::Tensor>;

torch::Tensor detach_state(const torch::Tensor &h);
LstmState repackage(const LstmState &state);
torch::Tensor same(const torch::Tensor &h);
