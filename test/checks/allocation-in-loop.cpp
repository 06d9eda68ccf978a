// RUN: %tidy --checks='-*,torch-allocation-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
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

constexpr int64_t kBatch = 16;

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForMask(Net model, torch::optim::SGD &opt, torch::Device device) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    opt.zero_grad();
    auto mask = torch::ones({8, 8}, torch::TensorOptions().device(device)).triu();
    // CHECK: :[[@LINE-1]]:17: warning: 'torch::ones' allocates a tensor of the same size on every iteration of a loop that runs the model; consider allocating it once before the loop (and refilling it in place with 'zero_()' or 'fill_()' if the iteration writes it) [torch-allocation-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    auto loss = model->forward(batch.data.to(device)).matmul(mask).pow(2).mean();
    loss.backward();
    opt.step();
  }
}

void positiveWhileTargets(Net model, torch::optim::Adam &opt, torch::Tensor x) {
  int step = 0;
  while (step++ < 100) {
    model->zero_grad();
    torch::Tensor target = torch::full({kBatch, 8}, 0.9);
    // CHECK: :[[@LINE-1]]:28: warning: 'torch::full' allocates a tensor of the same size
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    auto loss = torch::mse_loss(model->forward(x), target);
    loss.backward();
    opt.step();
  }
}

void positiveForArithmeticTemporary(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  const int64_t width = 8;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto out = model->forward(x) + torch::zeros({width});
    // CHECK: :[[@LINE-1]]:36: warning: 'torch::zeros' allocates a tensor of the same size
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    out.sum().backward();
    opt.step();
  }
}

torch::Tensor positiveEvalLoopPadding(Net model) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  std::vector<float> scores;
  for (auto &batch : *loader) {
    torch::Tensor padding = torch::zeros({1, 8});
    // CHECK: :[[@LINE-1]]:29: warning: 'torch::zeros' allocates a tensor of the same size
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    scores.push_back(model->forward(torch::cat({batch.data, padding})).sum().item<float>());
  }
  return torch::tensor(scores);
}

template <typename Model>
void positiveTemplate(Model &model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto identity = torch::eye(8);
    // CHECK: :[[@LINE-1]]:21: warning: 'torch::eye' allocates a tensor of the same size
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    model->forward(x.matmul(identity)).sum().backward();
    opt.step();
  }
}
template void positiveTemplate(Net &, torch::optim::SGD &, torch::Tensor);

template <typename Model>
void positiveTemplateNeverInstantiated(Model &model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto out = model->forward(x);
    auto bias = torch::ones({kBatch, 8});
    // CHECK: :[[@LINE-1]]:17: warning: 'torch::ones' allocates a tensor of the same size
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    (out + bias).sum().backward();
    opt.step();
  }
}

void positiveLambdaStep(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  auto step = [&](const torch::Tensor &input) {
    opt.zero_grad();
    auto weights = torch::full({8}, 0.5);
    // CHECK: :[[@LINE-1]]:20: warning: 'torch::full' allocates a tensor of the same size
    (model->forward(input) * weights).sum().backward();
    opt.step();
  };
  for (int i = 0; i < 10; ++i)
    // CHECK: :[[@LINE+2]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-2]]:3: note: loop starts here
    step(x);
}

class Trainer {
public:
  Trainer(Net model, int64_t batch, int64_t hidden)
      : model_(model), opt_(model->parameters(), torch::optim::SGDOptions(0.1)), batch_(batch), hidden_(hidden) {}

  void run(torch::Tensor x) {
    for (int it = 0; it < 5; ++it)
      trainStep(x);
  }

private:
  void trainStep(const torch::Tensor &x) {
    opt_.zero_grad();
    torch::Tensor state = torch::zeros({batch_, hidden_});
    // CHECK: :[[@LINE-1]]:27: warning: 'torch::zeros' allocates a tensor of the same size
    // CHECK: :[[@LINE-8]]:7: note: called on every iteration here
    // CHECK: :[[@LINE-10]]:5: note: loop starts here
    auto loss = (model_->forward(x) + state.sum()).pow(2).mean();
    loss.backward();
    opt_.step();
  }

  Net model_;
  torch::optim::SGD opt_;
  int64_t batch_;
  int64_t hidden_;
};

// ---- negatives ----------------------------------------------------------------------------

void negativeBatchDependentSizes(Net model, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    opt.zero_grad();
    auto labels = torch::zeros({batch.data.size(0)});
    const auto n = batch.data.size(0);
    auto weights = torch::ones({n, 1});
    auto out = model->forward(batch.data);
    auto like = torch::zeros_like(out);
    auto loss = ((out - like).sum(1) * labels).sum() + weights.sum();
    loss.backward();
    opt.step();
  }
}

