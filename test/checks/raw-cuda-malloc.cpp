// RUN: %tidy --checks='-*,torch-raw-cuda-malloc' %s -- %torch_flags %cuda_flags 2>&1 | %filecheck %s
// A file of plain CUDA code that never includes LibTorch is left alone.
// RUN: %tidy --checks='-*,torch-raw-cuda-malloc' %S/Inputs/raw-cuda-malloc-no-libtorch.cpp -- -std=c++17 %cuda_flags 2>&1 | %filecheck --allow-empty --check-prefix=PURE %S/Inputs/raw-cuda-malloc-no-libtorch.cpp
#include <torch/torch.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    if ((call) != cudaSuccess)                                                                     \
      throw std::runtime_error(#call);                                                             \
  } while (0)

// ---- positives ----------------------------------------------------------------------------

// A scratch buffer for a custom op, wrapped into a tensor.
torch::Tensor positiveScratchWrappedIntoTensor(const torch::Tensor &input) {
  float *scratch = nullptr;
  cudaMalloc(&scratch, input.numel() * sizeof(float));
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates device memory outside LibTorch's CUDA caching allocator, which then cannot reuse it, count it or hand it to other tensors; consider a tensor (torch::empty(size, torch::TensorOptions().device(torch::kCUDA))) or c10::cuda::CUDACachingAllocator::raw_alloc() [torch-raw-cuda-malloc]
  auto out = torch::from_blob(scratch, {input.numel()}, torch::TensorOptions().device(torch::kCUDA)).clone();
  cudaFree(scratch);
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaFree' frees memory outside LibTorch's caching allocator and synchronizes the device; consider letting a tensor own the memory (or c10::cuda::CUDACachingAllocator::raw_delete() for raw_alloc()) [torch-raw-cuda-malloc]
  return out;
}

// Error-checking macros around the calls, as most CUDA code has them.
void positiveInsideCheckMacro(std::size_t bytes) {
  void *buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, bytes));
  // CHECK: :[[@LINE-1]]:14: warning: 'cudaMalloc' allocates device memory
  CUDA_CHECK(cudaFree(buffer));
  // CHECK: :[[@LINE-1]]:14: warning: 'cudaFree' frees memory
}

void positiveManagedAndPinned(std::size_t bytes) {
  float *unified = nullptr;
  cudaMallocManaged(reinterpret_cast<void **>(&unified), bytes);
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaMallocManaged' allocates device memory
  float *pinned = nullptr;
  cudaMallocHost(reinterpret_cast<void **>(&pinned), bytes);
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaMallocHost' allocates pinned host memory outside LibTorch's caching host allocator; consider a tensor (torch::empty(size, torch::TensorOptions().pinned_memory(true)))
  cudaFreeHost(pinned);
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaFreeHost' frees memory
  cudaFree(unified);
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaFree' frees memory
}

// A device buffer owned by a class next to a model.
class FeatureCache {
public:
  explicit FeatureCache(std::size_t bytes) {
    cudaMalloc(&data_, bytes);
    // CHECK: :[[@LINE-1]]:5: warning: 'cudaMalloc' allocates device memory
  }
  ~FeatureCache() {
    cudaFree(data_);
    // CHECK: :[[@LINE-1]]:5: warning: 'cudaFree' frees memory
  }

private:
  void *data_ = nullptr;
};

template <typename T> T *positiveTemplateAllocation(std::size_t n) {
  T *p = nullptr;
  cudaMalloc(&p, n * sizeof(T));
  // CHECK: :[[@LINE-1]]:3: warning: 'cudaMalloc' allocates device memory
  return p;
}
template float *positiveTemplateAllocation<float>(std::size_t);

void positivePerBatchInLoop(const std::vector<torch::Tensor> &batches) {
  for (const auto &batch : batches) {
    void *workspace = nullptr;
    cudaMalloc(&workspace, batch.numel() * 4);
    // CHECK: :[[@LINE-1]]:5: warning: 'cudaMalloc' allocates device memory
    cudaFree(workspace);
    // CHECK: :[[@LINE-1]]:5: warning: 'cudaFree' frees memory
  }
}

// ---- negatives ----------------------------------------------------------------------------

// What the fix looks like: LibTorch's allocators.
torch::Tensor negativeTensorScratch(const torch::Tensor &input) {
  auto scratch = torch::empty({input.numel()}, input.options());
  auto pinned = torch::empty({input.numel()}, torch::TensorOptions().pinned_memory(true));
  void *raw = c10::cuda::CUDACachingAllocator::raw_alloc(16);
  c10::cuda::CUDACachingAllocator::raw_delete(raw);
  return scratch + pinned.to(input.device());
}

// Other CUDA runtime calls are not allocations.
void negativeRuntimeQueries(float *device, const float *host, std::size_t bytes) {
  cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
  cudaMemset(device, 0, bytes);
  cudaDeviceSynchronize();
  int count = 0;
  cudaGetDeviceCount(&count);
}
