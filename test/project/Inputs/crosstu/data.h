// The data: batches made in data.cpp.
#pragma once
#include <torch/torch.h>
#include <utility>
#include <vector>

using Batch = std::pair<torch::Tensor, torch::Tensor>;
// Batches moved to the GPU by the loader (data.cpp), and batches left on the host.
std::vector<Batch> gpu_batches(int n);
std::vector<Batch> host_batches(int n);
// A host-only helper: it checks its input is on the CPU and returns its result where the input
// was (a tensor's own device shows no accelerator).
torch::Tensor shuffled_rows(const torch::Tensor &x);
