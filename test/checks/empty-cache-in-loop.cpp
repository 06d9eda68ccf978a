// RUN: %tidy --checks='-*,torch-empty-cache-in-loop' %s -- %torch_flags %cuda_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-empty-cache-in-loop' --fix-notes %t.cpp -- %torch_flags %cuda_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %cuda_flags %t.cpp
// Plain --fix leaves a note's fix alone.
// RUN: cp %s %t.plain.cpp
// RUN: %tidy --checks='-*,torch-empty-cache-in-loop' --fix %t.plain.cpp -- %torch_flags %cuda_flags > /dev/null 2>&1
// RUN: diff %s %t.plain.cpp
#include <torch/torch.h>

#include <c10/cuda/CUDACachingAllocator.h>

#include <functional>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

void trainStep(Net &net, torch::optim::Optimizer &optimizer, const torch::Tensor &x, const torch::Tensor &y) {
  optimizer.zero_grad();
  torch::mse_loss(net->forward(x), y).backward();
  optimizer.step();
}

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForOverDataLoader(Net &net, torch::optim::SGD &optimizer, torch::Device device) {
  auto loader = makeLoader();
  std::vector<float> losses;
  for (auto &batch : *loader) {
    auto x = batch.data.to(device), y = batch.target.to(device);
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<float>());
    c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:5: warning: 'emptyCache()' runs on every iteration: it returns the caching allocator's free blocks to the driver, so the next iteration allocates them again with cudaMalloc, which synchronizes the device; consider removing it (it frees no memory a tensor holds) or calling it once outside the loop [torch-empty-cache-in-loop]
    // CHECK: :[[@LINE-9]]:3: note: loop starts here
  }
}

void positiveWhileLoop(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y, int steps) {
  int step = 0;
  while (step++ < steps) {
    trainStep(net, optimizer, x, y);
    c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:5: warning: 'emptyCache()' runs on every iteration
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}
// FIXED: void positiveWhileLoop(
// FIXED: trainStep(net, optimizer, x, y);
// FIXED-NEXT: {{.*}}warning: 'emptyCache()' runs on every iteration

// `step % 100` used as a boolean is true on 99 steps of 100.
void positiveModuloAsBoolean(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 1000; ++step) {
    trainStep(net, optimizer, x, y);
    if (step % 100)
      c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:7: warning: 'emptyCache()' runs on every iteration
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
  }
}

struct OptimParams {
  int iterations = 30000;
  bool empty_gpu_cache = true;
};

// A configuration switch in front of the modulo: still true on 99 steps of 100 when enabled.
void positiveSwitchAndModulo(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y,
                             const OptimParams &params) {
  for (int iter = 1; iter <= params.iterations; ++iter) {
    trainStep(net, optimizer, x, y);
    if (params.empty_gpu_cache && iter % 100) {
      c10::cuda::CUDACachingAllocator::emptyCache();
      // CHECK: :[[@LINE-1]]:7: warning: 'emptyCache()' runs on every iteration
      // CHECK: :[[@LINE-5]]:3: note: loop starts here
    }
  }
}

// A per-step callback, as training frameworks register them.
void positivePerStepCallback(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  std::function<void(int)> onStepEnd = [](int) {
    c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:5: warning: 'emptyCache()' runs on every iteration
  };
  for (int step = 0; step < 100; ++step) {
    trainStep(net, optimizer, x, y);
    onStepEnd(step);
    // CHECK: :[[@LINE-1]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}

void releaseMemory() {
  c10::cuda::CUDACachingAllocator::emptyCache();
  // CHECK: :[[@LINE-1]]:3: warning: 'emptyCache()' runs on every iteration
}

void positiveHelperCalledFromLoop(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 100; ++step) {
    trainStep(net, optimizer, x, y);
    releaseMemory();
    // CHECK: :[[@LINE-1]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}

class Trainer {
public:
  Trainer(Net net, double lr) : net_(std::move(net)), optimizer_(net_->parameters(), lr) {}
  void fit(torch::Tensor x, torch::Tensor y, int epochs) {
    for (int epoch = 0; epoch < epochs; ++epoch) {
      trainStep(net_, optimizer_, x, y);
      c10::cuda::CUDACachingAllocator::emptyCache();
      // CHECK: :[[@LINE-1]]:7: warning: 'emptyCache()' runs on every iteration
      // CHECK: :[[@LINE-4]]:5: note: loop starts here
    }
  }

private:
  Net net_;
  torch::optim::SGD optimizer_;
};

template <typename Model> void positiveTemplate(Model &model, torch::optim::SGD &optimizer, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    optimizer.zero_grad();
    model->forward(x).sum().backward();
    optimizer.step();
    c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:5: warning: 'emptyCache()' runs on every iteration
    // CHECK: :[[@LINE-6]]:3: note: loop starts here
  }
}
template void positiveTemplate<Net>(Net &, torch::optim::SGD &, torch::Tensor);

template <typename Model> void positiveTemplateNeverInstantiated(Model &model, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    model.forward(x).sum().backward();
    c10::cuda::CUDACachingAllocator::emptyCache();
    // CHECK: :[[@LINE-1]]:5: warning: 'emptyCache()' runs on every iteration
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}

// ---- negatives ----------------------------------------------------------------------------

void negativeOnceAfterTraining(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 100; ++step)
    trainStep(net, optimizer, x, y);
  c10::cuda::CUDACachingAllocator::emptyCache();
}

void negativeEveryHundredSteps(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 1000; ++step) {
    trainStep(net, optimizer, x, y);
    if (step % 100 == 0)
      c10::cuda::CUDACachingAllocator::emptyCache();
  }
}

void negativeOutOfMemoryRecovery(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  for (int step = 0; step < 100; ++step) {
    try {
      trainStep(net, optimizer, x, y);
    } catch (const c10::Error &) {
      c10::cuda::CUDACachingAllocator::emptyCache();
    }
  }
}

void negativeUnderMemoryPressure(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y,
                                 const std::vector<bool> &nearLimit) {
  for (size_t step = 0; step < nearLimit.size(); ++step) {
    trainStep(net, optimizer, x, y);
    if (nearLimit[step])
      releaseMemory();
  }
}

void negativeHelperCalledOnce(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  trainStep(net, optimizer, x, y);
  releaseMemory();
}

void negativeCallbackEveryNSteps(Net &net, torch::optim::SGD &optimizer, torch::Tensor x, torch::Tensor y) {
  auto onCheckpoint = [] { c10::cuda::CUDACachingAllocator::emptyCache(); };
  for (int step = 0; step < 1000; ++step) {
    trainStep(net, optimizer, x, y);
    if (step % 500 == 0)
      onCheckpoint();
  }
}
