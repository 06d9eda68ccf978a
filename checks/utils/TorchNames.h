#ifndef TORCHTIDY_CHECKS_UTILS_TORCHNAMES_H
#define TORCHTIDY_CHECKS_UTILS_TORCHNAMES_H

// Canonical (fully qualified, desugared) names of the LibTorch entities checks reason about.
// torch::Tensor, torch::NoGradGuard, ... are aliases: compare canonical types, never spellings.

#include "llvm/ADT/StringRef.h"

namespace torchtidy::names {

/// Tensor methods live on at::Tensor; a few (requires_grad(), is_leaf(), defined()) on at::TensorBase.
inline constexpr const char *Tensor = "::at::Tensor";
inline constexpr const char *TensorBase = "::at::TensorBase";

/// torch::nn modules: every *Impl derives from Module; TORCH_MODULE(X) makes a ModuleHolder<XImpl>.
inline constexpr const char *Module = "::torch::nn::Module";
inline constexpr const char *ModuleHolder = "::torch::nn::ModuleHolder";
inline constexpr const char *AnyModule = "::torch::nn::AnyModule";
/// TorchScript modules loaded with torch::jit::load.
inline constexpr const char *JitModule = "::torch::jit::Module";

inline constexpr const char *Optimizer = "::torch::optim::Optimizer";

/// torch::NoGradGuard and at::NoGradGuard are both c10::NoGradGuard (derived from AutoGradMode).
inline constexpr const char *NoGradGuard = "::c10::NoGradGuard";
inline constexpr const char *AutoGradMode = "::c10::AutoGradMode";
inline constexpr const char *InferenceMode = "::c10::InferenceMode";
inline constexpr const char *GradMode = "::c10::GradMode";

inline constexpr const char *Device = "::c10::Device";
inline constexpr const char *DeviceType = "::c10::DeviceType";
inline constexpr const char *TensorOptions = "::c10::TensorOptions";

/// Out-of-place tensor methods whose in-place twin (name + '_') keeps shape and dtype, so it
/// leaves the tensor with the out-of-place result.
inline constexpr llvm::StringLiteral ShapeAndDtypePreservingOps[] = {
    "clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "floor", "ceil", "round", "trunc",
    "nan_to_num", "masked_fill", "index_fill", "index_put", "index_add", "index_copy",
    "masked_scatter", "scatter", "scatter_add"};

/// Factories making a host tensor unless their options name a device, filled as their arguments
/// say: made on the device directly, they need no copy. (*_like inherit the source's device.)
inline constexpr llvm::StringLiteral HostFactories[] = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "range", "linspace", "logspace", "eye", "tensor", "normal", "scalar_tensor"};
/// Factories wrapping host memory as it is at the call (on the host unless options name a device).
inline constexpr llvm::StringLiteral HostMemoryWrappers[] = {"from_blob"};

/// Calls handing a caching allocator's free blocks back to the driver (the torch:: spellings exist
/// in some releases only).
inline constexpr llvm::StringLiteral EmptyCacheFunctions[] = {
    "::c10::cuda::CUDACachingAllocator::emptyCache",
    "::c10::cuda::CUDACachingAllocator::CUDAAllocator::emptyCache",
    "::c10::xpu::XPUCachingAllocator::emptyCache",
    "::at::cuda::CachingHostAllocator_emptyCache",
    "::torch::cuda::empty_cache",
    "::torch::accelerator::emptyCache"};

/// CUDA runtime calls that allocate or free memory behind LibTorch's caching allocators.
inline constexpr llvm::StringLiteral CudaDeviceAllocations[] = {
    "::cudaMalloc", "::cudaMallocManaged", "::cudaMallocPitch", "::cudaMalloc3D"};
inline constexpr llvm::StringLiteral CudaHostAllocations[] = {"::cudaMallocHost", "::cudaHostAlloc"};
inline constexpr llvm::StringLiteral CudaFrees[] = {"::cudaFree", "::cudaFreeHost"};

/// Tensor methods and functions whose result size depends on the data: the host waits for
/// the device to learn it before it can allocate the result.
inline constexpr llvm::StringLiteral DataDependentMethods[] = {"nonzero", "masked_select", "argwhere",
                                                               "unique_consecutive"};
inline constexpr llvm::StringLiteral DataDependentFunctions[] = {
    "::at::nonzero", "::at::masked_select", "::at::argwhere", "::at::_unique",
    "::at::_unique2", "::at::unique_dim", "::at::unique_consecutive"};

