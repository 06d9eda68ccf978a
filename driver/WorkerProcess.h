// The coordinator side of a worker: runs one Job in a process of its own (this binary
// re-run with --worker=<job>), so that a crash or a failed parse loses only that job.
// Used by the driver's parallel runs and by the language server.
#ifndef TORCHTIDY_DRIVER_WORKERPROCESS_H
#define TORCHTIDY_DRIVER_WORKERPROCESS_H

#include "Job.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Program.h"

namespace torchtidy::driver {

struct WorkerOutcome {
  JobResult Result;
  /// The worker crashed or wrote no readable result: Result.Problem says why.
  bool Internal = false;
};

/// The exit status of a worker that ran out of the memory --worker-memory-limit allows.
inline constexpr int WorkerOutOfMemory = 75;

/// --worker-memory-limit in bytes (0: none): the option, else half the physical memory.
/// The limit bounds each worker's data segment (RLIMIT_DATA: the heap, not the mapped PCH
/// or libraries); a worker that hits it fails its own file with a clear error.
llvm::Expected<uint64_t> workerMemoryLimit();

/// In a worker: turns running out of memory into exit status WorkerOutOfMemory with a
/// one-line message, instead of an abort with LLVM's "out of memory" and a stack dump.
void exitOnOutOfMemory();

/// Runs \p J in `Self --worker=<job> Args...`; its job, result and log files are \p Base
/// plus a suffix, removed afterwards. \p Running is told the worker's pid once it runs and
/// 0 once it has ended (to forward signals, or to cancel it).
WorkerOutcome runInWorker(const Job &J, llvm::StringRef Self, llvm::ArrayRef<const char *> Args,
                          llvm::StringRef Base,
                          llvm::function_ref<void(llvm::sys::procid_t)> Running);

} // namespace torchtidy::driver

#endif
