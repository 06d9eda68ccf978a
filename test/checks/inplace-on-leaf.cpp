// RUN: %tidy --checks='-*,torch-inplace-on-leaf' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-inplace-on-leaf' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp

#include <torch/torch.h>

#include <memory>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// ---- leaves created or marked in the function --------------------------------------------

void positiveFactoryRequiresGrad() {
  auto w = torch::randn({3}, torch::requires_grad());
  w.add_(1);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'add_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'add' [torch-inplace-on-leaf]
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}
// FIXED: void positiveFactoryRequiresGrad(
// FIXED: auto w = torch::randn({3}, torch::requires_grad());
// FIXED-NEXT: {
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: w.add_(1);
// FIXED-NEXT: }

void positiveTensorOptions() {
  torch::Tensor w = torch::zeros({2, 2}, torch::TensorOptions().dtype(torch::kFloat).requires_grad(true));
  w.zero_();
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'zero_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' [torch-inplace-on-leaf]
  // CHECK: :[[@LINE-3]]:21: note: the tensor was created with requires_grad here
}
// FIXED: void positiveTensorOptions(
// FIXED: torch::Tensor w = torch::zeros({2, 2}, torch::TensorOptions().dtype(torch::kFloat).requires_grad(true));
// FIXED-NEXT: {
// FIXED-NEXT: torch::NoGradGuard no_grad;
// FIXED-NEXT: w.zero_();
// FIXED-NEXT: }

void positiveRequiresGradMark() {
  auto w = torch::empty({3});
  w.requires_grad_();
  w.uniform_(-1, 1);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'uniform_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' [torch-inplace-on-leaf]
  // CHECK: :[[@LINE-3]]:3: note: the tensor was marked as requiring grad here
}

void positiveSetRequiresGrad() {
  auto b = torch::zeros({3});
  b.set_requires_grad(true);
  b.normal_();
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'normal_' on leaf tensor 'b' that requires grad
  // CHECK: :[[@LINE-3]]:3: note: the tensor was marked as requiring grad here
}

void positiveChainedMark() {
  auto w = torch::ones({3}).requires_grad_();
  w.mul_(0.5).add_(1);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'mul_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'mul'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was marked as requiring grad here
}

void positiveCompoundAssignment(torch::Tensor grad) {
  auto w = torch::randn({3}, torch::requires_grad());
  w -= 0.1 * grad;
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place '-=' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place '-'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created
  w *= 2;
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place '*=' on leaf tensor 'w'
  w /= 2;
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place '/=' on leaf tensor 'w'
  w += grad;
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place '+=' on leaf tensor 'w'
}

void positiveMoreMethods(torch::Tensor src) {
  auto w = torch::randn({3}, torch::requires_grad());
  w.copy_(src);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'copy_' on leaf tensor 'w'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created
  w.fill_(0.5);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'fill_' on leaf tensor 'w'
  w.clamp_(-1, 1);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'clamp_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'clamp'
  w.sub_(src).div_(2);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'sub_' on leaf tensor 'w'
  torch::relu_(w);
  // CHECK: :[[@LINE-1]]:3: [[ERROR]]: in-place 'relu_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'torch::relu'
}

void positiveIndexing() {
  auto w = torch::zeros({4, 4}, torch::requires_grad());
  w[0] = 1;
  // CHECK: :[[@LINE-1]]:8: [[ERROR]]: in-place assignment to 'w[0]', a view of a leaf tensor that requires grad, throws at runtime; consider wrapping the update in 'torch::NoGradGuard' [torch-inplace-on-leaf]
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created
  w[1][2] = torch::ones({});
  // CHECK: :[[@LINE-1]]:11: [[ERROR]]: in-place assignment to 'w[1][2]', a view of a leaf tensor
  w.index({0, torch::indexing::Slice()}) = 2;
  // CHECK: :[[@LINE-1]]:42: [[ERROR]]: in-place assignment to 'w.index({0, torch::indexing::Slice()})', a view
  w.index_put_({0}, 3);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'index_put_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'index_put'
  w.index_fill_(0, torch::tensor({1}), 0.0);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'index_fill_' on leaf tensor 'w'
  auto row = w.select(0, 1);
  row.add_(1);
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'add_' on 'row', a view of a leaf tensor that requires grad, throws at runtime
  w.t().mul_(2);
  // CHECK: :[[@LINE-1]]:9: [[ERROR]]: in-place 'mul_' on 'w.t()', a view of a leaf tensor
}

