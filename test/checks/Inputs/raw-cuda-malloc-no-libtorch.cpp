// Plain CUDA host code that never includes LibTorch: there is no caching allocator to bypass.
#include <cuda_runtime.h>

#include <cstddef>

// PURE-NOT: warning:

float *allocateDeviceBuffer(std::size_t n) {
  float *p = nullptr;
  cudaMalloc(&p, n * sizeof(float));
  return p;
}

void releaseDeviceBuffer(float *p) { cudaFree(p); }
