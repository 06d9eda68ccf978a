// One finding of the default set (a loss kept with its graph) and one of the performance set
// (a per-step item()) in the same training loop.
#include <torch/torch.h>

#include <cstdio>
#include <vector>

void train(torch::nn::Linear model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  model->to(device);
  std::vector<torch::Tensor> losses;
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    losses.push_back(loss);
    std::printf("%f\n", loss.item<float>());
  }
}
