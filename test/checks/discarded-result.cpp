// RUN: %tidy --checks='-*,torch-discarded-result' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-discarded-result' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

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

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForOverDataLoader(torch::Device device) {
  Net net;
  net->to(device);
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  auto loader = makeLoader();
  for (auto &batch : *loader) {
    batch.data.to(device);
    // CHECK: :[[@LINE-1]]:16: warning: result of 'to' is discarded: the call returns a new tensor and leaves its object unchanged; consider assigning the result [torch-discarded-result]
    torch::Tensor target = batch.target;
    target.to(device);
    // CHECK: :[[@LINE-1]]:12: warning: result of 'to' is discarded
    // FIXED: {{^}}    target = target.to(device);{{$}}
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(batch.data), target);
    loss.backward();
    optimizer.step();
  }
}

void positiveWhileLoopCudaAndContiguous(torch::Tensor images, int steps) {
  int step = 0;
  while (step++ < steps) {
    images.cuda();
    // CHECK: :[[@LINE-1]]:12: warning: result of 'cuda' is discarded
    // FIXED: {{^}}    images = images.cuda();{{$}}
    auto view = images.transpose(0, 1);
    view.contiguous();
    // CHECK: :[[@LINE-1]]:10: warning: result of 'contiguous' is discarded
    // FIXED: {{^}}    view = view.contiguous();{{$}}
  }
}

void positiveClampOnLocalNeedsAssignment() {
  torch::Tensor pixels = torch::rand({3, 8, 8}) * 1.2;
  pixels.clamp(0, 1);
  // CHECK: :[[@LINE-1]]:10: warning: result of 'clamp' is discarded: the call returns a new tensor and leaves its object unchanged; consider assigning the result or calling 'clamp_' in place
  // FIXED: {{^}}  pixels = pixels.clamp(0, 1);{{$}}
}

void positiveWeightClippingInPlaceUnderNoGrad(Net &critic) {
  torch::NoGradGuard no_grad;
  for (auto &p : critic->parameters())
    p.clamp(-0.01, 0.01);
  // CHECK: :[[@LINE-1]]:7: warning: result of 'clamp' is discarded
  // FIXED: {{^}}    p.clamp_(-0.01, 0.01);{{$}}
}

void positiveWeightClippingWithGradOnHasNoFix(Net &critic) {
  // In place on a parameter outside a no-grad scope would throw: no fix-it.
  for (auto &p : critic->parameters())
    p.clamp(-0.01, 0.01);
  // CHECK: :[[@LINE-1]]:7: warning: result of 'clamp' is discarded
  // FIXED: {{^}}    p.clamp(-0.01, 0.01);{{$}}
}

void positiveForIndexLoopDetachAndIndexPut(std::vector<torch::Tensor> &states, const torch::Tensor &mask) {
  for (size_t i = 0; i < states.size(); ++i) {
    states[i].detach();
    // CHECK: :[[@LINE-1]]:15: warning: result of 'detach' is discarded: the call returns a new tensor and leaves its object unchanged; consider assigning the result or calling 'detach_' in place
    states[i].masked_fill(mask, 0);
    // CHECK: :[[@LINE-1]]:15: warning: result of 'masked_fill' is discarded
  }
}

void positiveConstLocalHasNoFix(torch::Device device) {
  const torch::Tensor weights = torch::ones({2});
  weights.to(device);
  // CHECK: :[[@LINE-1]]:11: warning: result of 'to' is discarded
  // FIXED: {{^}}  weights.to(device);{{$}}
}

void positiveBranchWithoutBraces(torch::Tensor x, bool use_cuda) {
  if (use_cuda)
    x.cuda();
  // CHECK: :[[@LINE-1]]:7: warning: result of 'cuda' is discarded
  // FIXED: {{^}}    x = x.cuda();{{$}}
  else
    x.cpu();
  // CHECK: :[[@LINE-1]]:7: warning: result of 'cpu' is discarded
  // FIXED: {{^}}    x = x.cpu();{{$}}
}