// ---- module parameters --------------------------------------------------------------------

void positiveManualSgdWithoutGuard(Net &model, double lr) {
  for (auto &p : model->parameters())
    p.sub_(p.grad() * lr);
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'sub_' on leaf tensor 'p' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'sub'
  // CHECK: :[[@LINE-3]]:18: note: module parameters, leaves that require grad, come from here
}

void positiveNamedParameters(Net &model) {
  for (auto &p : model->named_parameters()) {
    p.value().add_(torch::randn(p.value().sizes()) * 0.01);
    // CHECK: :[[@LINE-1]]:15: [[ERROR]]: in-place 'add_' on leaf tensor 'p.value()' that requires grad
    // CHECK: :[[@LINE-3]]:18: note: module parameters
    p->mul_(0.9);
    // CHECK: :[[@LINE-1]]:8: [[ERROR]]: in-place 'mul_' on leaf tensor 'p'
  }
  model->named_parameters()["fc.bias"].zero_();
  // CHECK: :[[@LINE-1]]:40: [[ERROR]]: in-place 'zero_' on leaf tensor 'model->named_parameters()["fc.bias"]'
}

void positiveWeightBias(torch::nn::Linear &fc, std::shared_ptr<NetImpl> net) {
  fc->weight.normal_(0, 0.02);
  // CHECK: :[[@LINE-1]]:14: [[ERROR]]: in-place 'normal_' on leaf tensor 'fc->weight' that requires grad
  fc->bias.fill_(0);
  // CHECK: :[[@LINE-1]]:12: [[ERROR]]: in-place 'fill_' on leaf tensor 'fc->bias'
  net->fc->weight.mul_(2);
  // CHECK: :[[@LINE-1]]:19: [[ERROR]]: in-place 'mul_' on leaf tensor 'net->fc->weight'
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 1, 3));
  conv->weight += 1;
  // CHECK: :[[@LINE-1]]:16: [[ERROR]]: in-place '+=' on leaf tensor 'conv->weight'
}

void positiveParameterVector(Net model) {
  auto params = model->parameters();
  params[0].zero_();
  // CHECK: :[[@LINE-1]]:13: [[ERROR]]: in-place 'zero_' on leaf tensor 'params[0]'
  // CHECK: :[[@LINE-3]]:17: note: module parameters
  for (size_t i = 0; i < params.size(); ++i)
    params.at(i).mul_(0.5);
  // CHECK: :[[@LINE-1]]:18: [[ERROR]]: in-place 'mul_' on leaf tensor 'params.at(i)'
}

void positiveOptimizerParamGroups(torch::optim::SGD &optimizer) {
  for (auto &group : optimizer.param_groups())
    for (auto &p : group.params())
      p.add_(p.grad(), -0.1);
  // CHECK: :[[@LINE-1]]:9: [[ERROR]]: in-place 'add_' on leaf tensor 'p'
  // CHECK: :[[@LINE-3]]:20: note: module parameters
}

void positiveInitListOfLeaves() {
  auto w = torch::randn({3, 1}, torch::requires_grad());
  auto b = torch::zeros({1}, torch::requires_grad());
  for (const auto &p : {w, b})
    p.sub_(p.grad() * 0.1);
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'sub_' on leaf tensor 'p'
  // CHECK: :[[@LINE-5]]:12: note: the tensor was created
}

void positivePushedLeaves(double lr) {
  auto w = torch::randn({3, 1}, torch::requires_grad());
  std::vector<torch::Tensor> params;
  params.push_back(w);
  for (auto &p : params)
    p -= lr * p.grad();
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place '-=' on leaf tensor 'p' that requires grad
  // CHECK: :[[@LINE-6]]:12: note: the tensor was created with requires_grad here
}

