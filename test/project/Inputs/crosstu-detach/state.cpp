#include "state.h"

// Detached copies: a forward handed them reads no graph of the state (negatives in train.cpp).
torch::Tensor detach_state(const torch::Tensor &h) { return h.detach(); }
LstmState repackage(const LstmState &state) { return {std::get<0>(state).detach(), std::get<1>(state).detach()}; }

// The state itself, graph and all (positive in train.cpp).
torch::Tensor same(const torch::Tensor &h) { return h * 1; }
