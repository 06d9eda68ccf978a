// A C++20 training program: concepts, designated initializers, std::jthread, ranges.
#include <torch/torch.h>

#include <concepts>
#include <ranges>
#include <thread>

template <typename M>
concept HasParameters = requires(M m) { m->parameters(); };

struct Config {
  int Epochs;
  double LearningRate;
};

template <HasParameters M> void train(M &model, const Config &cfg) {
  torch::optim::SGD opt(model->parameters(), cfg.LearningRate);
  for (int epoch : std::views::iota(0, cfg.Epochs)) {
    (void)epoch;
    auto loss = model->forward(torch::ones({4, 2})).sum();
    loss.backward();
    opt.step();
  }
}

int main() {
  torch::nn::Linear model(2, 1);
  Config cfg{.Epochs = 3, .LearningRate = 0.1};
  std::jthread worker([] {});
  train(model, cfg);
}
