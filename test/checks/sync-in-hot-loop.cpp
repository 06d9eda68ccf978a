// RUN: %tidy --checks='-*,torch-sync-in-hot-loop' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: %tidy --checks='-*,torch-sync-in-hot-loop' --config="{CheckOptions: {torch-sync-in-hot-loop.TrainingLoopsOnly: false, torch-sync-in-hot-loop.IgnoreCpuOnly: false}}" %s -- %torch_flags 2>&1 | FileCheck --check-prefix=ALL %s
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(8, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

using Batch = torch::data::Example<>;

using Dataset = torch::data::datasets::TensorDataset;

void positiveRangeForItem(Net model, torch::optim::Optimizer &opt, torch::Device device) {
  auto loader = torch::data::make_data_loader(
      Dataset(torch::randn({64, 8})).map(torch::data::transforms::Stack<torch::data::TensorExample>()), 16);
  model->to(device);
  double total = 0;
  for (auto &batch : *loader) {
    auto data = batch.data.to(device);
    opt.zero_grad();
    auto loss = model->forward(data).pow(2).mean();
    loss.backward();
    opt.step();
    total += loss.item<double>();
    // CHECK: :[[@LINE-1]]:19: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
  }
  std::printf("%f\n", total);
}

template <typename Optimizer>
void positiveTemplate(Net model, Optimizer &opt, torch::Tensor x) {
  auto device = torch::Device(torch::kCUDA);
  for (int i = 0; i < 10; ++i) {
    model->zero_grad();
    auto loss = model->forward(x.to(device)).mean();
    loss.backward();
    opt.step();
    std::printf("%f\n", loss.item<float>());
    // CHECK: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
}
template void positiveTemplate(Net, torch::optim::SGD &, torch::Tensor);

template <typename Model>
void positiveTemplateNeverInstantiated(Model model, torch::optim::SGD &opt, torch::Tensor x) {
  model->to(torch::kCUDA);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    torch::Tensor loss = model->forward(x).mean();
    loss.backward();
    opt.step();
    std::printf("%f\n", loss.item<float>());
    // CHECK: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
}

void positiveWhilePrintAndCpu(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  int step = 0;
  while (step < 100) {
    opt.zero_grad();
    auto out = model->forward(x.to(device));
    auto loss = out.pow(2).mean();
    loss.backward();
    opt.step();
    std::cout << "loss " << loss << "\n";
    // CHECK: :[[@LINE-1]]:26: warning: printing a tensor synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
    auto host = out.detach().cpu();
    // CHECK: :[[@LINE-1]]:30: warning: 'cpu()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-11]]:3: note: loop starts here
    std::vector<float> values(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
    ++step;
  }
}

void positiveSynchronizeAndNonzero(Net model, torch::optim::Adam &opt, torch::Tensor x) {
  model->to(torch::kCUDA);
  for (int i = 0; i < 10; ++i) {
    auto out = model->forward(x);
    auto picked = out.nonzero();
    // CHECK: :[[@LINE-1]]:23: warning: 'nonzero()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    auto loss = out.index_select(0, picked.squeeze(1)).sum();
    opt.zero_grad();
    loss.backward();
    opt.step();
    torch::cuda::synchronize();
    // CHECK: :[[@LINE-1]]:5: warning: 'torch::cuda::synchronize()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-11]]:3: note: loop starts here
  }
}

void positiveControlFlow(Net model, torch::optim::Adam &opt, torch::Device device, torch::Tensor x, float target_kl) {
  for (int epoch = 0; epoch < 4; ++epoch) {
    auto loss = model->forward(x.to(device)).mean();
    auto approx_kl = loss.detach().abs();
    float kl = approx_kl.item<float>();
    // CHECK: :[[@LINE-1]]:26: warning: 'item()' synchronizes the host with the device on every training step and is needed for control flow; consider checking it every N steps [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    if (kl > 1.5f * target_kl)
      break;
    opt.zero_grad();
    loss.backward();
    AT_ASSERT(!std::isnan(loss.item<float>()));
    // CHECK: :[[@LINE-1]]:32: warning: 'item()' synchronizes the host with the device on every training step and is needed for control flow; consider checking it every N steps [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-12]]:3: note: loop starts here
    opt.step();
  }
}

struct Trainer {
  Net model;
  torch::optim::Adam opt{model->parameters(), torch::optim::AdamOptions(1e-3)};
  torch::Device device{torch::kCUDA};
  std::vector<float> history;

  float trainStep(const torch::Tensor &x) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).mean();
    loss.backward();
    opt.step();
    return loss.item<float>();
    // CHECK: :[[@LINE-1]]:17: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE+6]]:25: note: called on every training step here
    // CHECK: :[[@LINE+4]]:5: note: loop starts here
  }

  void positiveMemberHelper(const std::vector<torch::Tensor> &batches) {
    for (const auto &x : batches)
      history.push_back(trainStep(x));
  }
};

void positiveLambda(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  auto step = [&](int i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    auto fired = (model->forward(x.to(device)) > 0).nonzero();
    // CHECK: :[[@LINE-1]]:53: warning: 'nonzero()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE+5]]:5: note: called on every training step here
    // CHECK: :[[@LINE+3]]:3: note: loop starts here
    std::printf("%d %ld\n", i, static_cast<long>(fired.size(0)));
  };
  for (int i = 0; i < 5; ++i)
    step(i);
}

void positiveInvariantFlag(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x, bool verbose) {
  for (int i = 0; i < 5; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    if (verbose)
      std::printf("%f\n", loss.item<float>());
      // CHECK: :[[@LINE-1]]:32: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
      // CHECK: :[[@LINE-8]]:3: note: loop starts here
  }
}

// ---- negative cases ---------------------------------------------------------------

void negativeIntervalGuard(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int64_t batch_idx = 0; batch_idx < 100; ++batch_idx) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    if (batch_idx % 10 == 0)
      std::printf("%ld %f\n", static_cast<long>(batch_idx), loss.item<float>());
  }
}

