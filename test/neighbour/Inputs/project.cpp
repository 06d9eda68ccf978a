// Ordinary LibTorch project code with plenty for clang-tidy's own checks to say.
#include <torch/torch.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mine {
class Tensor; // same name as at::Tensor in another namespace (bugprone-forward-declaration-namespace)
class OptimizerOptions;
} // namespace mine

struct NetImpl : torch::nn::Module {
  NetImpl(int in, int out) : fc(register_module("fc", torch::nn::Linear(in, out))) {}
  virtual torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

int accumulate(std::vector<int> v); // parameter names differ from the definition
int accumulate(std::vector<int> values) {
  int total = 0;
  for (std::vector<int>::iterator it = values.begin(); it != values.end(); ++it)
    total += *it;
  return total;
}

std::string describe(const std::string name, std::map<std::string, torch::Tensor> tensors) {
  std::string out = name;
  for (auto kv : tensors)
    out += kv.first + " ";
  if (out.size() == 0)
    return std::string("");
  return out;
}

std::vector<torch::Tensor> train(Net &model, std::vector<torch::Tensor> batches) {
  std::vector<torch::Tensor> history;
  torch::optim::SGD *opt = new torch::optim::SGD(model->parameters(), 0.1);
  for (int i = 0; i < (int)batches.size(); i++) {
    opt->zero_grad();
    auto loss = model->forward(batches[i]).sum();
    loss.backward();
    opt->step();
    history.push_back(loss); // torch-loss-stored-in-container
    if (i % 100 == 0) { std::cout << "step " << i << " loss " << loss.item<float>() << std::endl; }
  }
  delete opt;
  std::shared_ptr<int> p = std::shared_ptr<int>(new int(3));
  const int unused_magic = 42 * 7;
  (void)unused_magic;
  (void)p;
  return history;
}

int main() {
  Net model(4, 2);
  std::vector<torch::Tensor> batches;
  for (int i = 0; i < 8; ++i)
    batches.push_back(torch::randn({16, 4}));
  train(model, batches);
  std::map<std::string, torch::Tensor> named;
  std::cout << describe("x", named) << accumulate({1, 2, 3}) << "\n";
  return NULL;
}
