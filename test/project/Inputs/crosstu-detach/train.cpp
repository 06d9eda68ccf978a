#include "state.h"

void train_gru(torch::nn::GRU &gru, torch::optim::Adam &opt, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), detach_state(h));
    opt.zero_grad();
    y.pow(2).mean().backward();
    opt.step();
    h = h_new;
  }
}

void train_lstm(torch::nn::LSTM &lstm, torch::optim::Adam &opt, int steps) {
  LstmState state{torch::zeros({1, 4, 16}), torch::zeros({1, 4, 16})};
  for (int step = 0; step < steps; ++step) {
    auto out = lstm->forward(torch::randn({5, 4, 8}), repackage(state));
    opt.zero_grad();
    std::get<0>(out).pow(2).mean().backward();
    opt.step();
    state = std::get<1>(out);
  }
}

void train_same(torch::nn::GRU &gru, torch::optim::Adam &opt, int steps) {
  torch::Tensor h = torch::zeros({1, 4, 16});
  for (int step = 0; step < steps; ++step) {
    auto [y, h_new] = gru->forward(torch::randn({5, 4, 8}), same(h));
    opt.zero_grad();
    y.pow(2).mean().backward();
    opt.step();
    h = h_new;
  }
}
