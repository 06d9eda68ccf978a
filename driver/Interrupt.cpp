#include "Interrupt.h"

#include <atomic>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace torchtidy::driver {

namespace {

// Everything the handler reads is preallocated and lock-free: it may run on any thread,
// at any point.
constexpr unsigned MaxTemporaries = 8;
constexpr size_t MaxPath = 4096;
char Temporaries[MaxTemporaries][MaxPath];
std::atomic<bool> TemporaryInUse[MaxTemporaries];

std::unique_ptr<std::atomic<pid_t>[]> Workers;
unsigned NumWorkers = 0;

// nohup: a hangup the run was started to ignore stays ignored.
bool HangupIgnored = false;

/// A run started from a script's `cmd &` inherits SIGINT ignored. LLVM's handler, installed
/// by InitLLVM, restores that on the first SIGINT and raises it again, so a SIGINT before
/// handleInterrupts was lost while one after it stopped the run. Both stop it now: SIGINT
/// and SIGTERM start with their default action, before any library initializer (the
/// executable's .preinit_array), so a signal in that window ends the run as one after it.
void startInterruptible(int, char **, char **) {
  struct sigaction Old;
  for (int Sig : {SIGINT, SIGTERM})
    if (::sigaction(Sig, nullptr, &Old) == 0 && Old.sa_handler == SIG_IGN)
      ::signal(Sig, SIG_DFL);
  HangupIgnored = ::sigaction(SIGHUP, nullptr, &Old) == 0 && Old.sa_handler == SIG_IGN;
}
__attribute__((section(".preinit_array"), used)) void (*const StartInterruptible)(
    int, char **, char **) = startInterruptible;

void removeTree(const char *Path) {
  if (::unlink(Path) == 0)
    return;
  if (DIR *D = ::opendir(Path)) {
    int Fd = ::dirfd(D);
    while (struct dirent *E = ::readdir(D))
      if (std::strcmp(E->d_name, ".") && std::strcmp(E->d_name, ".."))
        ::unlinkat(Fd, E->d_name, 0);
    ::closedir(D);
  }
  ::rmdir(Path);
}

void onInterrupt(int Sig) {
  for (unsigned I = 0; I < NumWorkers; ++I)
    if (pid_t P = Workers[I].load())
      ::kill(P, SIGTERM);
  for (unsigned I = 0; I < NumWorkers; ++I)
    if (pid_t P = Workers[I].load())
      ::waitpid(P, nullptr, 0);
  for (unsigned I = 0; I < MaxTemporaries; ++I)
    if (TemporaryInUse[I].load())
      removeTree(Temporaries[I]);
  ::signal(Sig, SIG_DFL);
  ::raise(Sig);
}

} // namespace

void handleInterrupts(unsigned MaxWorkers) {
  Workers.reset(new std::atomic<pid_t>[MaxWorkers]());
  NumWorkers = MaxWorkers;
  struct sigaction SA = {};
  SA.sa_handler = onInterrupt;
  sigemptyset(&SA.sa_mask);
  // A second signal during cleanup must not start the cleanup again.
  // SIGHUP (the terminal or the CI agent's session went away) stops a run like SIGTERM.
  for (int Sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&SA.sa_mask, Sig);
  for (int Sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(Sig, &SA, nullptr);
  if (HangupIgnored)
    ::signal(SIGHUP, SIG_IGN);
}

bool removeOnInterrupt(llvm::StringRef Path) {
  if (Path.size() >= MaxPath)
    return false;
  for (unsigned I = 0; I < MaxTemporaries; ++I) {
    if (TemporaryInUse[I].load())
      continue;
    std::memcpy(Temporaries[I], Path.data(), Path.size());
    Temporaries[I][Path.size()] = '\0';
    TemporaryInUse[I].store(true);
    return true;
  }
  return false;
}

void forgetTemporary(llvm::StringRef Path) {
  for (unsigned I = 0; I < MaxTemporaries; ++I)
    if (TemporaryInUse[I].load() && Path == Temporaries[I])
      TemporaryInUse[I].store(false);
}

void setWorker(unsigned Slot, pid_t Pid) {
  if (Slot < NumWorkers)
    Workers[Slot].store(Pid);
}

} // namespace torchtidy::driver
