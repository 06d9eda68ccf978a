// RUN: %tidy --checks='-*,torch-from-blob-dangling' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-from-blob-dangling' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// An image type that owns its pixels, as image libraries' matrices do.
struct Image {
  int rows = 0, cols = 0;
  std::vector<uint8_t> pixels;
  uint8_t *data() { return pixels.data(); }
};
Image decode(const std::string &path) { return Image{32, 32, std::vector<uint8_t>(32 * 32 * 3)}; }

// A matrix whose copies share one reference-counted buffer, as cv::Mat's do.
struct Mat {
  int rows = 0, cols = 0;
  std::shared_ptr<uint8_t> storage;
  uint8_t *data = nullptr;
};
Mat imread(const std::string &path) {
  std::shared_ptr<uint8_t> s(new uint8_t[32 * 32 * 3], std::default_delete<uint8_t[]>());
  return Mat{32, 32, s, s.get()};
}
struct Sample {
  Mat img;
  torch::Tensor tsr;
};

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// ---- positives ----------------------------------------------------------------------------

torch::Tensor positiveReturnLocalVector(const std::vector<double> &values) {
  std::vector<float> buffer(values.begin(), values.end());
  return torch::from_blob(buffer.data(), {static_cast<int64_t>(buffer.size())}, torch::kFloat);
  // CHECK: :[[@LINE-1]]:10: [[ERROR]]: tensor from torch::from_blob over 'buffer' outlives it: the tensor does not own that memory and reads it after it is freed; consider '.clone()' to give the tensor its own copy [torch-from-blob-dangling]
  // CHECK: :[[@LINE-2]]:3: note: the tensor is kept here
  // CHECK: :[[@LINE-4]]:22: note: 'buffer' is destroyed at the end of its scope
}
// FIXED: torch::Tensor positiveReturnLocalVector(
// FIXED: std::vector<float> buffer(values.begin(), values.end());
// FIXED-NEXT: return torch::from_blob(buffer.data(), {static_cast<int64_t>(buffer.size())}, torch::kFloat).clone();

torch::Tensor positiveReturnViewOfImage(const std::string &path) {
  Image img = decode(path);
  auto t = torch::from_blob(img.data(), {img.rows, img.cols, 3}, torch::kByte);
  // CHECK: :[[@LINE-1]]:12: [[ERROR]]: tensor from torch::from_blob over 'img' outlives it
  return t.permute({2, 0, 1});
}

void positiveMatDataKept(Sample &out, const std::string &path) {
  Mat img = imread(path);
  out.tsr = torch::from_blob(img.data, {img.rows, img.cols, 3}, torch::kByte);
  // CHECK: :[[@LINE-1]]:13: [[ERROR]]: tensor from torch::from_blob over 'img' outlives it
}

torch::Tensor positiveLocalArray() {
  float stats[4] = {0.5f, 0.5f, 0.25f, 0.25f};
  torch::Tensor t = torch::from_blob(stats, {4});
  // CHECK: :[[@LINE-1]]:21: [[ERROR]]: tensor from torch::from_blob over 'stats' outlives it
  return t;
}

struct Reader {
  torch::Tensor last_;
  void read(int n) {
    std::vector<float> row(n, 1.0f);
    last_ = torch::from_blob(row.data(), {n});
    // CHECK: :[[@LINE-1]]:13: [[ERROR]]: tensor from torch::from_blob over 'row' outlives it
  }
};
// FIXED: void read(
// FIXED: std::vector<float> row(n, 1.0f);
// FIXED-NEXT: last_ = torch::from_blob(row.data(), {n}).clone();

// A batch collected across iterations from per-iteration buffers.
torch::Tensor positiveBatchAcrossIterations(const std::vector<std::string> &paths) {
  std::vector<torch::Tensor> batch;
  for (const auto &path : paths) {
    Image img = decode(path);
    batch.push_back(torch::from_blob(img.data(), {img.rows, img.cols, 3}, torch::kByte));
    // CHECK: :[[@LINE-1]]:21: [[ERROR]]: tensor from torch::from_blob over 'img' outlives it
  }
  return torch::stack(batch);
}

// The previous frame kept for the next iteration.
void positivePreviousFrame(Net &net, int frames) {
  torch::Tensor previous;
  for (int i = 0; i < frames; ++i) {
    std::vector<float> frame(4, static_cast<float>(i));
    auto current = torch::from_blob(frame.data(), {1, 4});
    // CHECK: :[[@LINE-1]]:20: [[ERROR]]: tensor from torch::from_blob over 'frame' outlives it
    if (previous.defined())
      net->forward(current - previous);
    previous = current;
  }
}