void logEvery(int64_t step, const torch::Tensor &loss) {
  if (step % 50 == 0)
    std::cout << loss.item<float>() << "\n";
}

void negativeGuardInHelper(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int64_t step = 0; step < 100; ++step) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    logEvery(step, loss);
  }
}

void report(const torch::Tensor &loss) { std::cout << loss.item<float>() << "\n"; }

void negativeGuardInCaller(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int64_t step = 0; step < 100; ++step) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    if (step % 100 == 99)
      report(loss);
  }
}

void negativeOncePerEpoch(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    torch::Tensor last;
    for (int i = 0; i < 100; ++i) {
      opt.zero_grad();
      last = model->forward(x.to(device)).sum();
      last.backward();
      opt.step();
    }
    std::printf("epoch %d loss %f\n", epoch, last.item<float>());
  }
}

void negativeCpuOnly(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  std::vector<float> losses;
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x).sum();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<float>());
    // ALL: :[[@LINE-1]]:27: warning: 'item()' synchronizes the host with the device on every iteration; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
  }
}

void negativeEvalLoop(Net model, torch::Device device, const std::vector<torch::Tensor> &xs) {
  torch::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0;
  for (const auto &x : xs)
    correct += model->forward(x.to(device)).argmax(1).eq(0).sum().item<int64_t>();
    // ALL: :[[@LINE-1]]:67: warning: 'item()' synchronizes the host with the device on every iteration; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
  std::printf("%ld\n", static_cast<long>(correct));
}

void negativeAfterLoop(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  torch::Tensor total = torch::zeros({}, torch::TensorOptions().device(device));
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    total += loss.detach();
  }
  std::printf("%f\n", total.item<float>());
}

void negativeHostTensors(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    auto lr = torch::full({}, 0.1);
    double rate = lr.item<double>();
    (void)rate;
  }
}

void positiveNanCheckButRarePrint(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    if (!std::isfinite(loss.item<float>())) {
    // CHECK: :[[@LINE-1]]:29: warning: 'item()' synchronizes the host with the device on every training step and is needed for control flow; consider checking it every N steps [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
      std::cerr << "non-finite loss " << loss << "\n";
      continue;
    }
    loss.backward();
    opt.step();
  }
}

// An explicit CPU device is no accelerator: this code is plainly CPU-only.
void negativeExplicitCpuDevice(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  torch::Device device(torch::kCPU);
  model->to(device);
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    std::printf("%f\n", loss.item<float>());
    // ALL: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every iteration
  }
}

// A tensor's own device says where it already is, not that anything is on an accelerator: a
// helper that checks its input is on the CPU, or returns its result where its input was, is
// CPU-only code (a PINN whose batches are permuted on the host).
torch::Tensor permuteRowsOnHost(const torch::Tensor &x) {
  TORCH_CHECK(x.device().is_cpu(), "expects a CPU tensor");
  return x.index_select(0, torch::randperm(x.size(0))).to(x.device());
}

void negativeTensorsOwnDevice(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    auto batch = permuteRowsOnHost(x);
    opt.zero_grad();
    auto loss = model->forward(batch).sum();
    loss.backward();
    opt.step();
    std::printf("%f\n", loss.item<float>());
    // ALL: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every iteration
  }
}

// The helper's switch is a parameter the caller computes per step: an interval guard.
void logIf(bool now, const torch::Tensor &loss) {
  if (now)
    std::cout << loss.item<float>() << "\n";
}

