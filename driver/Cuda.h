// CUDA sources as the host compiler sees them: nvcc commands rewritten for Clang's CUDA front
// end (host side only), and the headers a CPU-only LibTorch or a CUDA toolkit newer than Clang
// lacks, served from memory.
#ifndef TORCHTIDY_DRIVER_CUDA_H
#define TORCHTIDY_DRIVER_CUDA_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>
#include <vector>

namespace torchtidy::driver {

/// Rewrites an nvcc command line \p Args (argv[0] first) for \p File in place into the clang
/// command that parses the same source (-I/-D/-U/-isystem/-include/-std kept, -Xcompiler's host
/// flags passed on, -x cu made -x cuda, the toolkit's path and CCCL headers as nvcc finds them);
/// returns the options dropped for having no host-side meaning (-gencode,
/// --expt-relaxed-constexpr, --use_fast_math, ...), once each. Other commands are left alone.
std::vector<std::string> nvccToClang(std::vector<std::string> &Args, llvm::StringRef File);

/// When \p Args compiles CUDA (-x cuda, or a .cu file), adds what parses its host side only
/// (--cuda-host-only) and lets Clang 16 read CUDA 12 and 13 headers; returns whether it does.
bool addCudaHostArguments(std::vector<std::string> &Args, llvm::StringRef File);

/// The directory of headers the analysis supplies when the real ones are missing (searched
/// after every other directory, so a real header always wins): LibTorch's generated
/// c10/cuda/impl/cuda_cmake_macros.h, absent from CPU-only packages, and the CUDA
/// texture_fetch_functions.h that Clang 16's CUDA wrapper includes and CUDA 12+ removed.
llvm::StringRef compatHeaderDir();

/// A file system holding compatHeaderDir()'s headers, to overlay on the real one.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> compatHeaderFileSystem();

} // namespace torchtidy::driver

#endif