/// Factories with a deterministic fill: made with the same sizes each iteration, the tensor
/// could be allocated once and refilled in place.
inline constexpr llvm::StringLiteral FilledFactories[] = {"zeros", "ones", "full", "empty", "eye"};
/// In-place methods that fill a tensor with fresh random numbers (noise that must differ per
/// iteration).
inline constexpr llvm::StringLiteral RandomFills[] = {"normal_", "uniform_", "bernoulli_", "random_",
                                                      "exponential_", "geometric_", "cauchy_", "log_normal_",
                                                      "bernoulli"};

/// Tensor methods that return a view with permuted or broadcast strides: not contiguous in
/// general, so an op that needs contiguous memory copies it.
inline constexpr llvm::StringLiteral NoncontiguousViews[] = {"t", "transpose", "permute", "expand", "expand_as",
                                                             "swapaxes", "swapdims", "movedim", "mT"};
/// Tensor methods that copy a non-contiguous tensor into fresh contiguous memory.
inline constexpr llvm::StringLiteral ContiguousCopies[] = {"contiguous", "reshape", "flatten"};

/// Functions joining tensors along an existing dimension: joining a tensor with itself plus a
/// piece copies all it holds. (torch::stack adds a dimension: the next iteration fails instead.)
inline constexpr llvm::StringLiteral JoinFunctions[] = {
    "::at::cat", "::at::concat", "::at::concatenate", "::at::hstack", "::at::vstack",
    "::at::row_stack", "::at::column_stack", "::at::dstack"};
/// Standard container members that store their argument (a copy of it) in the container.
inline constexpr llvm::StringLiteral ContainerStoreMethods[] = {
    "push_back", "emplace_back", "push_front", "emplace_front", "insert", "emplace",
    "emplace_hint", "try_emplace", "insert_or_assign", "push"};

/// Members and functions that run a callable on a pool's worker thread (`pool.submit(f)`,
/// `pool.enqueue(f)`, BS::thread_pool's `detach_task`, `boost::asio::post(pool, f)`).
inline constexpr llvm::StringLiteral ThreadPoolSubmitMethods[] = {
    "submit", "enqueue", "push_task", "detach_task", "submit_task", "add_task", "queueJob", "queue_job",
    "add_job", "post"};
/// cpp-httplib Server members whose handler runs on the server's worker threads.
inline constexpr llvm::StringLiteral HttpServerHandlerMethods[] = {"Get", "Post", "Put", "Patch", "Delete"};

/// Loss functions whose name does not end in "loss".
inline constexpr llvm::StringLiteral LossFunctions[] = {
    "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"};

/// Tensor methods whose result has no autograd graph: detached tensors and host numbers.
inline constexpr llvm::StringLiteral GraphCuttingMethods[] = {"detach", "data", "variable_data", "item",
                                                              "toDouble", "toFloat"};

/// Members handing out a pointer into storage their object owns (vector::data(), unique_ptr::get(),
/// cv::Mat::ptr<T>(), string::c_str()).
inline constexpr llvm::StringLiteral BufferAccessors[] = {"data", "ptr", "get", "c_str"};
/// Classes that point into storage owned elsewhere: holding one owns nothing.
inline constexpr llvm::StringLiteral NonOwningViews[] = {"span", "basic_string_view", "ArrayRef",
                                                         "MutableArrayRef"};
/// Tensor methods whose result shares the tensor's storage.
inline constexpr llvm::StringLiteral ViewOps[] = {
    "view", "reshape", "permute", "transpose", "unsqueeze", "squeeze", "slice", "narrow", "select",
    "expand", "flatten", "t", "as_strided", "view_as", "unflatten", "contiguous", "requires_grad_",
    "set_requires_grad", "unsqueeze_", "squeeze_", "transpose_", "unfold", "diagonal", "movedim", "alias",
    "reshape_as", "expand_as", "real", "imag", "swapaxes", "swapdims", "moveaxis", "mT", "mH", "adjoint"};
/// Standard containers (class names in namespace std) that keep what is stored in them.
inline constexpr llvm::StringLiteral StdContainers[] = {
    "vector", "deque", "list", "forward_list", "array", "map", "multimap", "unordered_map",
    "unordered_multimap", "queue", "stack"};

} // namespace torchtidy::names

#endif