void negativePushedData(double lr) {
  std::vector<torch::Tensor> buffers;
  buffers.push_back(torch::zeros({3}));
  for (auto &b : buffers)
    b.mul_(lr);
}

struct Affine : torch::nn::Module {
  Affine() {
    weight_ = register_parameter("w", torch::randn({3}));
    bias_ = register_buffer("b", torch::zeros({3}));
  }
  void perturb() {
    weight_.add_(torch::randn({3}) * 0.01);
    // CHECK: :[[@LINE-1]]:13: [[ERROR]]: in-place 'add_' on leaf tensor 'weight_' that requires grad
    // CHECK: :[[@LINE-6]]:15: note: the tensor was registered as a module parameter here
    bias_.add_(1);
  }
  torch::Tensor weight_, bias_;
};

struct Scaled : torch::nn::Module {
  Scaled() : scale_(register_parameter("scale", torch::ones({1}))) {}
  void shrink() { scale_ *= 0.5; }
  // CHECK: :[[@LINE-1]]:26: [[ERROR]]: in-place '*=' on leaf tensor 'scale_'
  // CHECK: :[[@LINE-3]]:21: note: the tensor was registered as a module parameter here
  torch::Tensor scale_;
};

// ---- real code shapes ---------------------------------------------------------------------

template <typename Model>
void positiveTemplateUpdate(Model &model, double lr) {
  for (auto &p : model->parameters())
    p.sub_(lr * p.grad());
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'sub_' on leaf tensor 'p'
  // CHECK: :[[@LINE-3]]:18: note: module parameters
}
template void positiveTemplateUpdate<Net>(Net &, double);

void positiveLambda(Net &model) {
  auto update = [&](double lr) {
    for (auto &p : model->parameters())
      p.sub_(lr * p.grad());
    // CHECK: :[[@LINE-1]]:9: [[ERROR]]: in-place 'sub_' on leaf tensor 'p'
    // CHECK: :[[@LINE-3]]:20: note: module parameters
  };
  update(0.1);
}

void sgdStep(torch::Tensor &param, double lr) {
  param.sub_(lr * param.grad());
  // CHECK: :[[@LINE-1]]:9: [[ERROR]]: in-place 'sub_' on leaf tensor 'param'
  // CHECK: :[[@LINE+7]]:20: note: module parameters
}

void positiveHelperFromTrainingLoop(Net &model, torch::optim::SGD &optimizer) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto loss = model->forward(torch::randn({8, 4})).pow(2).mean();
    loss.backward();
    for (auto &p : model->parameters())
      sgdStep(p, 0.01);
  }
}

class Trainer {
public:
  void positiveMemberModel() {
    for (auto &p : model_->parameters()) {
      p.mul_(0.99);
      // CHECK: :[[@LINE-1]]:9: [[ERROR]]: in-place 'mul_' on leaf tensor 'p'
      // CHECK: :[[@LINE-3]]:20: note: module parameters
    }
  }
  void negativeMemberModelGuarded() {
    torch::NoGradGuard no_grad;
    for (auto &p : model_->parameters())
      p.mul_(0.99);
  }

private:
  Net model_;
};

void positiveWhileLoop(Net &model) {
  int i = 0;
  auto params = model->parameters();
  while (i < 3)
    params[i++ % params.size()].zero_();
  // CHECK: :[[@LINE-1]]:33: [[ERROR]]: in-place 'zero_' on leaf tensor 'params[i++ % params.size()]'
  // CHECK: :[[@LINE-4]]:17: note: module parameters
}

void positiveOptionsVariable() {
  auto options = torch::TensorOptions().dtype(torch::kFloat32).requires_grad(true);
  auto w = torch::randn({3, 3}, options);
  w.mul_(0.01);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'mul_' on leaf tensor 'w' that requires grad
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}

struct LinearRegression {
  torch::Tensor w = torch::zeros({1}, torch::requires_grad());
  torch::Tensor b;
  LinearRegression() { b = torch::zeros({1}).requires_grad_(); }
};

