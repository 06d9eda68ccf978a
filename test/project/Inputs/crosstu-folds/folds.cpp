#include "net.h"

void train(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  for (int64_t i = 0; i < x.size(0); ++i) {
    net->zero_grad();
    torch::nll_loss(net->forward(x[i].unsqueeze(0)), y[i].unsqueeze(0)).backward();
    opt.step();
  }
}

// Each fold trains, then tests with Tester::run (tester.cpp), which leaves eval() on.
float train_once(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  train(net, x, y);
  Tester tester{x, y};
  return tester.run(net);
}

void cross_validate(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  net->train();
  for (int fold = 0; fold < 5; ++fold) // POSITIVE: folds 2..5 train in evaluation mode
    std::printf("%f\n", train_once(net, x, y));
}

// The same, with each fold's training switched back to training mode first.
float train_once_in_training_mode(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  net->train();
  train(net, x, y);
  Tester tester{x, y};
  return tester.run(net);
}

void cross_validate_restored(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  for (int fold = 0; fold < 5; ++fold) // NEGATIVE
    std::printf("%f\n", train_once_in_training_mode(net, x, y));
}
