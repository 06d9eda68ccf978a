#include "WorkerProcess.h"
#include "ReportReader.h"
#include "Cache.h"
#include "Options.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <new>
#include <unistd.h>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

Expected<uint64_t> workerMemoryLimit() {
  if (WorkerMemoryLimit.getNumOccurrences()) {
    Expected<uint64_t> Limit = parseCacheSize(WorkerMemoryLimit, "--worker-memory-limit");
    // Below this a worker cannot even start (its exec fails, "No such file or directory").
    constexpr uint64_t Minimum = uint64_t(64) << 20;
    if (Limit && *Limit && *Limit < Minimum)
      return createStringError(inconvertibleErrorCode(),
                               "invalid --worker-memory-limit %s: at least 64M (0: no limit)",
                               WorkerMemoryLimit.c_str());
    return Limit;
  }
  long Pages = ::sysconf(_SC_PHYS_PAGES), PageSize = ::sysconf(_SC_PAGE_SIZE);
  return Pages > 0 && PageSize > 0 ? uint64_t(Pages) * uint64_t(PageSize) / 2 : 0;
}

namespace {

[[noreturn]] void outOfMemory() {
  static const char Message[] =
      "torchtidy: error: out of memory: the analysis needs more than --worker-memory-limit\n";
  ssize_t Ignored = ::write(2, Message, sizeof(Message) - 1);
  (void)Ignored;
  ::_exit(WorkerOutOfMemory);
}

} // namespace

void exitOnOutOfMemory() {
  std::set_new_handler([] { outOfMemory(); });
  install_bad_alloc_error_handler([](void *, const char *, bool) { outOfMemory(); });
}

WorkerOutcome runInWorker(const Job &J, StringRef Self, ArrayRef<const char *> Args,
                          StringRef Base, function_ref<void(sys::procid_t)> Running) {
  WorkerOutcome Out;
  Out.Result.File = J.File;
  Out.Result.Header = J.Header;
  std::string JobPath = (Base + ".job.cbor").str(), ResultPath = (Base + ".result.cbor").str(),
              LogPath = (Base + ".log").str();
  {
    // CBOR, not JSON text: paths and source lines are bytes that need not be UTF-8.
    std::vector<uint8_t> Bytes = json::to_cbor(json{{"job", J}, {"out", ResultPath}});
    std::error_code EC;
    raw_fd_ostream JobOut(JobPath, EC);
    JobOut.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  }
  std::string WorkerFlag = "--worker=" + JobPath;
  std::vector<StringRef> Argv = {Self, WorkerFlag};
  for (const char *A : Args)
    Argv.push_back(A);
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(LogPath), StringRef(LogPath)};
  std::string ErrMsg;
  bool ExecutionFailed = false;
  // In MiB, as LLVM sets RLIMIT_DATA. Sanitizers reserve terabytes of shadow memory: a
  // sanitized build runs its workers unbounded.
  unsigned LimitMiB = 0;
#if !defined(__SANITIZE_ADDRESS__)
  if (Expected<uint64_t> Limit = workerMemoryLimit(); Limit && *Limit)
    LimitMiB = unsigned(std::min<uint64_t>(std::max<uint64_t>(*Limit >> 20, 1), UINT_MAX));
  else if (!Limit)
    consumeError(Limit.takeError());
#endif
  sys::ProcessInfo PI = sys::ExecuteNoWait(Self, Argv, std::nullopt, Redirects, LimitMiB, &ErrMsg,
                                           &ExecutionFailed);
  int RC = -1;
  if (!ExecutionFailed) {
    Running(PI.Pid);
    RC = sys::Wait(PI, std::nullopt, &ErrMsg).ReturnCode;
    Running(0);
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> Result = MemoryBuffer::getFile(ResultPath);
  if (RC == 0 && Result) {
    json R = cborOrDiscarded((*Result)->getBuffer());
    if (R.is_discarded()) {
      RC = -1;
      ErrMsg = "unreadable worker result";
    } else {
      try {
        Out.Result = R.get<JobResult>();
      } catch (const json::exception &E) {
        RC = -1;
        ErrMsg = std::string("unreadable worker result: ") + E.what();
      }
    }
  }
  if (RC == WorkerOutOfMemory) {
    // The file's own problem (an exponential macro, a huge generated source): bad input.
    Out.Result.Analyzed = false;
    Out.Result.Problem = "out of memory: the analysis needs more than --worker-memory-limit (" +
                         std::to_string(LimitMiB) + " MiB)";
  } else if (RC != 0 || !Result) {
    Out.Internal = true;
    Out.Result.Analyzed = false;
    if (ErrMsg.empty()) {
      ErrMsg = "exit status " + std::to_string(RC);
      if (ErrorOr<std::unique_ptr<MemoryBuffer>> Log = MemoryBuffer::getFile(LogPath)) {
        StringRef Last = (*Log)->getBuffer().rtrim().rsplit('\n').second;
        if (Last.empty())
          Last = (*Log)->getBuffer().rtrim();
        if (!Last.empty())
          ErrMsg += ": " + Last.str();
      }
    }
    Out.Result.Problem = "the analyzer failed on this file (" + ErrMsg + ")";
  }
  for (const std::string &P : {JobPath, ResultPath, LogPath})
    sys::fs::remove(P);
  return Out;
}

} // namespace torchtidy::driver
