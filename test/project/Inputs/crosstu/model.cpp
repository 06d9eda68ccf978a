#include "model.h"

NetImpl::NetImpl() { fc = register_module("fc", torch::nn::Linear(8, 1)); }
torch::Tensor NetImpl::forward(torch::Tensor x) { return fc(torch::relu(x)); }

PolicyImpl::PolicyImpl() { head = register_module("head", torch::nn::Linear(4, 2)); }
torch::Tensor PolicyImpl::act(torch::Tensor obs) { return torch::softmax(head(obs), -1); }
std::string PolicyImpl::describe() const { return "policy"; }

EnergyImpl::EnergyImpl() { energy = register_module("energy", torch::nn::Linear(3, 1)); }
torch::Tensor EnergyImpl::forward(torch::Tensor positions) {
  if (!positions.requires_grad())
    positions = positions.detach().requires_grad_(true);
  torch::Tensor e = energy(positions).sum();
  return -torch::autograd::grad({e}, {positions}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
}

void forward_into(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x); }
void predict_into(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x).detach(); }
void forward_to(Net &net, const torch::Tensor &x, torch::Tensor *out) { *out = net->forward(x); }
void predict_to(Net &net, const torch::Tensor &x, torch::Tensor *out) { *out = net->forward(x).detach(); }
void predict_fields(Net &net, const torch::Tensor &x, Prediction &p) {
  p.logits = net->forward(x);
  p.label = 1;
}
void predict_fields_detached(Net &net, const torch::Tensor &x, Prediction &p) { p.logits = net->forward(x).detach(); }
torch::Tensor loss_over(const torch::Tensor &output, const torch::Tensor &target) {
  return torch::mse_loss(output, target);
}
torch::Tensor score_of(const torch::Tensor &output, const torch::Tensor &target) {
  return torch::mse_loss(output.detach(), target);
}

void zero_all(torch::optim::Optimizer &opt) { opt.zero_grad(); }
