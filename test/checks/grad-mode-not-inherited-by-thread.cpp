// RUN: %tidy --checks='-*,torch-grad-mode-not-inherited-by-thread' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-grad-mode-not-inherited-by-thread' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// A minimal worker pool of the kind inference servers write.
class ThreadPool {
public:
  explicit ThreadPool(int n) {
    for (int i = 0; i < n; ++i)
      workers_.emplace_back([this] { run(); });
  }
  template <typename F> std::future<void> enqueue(F f) {
    auto task = std::make_shared<std::packaged_task<void()>>(f);
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push([task] { (*task)(); });
    return task->get_future();
  }
  void run() {}

private:
  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> tasks_;
  std::mutex mutex_;
};

// ---- positives ----------------------------------------------------------------------------

void positiveStdThread(Net &net, const std::vector<torch::Tensor> &inputs) {
  torch::NoGradGuard no_grad;
  net->eval();
  std::vector<torch::Tensor> outputs(inputs.size());
  std::thread worker([&] {
    for (size_t i = 0; i < inputs.size(); ++i)
      outputs[i] = net->forward(inputs[i]);
    // CHECK: :[[@LINE-1]]:20: warning: model forward runs on another thread, where the no-grad scope around the thread's creation does not apply (grad mode is thread-local): autograd records a graph on every call; consider a torch::NoGradGuard or c10::InferenceMode inside the thread's function [torch-grad-mode-not-inherited-by-thread]
    // CHECK: :[[@LINE-4]]:{{[0-9]+}}: note: the thread starts here
    // CHECK: :[[@LINE-8]]:3: note: autograd is disabled here, on the starting thread only
  });
  worker.join();
}
// FIXED: std::thread worker(
// FIXED: std::thread worker([&] {
// FIXED-NEXT: torch::NoGradGuard no_grad;

std::vector<torch::Tensor> positiveAsyncShards(Net &net, const std::vector<torch::Tensor> &shards) {
  c10::InferenceMode guard;
  std::vector<std::future<torch::Tensor>> futures;
  for (const auto &shard : shards)
    futures.push_back(std::async(std::launch::async, [&net, shard] { return net->forward(shard); }));
  // CHECK: :[[@LINE-1]]:77: warning: model forward runs on another thread
  // CHECK: :[[@LINE-2]]:{{[0-9]+}}: note: the thread starts here
  std::vector<torch::Tensor> results;
  for (auto &f : futures)
    results.push_back(f.get());
  return results;
}

void positivePoolEnqueue(Net &net, ThreadPool &pool, torch::Tensor request) {
  torch::NoGradGuard no_grad;
  pool.enqueue([&net, request] {
    auto scores = net->forward(request);
    // CHECK: :[[@LINE-1]]:19: warning: model forward runs on another thread
    // CHECK: :[[@LINE-3]]:{{[0-9]+}}: note: the thread starts here
    (void)scores.argmax(1);
  });
}
// FIXED: void positivePoolEnqueue(
// FIXED: pool.enqueue([&net, request] {
// FIXED-NEXT: torch::NoGradGuard no_grad;

void positiveThreadsInVector(Net &net, const std::vector<torch::Tensor> &batches) {
  torch::NoGradGuard no_grad;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < batches.size(); ++t)
    threads.emplace_back([&, t] { auto out = net->forward(batches[t]); });
  // CHECK: :[[@LINE-1]]:46: warning: model forward runs on another thread
  for (auto &th : threads)
    th.join();
}

// A worker thread owned through a std::unique_ptr.
struct Batcher {
  Net net;
  std::unique_ptr<std::thread> loop_;
  void start(torch::Tensor x) {
    torch::NoGradGuard no_grad;
    loop_ = std::make_unique<std::thread>([this, x] { auto y = net->forward(x); });
    // CHECK: :[[@LINE-1]]:64: warning: model forward runs on another thread
  }
};

// The closure is held in a variable, then handed to the thread.
void positiveClosureVariable(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  auto job = [&] { auto y = net->forward(x); };
  // CHECK: :[[@LINE-1]]:29: warning: model forward runs on another thread
  std::thread t(job);
  t.join();
}

// A server whose worker is a member function; the guard is in the caller of start().
struct Server {
  Net net;
  torch::Tensor pending;
  std::thread thread_;
  void serve() {
    auto out = net->forward(pending);
    // CHECK: :[[@LINE-1]]:16: warning: model forward runs on another thread
    (void)out;
  }
  void start() { thread_ = std::thread(&Server::serve, this); }
};
void positiveGuardInCaller(Server &server) {
  torch::NoGradGuard no_grad;
  server.start();
  server.thread_.join();
}

// The forward is in a helper the thread's lambda calls.
torch::Tensor predictHelper(Net &net, const torch::Tensor &x) { return net->forward(x).softmax(1); }
// CHECK: :[[@LINE-1]]:72: warning: model forward runs on another thread
void positiveHelperOnThread(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  std::thread t([&] { auto p = predictHelper(net, x); });
  t.join();
}

template <typename Model> void positiveTemplateNeverInstantiated(Model &model, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  std::thread t([&] { auto y = model->forward(x); });
  // CHECK: :[[@LINE-1]]:32: warning: model forward runs on another thread
  t.join();
}

template <typename Model> void positiveTemplateInstantiated(Model &model, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  auto fut = std::async(std::launch::async, [&] { return model->forward(x); });
  // CHECK: :[[@LINE-1]]:58: warning: model forward runs on another thread
  fut.get();
}
template void positiveTemplateInstantiated<Net>(Net &, torch::Tensor);

// ---- negatives ----------------------------------------------------------------------------

// The guard is inside the thread's function.
void negativeGuardInsideThread(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  std::thread t([&] {
    torch::NoGradGuard worker_no_grad;
    auto y = net->forward(x);
  });
  t.join();
}

// at::launch copies the caller's thread-local state, grad mode included.
void negativeAtLaunch(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  at::launch([&] { auto y = net->forward(x); });
}

// A lambda called on the same thread inherits the guard.
void negativeSameThreadLambda(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  auto run = [&] { return net->forward(x); };
  auto y = run();
}

// Hogwild-style training threads: autograd is meant to record.
void negativeTrainingThreads(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i)
    workers.emplace_back([&] {
      torch::optim::SGD opt(net->parameters(), 0.01);
      opt.zero_grad();
      torch::mse_loss(net->forward(x), y).backward();
      opt.step();
    });
  for (auto &w : workers)
    w.join();
}

// No guard anywhere: nothing is lost by crossing the thread (other checks judge the eval).
void negativeNoGuardAnywhere(Net &net, torch::Tensor x) {
  std::thread t([&] { auto y = net->forward(x); });
  t.join();
}

// The guard's scope ends before the thread starts.
void negativeGuardScopeEnded(Net &net, torch::Tensor x) {
  {
    torch::NoGradGuard no_grad;
    auto warm = net->forward(x);
  }
  std::thread t([&] {
    auto y = net->forward(x);
    y.sum().backward();
  });
  t.join();
}

// CHECK-NOT: warning:
