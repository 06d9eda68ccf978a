// RUN: %tidy --checks='-*,torch-module-clone-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

struct NetImpl : torch::nn::Cloneable<NetImpl> {
  explicit NetImpl(int64_t in = 4) : in_(in) { reset(); }
  void reset() override { fc = register_module("fc", torch::nn::Linear(in_, 1)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  int64_t in_;
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

void trainModel(Net &net, torch::Tensor x, torch::Tensor y, double lr) {
  torch::optim::SGD optimizer(net->parameters(), lr);
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    optimizer.step();
  }
}

// ---- positives ----------------------------------------------------------------------------

// A target network refreshed on every step instead of every N steps.
void positiveTargetNetworkEveryStep(Net &policy, torch::optim::Adam &optimizer) {
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    auto target = std::dynamic_pointer_cast<NetImpl>(policy->clone());
    // CHECK: :[[@LINE-1]]:54: warning: module cloned on every step: clone() deep-copies every parameter and buffer each time; consider cloning once before the loop, or every N steps [torch-module-clone-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    torch::Tensor expected;
    {
      torch::NoGradGuard no_grad;
      expected = target->forward(batch.data);
    }
    optimizer.zero_grad();
    torch::mse_loss(policy->forward(batch.data), expected + batch.target).backward();
    optimizer.step();
  }
}

void positiveWhileDistillation(Net &student, torch::optim::SGD &optimizer, torch::Tensor x, int steps) {
  int step = 0;
  while (step++ < steps) {
    auto teacher = student->clone();
    // CHECK: :[[@LINE-1]]:20: warning: module cloned on every step
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    auto soft = std::dynamic_pointer_cast<NetImpl>(teacher)->forward(x).detach();
    optimizer.zero_grad();
    torch::mse_loss(student->forward(x), soft).backward();
    optimizer.step();
  }
}

// One copy per request "for safety": inference, no training anywhere.
std::vector<float> positivePerRequest(Net &model, const std::vector<torch::Tensor> &requests) {
  torch::NoGradGuard no_grad;
  std::vector<float> answers;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto local = std::dynamic_pointer_cast<NetImpl>(model->clone());
    // CHECK: :[[@LINE-1]]:53: warning: module cloned on every step
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    answers.push_back(local->forward(requests[i]).item<float>());
  }
  return answers;
}

torch::Tensor predictWithCopy(Net &net, const torch::Tensor &x) {
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
  // CHECK: :[[@LINE-1]]:50: warning: module cloned on every step
  return copy->forward(x);
}

void positiveHelperCalledPerBatch(Net &net, const std::vector<torch::Tensor> &batches) {
  torch::NoGradGuard no_grad;
  std::vector<float> means;
  for (const auto &batch : batches) {
    means.push_back(predictWithCopy(net, batch).mean().item<float>());
    // CHECK: :[[@LINE-1]]:21: note: called on every step here
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
  }
}

class EmaTrainer {
public:
  EmaTrainer(Net net) : net_(std::move(net)), optimizer_(net_->parameters(), 0.1) {}
  void fit(torch::Tensor x, torch::Tensor y, int steps) {
    for (int step = 0; step < steps; ++step) {
      optimizer_.zero_grad();
      torch::mse_loss(net_->forward(x), y).backward();
      optimizer_.step();
      ema_ = net_->clone();
      // CHECK: :[[@LINE-1]]:14: warning: module cloned on every step
      // CHECK: :[[@LINE-6]]:5: note: loop starts here
    }
  }

private:
  Net net_;
  torch::optim::SGD optimizer_;
  std::shared_ptr<torch::nn::Module> ema_;
};

void positiveInLambda(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 10; ++step) {
    auto snapshotAndStep = [&] {
      auto snapshot = net->clone();
      // CHECK: :[[@LINE-1]]:23: warning: module cloned on every step
      // CHECK: :[[@LINE-4]]:3: note: loop starts here
      optimizer.zero_grad();
      torch::mse_loss(net->forward(x), y).backward();
      optimizer.step();
      return snapshot;
    };
    snapshotAndStep();
  }
}

template <typename Model> void positiveTemplate(Model &model, torch::optim::SGD &optimizer, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto frozen = model->clone();
    // CHECK: :[[@LINE-1]]:19: warning: module cloned on every step
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    optimizer.zero_grad();
    model->forward(x).sum().backward();
    optimizer.step();
  }
}
template void positiveTemplate<Net>(Net &, torch::optim::SGD &, torch::Tensor);

template <typename Model> void positiveTemplateNeverInstantiated(Model &model, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto frozen = model->clone();
    // CHECK: :[[@LINE-1]]:19: warning: module cloned on every step
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    model->forward(x).sum().backward();
  }
}

// TorchScript modules: clone() and deepcopy() copy every tensor too.
void positiveScriptedPerRequest(torch::jit::Module &module, const std::vector<torch::Tensor> &requests) {
  torch::NoGradGuard no_grad;
  for (const auto &request : requests) {
    torch::jit::Module copy = module.deepcopy();
    // CHECK: :[[@LINE-1]]:31: warning: module cloned on every step
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    copy.forward({request});
  }
}

// ---- negatives ----------------------------------------------------------------------------

// Best-model checkpoint: a clone only when validation improves.
void negativeBestModelSnapshot(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  std::shared_ptr<torch::nn::Module> best;
  float best_loss = 1e9f;
  std::vector<float> losses;
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<float>());
    if (losses.back() < best_loss) {
      best_loss = losses.back();
      best = net->clone();
    }
  }
}

void negativeTargetNetworkEveryNSteps(Net &policy, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  auto target = std::dynamic_pointer_cast<NetImpl>(policy->clone());
  for (int step = 0; step < 10000; ++step) {
    optimizer.zero_grad();
    torch::mse_loss(policy->forward(x), target->forward(x).detach() + y).backward();
    optimizer.step();
    if (step % 1000 == 0)
      target = std::dynamic_pointer_cast<NetImpl>(policy->clone());
  }
}

// A fresh copy of the base model per fold and per learning rate: each trains in its own loop.
void negativeCrossValidationAndSweep(Net &base, torch::Tensor x, torch::Tensor y) {
  for (int fold = 0; fold < 5; ++fold) {
    Net model(std::dynamic_pointer_cast<NetImpl>(base->clone()));
    trainModel(model, x, y, 0.1);
    auto validation = model->forward(x);
  }
  for (double lr : {0.1, 0.01, 0.001}) {
    Net model(std::dynamic_pointer_cast<NetImpl>(base->clone()));
    trainModel(model, x, y, lr);
  }
}

// One snapshot per epoch (for averaging), taken after the epoch's batch loop.
void negativeSnapshotPerEpoch(Net &net, torch::optim::SGD &optimizer) {
  std::vector<std::shared_ptr<torch::nn::Module>> snapshots;
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto loader = makeLoader();
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      torch::mse_loss(net->forward(batch.data.to(torch::kCPU)), batch.target).backward();
      optimizer.step();
    }
    snapshots.push_back(net->clone());
  }
}

// One replica per device, as data parallelism makes them.
void negativeReplicas(Net &net, const std::vector<torch::Device> &devices) {
  std::vector<std::shared_ptr<torch::nn::Module>> replicas;
  for (const auto &device : devices)
    replicas.push_back(net->clone(device));
}

// Tensors' clone() is not a module copy.
void negativeTensorClone(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 10; ++step) {
    auto input = x.clone();
    optimizer.zero_grad();
    torch::mse_loss(net->forward(input), y).backward();
    optimizer.step();
  }
}