void positivePlainStructFields(LinearRegression &model, double lr) {
  model.w -= lr * model.w.grad();
  // CHECK: :[[@LINE-1]]:11: [[ERROR]]: in-place '-=' on leaf tensor 'model.w' that requires grad
  // CHECK: :[[@LINE-8]]:21: note: the tensor was created with requires_grad here
  model.b.sub_(lr * model.b.grad());
  // CHECK: :[[@LINE-1]]:11: [[ERROR]]: in-place 'sub_' on leaf tensor 'model.b'
  // CHECK: :[[@LINE-9]]:28: note: the tensor was marked as requiring grad here
}

void positiveInitThroughModules(Net &model) {
  for (auto &m : model->modules())
    if (auto *linear = m->as<torch::nn::Linear>())
      linear->weight.normal_(0, 0.02);
  // CHECK: :[[@LINE-1]]:22: [[ERROR]]: in-place 'normal_' on leaf tensor 'linear->weight'
}

torch::Tensor &firstWeight(Net &net) { return net->fc->weight; }

void positiveReturnedParameter(Net &model) {
  firstWeight(model).zero_();
  // CHECK: :[[@LINE-1]]:22: [[ERROR]]: in-place 'zero_' on leaf tensor 'firstWeight(model)'
  // CHECK: :[[@LINE-5]]:47: note: module parameters
}

template <typename Params>
void scaleAll(const Params &params, double factor) {
  for (const auto &p : params)
    p.mul_(factor);
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'mul_' on leaf tensor 'p'
  // CHECK: :[[@LINE+4]]:12: note: module parameters
}

void positiveTemplateHelperOverParameters(Net &model) {
  scaleAll(model->parameters(), 0.5);
}

// ---- traps: none of these throws ----------------------------------------------------------

void negativeManualSgdOfficialStyle(Net &model, double lr) {
  {
    torch::NoGradGuard no_grad;
    for (auto &p : model->parameters())
      p.sub_(p.grad() * lr);
  }
}

void negativeGuardInEnclosingBlock(Net &model) {
  torch::NoGradGuard guard;
  for (auto &p : model->parameters()) {
    if (p.grad().defined())
      p.add_(p.grad(), -0.01);
  }
}

void negativeInferenceMode() {
  auto w = torch::randn({3}, torch::requires_grad());
  c10::InferenceMode guard;
  w.add_(1);
}

void negativeAutoGradModeOff() {
  auto w = torch::randn({3}, torch::requires_grad());
  torch::AutoGradMode enable(false);
  w.add_(1);
}

void negativeGradModeSwitch() {
  auto w = torch::randn({3}, torch::requires_grad());
  torch::autograd::GradMode::set_enabled(false);
  w.add_(1);
  torch::autograd::GradMode::set_enabled(true);
}

void guardedHelper(torch::Tensor &param, double lr) { param.sub_(lr * param.grad()); }

void negativeGuardInCaller(Net &model) {
  torch::NoGradGuard no_grad;
  for (auto &p : model->parameters())
    guardedHelper(p, 0.1);
}

void negativeLambdaCalledUnderGuard(Net &model) {
  auto update = [&]() {
    for (auto &p : model->parameters())
      p.sub_(0.1 * p.grad());
  };
  torch::NoGradGuard no_grad;
  update();
}

void negativeGrad(Net &model) {
  for (auto &p : model->parameters()) {
    if (p.grad().defined()) {
      p.grad().zero_();
      p.mutable_grad().zero_();
      p.grad().detach_();
    }
  }
}

void negativeData(Net &model, double lr) {
  for (auto &p : model->parameters())
    p.data().sub_(lr * p.grad());
  auto w = torch::randn({3}, torch::requires_grad());
  w.data().zero_();
  w.detach().add_(1);
  auto d = w.detach();
  d.mul_(2);
}

void negativePlainData(torch::Tensor x) {
  auto t = torch::randn({3});
  t.add_(1);
  t *= 2;
  t[0] = 5;
  x.clamp_(0, 1);
  auto batch = torch::zeros({4, 4});
  batch.index_put_({0}, 1);
}

void negativeNonLeaf() {
  auto w = torch::randn({3}, torch::requires_grad());
  auto y = w * 2;
  y.add_(1);
  auto z = w.clone();
  z.zero_();
  w.index({torch::tensor({0, 1})}) = 0;
  auto r = (w * 2).requires_grad_();
  r.add_(1);
}

