// SIGINT/SIGTERM/SIGHUP stop a run cleanly: the worker processes are terminated, the temporary
// files and directory are removed (so an existing report is never half-replaced), then
// the signal takes its default effect and the exit status says which signal it was.
#ifndef TORCHTIDY_DRIVER_INTERRUPT_H
#define TORCHTIDY_DRIVER_INTERRUPT_H

#include "llvm/ADT/StringRef.h"

#include <sys/types.h>

namespace torchtidy::driver {

/// Installs the handler (after llvm::InitLLVM, whose own handler it replaces for these three
/// signals only). \p MaxWorkers is the most worker processes alive at once.
void handleInterrupts(unsigned MaxWorkers);

/// Removes \p Path (a file, or a directory with the files in it) if the run is
/// interrupted, until forgetTemporary(Path). Returns false when the table is full.
bool removeOnInterrupt(llvm::StringRef Path);
void forgetTemporary(llvm::StringRef Path);

/// Worker slot \p Slot (< MaxWorkers) now runs \p Pid (0: none).
void setWorker(unsigned Slot, pid_t Pid);

} // namespace torchtidy::driver

#endif
