// RUN: %tidy --checks='-*,torch-elementwise-tensor-writes-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(8, 8))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// ---- positives ----------------------------------------------------------------------------

torch::Tensor positiveForSubscript(const std::vector<float> &values) {
  auto t = torch::empty({static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t[i] = values[i];
  // CHECK: :[[@LINE-1]]:5: warning: 't' is written one element at a time in a loop, one indexing op per element; consider writing through an accessor ('t.accessor<T, N>()' on the CPU) or collecting the values in a std::vector and creating the tensor once [torch-elementwise-tensor-writes-in-loop]
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  return t;
}

torch::Tensor positiveNestedBoard(const std::vector<std::vector<int>> &cells) {
  auto board = torch::zeros({8, 8});
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      board[r][c] = cells[r][c];
  // CHECK: :[[@LINE-1]]:7: warning: 'board' is written one element at a time in a loop
  // CHECK: :[[@LINE-3]]:5: note: loop starts here
  return board;
}

torch::Tensor positiveRangeForIndexPut(const std::vector<std::pair<int64_t, int64_t>> &edges, int64_t n) {
  auto adjacency = torch::zeros({n, n});
  for (const auto &edge : edges)
    adjacency.index_put_({edge.first, edge.second}, 1.0);
  // CHECK: :[[@LINE-1]]:5: warning: 'adjacency' is written one element at a time in a loop
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  return adjacency;
}

torch::Tensor positiveWhileFill(const std::vector<int64_t> &labels) {
  auto one_hot = torch::zeros({static_cast<int64_t>(labels.size()), 10});
  size_t i = 0;
  while (i < labels.size()) {
    one_hot[static_cast<int64_t>(i)][labels[i]].fill_(1);
    // CHECK: :[[@LINE-1]]:5: warning: 'one_hot' is written one element at a time in a loop
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    ++i;
  }
  return one_hot;
}

template <typename Scalar>
torch::Tensor positiveTemplate(const std::vector<Scalar> &values) {
  torch::Tensor out = torch::empty({static_cast<int64_t>(values.size())}, torch::kDouble);
  for (size_t i = 0; i < values.size(); ++i)
    out.select(0, static_cast<int64_t>(i)).fill_(static_cast<double>(values[i]));
  // CHECK: :[[@LINE-1]]:5: warning: 'out' is written one element at a time in a loop
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  return out;
}
template torch::Tensor positiveTemplate(const std::vector<float> &);

class ReplayBuffer {
public:
  void store(const std::vector<float> &rewards) {
    for (size_t i = 0; i < rewards.size(); ++i)
      rewards_[static_cast<int64_t>(i)] = rewards[i];
    // CHECK: :[[@LINE-1]]:7: warning: 'rewards_' is written one element at a time in a loop
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
  }

private:
  torch::Tensor rewards_ = torch::zeros({1024});
};

void positiveLambda(torch::Tensor mask, const std::vector<int64_t> &ids) {
  auto mark = [&](int64_t id) { mask[id] = 1; };
  for (auto id : ids) {
    [&] { mask[id] = 0; }();
    // CHECK: :[[@LINE-1]]:11: warning: 'mask' is written one element at a time in a loop
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
  }
  mark(0);
}

// ---- negatives ----------------------------------------------------------------------------

torch::Tensor negativeAccessor(const std::vector<float> &values) {
  auto t = torch::empty({static_cast<int64_t>(values.size())});
  auto a = t.accessor<float, 1>();
  for (size_t i = 0; i < values.size(); ++i)
    a[static_cast<int64_t>(i)] = values[i];
  return t;
}

torch::Tensor negativeFromVector(const std::vector<float> &values) {
  std::vector<float> scaled;
  for (float v : values)
    scaled.push_back(2 * v);
  return torch::tensor(scaled);
}

void negativeRowsFromTensors(torch::Tensor batch, torch::Tensor out) {
  // Whole rows copied from tensors: each op moves a row, not one number.
  for (int64_t i = 0; i < batch.size(0); ++i)
    out[i] = batch[i] * 2;
}

void negativeFixedIndex(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    model->forward(x).sum().backward();
    opt.step();
    torch::NoGradGuard no_grad;
    model->fc->weight[0][0] = 0;
  }
}

void negativeFreshTensorEachIteration(const std::vector<float> &values) {
  for (size_t i = 0; i < values.size(); ++i) {
    auto single = torch::empty({1});
    single[0] = values[i];
    (void)single.sum();
  }
}
