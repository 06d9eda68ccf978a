// torchtidy runtime probe.
//
// The corpus programs call a few probe functions per iteration so that the harness
// (scripts/confirm) can measure what a torchtidy finding predicts: retained autograd
// graphs, live tensor bytes, accumulated gradients, the error thrown, host<->device copies.
// Without TORCHTIDY_PROBE_OUT in the environment the probe records but writes nothing, so
// the programs stay ordinary LibTorch programs that anyone can build and run.
//
//   probe::device();               the device to put the model and the data on
//   probe::iteration();            at the top of each loop iteration
//   probe::keep(container);        what the program keeps across iterations
//   probe::grads(params);          gradients right after backward()
//   probe::output(tensor);         a model output inside an eval loop
//   probe::error(exception);       an exception the program caught
//   probe::value(key, number);     a number the program computes
//   probe::read(tensor);           reads a float tensor's memory in the program's own code
//
// Built with TORCHTIDY_PROBE_CUDA (scripts/confirm --device cuda), every sample also holds the
// CUDA caching allocator's allocated, reserved and peak bytes and the synchronizations that
// CUDA sync debug mode reported during the iteration; keep() adds the allocated bytes then
// (cuda_live_bytes) and output() the CUDA bytes the batch holds and its CUDA peak
// (cuda_held_bytes, cuda_batch_peak_bytes). That code compiles only then: LibTorch without
// CUDA (Debian's) has no c10/cuda headers.
#pragma once

#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>
#include <torch/version.h>

// GCC says AddressSanitizer with __SANITIZE_ADDRESS__, Clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define TORCHTIDY_PROBE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TORCHTIDY_PROBE_ASAN 1
#endif
#endif
#ifdef TORCHTIDY_PROBE_ASAN
#include <sanitizer/asan_interface.h>
#endif

#ifdef TORCHTIDY_PROBE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#ifdef TORCHTIDY_PROBE_ASAN
// Built with AddressSanitizer (harness/CMakeLists.txt, -fsanitize-recover=address), a program
// reports each bad access and runs on, so that the probe still writes its report. LibTorch's
// static state is never freed: no leak report. The CUDA driver maps device memory into the
// range ASan keeps unmapped as its shadow gap: with CUDA, that gap stays unprotected.
#ifdef TORCHTIDY_PROBE_CUDA
extern "C" const char* __asan_default_options() { return "halt_on_error=0:detect_leaks=0:protect_shadow_gap=0"; }
#else
extern "C" const char* __asan_default_options() { return "halt_on_error=0:detect_leaks=0"; }
#endif
#endif

namespace probe {
namespace detail {

// Live and peak bytes of CPU tensor storage. RSS cannot serve here: glibc fragmentation
// inflates it by hundreds of MB on a leak of a few hundred KB (docs/confirmation/README.md).
//
// It wraps the default CPU allocator the way LibTorch's own allocators do: the DataPtr it
// hands out has the data pointer as its context (raw_allocate() asserts
// `dptr.get() == dptr.get_context()`, and PyTorch 2.x calls it on the CPU allocator), and
// the base allocation it came from waits in a table until release() gets that pointer back,
// from the DataPtr or through raw_deleter(). It counts every thread's tensors, unlike c10's
// thread-local memory-profiler hook.
class CountingAllocator;
inline CountingAllocator& allocator();

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  // LibTorch 2.3 made allocate() non-const and added the pure virtual copy_data().
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t n) override { return allocateCounted(n); }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t n) const override { return allocateCounted(n); }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  int64_t live() const { return live_.load(); }
  int64_t peak() const { return peak_.load(); }
  // Allocations and their bytes since the last call: scratch tensors made per iteration and
  // the bytes a growing torch::cat copies.
  int64_t takeAllocations() const { return allocations_.exchange(0); }
  int64_t takeAllocatedBytes() const { return allocated_bytes_.exchange(0); }
  void resetPeak() const { peak_.store(live_.load()); }

 private:
  struct Allocation {
    c10::DataPtr inner;
    size_t bytes;
  };

  c10::DataPtr allocateCounted(size_t n) const {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    ++allocations_;
    allocated_bytes_ += static_cast<int64_t>(n);
    // An empty allocation has no address to key it by, and nothing to count.
    if (data == nullptr) return inner;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      table_.emplace(data, Allocation{std::move(inner), n});
    }
    const int64_t now = live_ += static_cast<int64_t>(n);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  static void release(void* data);

  c10::Allocator* base_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, Allocation> table_;
  mutable std::atomic<int64_t> live_{0};
  mutable std::atomic<int64_t> peak_{0};
  mutable std::atomic<int64_t> allocations_{0};
  mutable std::atomic<int64_t> allocated_bytes_{0};
};