void negativeSwitchFromCaller(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int64_t step = 0; step < 100; ++step) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    logIf(step % 100 == 0, loss);
  }
}

// An interval guard written as an early return in the helper: every hundredth step.
struct Logger {
  int64_t step = 0;
  void log(const torch::Tensor &loss) {
    if (step++ % 100 != 0)
      return;
    std::printf("%f\n", loss.item<float>());
  }
  void logEvery50(const torch::Tensor &loss) {
    if (step % 50)
      return;
    std::cout << loss << "\n";
  }
};

void negativeEarlyReturnInterval(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x, Logger &log) {
  for (int64_t i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    log.log(loss);
    log.logEvery50(loss);
  }
}

// The device is chosen two calls up; the step and its sync are in helpers.
void stepOnce(Net &model, torch::optim::SGD &opt, torch::Tensor x) {
  opt.zero_grad();
  auto loss = model->forward(x).sum();
  loss.backward();
  opt.step();
  std::printf("%f\n", loss.item<float>());
  // CHECK: :[[@LINE-1]]:28: warning: 'item()' synchronizes the host with the device on every training step
  // CHECK: :[[@LINE+6]]:5: note: called on every training step here
  // CHECK: :[[@LINE+4]]:3: note: loop starts here
}

void runEpoch(Net &model, torch::optim::SGD &opt, const std::vector<torch::Tensor> &xs) {
  for (const auto &x : xs)
    stepOnce(model, opt, x);
}

void positiveDeviceInCaller(Net model, torch::optim::SGD &opt, std::vector<torch::Tensor> xs) {
  model->to(torch::kCUDA);
  runEpoch(model, opt, xs);
}

// A copy to the host spelled with to(): like cpu(). A dtype conversion or a move to the
// device is none.
void positiveToHost(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto out = model->forward(x.to(device));
    auto loss = out.sum();
    loss.backward();
    opt.step();
    auto preview = out.detach().to(torch::kCPU, torch::kUInt8);
    // CHECK: :[[@LINE-1]]:33: warning: 'to()' to the host synchronizes the host with the device on every training step
    auto half = out.detach().to(torch::kHalf);
    auto back = half.to(device);
  }
}

// A training step handed to the batch loop as a std::function (sotlampr/bert-linux-gnu): a call
// of the parameter runs what the visible calls pass for it, so the loop trains through it.
void innerLoop(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
               std::function<void(torch::Tensor)> callback) {
  for (auto &b : batches) {
    auto loss = model->forward(b.cuda()).pow(2).mean();
    losses.push_back(loss.item<float>());
    // CHECK: :[[@LINE-1]]:27: warning: 'item()' synchronizes the host with the device on every training step
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    callback(loss);
  }
}
void positiveStepThroughStdFunction(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
                                    torch::optim::Optimizer &opt) {
  auto callback = [&](torch::Tensor loss) {
    opt.zero_grad();
    loss.backward();
    opt.step();
  };
  innerLoop(model, batches, losses, callback);
}
void negativeValidationThroughStdFunction(Net &model, std::vector<torch::Tensor> &batches,
                                          std::vector<float> &losses) {
  torch::NoGradGuard no_grad;
  innerLoop(model, batches, losses, [](torch::Tensor) {});
}

// The lambda passed at the call site syncs on every step it is called for.
void runBatches(Net &model, std::vector<torch::Tensor> &batches, const std::function<void(torch::Tensor)> &step) {
  for (auto &b : batches)
    step(model->forward(b.cuda()).mean());
}
void positiveSyncInPassedLambda(Net &model, std::vector<torch::Tensor> &batches, torch::optim::SGD &opt) {
  runBatches(model, batches, [&](torch::Tensor loss) {
    opt.zero_grad();
    loss.backward();
    opt.step();
    std::printf("%f\n", loss.item<float>());
    // CHECK: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every training step
    // CHECK: :[[@LINE-9]]:5: note: called on every training step here
    // CHECK: :[[@LINE-11]]:3: note: loop starts here
  });
}

// The step runs under an interval: the lambda's sync is not per step.
void runBatchesEvery(Net &model, std::vector<torch::Tensor> &batches, std::function<void(torch::Tensor)> step) {
  int64_t i = 0;
  for (auto &b : batches) {
    auto loss = model->forward(b.cuda()).mean();
    loss.backward();
    if (++i % 100 == 0)
      step(loss);
  }
}
void negativeCallbackUnderInterval(Net &model, std::vector<torch::Tensor> &batches) {
  runBatchesEvery(model, batches, [](torch::Tensor loss) { std::printf("%f\n", loss.item<float>()); });
}

