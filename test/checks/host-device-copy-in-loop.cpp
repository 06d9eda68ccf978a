// RUN: %tidy --checks='-*,torch-host-device-copy-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(8, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

using Dataset = torch::data::datasets::TensorDataset;

void positiveInvariantTensor(torch::Device device, torch::Tensor x) {
  torch::Tensor weights = torch::randn({8});
  for (int i = 0; i < 10; ++i) {
    auto w = weights.to(device);
    // CHECK: :[[@LINE-1]]:22: warning: loop-invariant tensor 'weights' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-5]]:17: note: 'weights' is declared here
    x = x * w;
  }
}

void positiveModuleMovedEveryIteration(Net model, torch::Device device) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    model->to(device);
    // CHECK: :[[@LINE-1]]:12: warning: module 'model' is moved to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-5]]:44: note: 'model' is declared here
  }
}

void positiveSharedPtrModuleCuda(std::shared_ptr<NetImpl> net) {
  int step = 0;
  while (step++ < 5)
    net->to(torch::kCUDA);
  // CHECK: :[[@LINE-1]]:10: warning: module 'net' is moved to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
  // CHECK: :[[@LINE-6]]:59: note: 'net' is declared here
}

void positiveFactoryMovedEachIteration(torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto noise = torch::randn({8}).to(device);
    // CHECK: :[[@LINE-1]]:36: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    auto mask = torch::ones({8}).cuda();
    // CHECK: :[[@LINE-1]]:34: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-6]]:3: note: loop starts here
    x = x + noise * mask;
  }
}

void positiveBatchSizedLabels(torch::Device device) {
  auto loader = torch::data::make_data_loader(
      Dataset(torch::randn({64, 8})).map(torch::data::transforms::Stack<torch::data::TensorExample>()),
      16);
  for (auto &batch : *loader) {
    auto real = batch.data.to(device);
    auto labels = torch::ones({batch.data.size(0)}).to(device);
    // CHECK: :[[@LINE-1]]:53: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    auto filled = torch::full({8}, real.size(0)).cuda();
    // CHECK: :[[@LINE-1]]:50: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
}

void positiveRoundTrip(torch::Device device, torch::Tensor state) {
  for (int i = 0; i < 10; ++i) {
    state = state * 2;
    auto host = state.cpu();
    auto clipped = host.clamp(0, 1);
    state = clipped.to(device);
    // CHECK: :[[@LINE-1]]:21: warning: tensor makes a device -> host -> device round trip on every iteration; consider keeping it on the device [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-4]]:23: note: copied to the host here
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
}

// A mask computed on the host from a host copy (an element of `max`, a comparison) and moved back.
void positiveRoundTripThroughHostOps(torch::Device device, const std::vector<torch::Tensor> &batches) {
  for (const auto &out : batches) {
    auto probs = out.exp().detach().cpu();
    auto mask = (std::get<0>(probs.max(1)) > 0.5).to(device);
    // CHECK: :[[@LINE-1]]:51: warning: tensor makes a device -> host -> device round trip on every iteration; consider keeping it on the device [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:37: note: copied to the host here
    // CHECK: :[[@LINE-5]]:3: note: loop starts here
    std::printf("%f\n", mask.sum().item<float>());
  }
}

// The same ops on the device, and a value that may come from either side: no round trip.
void negativeMaskWithoutHostCopy(torch::Device device, const std::vector<torch::Tensor> &batches, bool onHost) {
  for (const auto &out : batches) {
    auto mask = (std::get<0>(out.exp().max(1)) > 0.5).to(device);
    auto either = onHost ? out.cpu() : out;
    auto moved = either.to(device);
    std::printf("%f %f\n", mask.sum().item<float>(), moved.sum().item<float>());
  }
}

struct Trainer {
  Net model_;
  torch::Tensor class_weights_;
  torch::Device device_{torch::kCPU};
  torch::Tensor step(torch::Tensor x) {
    torch::Tensor total = torch::zeros({1});
    for (int i = 0; i < 4; ++i)
      total = total + (model_->forward(x) * class_weights_.to(device_)).sum();
    // CHECK: :[[@LINE-1]]:60: warning: loop-invariant tensor 'class_weights_' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:5: note: loop starts here
    // CHECK: :[[@LINE-8]]:17: note: 'class_weights_' is declared here
    return total;
  }
};

template <typename Model>
void positiveTemplate(Model &model, torch::Tensor bias, torch::Device device) {
  for (int i = 0; i < 3; ++i) {
    auto b = bias.to(device);
    // CHECK: :[[@LINE-1]]:19: warning: loop-invariant tensor 'bias' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-5]]:51: note: 'bias' is declared here
    model->forward(b.expand({2, 8}));
  }
}
template void positiveTemplate<Net>(Net &, torch::Tensor, torch::Device);

void positiveLambdaInLoop(torch::Tensor table, torch::Device device) {
  std::vector<torch::Tensor> out;
  for (int i = 0; i < 3; ++i) {
    auto lookup = [&] { return table.to(device); };
    // CHECK: :[[@LINE-1]]:38: warning: loop-invariant tensor 'table' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:41: note: 'table' is declared here
    out.push_back(lookup());
  }
}

// ---- negatives -------------------------------------------------------------------------

void negativeBatchesMovedPerIteration(Net model, torch::Device device) {
  auto loader = torch::data::make_data_loader(
      Dataset(torch::randn({64, 8})).map(torch::data::transforms::Stack<torch::data::TensorExample>()),
      16);
  for (auto &batch : *loader) {
    auto data = batch.data.to(device);
    model->forward(data);
  }
}

void negativeReassignedEachIteration(std::vector<torch::Tensor> &inputs, torch::Device device) {
  torch::Tensor x;
  for (size_t i = 0; i < inputs.size(); ++i) {
    x = inputs[i];
    x = x.to(device);
    auto y = inputs[i].to(device);
  }
}

void negativeDtypeOnly(torch::Tensor weights, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto w = weights.to(torch::kFloat);
    auto d = weights.to(torch::kDouble, /*non_blocking=*/false);
    x = x + w;
  }
}

void negativeLikeInheritsDevice(torch::Tensor x, torch::Device device) {
  for (int i = 0; i < 10; ++i) {
    auto z = torch::zeros_like(x).to(device);
    x = x + z;
  }
}

void negativeLoggingCopies(Net model, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  std::vector<float> history;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    auto logged = loss.detach().cpu();
    history.push_back(logged.item<float>());
    auto out = model->forward(x).cpu();
  }
}

