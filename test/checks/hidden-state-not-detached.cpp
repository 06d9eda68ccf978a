// RUN: %tidy --checks='-*,torch-hidden-state-not-detached' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-hidden-state-not-detached' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <tuple>
#include <vector>

using LstmState = std::tuple<torch::Tensor, torch::Tensor>;

struct CharModelImpl : torch::nn::Module {
  CharModelImpl()
      : lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(8, 16)))),
        head(register_module("head", torch::nn::Linear(16, 8))) {}
  std::tuple<torch::Tensor, LstmState> forward(torch::Tensor x, LstmState state) {
    auto out = lstm->forward(x, state);
    return {head(std::get<0>(out)), std::get<1>(out)};
  }
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(CharModel);

LstmState zeroState() { return {torch::zeros({1, 4, 16}), torch::zeros({1, 4, 16})}; }

// Helpers handing the forward a copy of the state: detached (the PyTorch example's
// repackage_hidden), or not.
torch::Tensor detachState(const torch::Tensor &h) { return h.detach(); }
LstmState repackage(const LstmState &state) { return {std::get<0>(state).detach(), std::get<1>(state).detach()}; }
torch::Tensor sameState(const torch::Tensor &h) { return h * 1; }

// ---- positives ----------------------------------------------------------------------------

void positiveLstmTupleState(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer,
                            const std::vector<torch::Tensor> &chunks) {
  LstmState hx = zeroState();
  for (const auto &chunk : chunks) {
    optimizer.zero_grad();
    auto out = lstm->forward(chunk, hx);
    // CHECK-DAG: :[[@LINE-1]]:16: note: fed to the forward here
    hx = std::get<1>(out);
    // CHECK-DAG: :[[@LINE-1]]:5: warning: recurrent state 'hx' keeps the autograd graph of the previous iteration and is fed to the next forward: every backward() reaches back through all earlier iterations (or fails on their freed graphs); consider detaching it after backward() [torch-hidden-state-not-detached]
    std::get<0>(out).pow(2).mean().backward();
    // CHECK-DAG: :[[@LINE-1]]:5: note: backward() here
    optimizer.step();
  }
}
// FIXED: std::get<0>(out).pow(2).mean().backward();
// FIXED-NEXT: hx = {std::get<0>(hx).detach(), std::get<1>(hx).detach()};

void positiveGruWhile(torch::nn::GRU &gru, torch::optim::SGD &optimizer, torch::Tensor x, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  int step = 0;
  while (step++ < steps) {
    optimizer.zero_grad();
    auto [output, h_n] = gru->forward(x, h);
    h = h_n;
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    output.sum().backward();
    optimizer.step();
  }
}
// FIXED: void positiveGruWhile(
// FIXED: output.sum().backward();
// FIXED-NEXT: h = h.detach();

void positiveGruCellAssignedInPlace(torch::nn::GRUCell &cell, torch::optim::SGD &optimizer,
                                    const std::vector<torch::Tensor> &inputs) {
  torch::Tensor h = torch::zeros({4, 16});
  for (size_t t = 0; t < inputs.size(); ++t) {
    optimizer.zero_grad();
    h = cell(inputs[t], h);
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    h.sum().backward();
    optimizer.step();
  }
}

void positiveLstmCellTie(torch::nn::LSTMCell &cell, torch::optim::SGD &optimizer, torch::Tensor x, int steps) {
  torch::Tensor h = torch::zeros({4, 16}), c = torch::zeros({4, 16});
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    std::tie(h, c) = cell->forward(x, std::make_tuple(h, c));
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    torch::mse_loss(h, torch::ones_like(h)).backward();
    optimizer.step();
  }
}

// A model that returns its new state, as char-RNN examples are written.
void positiveModelReturnsState(CharModel &model, torch::optim::Adam &optimizer, const std::vector<torch::Tensor> &xs) {
  LstmState state = zeroState();
  for (const auto &x : xs) {
    optimizer.zero_grad();
    auto [logits, next] = model->forward(x, state);
    state = next;
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'state' keeps the autograd graph
    logits.logsumexp(-1).mean().backward();
    optimizer.step();
  }
}

// The tutorial spelling: both outputs unpacked into existing variables at once.
void positiveForwardAsTupleTie(CharModel &model, torch::optim::Adam &optimizer, const std::vector<torch::Tensor> &xs) {
  torch::Tensor h = torch::zeros({1, 4, 16}), c = torch::zeros({1, 4, 16});
  for (const auto &x : xs) {
    torch::Tensor output;
    std::forward_as_tuple(output, std::tie(h, c)) = model->forward(x, std::make_tuple(h, c));
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    optimizer.zero_grad();
    output.logsumexp(-1).mean().backward();
    optimizer.step();
  }
}