// The output parameter of a loader.
void positiveOutParameter(torch::Tensor &out, int n) {
  auto data = std::make_unique<float[]>(n);
  out = torch::from_blob(data.get(), {n});
  // CHECK: :[[@LINE-1]]:9: [[ERROR]]: tensor from torch::from_blob over 'data' outlives it
}

// A temporary buffer.
torch::Tensor positiveTemporary(const std::string &path) {
  auto t = torch::from_blob(decode(path).data(), {32, 32, 3}, torch::kByte);
  // CHECK: :[[@LINE-1]]:12: [[ERROR]]: tensor from torch::from_blob over a temporary outlives it
  return t.to(torch::kFloat);
}

template <typename T> torch::Tensor positiveTemplate(std::vector<T> values) {
  std::vector<float> converted(values.begin(), values.end());
  return torch::from_blob(converted.data(), {static_cast<int64_t>(converted.size())});
  // CHECK: :[[@LINE-1]]:10: [[ERROR]]: tensor from torch::from_blob over 'converted' outlives it
}
template torch::Tensor positiveTemplate<int>(std::vector<int>);

// ---- negatives ----------------------------------------------------------------------------

// The matrix is copied into the caller's struct first: the copy shares its buffer, which lives
// as long as `out` (libtorch-faster-rcnn, data.cpp).
void negativeMatSharedWithCaller(Sample &out, const std::string &path) {
  Mat img = imread(path);
  out.img = img;
  out.tsr = torch::from_blob(img.data, {img.rows, img.cols, 3}, torch::kByte);
}

torch::Tensor negativeCloned(const std::vector<double> &values) {
  std::vector<float> buffer(values.begin(), values.end());
  return torch::from_blob(buffer.data(), {static_cast<int64_t>(buffer.size())}).clone();
}

torch::Tensor negativeConvertedCopy(const std::string &path) {
  Image img = decode(path);
  return torch::from_blob(img.data(), {img.rows, img.cols, 3}, torch::kByte)
      .permute({2, 0, 1})
      .to(torch::kFloat)
      .div(255);
}

torch::Tensor negativeUsedLocally(Net &net) {
  std::array<float, 4> input{1, 2, 3, 4};
  auto t = torch::from_blob(input.data(), {1, 4});
  return net->forward(t);
}

// The buffer outlives the tensor: a member, a static, a caller's buffer.
struct Sensor {
  std::vector<float> samples_ = std::vector<float>(16);
  torch::Tensor view_;
  void refresh() { view_ = torch::from_blob(samples_.data(), {16}); }
};
torch::Tensor negativeStatic() {
  static float table[4] = {1, 2, 3, 4};
  return torch::from_blob(table, {4});
}
torch::Tensor negativeCallerBuffer(std::vector<float> &buffer) {
  return torch::from_blob(buffer.data(), {static_cast<int64_t>(buffer.size())});
}

// Per-iteration buffers whose tensors stay in the iteration; .item() into a vector of floats.
void negativePerIteration(Net &net, int steps) {
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    std::vector<float> features(4, 1.0f);
    auto x = torch::from_blob(features.data(), {1, 4});
    losses.push_back(net->forward(x).sum().item<float>());
  }
}

// A batch whose elements are copied before the buffer dies.
torch::Tensor negativeBatchCloned(const std::vector<std::string> &paths) {
  std::vector<torch::Tensor> batch;
  for (const auto &path : paths) {
    Image img = decode(path);
    batch.push_back(torch::from_blob(img.data(), {img.rows, img.cols, 3}, torch::kByte).clone());
  }
  return torch::stack(batch);
}

// A user method that happens to be called insert (a rollout storage that copies what it is
// given, Omegastick/pytorch-cpp-rl): not a container store.
struct RolloutStorage {
  void insert(torch::Tensor obs, torch::Tensor reward, torch::Tensor mask);
};
std::vector<RolloutStorage> negativeUserInsert() {
  std::vector<RolloutStorage> storages;
  for (int i = 0; i < 5; ++i) {
    storages.push_back({});
    std::vector<float> rewards{1};
    std::vector<float> masks{1};
    storages[i].insert(torch::rand({1, 4}), torch::from_blob(rewards.data(), {1, 1}),
                       torch::from_blob(masks.data(), {1, 1}));
  }
  return storages;
}

// CHECK-NOT: warning:
