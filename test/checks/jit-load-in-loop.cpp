// RUN: %tidy --checks='-*,torch-jit-load-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-jit-load-in-loop' --fix-notes %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
// Plain --fix leaves a note's fix alone.
// RUN: cp %s %t.plain.cpp
// RUN: %tidy --checks='-*,torch-jit-load-in-loop' --fix %t.plain.cpp -- %torch_flags > /dev/null 2>&1
// RUN: diff %s %t.plain.cpp
#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

struct Request {
  std::string model_name;
  torch::Tensor input;
};

const char *const kModelPath = "traced_resnet.pt";

// ---- positives ----------------------------------------------------------------------------

std::vector<float> positiveRangeForOverRequests(const std::vector<Request> &requests) {
  torch::NoGradGuard no_grad;
  std::vector<float> scores;
  for (const auto &request : requests) {
    torch::jit::Module module = torch::jit::load(kModelPath);
    // CHECK: :[[@LINE-1]]:33: warning: torch::jit::load() of the same module on every iteration: the file is parsed and every tensor allocated again each time; consider loading it once before the loop and reusing the module [torch-jit-load-in-loop]
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    module.eval();
    scores.push_back(module.forward({request.input}).toTensor().max().item<float>());
  }
  return scores;
}
// FIXED: std::vector<float> positiveRangeForOverRequests(
// FIXED: std::vector<float> scores;
// FIXED-NEXT: torch::jit::Module module = torch::jit::load(kModelPath);

void positiveWhileServing(const std::string &model_path, std::vector<torch::Tensor> &queue) {
  c10::InferenceMode guard;
  while (!queue.empty()) {
    auto module = torch::jit::load(model_path, torch::kCPU);
    // CHECK: :[[@LINE-1]]:19: warning: torch::jit::load() of the same module on every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    module.forward({queue.back()});
    queue.pop_back();
  }
}
// FIXED: void positiveWhileServing(
// FIXED: c10::InferenceMode guard;
// FIXED-NEXT: auto module = torch::jit::load(model_path, torch::kCPU);

void positiveForIndexLocalPath(const std::string &dir, const torch::Tensor &batch, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    const std::string path = dir + "/model.pt";
    auto module = torch::jit::load(path);
    // CHECK: :[[@LINE-1]]:19: warning: torch::jit::load() of the same module on every iteration
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
    module.forward({batch});
  }
}

// A per-request handler that loads its model, called from the serving loop.
torch::Tensor handle(const torch::Tensor &input) {
  torch::jit::Module module = torch::jit::load("model.pt");
  // CHECK: :[[@LINE-1]]:31: warning: torch::jit::load() of the same module on every iteration
  return module.forward({input}).toTensor();
}

void positiveHandlerCalledPerRequest(const std::vector<torch::Tensor> &inputs, std::vector<torch::Tensor> &outputs) {
  torch::NoGradGuard no_grad;
  for (const auto &input : inputs) {
    outputs.push_back(handle(input));
    // CHECK: :[[@LINE-1]]:23: note: called on every iteration here
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
  }
}

torch::jit::Module loadModel(const std::string &path) { return torch::jit::load(path); }
// CHECK: :[[@LINE-1]]:64: warning: torch::jit::load() of the same module on every iteration

class Predictor {
public:
  explicit Predictor(std::string path) : path_(std::move(path)) {}
  void run(const std::vector<torch::Tensor> &batches) {
    torch::NoGradGuard no_grad;
    for (const auto &batch : batches) {
      auto module = loadModel(path_);
      // CHECK: :[[@LINE-1]]:21: note: called on every iteration here
      // CHECK: :[[@LINE-3]]:5: note: loop starts here
      results_.push_back(module.forward({batch}).toTensor());
    }
  }

private:
  std::string path_;
  std::vector<torch::Tensor> results_;
};

template <typename Batch> void positiveTemplate(const std::vector<Batch> &batches) {
  for (const auto &batch : batches) {
    auto module = torch::jit::load("model.pt");
    // CHECK: :[[@LINE-1]]:19: warning: torch::jit::load() of the same module on every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    module.forward({batch});
  }
}
template void positiveTemplate<torch::Tensor>(const std::vector<torch::Tensor> &);

template <typename Batch> void positiveTemplateNeverInstantiated(const std::vector<Batch> &batches) {
  for (const auto &batch : batches) {
    auto module = torch::jit::load("model.pt");
    // CHECK: :[[@LINE-1]]:19: warning: torch::jit::load() of the same module on every iteration
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    module.forward({batch.input});
  }
}

// ---- negatives ----------------------------------------------------------------------------

void negativeLoadedOnce(const std::vector<torch::Tensor> &batches) {
  torch::NoGradGuard no_grad;
  auto module = torch::jit::load(kModelPath);
  for (const auto &batch : batches)
    module.forward({batch});
}

// Loading each model of a list (an ensemble, a benchmark): the path is the loop variable.
std::vector<torch::jit::Module> negativeEnsemble(const std::vector<std::string> &paths) {
  std::vector<torch::jit::Module> members;
  for (const auto &path : paths)
    members.push_back(torch::jit::load(path));
  for (size_t i = 0; i < paths.size(); ++i)
    members.push_back(torch::jit::load(paths[i]));
  return members;
}

// Each epoch's checkpoint, named after the epoch.
void negativeCheckpointPerEpoch(const std::string &dir, const torch::Tensor &x, int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto module = torch::jit::load(dir + "/epoch_" + std::to_string(epoch) + ".pt");
    module.forward({x});
  }
}

// The handler receives the model to load: each request names its own.
torch::jit::Module loadRequested(const std::string &name) { return torch::jit::load("models/" + name + ".pt"); }

void negativePerRequestModel(const std::vector<Request> &requests, std::map<std::string, torch::Tensor> &out) {
  for (const auto &request : requests)
    out[request.model_name] = loadRequested(request.model_name).forward({request.input}).toTensor();
}

// Reloading when the file changed (hot reload) is conditional.
void negativeHotReload(const std::string &path, const std::vector<bool> &changed, const torch::Tensor &x) {
  auto module = torch::jit::load(path);
  for (size_t i = 0; i < changed.size(); ++i) {
    if (changed[i])
      module = torch::jit::load(path);
    module.forward({x});
  }
}

// Two calls below the serving loop, the path passed on unchanged by each call.
torch::jit::Module loadForPrediction(const std::string &path) { return torch::jit::load(path); }
// CHECK: :[[@LINE-1]]:72: warning: torch::jit::load() of the same module on every iteration
torch::Tensor predictOnce(const std::string &path, const torch::Tensor &x) {
  return loadForPrediction(path).forward({x}).toTensor();
}

void positiveLoadTwoCallsBelow(const std::string &path, const std::vector<torch::Tensor> &requests) {
  torch::NoGradGuard no_grad;
  for (const auto &r : requests)
    predictOnce(path, r);
  // CHECK: :[[@LINE-1]]:5: note: called on every iteration here
  // CHECK: :[[@LINE-3]]:3: note: loop starts here
}

// The same two levels, each request naming its own model.
torch::jit::Module loadNamed(const std::string &path) { return torch::jit::load(path); }
torch::Tensor predictWith(const std::string &path, const torch::Tensor &x) {
  return loadNamed(path).forward({x}).toTensor();
}

void negativeTwoCallsBelowPerRequest(const std::vector<Request> &requests) {
  torch::NoGradGuard no_grad;
  for (const auto &request : requests)
    predictWith(request.model_name, request.input);
}
