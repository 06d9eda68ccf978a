#pragma once

// The one header that a CUDA build of LibTorch generates for c10/cuda and that the CPU-only
// libtorch-dev packages the tests run against leave out (their c10/cuda headers are otherwise
// complete). Its content is exactly what a CUDA build generates.
#define C10_CUDA_BUILD_SHARED_LIBS