// (h, c) carried in a struct.
struct Recurrent {
  torch::Tensor h, c;
};

void positiveStateInStruct(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer, const std::vector<torch::Tensor> &xs) {
  Recurrent carry{torch::zeros({1, 4, 16}), torch::zeros({1, 4, 16})};
  for (const auto &x : xs) {
    optimizer.zero_grad();
    auto out = lstm->forward(x, std::make_tuple(carry.h, carry.c));
    carry.h = std::get<0>(std::get<1>(out));
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'carry' keeps the autograd graph
    carry.c = std::get<1>(std::get<1>(out));
    std::get<0>(out).sum().backward();
    optimizer.step();
  }
}

class Agent {
public:
  explicit Agent(torch::nn::GRUCell cell) : cell_(std::move(cell)), optimizer_(cell_->parameters(), 0.01) {}
  void learn(const std::vector<torch::Tensor> &observations) {
    for (const auto &obs : observations) {
      optimizer_.zero_grad();
      hidden_ = cell_->forward(obs, hidden_);
      // CHECK: :[[@LINE-1]]:7: warning: recurrent state 'hidden_' keeps the autograd graph
      hidden_.pow(2).mean().backward();
      optimizer_.step();
    }
  }

private:
  torch::nn::GRUCell cell_;
  torch::optim::SGD optimizer_;
  torch::Tensor hidden_ = torch::zeros({1, 16});
};

template <typename Cell> void positiveTemplate(Cell &cell, torch::optim::SGD &optimizer, torch::Tensor x) {
  torch::Tensor h = torch::zeros({4, 16});
  for (int i = 0; i < 10; ++i) {
    optimizer.zero_grad();
    h = cell->forward(x, h);
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    h.sum().backward();
    optimizer.step();
  }
}
template void positiveTemplate<torch::nn::GRUCell>(torch::nn::GRUCell &, torch::optim::SGD &, torch::Tensor);

// The new state written last in the iteration, after backward() and step(): the next
// forward still reads this iteration's graph.
void positiveGruWrittenLast(torch::nn::GRU &gru, torch::nn::Linear &head, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto x = torch::randn({5, 4, 8});
    auto [y, h_new] = gru->forward(x, h);
    // CHECK-DAG: :[[@LINE-1]]:23: note: fed to the forward here
    auto loss = head(y).pow(2).mean();
    optimizer.zero_grad();
    loss.backward();
    // CHECK-DAG: :[[@LINE-1]]:5: note: backward() here
    optimizer.step();
    h = h_new;
    // CHECK-DAG: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
  }
}
// FIXED: void positiveGruWrittenLast(
// FIXED: optimizer.step();
// FIXED-NEXT: h = h_new;
// FIXED-NEXT: h = h.detach();

void positiveLstmTupleWrittenLast(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer,
                                  const std::vector<torch::Tensor> &chunks) {
  std::tuple<torch::Tensor, torch::Tensor> state{torch::zeros({1, 4, 16}), torch::zeros({1, 4, 16})};
  for (const auto &chunk : chunks) {
    auto out = lstm->forward(chunk, state);
    auto loss = std::get<0>(out).pow(2).mean();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    state = std::get<1>(out);
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'state' keeps the autograd graph
  }
}
// FIXED: state = std::get<1>(out);
// FIXED-NEXT: state = {std::get<0>(state).detach(), std::get<1>(state).detach()};

class Forecaster {
public:
  void fit(const std::vector<torch::Tensor> &windows) {
    for (const auto &w : windows) {
      auto [y, h_new] = gru_->forward(w, hidden_);
      optimizer_.zero_grad();
      y.pow(2).mean().backward();
      optimizer_.step();
      hidden_ = h_new;
      // CHECK: :[[@LINE-1]]:7: warning: recurrent state 'hidden_' keeps the autograd graph
    }
  }

private:
  torch::nn::GRU gru_{torch::nn::GRUOptions(8, 16)};
  torch::optim::SGD optimizer_{gru_->parameters(), 0.01};
  torch::Tensor hidden_ = torch::zeros({1, 4, 16});
};

// A helper that does not detach hands the forward the state, graph and all.
void positiveHelperKeepsGraph(torch::nn::GRU &gru, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), sameState(h));
    optimizer.zero_grad();
    y.sum().backward();
    optimizer.step();
    h = h_new;
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
  }
}

// ---- negatives ----------------------------------------------------------------------------

// Written last, detached: as the word language model example does.
void negativeWrittenLastDetached(torch::nn::GRU &gru, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), h);
    optimizer.zero_grad();
    y.sum().backward();
    optimizer.step();
    h = h_new.detach();
  }
}