// Cross-device copies seen by the dispatcher (aten::copy_ between two devices) and the
// number of to() calls, reset at every probe::iteration().
struct CopyCounters {
  std::atomic<int64_t> to_calls{0};
  std::atomic<int64_t> host_to_device{0};
  std::atomic<int64_t> host_to_device_bytes{0};
  std::atomic<int64_t> device_to_host{0};
  std::atomic<int64_t> device_to_host_bytes{0};
  // Ops that make the host wait for a device (item(), data-dependent sizes), counted on
  // every device: the CPU run shows how often a program would synchronize on a GPU.
  std::atomic<int64_t> sync_ops{0};
  // Bad memory accesses AddressSanitizer reported (programs built with it only).
  std::atomic<int64_t> asan_reports{0};
};

struct Recorder {
  std::vector<std::map<std::string, double>> samples;
  std::string error;
  int64_t baseline_bytes = 0;
  // The CUDA caching allocator's allocated bytes when the iteration started.
  int64_t cuda_baseline_bytes = 0;
  // When the current iteration started: its wall time, for effects only time shows
  // (quadratic copying, per-element kernel launches). Noisy: rules compare, never gate on it alone.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  int64_t syncs = 0;
  // The CUDA allocator's cumulative allocations and bytes when the current sample started.
  int64_t cuda_allocations = 0;
  int64_t cuda_allocated_total = 0;
  // Read once at start-up: the report is written during static destruction, when CUDA and
  // parts of LibTorch may already be torn down, so that path makes no torch calls.
  bool cuda = false;
  std::mutex mutex;

  ~Recorder();
};

inline void closeSample(Recorder& rec, bool at_exit = false);

inline Recorder::~Recorder() {
  closeSample(*this, /*at_exit=*/true);
  const char* path = std::getenv("TORCHTIDY_PROBE_OUT");
  if (path == nullptr || *path == '\0') return;
  std::ofstream out(path);
  out << std::setprecision(15);
  out << "{\"cuda\": " << (cuda ? "true" : "false") << ", \"error\": ";
  if (error.empty()) {
    out << "null";
  } else {
    out << '"';
    for (char c : error) {
      if (c == '"' || c == '\\') out << '\\' << c;
      else if (c == '\n') out << "\\n";
      else if (static_cast<unsigned char>(c) >= 0x20) out << c;
    }
    out << '"';
  }
  out << ", \"iterations\": [";
  for (size_t i = 0; i < samples.size(); ++i) {
    out << (i ? ",\n  {" : "\n  {");
    bool first = true;
    for (const auto& [key, value] : samples[i]) {
      out << (first ? "" : ", ") << '"' << key << "\": " << value;
      first = false;
    }
    out << '}';
  }
  out << "]}\n";
}

inline Recorder& recorder() {
  static Recorder instance;
  return instance;
}

// Leaked on purpose: tensors freed during static destruction still call into them.
inline CountingAllocator& allocator() {
  static auto* instance = new CountingAllocator(c10::GetDefaultCPUAllocator());
  return *instance;
}

// The base DataPtr is destroyed outside the lock: its deleter may free other tensors.
inline void CountingAllocator::release(void* data) {
  CountingAllocator& owner = allocator();
  c10::DataPtr inner;
  std::lock_guard<std::mutex> lock(owner.mutex_);
  auto it = owner.table_.find(data);
  if (it == owner.table_.end()) return;
  owner.live_ -= static_cast<int64_t>(it->second.bytes);
  inner = std::move(it->second.inner);
  owner.table_.erase(it);
}

inline CopyCounters& copies() {
  static auto* instance = new CopyCounters();
  return *instance;
}

// Depth of nested dispatcher calls on this thread: only to() calls made by the program
// itself (depth 0) count, not those LibTorch makes inside other ops.
inline thread_local int op_depth = 0;

inline void countCopy(const at::RecordFunction& fn) {
  // inputs() asserts in builds without NDEBUG because the release library never marks the
  // inputs valid; the harness defines NDEBUG, other builds simply count no copies.
  try {
    const auto inputs = fn.inputs();
    if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return;
    const at::Tensor& dst = inputs[0].toTensor();
    const at::Tensor& src = inputs[1].toTensor();
    if (dst.device() == src.device()) return;
    const bool to_host = dst.is_cpu();
    ++(to_host ? copies().device_to_host : copies().host_to_device);
    (to_host ? copies().device_to_host_bytes : copies().host_to_device_bytes) += static_cast<int64_t>(src.nbytes());
  } catch (const c10::Error&) {
  }
}