void negativeHoisted(Net model, torch::Tensor weights, torch::Device device) {
  model->to(device);
  auto w = weights.to(device);
  auto noise = torch::randn({8}, torch::TensorOptions().device(device));
  for (int i = 0; i < 10; ++i)
    model->forward(w + noise);
}

void negativeEachModuleOnce(std::vector<Net> &models, torch::Device device) {
  for (auto &m : models)
    m->to(device);
}

void negativeTensorFromPerIterationData(torch::Device device) {
  for (int i = 0; i < 4; ++i) {
    std::vector<float> values(8, static_cast<float>(i));
    auto t = torch::tensor(values).to(device);
  }
}

// Class weights computed on the host from per-iteration data, then moved: the factory only
// allocates; what is copied is data, as with torch::tensor(values) (bert-linux-gnu).
void negativeFactoryFilledInTheLoop(torch::Device device, std::vector<torch::Tensor> &labels) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    torch::Tensor weights = torch::empty({labels[i].size(1)});
    for (int64_t j = 0; j < labels[i].size(1); j++)
      weights[j] = (labels[i].select(1, j) == 0).sum() / (labels[i].select(1, j) == 1).sum();
    out.push_back(weights.cuda());
    torch::Tensor counts = torch::zeros({4}).to(torch::kFloat);
    counts.index_put_({0}, labels[i].sum());
    out.push_back(counts.to(device));
    torch::Tensor raw = torch::zeros({4});
    float *p = raw.data_ptr<float>();
    p[0] = static_cast<float>(i);
    out.push_back(raw.to(device));
  }
}

void negativeOutsideLoop(torch::Tensor weights, torch::Device device) {
  auto w = weights.to(device);
  auto n = torch::randn({8}).to(device);
}

void negativeMovedThenAssigned(torch::Tensor state, torch::Device device) {
  for (int i = 0; i < 3; ++i)
    state = state.to(device) * 2;
}

void refill(torch::Tensor &t);
void negativeRefilledByReference(torch::Tensor buffer, torch::Device device) {
  for (int i = 0; i < 3; ++i) {
    refill(buffer);
    auto b = buffer.to(device);
  }
}

// ---- the shared autograd model: factories through arithmetic, optimizer-owned tensors,
// interval guards

void positiveFactoryThroughArithmeticAndDetach(torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto scaled = (torch::randn({8}) * 0.1).to(device);
    // CHECK: :[[@LINE-1]]:45: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    auto base = torch::ones({8}).detach();
    auto moved = base.to(device);
    // CHECK: :[[@LINE-1]]:23: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
    x = x + scaled + moved;
  }
}