void negativeNnInit(torch::nn::Linear &fc, Net &model) {
  torch::nn::init::xavier_uniform_(fc->weight);
  torch::nn::init::zeros_(fc->bias);
  for (auto &p : model->parameters())
    torch::nn::init::normal_(p, 0, 0.02);
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
}

void negativeRequiresGradItself(Net &model) {
  auto w = torch::randn({3});
  w.requires_grad_();
  w.requires_grad_(false);
  for (auto &p : model->parameters())
    p.requires_grad_(false);
  w.set_requires_grad(true);
  w.detach_();
  w.add_(1);
}

void negativeRequiresGradTurnedOff() {
  auto w = torch::randn({3}, torch::requires_grad());
  w.set_requires_grad(false);
  w.add_(1);
}

void negativeRebound() {
  auto w = torch::randn({3}, torch::requires_grad());
  w = torch::zeros({3});
  w.add_(1);
  auto v = torch::randn({3}, torch::requires_grad());
  v = v * 2;
  v.add_(1);
}

void negativeRegisteredWithoutGrad(torch::nn::Module &m) {
  auto &frozen = m.register_parameter("frozen", torch::ones({2}), /*requires_grad=*/false);
  frozen.add_(1);
}

void negativeBuffersAndStats(torch::nn::BatchNorm1d &bn, Net &model) {
  bn->running_mean.zero_();
  bn->running_var.fill_(1);
  for (auto &b : model->buffers())
    b.zero_();
}

void negativeInitializedBeforeMarked() {
  auto w = torch::empty({3, 3});
  w.uniform_(-0.1, 0.1);
  w.requires_grad_();
  auto b = torch::zeros({3});
  b.fill_(0.01);
  b.set_requires_grad(true);
}

void negativeRuntimeFlag(bool trainable) {
  auto w = torch::randn({3});
  w.requires_grad_(trainable);
  w.add_(1);
}

void negativeApplyUnderGuard(Net &model) {
  torch::NoGradGuard no_grad;
  model->apply([](torch::nn::Module &m) {
    if (auto *linear = m.as<torch::nn::Linear>()) {
      linear->weight.normal_(0, 0.02);
      linear->bias.zero_();
    }
  });
}

void guardedInit(Net &model) {
  torch::NoGradGuard no_grad;
  for (auto &p : model->parameters())
    p.uniform_(-0.1, 0.1);
}

void negativeFrozenEmbedding(torch::Tensor pretrained) {
  torch::nn::Embedding embedding(10, 4);
  embedding->weight.set_requires_grad(false);
  embedding->weight.copy_(pretrained);
}

void positiveCopyBeforeFreezing(torch::Tensor pretrained) {
  torch::nn::Embedding embedding(10, 4);
  embedding->weight.copy_(pretrained);
  // CHECK: :[[@LINE-1]]:21: [[ERROR]]: in-place 'copy_' on leaf tensor 'embedding->weight' that requires grad
  embedding->weight.set_requires_grad(false);
}

void negativeFrozenParameters(Net &model) {
  for (auto &p : model->parameters())
    p.requires_grad_(false);
  for (auto &p : model->parameters())
    p.mul_(0.5);
}

void negativeReplacedField(torch::nn::Linear &fc) {
  fc->weight = torch::zeros({1, 4});
  fc->weight.add_(1);
}

void negativeAssignmentRebindsHandle(torch::nn::Linear &fc) {
  torch::Tensor w = fc->weight;
  w = torch::zeros({1, 4});
}

struct CustomSGD : torch::optim::Optimizer {
  explicit CustomSGD(std::vector<torch::Tensor> params)
      : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(params))},
                                std::make_unique<torch::optim::SGDOptions>(0.1)) {}
  torch::Tensor step(LossClosure closure = nullptr) override {
    torch::NoGradGuard no_grad;
    for (auto &group : param_groups())
      for (auto &p : group.params())
        if (p.grad().defined())
          p.add_(p.grad(), -0.1);
    return {};
  }
};