inline std::unique_ptr<at::ObserverContext> enterOp(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (op_depth == 0 && std::strcmp(name, "aten::to") == 0) ++copies().to_calls;
  if (std::strcmp(name, "aten::copy_") == 0) countCopy(fn);
  if (op_depth == 0 && (std::strcmp(name, "aten::item") == 0 || std::strcmp(name, "aten::nonzero") == 0 ||
                        std::strcmp(name, "aten::masked_select") == 0 || std::strcmp(name, "aten::_local_scalar_dense") == 0))
    ++copies().sync_ops;
  ++op_depth;
  return nullptr;
}

inline void exitOp(const at::RecordFunction&, at::ObserverContext*) { --op_depth; }

#ifdef TORCHTIDY_PROBE_CUDA
// Counts the warnings that CUDA sync debug mode raises for synchronizing calls; other
// warnings are printed as usual.
class SyncCounter final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    if (warning.msg().find("synchroniz") != std::string::npos) ++recorder().syncs;
    else c10::WarningHandler::process(warning);
  }
};

// The CUDA caching allocator's bytes on device 0: allocated to tensors, reserved from the
// driver, and the allocated peak since probe::iteration() last reset it.
struct CudaBytes {
  int64_t allocated = 0;
  int64_t reserved = 0;
  int64_t peak = 0;
  // Allocations served so far and their bytes (cumulative, from the cache or the driver).
  int64_t allocations = 0;
  int64_t allocated_total = 0;
  bool used = false;
};

inline CudaBytes cudaBytes() {
  CudaBytes bytes;
  if (!recorder().cuda) return bytes;
  try {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
    constexpr size_t kAggregate = 0;  // StatType::AGGREGATE: all pool kinds together
    bytes.allocated = stats.allocated_bytes[kAggregate].current;
    bytes.reserved = stats.reserved_bytes[kAggregate].current;
    bytes.peak = stats.allocated_bytes[kAggregate].peak;
    bytes.allocations = stats.allocation[kAggregate].allocated;
    bytes.allocated_total = stats.allocated_bytes[kAggregate].allocated;
    bytes.used = true;
  } catch (const c10::Error&) {
    // The allocator is set up lazily: a program that never touched CUDA memory has no stats.
  }
  return bytes;
}

inline void resetCudaPeak() {
  if (cudaBytes().used) c10::cuda::CUDACachingAllocator::resetPeakStats(0);
}
#endif

// Tensor bytes on every device the probe sees, so that a memory effect shows whether the
// program runs on the CPU or on the GPU.
inline int64_t liveBytes() {
#ifdef TORCHTIDY_PROBE_CUDA
  return allocator().live() + cudaBytes().allocated;
#else
  return allocator().live();
#endif
}

// The CPU and GPU peaks may fall at different moments: their sum bounds the true peak.
inline int64_t peakBytes() {
#ifdef TORCHTIDY_PROBE_CUDA
  return allocator().peak() + cudaBytes().peak;
#else
  return allocator().peak();
#endif
}

inline void resetPeaks() {
  allocator().resetPeak();
#ifdef TORCHTIDY_PROBE_CUDA
  resetCudaPeak();
#endif
}

#ifdef TORCHTIDY_PROBE_ASAN
inline void countAsanReport(const char*) { ++copies().asan_reports; }
#endif

inline bool install() {
#ifdef TORCHTIDY_PROBE_ASAN
  __asan_set_error_report_callback(&countAsanReport);
#endif
  c10::SetCPUAllocator(&allocator(), /*priority=*/100);
  at::addGlobalCallback(at::RecordFunctionCallback(&enterOp, &exitOp).needsInputs(true));
  recorder().cuda = torch::cuda::is_available();
#ifdef TORCHTIDY_PROBE_CUDA
  // Leaked on purpose, like the allocator: LibTorch may still warn during static destruction.
  c10::WarningUtils::set_warning_handler(new SyncCounter());
  if (recorder().cuda)
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
#endif
  return true;
}

inline const bool installed = install();

inline std::map<std::string, double>& current() {
  auto& samples = recorder().samples;
  if (samples.empty()) samples.emplace_back();
  return samples.back();
}

