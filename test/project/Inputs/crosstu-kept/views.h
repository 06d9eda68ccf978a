#pragma once
#include <torch/torch.h>

#include <vector>

// A renderer's view matrices (the shape of OpenSplat's Model::forward): the training loop
// (train.cpp) makes one per step and hands it to functions of other TUs. ViewHistory::remember
// (history.cpp) keeps it in a member vector, record (relay.cpp) passes it on to remember,
// recordScaled keeps a new tensor made from it, ViewHistory::score only reads it.
struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

class ViewHistory {
public:
  void remember(const torch::Tensor &view);
  float score(const torch::Tensor &view);

private:
  std::vector<torch::Tensor> views_;
  float total_ = 0;
};

void record(ViewHistory &history, const torch::Tensor &view);
void recordScaled(ViewHistory &history, const torch::Tensor &view);