// The style of the official LibTorch examples: the model is updated through the optimizer,
// gradients are cleared with zero_grad(), and nothing touches the parameters in place.
void negativeOfficialTrainingLoop() {
  Net model;
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto dataset = torch::data::datasets::TensorDataset(torch::randn({64, 4}))
                     .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto loader = torch::data::make_data_loader(std::move(dataset), 16);
  std::vector<float> losses;
  for (size_t epoch = 0; epoch < 2; ++epoch) {
    for (auto &batch : *loader) {
      auto data = batch.data.to(torch::kCPU);
      optimizer.zero_grad();
      auto loss = model->forward(data).pow(2).mean();
      loss.backward();
      optimizer.step();
      losses.push_back(loss.item<float>());
    }
  }
  torch::NoGradGuard no_grad;
  for (auto &p : model->parameters())
    p.clamp_(-1, 1);
}

void initWeights(torch::nn::Module &m) {
  for (auto &p : m.named_parameters())
    p.value().normal_(0, 0.02);
}

void negativeInitHandedOverUnderGuard(Net &model) {
  torch::NoGradGuard no_grad;
  model->apply(initWeights);
}

void negativeStoredLambdaHandedOverUnderGuard(Net &model) {
  auto init = [](torch::nn::Module &m) {
    if (auto *linear = m.as<torch::nn::Linear>())
      linear->weight.uniform_(-0.1, 0.1);
  };
  torch::NoGradGuard no_grad;
  model->apply(init);
}

void initWeightsUnguarded(torch::nn::Module &m) {
  for (auto &p : m.named_parameters())
    p.value().normal_(0, 0.02);
  // CHECK: :[[@LINE-1]]:15: [[ERROR]]: in-place 'normal_' on leaf tensor 'p.value()'
}

void positiveInitHandedOverWithoutGuard(Net &model) { model->apply(initWeightsUnguarded); }

template <typename Dict>
void overwriteUnfrozen(const Dict &params, const std::string &name, torch::Tensor value) {
  auto param = params[name];
  param.set_requires_grad(false);
  param.view(-1).copy_(value);
  param.set_requires_grad(true);
}

template <typename Dict>
void overwrite(const Dict &params, const std::string &name, torch::Tensor value) {
  params[name].view(-1).copy_(value);
  // CHECK: :[[@LINE-1]]:25: [[ERROR]]: in-place 'copy_' on 'params[name].view(-1)', a view of a leaf tensor that requires grad, throws at runtime
  // CHECK: :[[@LINE+5]]:17: note: module parameters
}

void positiveOverwriteNamedParameter(Net &model) {
  overwriteUnfrozen(model->named_parameters(), "fc.weight", torch::zeros({4}));
  auto params = model->named_parameters();
  overwrite(params, "fc.bias", torch::zeros({1}));
}

// ---- templates never instantiated in this file: analysed as written ------------------------

template <typename T>
void positiveUninstantiatedDependentArgument(T scale) {
  auto w = torch::ones({3}, torch::requires_grad());
  w.mul_(scale);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'mul_' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'mul'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}

template <typename T>
void negativeUninstantiatedDependentArgumentGuarded(T scale) {
  auto w = torch::ones({3}, torch::requires_grad());
  torch::NoGradGuard guard;
  w.mul_(scale);
}

template <typename T>
void negativeUninstantiatedDependentArgumentOutOfPlace(T scale) {
  auto w = torch::ones({3}, torch::requires_grad());
  auto v = w.mul(scale);
  v.mul_(scale);
}

template <typename T>
void negativeUninstantiatedReassignedFromDependent(T init) {
  auto w = torch::ones({3}, torch::requires_grad());
  w = init;
  w.mul_(2);
}

template <typename T>
void negativeUninstantiatedFrozenByDependentFlag(T flag) {
  auto w = torch::ones({3}, torch::requires_grad());
  w.requires_grad_(flag);
  w.mul_(2);
}

template <typename T>
void positiveUninstantiatedResolved(T) {
  auto w = torch::ones({3}, torch::requires_grad());
  w.add_(1);
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place 'add_' on leaf tensor 'w' that requires grad
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}