// At exit the last sample gets no CUDA statistics (see Recorder::cuda).
inline void closeSample(Recorder& rec, bool at_exit) {
  auto& samples = rec.samples;
  if (samples.empty()) return;
  auto& sample = samples.back();
  sample["to_calls"] = static_cast<double>(copies().to_calls.exchange(0));
  sample["host_to_device_copies"] = static_cast<double>(copies().host_to_device.exchange(0));
  sample["host_to_device_bytes"] = static_cast<double>(copies().host_to_device_bytes.exchange(0));
  sample["device_to_host_copies"] = static_cast<double>(copies().device_to_host.exchange(0));
  sample["device_to_host_bytes"] = static_cast<double>(copies().device_to_host_bytes.exchange(0));
  sample["sync_ops"] = static_cast<double>(copies().sync_ops.exchange(0));
#ifdef TORCHTIDY_PROBE_ASAN
  sample["asan_reports"] = static_cast<double>(copies().asan_reports.exchange(0));
#endif
  sample["allocations"] = static_cast<double>(allocator().takeAllocations());
  sample["allocated_bytes"] = static_cast<double>(allocator().takeAllocatedBytes());
#ifdef TORCHTIDY_PROBE_CUDA
  // Allocations count on every device, like live bytes: a program on the GPU allocates there.
  if (!at_exit) {
    if (const CudaBytes cuda = cudaBytes(); cuda.used) {
      sample["allocations"] += static_cast<double>(cuda.allocations - std::exchange(rec.cuda_allocations, cuda.allocations));
      sample["allocated_bytes"] +=
          static_cast<double>(cuda.allocated_total - std::exchange(rec.cuda_allocated_total, cuda.allocated_total));
    }
  }
#endif
  sample["ns"] = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - rec.started).count());
#ifdef TORCHTIDY_PROBE_CUDA
  sample["syncs"] = static_cast<double>(std::exchange(rec.syncs, 0));
  if (at_exit) return;
  if (const CudaBytes cuda = cudaBytes(); cuda.used) {
    sample["cuda_allocated_bytes"] = static_cast<double>(cuda.allocated);
    sample["cuda_reserved_bytes"] = static_cast<double>(cuda.reserved);
    sample["cuda_peak_bytes"] = static_cast<double>(cuda.peak);
  }
#endif
}

// Copies and syncs before the first iteration (moving the model, building the data) belong
// to no iteration.
inline void discardSetup(Recorder& rec) {
  for (auto* counter : {&copies().to_calls, &copies().host_to_device, &copies().host_to_device_bytes,
                        &copies().device_to_host, &copies().device_to_host_bytes, &copies().sync_ops})
    counter->store(0);
  allocator().takeAllocations();
  allocator().takeAllocatedBytes();
  rec.syncs = 0;
#ifdef TORCHTIDY_PROBE_CUDA
  const CudaBytes cuda = cudaBytes();
  rec.cuda_allocations = cuda.allocations;
  rec.cuda_allocated_total = cuda.allocated_total;
#endif
}

// Unique autograd nodes reachable from a node: the graph it keeps alive.
inline void collectNodes(std::shared_ptr<torch::autograd::Node> root,
                         std::unordered_set<const torch::autograd::Node*>& seen) {
  std::vector<std::shared_ptr<torch::autograd::Node>> stack;
  if (root) stack.push_back(std::move(root));
  while (!stack.empty()) {
    auto node = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(node.get()).second) continue;
    for (const auto& edge : node->next_edges())
      if (edge.function) stack.push_back(edge.function);
  }
}

// The same from the tensors' grad_fn.
inline void collectNodes(const at::Tensor& tensor, std::unordered_set<const torch::autograd::Node*>& seen) {
  if (tensor.defined()) collectNodes(tensor.grad_fn(), seen);
}

template <typename T>
void collect(const T& value, std::unordered_set<const torch::autograd::Node*>& seen, int64_t& tensors) {
  if constexpr (std::is_convertible_v<const T&, const at::Tensor&>) {
    if (static_cast<const at::Tensor&>(value).defined()) ++tensors;
    collectNodes(value, seen);
  } else if constexpr (std::is_convertible_v<const T&, std::shared_ptr<torch::autograd::Node>>) {
    collectNodes(value, seen);  // a kept grad_fn()
  } else if constexpr (std::is_arithmetic_v<T> || std::is_convertible_v<const T&, std::string_view>) {
    // Plain numbers and strings keep no graph.
  } else {
    for (const auto& element : value) {
      if constexpr (std::is_convertible_v<decltype(element), const at::Tensor&> ||
                    std::is_convertible_v<decltype(element), std::shared_ptr<torch::autograd::Node>> ||
                    std::is_arithmetic_v<std::decay_t<decltype(element)>> ||
                    std::is_convertible_v<decltype(element), std::string_view>)
        collect(element, seen, tensors);
      else
        collect(element.second, seen, tensors);
    }
  }
}

}  // namespace detail

