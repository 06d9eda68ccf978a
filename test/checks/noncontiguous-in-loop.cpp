// RUN: %tidy --checks='-*,torch-noncontiguous-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(8, 8))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

using Dataset = torch::data::datasets::TensorDataset;

auto makeLoader() {
  return torch::data::make_data_loader(
      Dataset(torch::randn({64, 8})).map(torch::data::transforms::Stack<torch::data::TensorExample>()), 16);
}

// ---- positives ----------------------------------------------------------------------------

std::vector<float> positiveRangeForTransposedProjection(Net model, torch::Tensor projection) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  auto projection_t = projection.t();
  std::vector<float> norms;
  for (auto &batch : *loader) {
    auto features = model->forward(batch.data);
    auto scores = features.matmul(projection_t.contiguous());
    // CHECK: :[[@LINE-1]]:48: warning: 'contiguous()' copies 'projection_t', a non-contiguous view ('t()') that does not change in the loop, on every iteration; consider making it contiguous once before the loop [torch-noncontiguous-in-loop]
    // CHECK: :[[@LINE-6]]:34: note: view made here
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    norms.push_back(scores.norm().item<float>());
  }
  return norms;
}

void positiveWhilePermutedReshape(torch::Tensor images) {
  auto channels_last = images.permute({0, 2, 3, 1});
  int step = 0;
  while (step++ < 100) {
    auto flat = channels_last.reshape({-1, 3});
    // CHECK: :[[@LINE-1]]:31: warning: 'reshape()' copies 'channels_last', a non-contiguous view ('permute()') that does not change in the loop, on every iteration
    // CHECK: :[[@LINE-5]]:31: note: view made here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    (void)flat.mean(0);
  }
}

void positiveForViewMadeInTheLoop(Net model, torch::Tensor bias) {
  torch::NoGradGuard no_grad;
  for (int i = 0; i < 10; ++i) {
    auto out = model->forward(bias.expand({16, 8}).contiguous());
    // CHECK: :[[@LINE-1]]:52: warning: 'contiguous()' copies a non-contiguous view ('expand()') of tensors that do not change in the loop on every iteration; consider making it contiguous once before the loop
    // CHECK: :[[@LINE-2]]:36: note: view made here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    (void)out;
  }
}

template <typename T>
void positiveTemplate(T &model, torch::Tensor keys) {
  auto keys_t = keys.transpose(0, 1);
  for (int i = 0; i < 10; ++i) {
    auto attention = model->forward(keys_t.flatten(0, 1));
    // CHECK: :[[@LINE-1]]:44: warning: 'flatten()' copies 'keys_t', a non-contiguous view ('transpose()')
    // CHECK: :[[@LINE-4]]:22: note: view made here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    (void)attention;
  }
}
template void positiveTemplate(Net &, torch::Tensor);

void positiveLambda(torch::Tensor table) {
  auto table_t = table.t();
  std::vector<torch::Tensor> rows;
  for (int i = 0; i < 10; ++i) {
    auto lookup = [&] { return table_t.contiguous()[i]; };
    // CHECK: :[[@LINE-1]]:40: warning: 'contiguous()' copies 'table_t'
    // CHECK: :[[@LINE-5]]:24: note: view made here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    rows.push_back(lookup());
  }
}

class Scorer {
public:
  explicit Scorer(torch::Tensor weights) : weights_(weights) {}
  float score(const std::vector<torch::Tensor> &queries) {
    auto weights_t = weights_.t();
    float total = 0;
    for (const auto &q : queries)
      total += q.matmul(weights_t.contiguous()).sum().item<float>();
    // CHECK: :[[@LINE-1]]:35: warning: 'contiguous()' copies 'weights_t'
    // CHECK: :[[@LINE-5]]:31: note: view made here
    // CHECK: :[[@LINE-4]]:5: note: loop starts here
    return total;
  }

private:
  torch::Tensor weights_;
};

// ---- negatives ----------------------------------------------------------------------------

void negativeContiguousOnceBeforeTheLoop(Net model, torch::Tensor projection) {
  torch::NoGradGuard no_grad;
  auto projection_t = projection.t().contiguous();
  for (int i = 0; i < 10; ++i)
    (void)model->forward(projection_t.reshape({-1, 8}).contiguous());
}

void negativeViewUsedDirectly(torch::Tensor x, torch::Tensor w) {
  // matmul reads transposed operands through strides: no copy.
  auto wt = w.t();
  for (int i = 0; i < 10; ++i)
    (void)x.matmul(wt);
}

void negativeViewOfTheBatch(Net model) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    auto t = batch.data.t().contiguous();
    (void)model->forward(t.t());
  }
}

void negativeTrainedWeights(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  // The optimizer changes the weight every step: its transposed copy must be made again.
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto tied = x.matmul(model->fc->weight.t().contiguous());
    model->forward(tied).sum().backward();
    opt.step();
  }
}

void negativeReassignedBeforeTheLoop(torch::Tensor w) {
  auto wt = w.t();
  wt = wt.contiguous();
  for (int i = 0; i < 10; ++i)
    (void)wt.contiguous().sum();
}

void negativeUnderIntervalGuard(Net model, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor w) {
  auto wt = w.t();
  std::vector<torch::Tensor> snapshots;
  for (int step = 0; step < 100; ++step) {
    model->zero_grad();
    model->forward(x).sum().backward();
    opt.step();
    if (step % 10 == 0)
      snapshots.push_back(wt.contiguous());
  }
}