void negativeWrittenLastDetachedInPlace(torch::nn::GRU &gru, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), h);
    optimizer.zero_grad();
    y.sum().backward();
    optimizer.step();
    h = h_new;
    h.detach_();
  }
}

void negativeWrittenLastResetFirst(torch::nn::GRU &gru, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h;
  for (int step = 0; step < steps; ++step) {
    h = torch::zeros({1, 4, 16});
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), h);
    optimizer.zero_grad();
    y.sum().backward();
    optimizer.step();
    h = h_new;
  }
}

// Evaluation: no graph is recorded, or none is backpropagated.
void negativeWrittenLastNoGrad(torch::nn::GRU &gru, const std::vector<torch::Tensor> &xs) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (const auto &x : xs) {
    torch::NoGradGuard no_grad;
    auto [y, h_new] = gru->forward(x, h);
    h = h_new;
  }
}

float negativeWrittenLastEvalLoop(torch::nn::GRU &gru, const std::vector<torch::Tensor> &xs) {
  gru->eval();
  torch::Tensor h = torch::zeros({1, 4, 16});
  float total = 0;
  for (const auto &x : xs) {
    auto [y, h_new] = gru->forward(x, h);
    total += y.mean().item<float>();
    h = h_new;
  }
  return total;
}

// The forward is handed a detached copy of the state: no graph is carried into it.
void negativeDetachHelper(torch::nn::GRU &gru, torch::optim::Adam &optimizer, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), detachState(h));
    optimizer.zero_grad();
    y.sum().backward();
    optimizer.step();
    h = h_new;
  }
}

void negativeRepackageHelper(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer,
                             const std::vector<torch::Tensor> &chunks) {
  LstmState hx = zeroState();
  for (const auto &chunk : chunks) {
    auto out = lstm->forward(chunk, repackage(hx));
    hx = std::get<1>(out);
    optimizer.zero_grad();
    std::get<0>(out).sum().backward();
    optimizer.step();
  }
}

void negativeDetachedArgument(torch::nn::GRUCell &cell, torch::optim::SGD &optimizer, torch::Tensor x, int steps) {
  torch::Tensor h = torch::zeros({4, 16});
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    h = cell(x, h.detach());
    h.sum().backward();
    optimizer.step();
  }
}

void negativeDetachedTupleArgument(torch::nn::LSTMCell &cell, torch::optim::SGD &optimizer, torch::Tensor x,
                                   int steps) {
  torch::Tensor h = torch::zeros({4, 16}), c = torch::zeros({4, 16});
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    std::tie(h, c) = cell->forward(x, std::make_tuple(h.detach(), c.detach()));
    h.pow(2).mean().backward();
    optimizer.step();
  }
}

// Truncated backpropagation through time: the state is detached after each backward().
void negativeDetachedAfterBackward(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer,
                                   const std::vector<torch::Tensor> &chunks) {
  LstmState hx = zeroState();
  std::vector<float> losses;
  for (const auto &chunk : chunks) {
    optimizer.zero_grad();
    auto out = lstm->forward(chunk, hx);
    hx = std::get<1>(out);
    auto loss = std::get<0>(out).pow(2).mean();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<float>());
    hx = std::make_tuple(std::get<0>(hx).detach(), std::get<1>(hx).detach());
  }
}

void negativeDetachedInPlace(torch::nn::GRUCell &cell, torch::optim::SGD &optimizer, torch::Tensor x, int steps) {
  torch::Tensor h = torch::zeros({4, 16});
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    h = cell(x, h);
    h.sum().backward();
    optimizer.step();
    h.detach_();
  }
}

void negativeForwardAsTupleDetachedInPlace(CharModel &model, torch::optim::Adam &optimizer,
                                           const std::vector<torch::Tensor> &xs) {
  torch::Tensor h = torch::zeros({1, 4, 16}), c = torch::zeros({1, 4, 16});
  for (const auto &x : xs) {
    torch::Tensor output;
    std::forward_as_tuple(output, std::tie(h, c)) = model->forward(x, std::make_tuple(h, c));
    h.detach_();
    c.detach_();
    optimizer.zero_grad();
    output.logsumexp(-1).mean().backward();
    optimizer.step();
  }
}

void negativeDetachedBeforeForward(torch::nn::GRUCell &cell, torch::optim::SGD &optimizer, torch::Tensor x) {
  torch::Tensor h = torch::zeros({4, 16});
  for (int i = 0; i < 10; ++i) {
    h = h.detach();
    optimizer.zero_grad();
    h = cell(x, h);
    h.sum().backward();
    optimizer.step();
  }
}

