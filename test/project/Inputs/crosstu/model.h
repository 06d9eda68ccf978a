// The model: declared here, defined in model.cpp.
#pragma once
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl();
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

// A policy whose action runs the network (defined in model.cpp).
struct PolicyImpl : torch::nn::Module {
  PolicyImpl();
  torch::Tensor act(torch::Tensor obs);
  std::string describe() const;
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Policy);

// An energy model: its forward returns forces, -dE/dx, through torch::autograd::grad.
struct EnergyImpl : torch::nn::Module {
  EnergyImpl();
  torch::Tensor forward(torch::Tensor positions);
  torch::nn::Linear energy{nullptr};
};
TORCH_MODULE(Energy);

// The prediction written through an out-parameter: attached, and detached.
void forward_into(Net &net, const torch::Tensor &x, torch::Tensor &out);
void predict_into(Net &net, const torch::Tensor &x, torch::Tensor &out);
// The same through a pointer out-parameter.
void forward_to(Net &net, const torch::Tensor &x, torch::Tensor *out);
void predict_to(Net &net, const torch::Tensor &x, torch::Tensor *out);
// The same into a field of a struct out-parameter.
struct Prediction {
  torch::Tensor logits;
  int64_t label = 0;
};
void predict_fields(Net &net, const torch::Tensor &x, Prediction &p);
void predict_fields_detached(Net &net, const torch::Tensor &x, Prediction &p);
// A loss over the prediction it is handed, and a score over it that detaches it.
torch::Tensor loss_over(const torch::Tensor &output, const torch::Tensor &target);
torch::Tensor score_of(const torch::Tensor &output, const torch::Tensor &target);
// Clears the optimizer's gradients, out of sight of the loops that call it.
void zero_all(torch::optim::Optimizer &opt);