void negativeFreshNoise(Net generator, torch::optim::Adam &opt) {
  for (int step = 0; step < 100; ++step) {
    opt.zero_grad();
    auto noise = torch::empty({kBatch, 8}).normal_(0, 1);
    auto latent = torch::empty({kBatch, 8});
    latent.uniform_(-1, 1);
    auto keep = torch::bernoulli(torch::full({8}, 0.9));
    auto loss = (generator->forward(noise + latent) * keep).mean();
    loss.backward();
    opt.step();
  }
}

std::vector<torch::Tensor> negativeKeptBeyondTheIteration(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  std::vector<torch::Tensor> states;
  torch::Tensor hidden;
  for (int step = 0; step < 100; ++step) {
    opt.zero_grad();
    // A fresh recurrent state per sequence: the tensor outlives the statement that makes it.
    hidden = torch::zeros({kBatch, 8});
    hidden = model->forward(x + hidden.detach());
    hidden.sum().backward();
    opt.step();
    states.push_back(torch::zeros({8}));
    auto snapshot = torch::zeros({kBatch, 8});
    snapshot.copy_(hidden.detach());
    states.push_back(snapshot);
  }
  return states;
}

void negativeUnderIntervalGuard(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int step = 0; step < 1000; ++step) {
    opt.zero_grad();
    model->forward(x).sum().backward();
    opt.step();
    if (step % 100 == 0) {
      auto histogram = torch::zeros({10});
      histogram.add_(1);
    }
  }
}

void negativeOncePerEpoch(Net model, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto confusion = torch::zeros({8, 8});
    for (auto &batch : *loader) {
      opt.zero_grad();
      auto loss = model->forward(batch.data).pow(2).mean();
      loss.backward();
      opt.step();
    }
    confusion.fill_(0);
  }
}

void negativeNoModelInTheLoop(torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto scratch = torch::zeros({8});
    scratch.add_(x);
  }
}

void negativeLoopCounterSized(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int64_t len = 1; len < 10; ++len) {
    opt.zero_grad();
    auto pad = torch::zeros({len, 8});
    model->forward(torch::cat({x, pad})).sum().backward();
    opt.step();
  }
}

torch::Tensor makeMask() { return torch::ones({8}); }

void negativeAllocatedOnceAndRefilled(Net model, torch::optim::SGD &opt, torch::Tensor x, torch::Device device) {
  auto grad_buffer = torch::zeros({8});
  std::vector<float> losses;
  model->to(device);
  for (int i = 0; i < 10; ++i) {
    model->zero_grad();
    grad_buffer.zero_();
    auto loss = (model->forward(x.to(device)) * makeMask().to(device)).sum();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<float>());
  }
}

// Made on the host and moved to the device on every iteration: torch-host-device-copy-in-loop
// reports it, with the advice that fits (create it on the device).
void negativeHostFactoryMovedToTheDevice(Net model, torch::optim::SGD &opt, torch::Tensor x, torch::Device device) {
  model->to(device);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto mask = torch::full({8}, 0.5).to(device);
    auto loss = (model->forward(x.to(device)) * mask).sum();
    loss.backward();
    opt.step();
  }
}

// Handed to a function whose body is in another translation unit (an autograd Function's apply,
// a kernel launcher): taken to use the tensor, not to keep it, as OpenSplat's Model::forward
// does with the view matrix it makes on every call.
void projectGaussians(const torch::Tensor &viewMat);
void positiveHandedToAFunctionOutOfSight(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto viewMat = torch::eye(4);
    // CHECK: :[[@LINE-1]]:20: warning: 'torch::eye' allocates a tensor of the same size
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    projectGaussians(viewMat);
    model->forward(x).sum().backward();
    opt.step();
  }
}

// A local rebound under a condition by a value that does not read it (2D Gaussian splatting's
// `normal_loss`): the zeros are still made on every step.
void positiveRebindingThatDoesNotReadIt(Net model, torch::optim::Adam &opt, torch::Tensor x) {
  for (int iter = 1; iter <= 8000; ++iter) {
    opt.zero_grad();
    auto out = model->forward(x);
    torch::Tensor normal_loss = torch::zeros({});
    // CHECK: :[[@LINE-1]]:33: warning: 'torch::zeros' allocates a tensor of the same size
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    if (iter > 7000)
      normal_loss = 0.05f * out.pow(2).mean();
    (out.sum() + normal_loss).backward();
    opt.step();
  }
}

// The start of a sum over an inner loop, rebound from itself: not a buffer to hoist.
void negativeInitialValueOfASum(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  auto loader = makeLoader();
  for (int epoch = 0; epoch < 3; ++epoch) {
    torch::Tensor total = torch::zeros({});
    for (auto &batch : *loader) {
      opt.zero_grad();
      auto loss = model->forward(batch.data).pow(2).mean();
      loss.backward();
      opt.step();
      total = total + loss.detach();
    }
    torch::Tensor state = torch::zeros({kBatch, 8});
    for (int t = 0; t < 4; ++t)
      state = torch::tanh(model->forward(x) + state).detach();
  }
}