template <typename G>
void positiveUninstantiatedCompoundDependent(const G &grad, double lr) {
  auto w = torch::randn({3}, torch::requires_grad());
  w -= lr * grad;
  // CHECK: :[[@LINE-1]]:5: [[ERROR]]: in-place '-=' on leaf tensor 'w' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place '-'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}

template <typename G>
void negativeUninstantiatedCompoundDependentGuarded(const G &grad, double lr) {
  auto w = torch::randn({3}, torch::requires_grad());
  {
    torch::NoGradGuard no_grad;
    w -= lr * grad;
  }
}

template <typename G>
void negativeUninstantiatedCompoundOnPlainTensor(const G &grad, double lr) {
  auto w = torch::randn({3});
  w -= lr * grad;
  int steps = 0;
  steps += grad.size();
}

template <typename Model>
void positiveUninstantiatedManualSgd(Model &model, double lr) {
  for (auto &p : model->parameters())
    p -= lr * p.grad();
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place '-=' on leaf tensor 'p' that requires grad
  // CHECK: :[[@LINE-3]]:18: note: module parameters, leaves that require grad, come from here
  for (auto &p : model.parameters())
    p.add_(p.grad(), -lr);
  // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'add_' on leaf tensor 'p' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'add'
  // CHECK: :[[@LINE-3]]:18: note: module parameters, leaves that require grad, come from here
}

template <typename Model>
void negativeUninstantiatedManualSgdGuarded(Model &model, double lr) {
  torch::NoGradGuard no_grad;
  for (auto &p : model->parameters())
    p -= lr * p.grad();
  for (auto &p : model.parameters())
    p.add_(p.grad(), -lr);
}

template <typename Model>
void negativeUninstantiatedGradientsAndData(Model &model, double lr) {
  for (auto &p : model->parameters()) {
    p.grad().zero_();
    p.data().add_(p.grad(), -lr);
  }
}

template <typename Model>
void negativeUninstantiatedFrozenThenUpdated(Model &model, double lr) {
  for (auto &p : model->parameters())
    p.requires_grad_(false);
  for (auto &p : model->parameters())
    p.add_(p.grad(), -lr);
}

template <typename Batches>
void negativeUninstantiatedOtherRange(Batches &batches) {
  for (auto &b : batches)
    b.mul_(2);
  for (auto &b : batches.data())
    b -= 1;
}

// ---- which definitions reach the op: Clang's CFG, not source order ------------------------

// The mark at the end of the body reaches the next iteration's add_ (source order saw only
// the initializer before it, and missed this).
void positiveMarkedLaterInTheLoop() {
  torch::Tensor s = torch::ones({3});
  for (int i = 0; i < 3; ++i) {
    s.add_(1);
    // CHECK: :[[@LINE-1]]:7: [[ERROR]]: in-place 'add_' on leaf tensor 's' that requires grad throws at runtime; consider wrapping the update in 'torch::NoGradGuard' or using the out-of-place 'add' [torch-inplace-on-leaf]
    // CHECK: :[[@LINE+1]]:5: note: the tensor was marked as requiring grad here
    s.requires_grad_();
  }
}

// The leaf is assigned on a branch that returns: what reaches mul_ is the plain tensor
// (source order took the assignment before it, and reported this).
void negativeLeafOnlyOnAReturningBranch(bool fresh) {
  torch::Tensor e = torch::ones({3});
  if (fresh) {
    e = torch::zeros({3}, torch::requires_grad());
    return;
  }
  e.mul_(2);
}

// A helper that returns its parameter gives back what this call passes, not what any other
// call passes: only the first call hands it a leaf.
torch::Tensor &passThrough(torch::Tensor &t) { return t; }

void positivePassThroughALeaf() {
  auto w = torch::randn({3}, torch::requires_grad());
  passThrough(w).add_(1);
  // CHECK: :[[@LINE-1]]:18: [[ERROR]]: in-place 'add_' on leaf tensor 'passThrough(w)'
  // CHECK: :[[@LINE-3]]:12: note: the tensor was created with requires_grad here
}

void negativePassThroughAPlainTensor() {
  auto x = torch::zeros({3});
  passThrough(x).add_(1);
}