/// The device the program runs on, as a program picks it: the GPU when LibTorch sees one (the
/// harness's `--device cuda` run), else the CPU (`--device cpu` hides every GPU).
inline torch::Device device() { return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU; }

/// Starts the next iteration's sample.
inline void iteration() {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  if (rec.samples.empty()) detail::discardSetup(rec);
  detail::closeSample(rec);
  rec.samples.emplace_back();
  rec.samples.back()["iteration"] = static_cast<double>(rec.samples.size() - 1);
  rec.baseline_bytes = detail::liveBytes();
#ifdef TORCHTIDY_PROBE_CUDA
  rec.cuda_baseline_bytes = detail::cudaBytes().allocated;
#endif
  detail::resetPeaks();
  rec.started = std::chrono::steady_clock::now();
}

/// Records what the program keeps across iterations: a tensor, a container of tensors, graph
/// nodes (grad_fn()) or numbers, or a map to them.
template <typename T>
void keep(const T& kept) {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  std::unordered_set<const torch::autograd::Node*> nodes;
  int64_t tensors = 0;
  detail::collect(kept, nodes, tensors);
  auto& sample = detail::current();
  sample["kept_graph_nodes"] = static_cast<double>(nodes.size());
  sample["kept_tensors"] = static_cast<double>(tensors);
  sample["live_bytes"] = static_cast<double>(detail::liveBytes());
#ifdef TORCHTIDY_PROBE_CUDA
  if (const detail::CudaBytes cuda = detail::cudaBytes(); cuda.used)
    sample["cuda_live_bytes"] = static_cast<double>(cuda.allocated);
#endif
}

/// Records the gradient norm over the parameters (call right after backward()).
inline void grads(const std::vector<at::Tensor>& parameters) {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  double sum = 0.0;
  for (const auto& parameter : parameters) {
    const at::Tensor& grad = parameter.grad();
    if (grad.defined()) sum += std::pow(grad.detach().norm().item<double>(), 2);
  }
  detail::current()["grad_norm"] = std::sqrt(sum);
}

/// Records whether an eval output requires grad, the graph behind it and the tensor bytes
/// this iteration holds at that point.
inline void output(const at::Tensor& out) {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  std::unordered_set<const torch::autograd::Node*> nodes;
  detail::collectNodes(out, nodes);
  auto& sample = detail::current();
  sample["requires_grad"] = out.requires_grad() ? 1.0 : 0.0;
  sample["output_graph_nodes"] = static_cast<double>(nodes.size());
  sample["held_bytes"] = static_cast<double>(detail::liveBytes() - rec.baseline_bytes);
  sample["peak_bytes"] = static_cast<double>(detail::peakBytes() - rec.baseline_bytes);
#ifdef TORCHTIDY_PROBE_CUDA
  if (const detail::CudaBytes cuda = detail::cudaBytes(); cuda.used) {
    sample["cuda_held_bytes"] = static_cast<double>(cuda.allocated - rec.cuda_baseline_bytes);
    sample["cuda_batch_peak_bytes"] = static_cast<double>(cuda.peak - rec.cuda_baseline_bytes);
  }
#endif
}

/// Records an exception the program caught.
inline void error(const std::exception& caught) {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  const auto* c10_error = dynamic_cast<const c10::Error*>(&caught);
  rec.error = c10_error ? c10_error->what_without_backtrace() : caught.what();
}

/// Records a number the program computes (a tensor statistic, an optimizer's state) under
/// \p key in this iteration's sample, for effects no generic signal shows.
inline void value(const std::string& key, double number) {
  auto& rec = detail::recorder();
  std::lock_guard<std::mutex> lock(rec.mutex);
  detail::current()[key] = number;
}

/// Reads every element of a float tensor here, in the program's own (instrumented) code, and
/// records their sum: under AddressSanitizer a read of freed memory is reported.
inline void read(const at::Tensor& tensor) {
  const at::Tensor values = tensor.contiguous();
  const float* data = values.data_ptr<float>();
  double sum = 0.0;
  for (int64_t i = 0; i < values.numel(); ++i) sum += data[i];
  value("read_sum", sum);
}

/// The same for a one-element tensor (read here, so the program's loop has no host sync).
inline void value(const std::string& key, const at::Tensor& scalar) {
  value(key, scalar.item<double>());
}

}  // namespace probe
