// The training program: every fact these loops need lives in another translation unit.
#include "data.h"
#include "eval.h"
#include "model.h"

// A prediction written through an out-parameter by model.cpp and kept in a vector: every
// iteration's graph is kept.
void keeps_graphs(Net &net, torch::optim::SGD &opt) {
  std::vector<torch::Tensor> history;
  for (auto &b : host_batches(100)) {
    torch::Tensor out;
    forward_into(net, b.first, out);
    history.push_back(out); // POSITIVE: loss-stored-in-container
    auto loss = torch::mse_loss(out, b.second);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// The same with a detached prediction: nothing is kept.
void keeps_values(Net &net, torch::optim::SGD &opt) {
  std::vector<torch::Tensor> history;
  for (auto &b : host_batches(100)) {
    torch::Tensor out;
    predict_into(net, b.first, out);
    history.push_back(out); // NEGATIVE
    auto loss = torch::mse_loss(net->forward(b.first), b.second);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// Forces from an energy model need autograd in evaluation too: a no-grad guard would throw.
float evaluate_forces(Energy &model, const std::vector<torch::Tensor> &frames) {
  model->eval();
  float total = 0;
  for (const auto &positions : frames) {
    torch::Tensor forces = model->forward(positions); // NEGATIVE: needs the graph
    total += forces.norm().item<float>();
  }
  return total;
}

// A policy's act() (model.cpp) runs the network: an evaluation loop without no-grad.
float rollout(Policy &policy, const std::vector<torch::Tensor> &observations) {
  policy->eval();
  float total = 0;
  for (const auto &obs : observations) {
    torch::Tensor probs = policy->act(obs); // POSITIVE: eval-without-no-grad
    total += probs.max().item<float>();
  }
  return total;
}

// describe() runs nothing.
size_t describe_all(Policy &policy, int n) {
  policy->eval();
  size_t total = 0;
  for (int i = 0; i < n; ++i)
    total += policy->describe().size(); // NEGATIVE
  return total;
}

// Batches from data.cpp live on the GPU: item() synchronizes every step.
float train_gpu(Net &net, torch::optim::SGD &opt) {
  float sum = 0;
  for (auto &b : gpu_batches(100)) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(b.first), b.second);
    loss.backward();
    opt.step();
    sum += loss.item<float>(); // POSITIVE: sync-in-hot-loop
  }
  return sum;
}

// Host batches: item() costs nothing to wait for.
float train_host(Net &net, torch::optim::SGD &opt) {
  float sum = 0;
  for (auto &b : host_batches(100)) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(b.first), b.second);
    loss.backward();
    opt.step();
    sum += loss.item<float>(); // NEGATIVE
  }
  return sum;
}

// validate() (eval.cpp) leaves the model in eval(): the next epoch trains without dropout.
void fit(Net &net, torch::optim::SGD &opt, int epochs) {
  auto val = host_batches(4);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (auto &b : host_batches(100)) {
      opt.zero_grad();
      torch::mse_loss(net->forward(b.first), b.second).backward();
      opt.step();
    }
    validate(net, val); // POSITIVE: train-not-restored-after-eval
  }
}

// validate_restoring() switches back.
void fit_restoring(Net &net, torch::optim::SGD &opt, int epochs) {
  auto val = host_batches(4);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (auto &b : host_batches(100)) {
      opt.zero_grad();
      torch::mse_loss(net->forward(b.first), b.second).backward();
      opt.step();
    }
    validate_restoring(net, val); // NEGATIVE
  }
}

int main() {
  Net net;
  torch::optim::SGD opt(net->parameters(), 0.01);
  keeps_graphs(net, opt);
  keeps_values(net, opt);
  fit(net, opt, 2);
  fit_restoring(net, opt, 2);
  train_gpu(net, opt);
  train_host(net, opt);
  Energy energy;
  evaluate_forces(energy, {torch::randn({4, 3})});
  Policy policy;
  rollout(policy, {torch::randn({4})});
  describe_all(policy, 3);
}

// The prediction written through a pointer out-parameter by model.cpp: the attached one kept in
// a vector keeps every iteration's graph; the detached one does not.
void keeps_graphs_through_pointers(Net &net, torch::optim::SGD &opt) {
  std::vector<torch::Tensor> history;
  for (auto &b : host_batches(100)) {
    torch::Tensor out, value;
    forward_to(net, b.first, &out);
    predict_to(net, b.first, &value);
    history.push_back(out); // POSITIVE: loss-stored-in-container
    history.push_back(value); // NEGATIVE
    auto loss = torch::mse_loss(out, b.second);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// The prediction written into a field of a struct out-parameter by model.cpp.
void keeps_graphs_through_fields(Net &net, torch::optim::SGD &opt) {
  std::vector<torch::Tensor> history;
  for (auto &b : host_batches(100)) {
    Prediction p, q;
    predict_fields(net, b.first, p);
    predict_fields_detached(net, b.first, q);
    history.push_back(p.logits); // POSITIVE: loss-stored-in-container
    history.push_back(q.logits); // NEGATIVE
    auto loss = torch::mse_loss(p.logits, b.second);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// Host batches shuffled by a host-only helper of data.cpp: item() costs nothing to wait for.
float train_shuffled(Net &net, torch::optim::SGD &opt, const torch::Tensor &x, const torch::Tensor &y) {
  float sum = 0;
  for (int i = 0; i < 100; ++i) {
    auto loss = torch::mse_loss(net->forward(shuffled_rows(x)), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    sum += loss.item<float>(); // NEGATIVE
  }
  return sum;
}

// A loss computed by model.cpp over the prediction it is handed: the attached one kept in a
// vector keeps every iteration's graph; one over a detached prediction, or a score, does not.
void keeps_losses_computed_elsewhere(Net &net, torch::optim::SGD &opt) {
  std::vector<torch::Tensor> history;
  for (auto &b : host_batches(100)) {
    auto out = net->forward(b.first);
    auto loss = loss_over(out, b.second);
    history.push_back(loss); // POSITIVE: loss-stored-in-container
    history.push_back(score_of(out, b.second)); // NEGATIVE
    history.push_back(loss_over(out.detach(), b.second)); // NEGATIVE
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// Gradients cleared by model.cpp's zero_all() between backward() and step().
void zeroes_between(Net &net, torch::optim::SGD &opt, const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 100; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    zero_all(opt); // POSITIVE: zero-grad-between-backward-and-step
    opt.step();
  }
}

// The same helper before the forward: the usual order.
void zeroes_first(Net &net, torch::optim::SGD &opt, const torch::Tensor &x, const torch::Tensor &y) {
  for (int i = 0; i < 100; ++i) {
    zero_all(opt); // NEGATIVE
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
  }
}