// The callback runs once, after the loop: the loop does not train.
void afterBatches(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
                  std::function<void(torch::Tensor)> done) {
  torch::Tensor last;
  for (auto &b : batches) {
    last = model->forward(b.cuda()).mean();
    losses.push_back(last.item<float>());
    // ALL: :[[@LINE-1]]:27: warning: 'item()' synchronizes the host with the device on every iteration
  }
  done(last);
}
void negativeCallbackAfterLoop(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &losses,
                               torch::optim::SGD &opt) {
  afterBatches(model, batches, losses, [&](torch::Tensor loss) {
    opt.zero_grad();
    loss.backward();
    opt.step();
  });
}

// Every callback passed only evaluates: not a training loop.
void scoreBatches(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &scores,
                  std::function<void(torch::Tensor)> record) {
  for (auto &b : batches) {
    auto out = model->forward(b.cuda());
    scores.push_back(out.mean().item<float>());
    // ALL: :[[@LINE-1]]:33: warning: 'item()' synchronizes the host with the device on every iteration
    record(out);
  }
}
void negativeEvalCallback(Net &model, std::vector<torch::Tensor> &batches, std::vector<float> &scores,
                          std::vector<torch::Tensor> &kept) {
  torch::NoGradGuard no_grad;
  scoreBatches(model, batches, scores, [&](torch::Tensor out) { kept.push_back(out.argmax(1)); });
}

// ---- one notion of "created on the host" (AutogradModel::hostTensorSource)

// Arithmetic of host tensors, a dtype conversion, a reference binding a temporary: on the host.
void negativeHostArithmetic(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    auto sum = torch::zeros({1}) + torch::ones({1});
    const auto &scale = torch::full({1}, 0.5).to(torch::kDouble);
    double v = sum.item<double>() + scale.item<double>();
    (void)v;
  }
}

// from_blob and torch::tensor wrap host data: on the host, whatever they hold.
void negativeHostData(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  std::vector<float> buffer(4, 1.0f);
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    buffer[0] = static_cast<float>(i);
    float v = torch::from_blob(buffer.data(), {4}).sum().item<float>() + torch::tensor(buffer).max().item<float>();
    (void)v;
  }
}

// A 0-dim host tensor combined with a device tensor gives a device tensor.
void positiveHostScalarTimesDeviceLoss(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  double total = 0;
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    auto weighted = torch::tensor(0.5).mul(loss.detach());
    total += weighted.item<double>();
    // CHECK: :[[@LINE-1]]:23: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-8]]:3: note: loop starts here
  }
  std::printf("%f\n", total);
}

// A local made on the host, then given the device loss before it is read.
void positiveReassignedFromDevice(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    auto loss = model->forward(x.to(device)).sum();
    loss.backward();
    opt.step();
    torch::Tensor last = torch::zeros({});
    last = loss.detach();
    std::printf("%f\n", last.item<float>());
    // CHECK: :[[@LINE-1]]:30: warning: 'item()' synchronizes the host with the device on every training step; consider doing it every N steps or keeping the value on the device [torch-sync-in-hot-loop]
    // CHECK: :[[@LINE-9]]:3: note: loop starts here
  }
}

// An update phase of many mini-batch steps in a helper's own loops, once per rollout: the
// outer loop's step is two calls down, inside train()'s loops, so it is no training loop and
// the log read once per rollout is silent (cemlyn007/ale-libtorch-ppo's shape).
torch::Tensor miniBatchUpdate(Net &model, torch::optim::Optimizer &opt, const torch::Tensor &batch) {
  auto loss = model->forward(batch).pow(2).mean();
  opt.zero_grad();
  loss.backward();
  opt.step();
  return loss.detach();
}
void updatePhase(Net &model, torch::optim::Optimizer &opt, const torch::Tensor &batch, torch::Tensor &losses) {
  for (int64_t epoch = 0; epoch < 4; ++epoch)
    for (int64_t mb = 0; mb < 32; ++mb)
      losses[epoch][mb] = miniBatchUpdate(model, opt, batch);
}
void logRollout(const torch::Tensor &losses) { std::printf("%f\n", losses.mean().item<float>()); }
void negativeUpdatePhaseInAHelpersLoops(Net model, torch::optim::Adam &opt, torch::Device device) {
  auto losses = torch::empty({4, 32}, torch::TensorOptions().device(device));
  for (int rollout = 0; rollout < 7000; ++rollout) {
    torch::Tensor batch;
    {
      torch::NoGradGuard no_grad;
      batch = torch::randn({64, 8}, torch::TensorOptions().device(device));
      model->forward(batch);
    }
    updatePhase(model, opt, batch, losses);
    logRollout(losses);
  }
}