// A fresh state for every sequence.
void negativeFreshStatePerBatch(torch::nn::LSTM &lstm, torch::optim::Adam &optimizer,
                                const std::vector<torch::Tensor> &batches) {
  for (const auto &batch : batches) {
    LstmState hx = zeroState();
    optimizer.zero_grad();
    auto out = lstm->forward(batch, hx);
    hx = std::get<1>(out);
    std::get<0>(out).sum().backward();
    optimizer.step();
  }
}

void negativeResetEveryIteration(torch::nn::GRUCell &cell, torch::optim::SGD &optimizer, torch::Tensor x) {
  torch::Tensor h;
  for (int i = 0; i < 10; ++i) {
    h = torch::zeros({4, 16});
    optimizer.zero_grad();
    h = cell(x, h);
    h.sum().backward();
    optimizer.step();
  }
}

// Full backpropagation through time: the state flows through the time loop and backward()
// runs once per sequence, after it.
void negativeFullBptt(torch::nn::LSTMCell &cell, torch::optim::SGD &optimizer, const std::vector<torch::Tensor> &seq,
                      int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    torch::Tensor h = torch::zeros({4, 16}), c = torch::zeros({4, 16});
    torch::Tensor loss = torch::zeros({});
    optimizer.zero_grad();
    for (const auto &x : seq) {
      std::tie(h, c) = cell->forward(x, std::make_tuple(h, c));
      loss = loss + h.pow(2).mean();
    }
    loss.backward();
    optimizer.step();
  }
}

// A GAN: the generator's output kept outside the loop is rewritten before every discriminator
// pass, so no value crosses a backward().
void negativeGanFakeImages(torch::nn::Linear &G, torch::nn::Linear &D, torch::optim::Adam &d_opt,
                           torch::optim::Adam &g_opt, torch::Tensor z, int steps) {
  torch::Tensor fake_images;
  for (int i = 0; i < steps; ++i) {
    fake_images = G->forward(z);
    auto d_loss = D->forward(fake_images).mean();
    d_opt.zero_grad();
    d_loss.backward();
    d_opt.step();
    fake_images = G->forward(z);
    auto g_loss = -D->forward(fake_images).mean();
    g_opt.zero_grad();
    g_loss.backward();
    g_opt.step();
  }
}

// A tensor declared before the loop (C style) and rewritten from a forward first thing in
// every iteration: nothing crosses a backward() (koba-jon/pytorch_cpp DCGAN, CycleGAN, SRGAN).
void negativeDeclaredBeforeRewrittenFirst(torch::nn::Linear &G, torch::nn::Linear &D, torch::optim::Adam &g_opt,
                                          torch::Tensor z, torch::Tensor label, int steps) {
  torch::Tensor fake, realism;
  for (int i = 0; i < steps; ++i) {
    fake = G->forward(z);
    realism = D->forward(fake);
    auto g_loss = torch::mse_loss(realism, label);
    g_opt.zero_grad();
    g_loss.backward();
    g_opt.step();
  }
}

// The same with a discriminator step between the write and the generator's pass, in one
// iteration (SRGAN): the backward() in between is not an iteration boundary.
void negativeTwoPhaseGan(torch::nn::Linear &G, torch::nn::Linear &D, torch::optim::Adam &d_opt,
                         torch::optim::Adam &g_opt, torch::Tensor lr, torch::Tensor label, int steps) {
  torch::Tensor sr, d_out, g_out;
  while (steps-- > 0) {
    sr = G->forward(lr);
    d_out = D->forward(sr.detach());
    auto d_loss = torch::mse_loss(d_out, label);
    d_opt.zero_grad();
    d_loss.backward();
    d_opt.step();
    g_out = D->forward(sr);
    auto g_loss = torch::mse_loss(g_out, label);
    g_opt.zero_grad();
    g_loss.backward();
    g_opt.step();
  }
}

// The same variable read by the forward before it is rewritten: the previous iteration's
// graph is fed on.
void positiveReadBeforeRewrite(torch::nn::Linear &G, torch::optim::Adam &g_opt, torch::Tensor z, int steps) {
  torch::Tensor h = z;
  for (int i = 0; i < steps; ++i) {
    auto out = G->forward(h);
    h = out;
    // CHECK: :[[@LINE-1]]:5: warning: recurrent state 'h' keeps the autograd graph
    // CHECK: note: backward() here
    // CHECK: note: fed to the forward here
    auto loss = out.pow(2).mean();
    g_opt.zero_grad();
    loss.backward();
    g_opt.step();
  }
}

// Sampling from a trained model: no graph is recorded.
std::vector<torch::Tensor> negativeGeneration(torch::nn::GRUCell &cell, torch::Tensor x, int length) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> samples;
  torch::Tensor h = torch::zeros({1, 16});
  for (int t = 0; t < length; ++t) {
    h = cell(x, h);
    samples.push_back(h);
  }
  return samples;
}