void negativeHostArithmeticWithBatchData(torch::Device device, std::vector<torch::Tensor> &batches) {
  for (auto &batch : batches) {
    auto shifted = (torch::ones({8}) + batch).to(device);
  }
}

void negativeOptimizerOwnedTensor(torch::Device device, torch::Tensor x) {
  torch::Tensor w = torch::zeros({8}, torch::requires_grad());
  torch::optim::SGD opt({w}, 0.1);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = (x * w.to(device)).sum();
    loss.backward();
    opt.step();
  }
}

void positiveTensorNotOwnedByTheOptimizer(torch::Device device, torch::Tensor x) {
  torch::Tensor w = torch::zeros({8}, torch::requires_grad());
  torch::Tensor scale = torch::ones({8});
  torch::optim::SGD opt({w}, 0.1);
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto loss = (x * w * scale.to(device)).sum();
    // CHECK: :[[@LINE-1]]:32: warning: loop-invariant tensor 'scale' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE-7]]:17: note: 'scale' is declared here
    loss.backward();
    opt.step();
  }
}

void negativeSnapshotEveryKSteps(torch::Tensor weights, torch::Device device) {
  std::vector<torch::Tensor> snapshots;
  for (int step = 0; step < 1000; ++step) {
    if (step % 100 == 0)
      snapshots.push_back(weights.to(torch::kCPU));
  }
}

void positiveCopyUnderOtherCondition(torch::Tensor weights, torch::Device device, bool verbose) {
  for (int step = 0; step < 1000; ++step) {
    if (verbose)
      auto w = weights.to(device);
    // CHECK: :[[@LINE-1]]:24: warning: loop-invariant tensor 'weights' is copied to the device on every iteration; consider moving it once before the loop [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    // CHECK: :[[@LINE-6]]:52: note: 'weights' is declared here
  }
}

// A helper that the training loop calls on every step makes a tensor on the host and moves it
// to the device on each call (a NeRF's positional encoding): reported in the helper, with the
// call in the loop and the loop as notes.
torch::Tensor positionalCode(const torch::Tensor &x, torch::Device device) {
  auto freqs = torch::arange(8).to(torch::kFloat).to(device);
  // CHECK: :[[@LINE-1]]:51: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
  // CHECK: :[[@LINE+8]]:32: note: called on every iteration here
  // CHECK: :[[@LINE+5]]:3: note: loop starts here
  return x * freqs;
}

void positiveHelperCalledEveryStep(Net model, torch::optim::SGD &opt, torch::Tensor x, torch::Device device) {
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto loss = model->forward(positionalCode(x, device)).sum();
    loss.backward();
    opt.step();
  }
}

// The same helper shape, called every tenth step, once before training, or from a loop that
// runs no model: not reported.
torch::Tensor snapshotCode(const torch::Tensor &x, torch::Device device) {
  return x * torch::arange(8).to(torch::kFloat).to(device);
}
torch::Tensor warmupCode(const torch::Tensor &x, torch::Device device) {
  return x * torch::arange(8).to(torch::kFloat).to(device);
}
torch::Tensor prepareCode(const torch::Tensor &x, torch::Device device) {
  return x * torch::arange(8).to(torch::kFloat).to(device);
}
void negativeHelperNotCalledEveryStep(Net model, torch::optim::SGD &opt, std::vector<torch::Tensor> &xs,
                                      torch::Device device) {
  torch::Tensor warm = warmupCode(xs[0], device);
  for (auto &x : xs)
    x = prepareCode(x, device);
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto loss = model->forward(xs[step] + warm).sum();
    loss.backward();
    opt.step();
    if (step % 10 == 0)
      snapshotCode(xs[step], device);
  }
}

// ---- one notion of "created on the host" (AutogradModel::hostTensorSource)

// Options that name a device, or options held elsewhere that may: not made on the host.
void negativeFactoryWithDeviceOptions(torch::Device device, torch::TensorOptions opts, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto a = torch::zeros({8}, torch::TensorOptions().device(device)).to(device);
    auto b = torch::ones({8}, opts).to(device);
    auto c = torch::full({8}, 2.0, torch::kCUDA).cuda();
    x = x + a + b + c;
  }
}

// from_blob wraps the host data of the moment: copying it is loading data.
void negativeFromBlob(torch::Device device, std::vector<float> &buffer, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    buffer[0] = static_cast<float>(i);
    x = x + torch::from_blob(buffer.data(), {8}).to(device);
  }
}

// The local holds per-iteration data by the time it is copied, not the factory's tensor.
void negativeReassignedAfterFactory(torch::Device device, std::vector<torch::Tensor> &batches) {
  for (auto &batch : batches) {
    torch::Tensor t = torch::zeros({8});
    t = batch;
    auto moved = t.to(device);
  }
}

