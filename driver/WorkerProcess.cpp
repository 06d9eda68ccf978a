#include "WorkerProcess.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

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
  sys::ProcessInfo PI =
      sys::ExecuteNoWait(Self, Argv, std::nullopt, Redirects, 0, &ErrMsg, &ExecutionFailed);
  int RC = -1;
  if (!ExecutionFailed) {
    Running(PI.Pid);
    RC = sys::Wait(PI, std::nullopt, &ErrMsg).ReturnCode;
    Running(0);
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> Result = MemoryBuffer::getFile(ResultPath);
  if (RC == 0 && Result) {
    json R = json::from_cbor((*Result)->getBuffer(), true, false);
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
  if (RC != 0 || !Result) {
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
