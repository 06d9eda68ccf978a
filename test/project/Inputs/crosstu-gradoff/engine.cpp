#include "engine.h"

// Every call in the project (train.cpp) runs with autograd off: a guard, a guarded caller of
// train.cpp, AutoGradMode(false) (negative).
void Engine::nudge_bias(Net &net, const torch::Tensor &delta) { net->fc->bias.add_(delta); }

// Called under a guard, and once without one (positive).
void Engine::shift_weight(Net &net, const torch::Tensor &delta) { net->fc->weight.sub_(delta); }

// Called without a guard only (positive).
void Engine::scale_weight(Net &net) { net->fc->weight.mul_(0.5); }

// Called under a guard in train.cpp, and here by warmup() without one (positive).
void Engine::clip_weight(Net &net) { net->fc->weight.clamp_(-1, 1); }
void Engine::warmup(Net &net) { clip_weight(net); }

// Called in a thread that train.cpp starts under a guard: the thread records (positive).
void Engine::decay_bias(Net &net) { net->fc->bias.mul_(0.99); }

// Called by no translation unit of the project (positive, as without the index).
void Engine::reset_bias(Net &net) { net->fc->bias.zero_(); }

// An evaluation loop every caller runs under a guard (negative)...
float Engine::accuracy(Net &net, const std::vector<torch::Tensor> &batches) {
  net->eval();
  float correct = 0;
  for (const auto &x : batches)
    correct += net->forward(x).argmax(1).eq(0).sum().item<float>();
  return correct;
}

// ... and one a caller runs without (positive).
float Engine::loss_on(Net &net, const std::vector<torch::Tensor> &batches) {
  net->eval();
  float total = 0;
  for (const auto &x : batches)
    total += net->forward(x).sum().item<float>();
  return total;
}

// Called under a guard in train.cpp, and without one by an inline function of tools.h there
// (positive).
void Engine::nudge_weight(Net &net, const torch::Tensor &delta) { net->fc->weight.add_(delta); }