void positiveViewOfAVariable(torch::Tensor frame) {
  frame[0].clamp(0, 255);
  // CHECK: :[[@LINE-1]]:12: warning: result of 'clamp' is discarded
}

void positiveGradientOfAParameter(torch::Tensor w) {
  w.grad().clamp(-1, 1);
  // CHECK: :[[@LINE-1]]:12: warning: result of 'clamp' is discarded
}

template <typename Model>
void positiveTemplateInstantiated(Model &model, torch::Device device) {
  torch::Tensor x = torch::randn({2, 4});
  x.to(device);
  // CHECK: :[[@LINE-1]]:5: warning: result of 'to' is discarded
  // FIXED: {{^}}  x = x.to(device);{{$}}
  model->forward(x);
}
template void positiveTemplateInstantiated<Net>(Net &, torch::Device);

template <typename DeviceT>
torch::Tensor positiveTemplateNeverInstantiated(torch::Tensor x, DeviceT device) {
  x.to(device);
  // CHECK: :[[@LINE-1]]:5: warning: result of 'to' is discarded
  // FIXED: {{^}}  x = x.to(device);{{$}}
  return x;
}

void positiveLambda(std::vector<torch::Tensor> &batch, torch::Device device) {
  auto prepare = [&](torch::Tensor t) {
    t.to(device);
    // CHECK: :[[@LINE-1]]:7: warning: result of 'to' is discarded
    // FIXED: {{^}}    t = t.to(device);{{$}}
    return t;
  };
  for (auto &t : batch)
    t = prepare(t);
}

class Trainer {
public:
  explicit Trainer(torch::Device device) : device_(device) {}
  void reset() {
    hidden_.detach();
    // CHECK: :[[@LINE-1]]:13: warning: result of 'detach' is discarded
    hidden_.to(device_);
    // CHECK: :[[@LINE-1]]:13: warning: result of 'to' is discarded
  }

private:
  torch::Device device_;
  torch::Tensor hidden_ = torch::zeros({1, 16});
};

// ---- negatives ----------------------------------------------------------------------------

void negativeModuleToMovesInPlace(torch::Device device) {
  Net net;
  net->to(device);
  (*net).to(device);
  std::shared_ptr<NetImpl> shared = std::make_shared<NetImpl>();
  shared->to(device);
  torch::jit::Module scripted;
  scripted.to(device);
}

void negativeInPlaceAndSideEffectCalls(torch::Tensor w, torch::Tensor grad, const torch::Tensor &src) {
  w.clamp_(0, 1);
  w.requires_grad_();
  w.set_requires_grad(true);
  w.retain_grad();
  grad.zero_();
  grad.copy_(src);
  grad.index_put_({0}, 1.0);
  torch::nn::init::xavier_uniform_(w);
  w.register_hook([](torch::Tensor g) { return g * 2; });
  w.sum().backward();
  w.print();
  w.item<float>();
}

torch::Tensor negativeResultUsed(torch::Tensor x, torch::Device device) {
  auto y = x.to(device);
  x = x.contiguous();
  std::vector<torch::Tensor> kept;
  kept.push_back(x.detach());
  (void)x.cuda();
  return y.clamp(0, 1);
}

void negativeDeviceWarmUpOnATemporary(torch::Device device) {
  torch::zeros({1}).to(device);
  torch::randn({2, 2}).cuda();
}

#define TO_HOST(t) (t).cpu()
void negativeMacro(torch::Tensor x) { TO_HOST(x); }

void negativeIdiomaticTrainingLoop(torch::Device device) {
  Net net;
  net->to(device);
  torch::optim::Adam optimizer(net->parameters(), 1e-3);
  auto loader = makeLoader();
  std::vector<float> losses;
  int step = 0;
  torch::Tensor total = torch::zeros({1});
  for (auto &batch : *loader) {
    auto data = batch.data.to(device);
    auto target = batch.target.to(device);
    net->zero_grad();
    auto loss = torch::mse_loss(net->forward(data), target);
    loss.backward();
    optimizer.step();
    if (++step % 10 == 0)
      total += loss.detach();
    losses.push_back(loss.item<float>());
  }
}