// A local declared before the loop and made by a factory on every iteration.
void positiveFactoryAssignedInTheLoop(torch::Device device, torch::Tensor x) {
  torch::Tensor mask;
  for (int i = 0; i < 10; ++i) {
    mask = torch::ones({8});
    x = x * mask.to(device);
    // CHECK: :[[@LINE-1]]:18: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
}

// Any tensor method that keeps the tensor where it is keeps the factory's tensor; one that
// mixes in per-iteration data copies data, as arithmetic with it does.
void positiveFactoryThroughOtherMethods(torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto idx = torch::arange(8).repeat({2}).to(device);
    // CHECK: :[[@LINE-1]]:45: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    x = x.index_select(0, idx);
  }
}
void negativeFactoryMethodWithBatchData(torch::Device device, std::vector<torch::Tensor> &batches) {
  for (auto &batch : batches) {
    auto scaled = torch::ones({8}).mul(batch).to(device);
  }
}

// A data set made on the host before the loop, a slice of it moved per iteration: loading
// data, not a tensor the iteration creates.
void negativeSliceOfHostDataSet(torch::Device device, Net model) {
  const torch::Tensor data = torch::randn({64, 8});
  for (int64_t i = 0; i < 8; ++i)
    model->forward(data.slice(0, i * 8, (i + 1) * 8).to(device));
}

// A helper whose interval guard is an early return: its copy runs every hundredth step.
struct Snapshot {
  int64_t step = 0;
  torch::Tensor take(torch::Device device) {
    if (step++ % 100 != 0)
      return {};
    return torch::zeros({4}).to(device);
  }
};

void negativeEarlyReturnInterval(Net model, torch::optim::SGD &opt, torch::Device device, torch::Tensor x,
                                 Snapshot &snap) {
  for (int i = 0; i < 100; ++i) {
    opt.zero_grad();
    model->forward(x).sum().backward();
    opt.step();
    snap.take(device);
  }
}

// A helper returning a constant fill made on the host, moved by the loop on every iteration
// (its body here; another TU's is known by the project index: test/project/crosstu-host.test).
torch::Tensor smoothingMask() { return torch::full({64, 10}, 0.01); }
auto scaledMask() { return smoothingMask() * 2; }

void positiveHelperReturnsHostFill(Net model, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto mask = smoothingMask().to(device);
    // CHECK: :[[@LINE-1]]:33: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-8]]:40: note: made on the host here
    auto scaled = scaledMask().to(device);
    // CHECK: :[[@LINE-1]]:32: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
    // CHECK: :[[@LINE-12]]:40: note: made on the host here
    model->forward(x * mask * scaled);
  }
}

// A helper returning torch::tensor over constants: a fill too.
torch::Tensor backgroundColor() { return torch::tensor({1.f, 1.f, 1.f}); }

void positiveHelperReturnsConstantValues(Net model, torch::Device device, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    auto bg = backgroundColor().to(device);
    // CHECK: :[[@LINE-1]]:33: warning: tensor created on the host and copied to the device on every iteration; consider creating it on the device with 'torch::TensorOptions().device(...)' [torch-host-device-copy-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    // CHECK: :[[@LINE-7]]:42: note: made on the host here
    model->forward(x * bg.sum());
  }
}

// Helpers whose tensors hold host data: values, a wrapped buffer, a tensor filled in place, or
// a device the caller names. Copying them is loading data.
torch::Tensor fromValues(const std::vector<float> &v) { return torch::tensor(v); }
torch::Tensor wrapBuffer(std::vector<float> &v) { return torch::from_blob(v.data(), {(int64_t)v.size()}); }
torch::Tensor filledRow(const std::vector<float> &v) {
  auto t = torch::zeros({(int64_t)v.size()});
  auto a = t.accessor<float, 1>();
  for (size_t j = 0; j < v.size(); ++j)
    a[j] = v[j];
  return t;
}
torch::Tensor maskOn(torch::Device device) { return torch::full({64, 10}, 0.01, device); }
torch::Tensor eitherMask(bool fresh, const torch::Tensor &cached) {
  if (fresh)
    return torch::ones({64, 10});
  return cached;
}

void negativeHelpersReturnHostData(Net model, torch::Device device, std::vector<float> &row, torch::Tensor cached) {
  for (int i = 0; i < 10; ++i) {
    auto a = fromValues(row).to(device);
    auto b = wrapBuffer(row).to(device);
    auto c = filledRow(row).to(device);
    auto d = maskOn(device).to(device);
    auto e = eitherMask(i == 0, cached).to(device);
    model->forward(a + b + c + d + e);
  }
}
