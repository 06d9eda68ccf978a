// torchtidy: the standalone front end. The coordinator plans the jobs, runs each
// translation unit in a worker process (this binary with --worker), and renders one
// report from their results; a crashing or failing TU never loses the others' findings.
#include "Cache.h"
#include "CallOrder.h"
#include "CompileFlags.h"
#include "utils/ProjectIndex.h"
#include "Emit.h"
#include "Inputs.h"
#include "Interrupt.h"
#include "Job.h"
#include "Lsp.h"
#include "Options.h"
#include "OutputFile.h"
#include "ReportReader.h"
#include "WorkerProcess.h"
#include "TorchTidyModule.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <thread>
#include <unistd.h>
#ifdef __linux__
#include <csignal>
#include <sys/prctl.h>
#endif

using namespace llvm;
using namespace torchtidy::driver;
using nlohmann::json;

[[maybe_unused]] static int TorchTidyModuleAnchorDestination = TorchTidyModuleAnchorSource;

namespace {

const char Overview[] = R"(LibTorch training-code analyzer (clang-tidy compatible)

  torchtidy [options] [<file or glob>...] [-- <compile flags>]
  torchtidy merge a.sarif b.sarif... [-o all.sarif]
  torchtidy lsp [options]            (a Language Server on stdin/stdout; docs/lsp.md)

Without files, every translation unit of the compilation database is analyzed.
Exit status: 0 no findings, 1 findings, 2 bad invocation or a file that could not be
analyzed, 3 internal error. See docs/driver.md.
)";

enum ExitCode { ExitClean = 0, ExitFindings = 1, ExitBadInput = 2, ExitInternal = 3 };

/// -j beyond this is refused: each job is a thread and a worker process.
constexpr unsigned MaxParallel = 1024;

void error(const Twine &Msg) { errs() << "torchtidy: error: " << Msg << "\n"; }
void warning(const Twine &Msg) {
  if (!Quiet)
    errs() << "torchtidy: warning: " << Msg << "\n";
}

/// The .clang-tidy files that configure \p Jobs: each one in the directory of a job's file
/// or above it.
std::vector<std::string> configFiles(const std::vector<Job> &Jobs) {
  std::vector<std::string> Found;
  StringSet<> Visited;
  for (const Job &J : Jobs)
    for (StringRef D = sys::path::parent_path(J.Header.empty() ? J.File : J.Header); !D.empty();
         D = sys::path::parent_path(D)) {
      if (!Visited.insert(D).second)
        break;
      SmallString<256> Config(D);
      sys::path::append(Config, ".clang-tidy");
      if (sys::fs::exists(Config))
        Found.push_back(std::string(Config));
    }
  return Found;
}

/// The project index of the TUs a first pass has finished so far, handed to every job it
/// starts after them: a TU started after the TUs it calls into gets the answers the complete
/// index gives, and is not analyzed again (completeWithProjectIndex still checks every answer).
class GrowingIndex {
public:
  explicit GrowingIndex(torchtidy::ProjectIndex Known) : Index(std::move(Known)) {}
  GrowingIndex(const GrowingIndex &) = delete;

  /// The file in \p Dir holding the index as it is now, for a job about to start (written
  /// once per state); empty when nothing is known yet or it cannot be written. Each one is
  /// handed back with release() once the job has ended.
  std::string acquire(StringRef Dir) {
    std::lock_guard<std::mutex> Lock(M);
    if (Index.empty())
      return "";
    if (Snapshots.empty() || Snapshots.back().State != State) {
      std::string Path = (Dir + "/index-" + Twine(State) + ".json").str();
      if (Error E = Index.save(Path)) {
        consumeError(std::move(E));
        return "";
      }
      Snapshots.push_back({State, Path, 0});
      dropUnused();
    }
    ++Snapshots.back().Readers;
    return Snapshots.back().Path;
  }
  void release(StringRef Path) {
    std::lock_guard<std::mutex> Lock(M);
    for (Snapshot &S : Snapshots)
      if (S.Path == Path)
        --S.Readers;
    dropUnused();
  }
  /// Removes every file acquire() wrote (no job runs any more).
  void removeFiles() {
    std::lock_guard<std::mutex> Lock(M);
    for (const Snapshot &S : Snapshots)
      sys::fs::remove(S.Path);
    Snapshots.clear();
  }
  /// Adds the summaries of a finished TU.
  void add(const JobResult &R) {
    if (R.Summaries.empty())
      return;
    Expected<torchtidy::ProjectIndex> I = torchtidy::ProjectIndex::fromJSON(R.Summaries);
    if (!I) {
      consumeError(I.takeError());
      return;
    }
    if (I->empty())
      return;
    std::lock_guard<std::mutex> Lock(M);
    Index.merge(*I);
    ++State;
  }

private:
  struct Snapshot {
    unsigned State;
    std::string Path;
    unsigned Readers;
  };
  /// Removes the files of older states that no running job reads any more.
  void dropUnused() {
    for (auto It = Snapshots.begin(); It + 1 < Snapshots.end();)
      if (It->Readers == 0) {
        sys::fs::remove(It->Path);
        It = Snapshots.erase(It);
      } else {
        ++It;
      }
  }
  std::mutex M;
  torchtidy::ProjectIndex Index;
  unsigned State = 0;
  std::vector<Snapshot> Snapshots;
};

/// Runs every job in a worker process, at most \p Parallel at a time, unless \p Cache
/// replays its result; results come back in job order whatever order the workers finish in.
/// With \p Growing (the first pass of a run with the project index), the jobs start callees
/// first, each after the TUs it calls into have finished (calleesFirst), and each one without an
/// index of its own gets the summaries of those finished before it.
std::vector<WorkerOutcome> runJobs(const std::vector<Job> &Jobs, StringRef Self,
                                   ArrayRef<const char *> OriginalArgs, unsigned Parallel,
                                   ResultCache *Cache, bool Replay = true,
                                   GrowingIndex *Growing = nullptr) {
  std::vector<WorkerOutcome> Outcomes(Jobs.size());
  SmallString<128> TmpDir;
  if (std::error_code EC = createTemporaryDirectory("torchtidy", TmpDir)) {
    for (size_t I = 0; I < Jobs.size(); ++I) {
      Outcomes[I].Result.File = Jobs[I].File;
      Outcomes[I].Result.Problem = "cannot create a temporary directory: " + EC.message();
      Outcomes[I].Internal = true;
    }
    return Outcomes;
  }
  removeOnInterrupt(TmpDir);
  bool Progress = !Quiet && Jobs.size() > 1 && sys::Process::StandardErrIsDisplayed();
  std::mutex ProgressMutex;
  size_t Done = 0;

  auto ReportProgress = [&](size_t I) {
    if (!Progress)
      return;
    std::lock_guard<std::mutex> Lock(ProgressMutex);
    ++Done;
    errs() << "\r\033[K[" << Done << "/" << Jobs.size() << "] "
           << sys::path::filename(Jobs[I].Header.empty() ? Jobs[I].File : Jobs[I].Header);
  };

  // The first pass starts the TUs callees first, each once the TUs it calls into have
  // finished (one TU has nothing to order, and a huge one would wait for the scan to start).
  CallPlan Plan;
  if (Growing && Jobs.size() > 1)
    Plan = calleesFirst(Jobs);
  else
    for (size_t I = 0; I < Jobs.size(); ++I)
      Plan.Order.push_back(I);
  std::mutex PlanMutex;
  std::condition_variable Finished;
  std::vector<char> Started(Jobs.size(), false), Ended(Jobs.size(), false);
  auto CalleesEnded = [&](size_t I) {
    return Plan.WaitsFor.empty() || llvm::all_of(Plan.WaitsFor[I], [&](size_t J) { return Ended[J]; });
  };
  // A worker started before the TUs its TU calls into have finished parses meanwhile (most of
  // its time) and waits for its go file (Job::AwaitFile), written once they have, naming the
  // index of the TUs finished by then. Written beforehand, empty (no index), so that handing
  // it over is a rename even where no file can be written any more.
  std::vector<std::string> Awaiting(Jobs.size()), Handed(Jobs.size());
  auto GoFile = [&](size_t I) { return (TmpDir + "/" + Twine(I) + ".go").str(); };
  auto HandOverReady = [&] { // PlanMutex held
    for (size_t I = 0; I < Jobs.size(); ++I) {
      if (Awaiting[I].empty() || !CalleesEnded(I))
        continue;
      std::string Go = GoFile(I), Named = Go + ".named";
      Handed[I] = Growing->acquire(TmpDir);
      std::error_code EC;
      {
        raw_fd_ostream Out(Named, EC);
        Out << Handed[I];
        Out.close();
        EC = EC ? EC : Out.error();
      }
      if (EC || sys::fs::rename(Named, Go)) {
        sys::fs::remove(Named);
        sys::fs::rename(Awaiting[I], Go);
      } else {
        sys::fs::remove(Awaiting[I]);
      }
      Awaiting[I].clear();
    }
  };

  auto RunOne = [&](size_t I, unsigned Slot, bool Early) {
    WorkerOutcome &Out = Outcomes[I];
    std::string Key = Cache ? Cache->key(Jobs[I]) : "";
    // --fix edits files: it applies only what an analysis of them saw just now.
    if (Cache && Replay && !Fix && !FixNotes)
      if (std::optional<JobResult> Hit = Cache->lookup(Key)) {
        Out.Result = std::move(*Hit);
        if (Growing)
          Growing->add(Out.Result);
        ReportProgress(I);
        return;
      }
    auto StartTime = std::chrono::system_clock::now();
    Job J = Jobs[I];
    std::string Partial;
    if (Growing && J.IndexFile.empty()) {
      std::lock_guard<std::mutex> Lock(PlanMutex);
      std::string Empty = GoFile(I) + ".empty";
      std::error_code EC;
      bool Awaits = Early && !CalleesEnded(I);
      if (Awaits) {
        raw_fd_ostream Touch(Empty, EC);
        Awaits = !EC;
      }
      if (Awaits) {
        J.AwaitFile = GoFile(I);
        Awaiting[I] = Empty;
      } else {
        Partial = Growing->acquire(TmpDir);
        J.IndexFile = Partial;
      }
    }
    Out = runInWorker(J, Self, OriginalArgs, (TmpDir + "/" + Twine(I)).str(),
                      [Slot](sys::procid_t Pid) { setWorker(Slot, Pid); });
    if (!Partial.empty())
      Growing->release(Partial);
    if (!J.AwaitFile.empty()) {
      std::lock_guard<std::mutex> Lock(PlanMutex);
      // Ended before its go file was written: it failed before its checks ran.
      if (!Awaiting[I].empty())
        sys::fs::remove(Awaiting[I]);
      Awaiting[I].clear();
      if (!Handed[I].empty())
        Growing->release(Handed[I]);
      sys::fs::remove(J.AwaitFile);
    }
    // A result made with part of the index records the answers it got, as one made with none
    // or all of it: it is replayed, and kept, only while the complete index gives them.
    if (Cache && !Out.Internal)
      Cache->store(Key, Out.Result, StartTime);
    if (Growing && !Out.Internal)
      Growing->add(Out.Result);
    ReportProgress(I);
  };

  size_t FirstNotStarted = 0;
  // The next job whose callees' TUs have finished; else the first whose callees' TUs have all
  // started, to parse while they finish (early); waiting while there is neither. nullopt when
  // every job has started. The first job not started never waits on one not started (WaitsFor
  // names jobs earlier in the order), and an early job waits only on started ones, each of
  // which waits only on jobs earlier still: the earliest running job always goes on.
  auto Take = [&]() -> std::optional<std::pair<size_t, bool>> {
    std::unique_lock<std::mutex> Lock(PlanMutex);
    for (;;) {
      while (FirstNotStarted < Plan.Order.size() && Started[Plan.Order[FirstNotStarted]])
        ++FirstNotStarted;
      if (FirstNotStarted == Plan.Order.size())
        return std::nullopt;
      for (bool Early : {false, true})
        for (size_t K = FirstNotStarted; K < Plan.Order.size(); ++K) {
          size_t I = Plan.Order[K];
          bool Startable = Early ? !Plan.WaitsFor.empty() &&
                                       llvm::all_of(Plan.WaitsFor[I], [&](size_t J) { return bool(Started[J]); })
                                 : CalleesEnded(I);
          if (Started[I] || !Startable)
            continue;
          Started[I] = true;
          Finished.notify_all(); // a job waiting on this one may start early now
          return std::make_pair(I, Early);
        }
      Finished.wait(Lock);
    }
  };
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < std::min<size_t>(Parallel, Jobs.size()); ++T)
    Threads.emplace_back([&, T] {
      while (std::optional<std::pair<size_t, bool>> I = Take()) {
        RunOne(I->first, T, I->second);
        {
          std::lock_guard<std::mutex> Lock(PlanMutex);
          Ended[I->first] = true;
          if (Growing)
            HandOverReady();
        }
        Finished.notify_all();
      }
    });
  for (std::thread &T : Threads)
    T.join();
  if (Progress)
    errs() << "\r\033[K";
  if (Growing)
    Growing->removeFiles();
  sys::fs::remove(TmpDir);
  forgetTemporary(TmpDir);
  return Outcomes;
}

/// The project index of a run: the summaries of every TU's functions (ProjectIndex.h).
torchtidy::ProjectIndex projectIndexOf(const std::vector<WorkerOutcome> &Outcomes) {
  torchtidy::ProjectIndex Index;
  for (const WorkerOutcome &O : Outcomes) {
    if (O.Result.Summaries.empty())
      continue;
    if (Expected<torchtidy::ProjectIndex> I = torchtidy::ProjectIndex::fromJSON(O.Result.Summaries))
      Index.merge(*I);
    else
      consumeError(I.takeError());
  }
  return Index;
}

/// `torchtidy index`: writes the project index of \p Outcomes to \p Out.
int writeProjectIndex(const std::vector<WorkerOutcome> &Outcomes, const std::vector<WorkerOutcome> &Others,
                      OutputFile &Out) {
  torchtidy::ProjectIndex Index = projectIndexOf(Outcomes);
  Index.merge(projectIndexOf(Others));
  unsigned Failed = 0;
  bool Internal = false;
  for (const WorkerOutcome &O : Outcomes) {
    Internal |= O.Internal;
    if (!O.Result.Analyzed) {
      ++Failed;
      warning(O.Result.File + ": " + (O.Result.Problem.empty() ? "not analyzed" : O.Result.Problem) +
              "; its functions are summarized from what parsed");
    }
  }
  std::string Text;
  Text = Index.toJSONText() + "\n";
  if (Error E = Out.write(Text)) {
    error(toString(std::move(E)));
    return ExitInternal;
  }
  if (Error E = Out.commit()) {
    error(toString(std::move(E)));
    return ExitInternal;
  }
  if (!Quiet)
    errs() << "torchtidy: index: " << Index.size() << " function(s) from " << Outcomes.size() - Failed
           << " of " << Outcomes.size() << " translation unit(s)\n";
  return Internal ? ExitInternal : ExitClean;
}

/// The outcomes the cache holds for \p Jobs (the database's TUs outside the run), for their
/// summaries; a TU never analyzed, or changed since, adds nothing.
std::vector<WorkerOutcome> cachedOutcomes(const std::vector<Job> &Jobs, ResultCache *Cache) {
  std::vector<WorkerOutcome> Out;
  if (!Cache)
    return Out;
  for (const Job &J : Jobs)
    if (std::optional<JobResult> Hit = Cache->peek(Cache->key(J))) {
      Out.emplace_back();
      Out.back().Result = std::move(*Hit);
    }
  return Out;
}

/// Analyzes again, with the complete project index, every TU whose checks asked about a
/// function of another TU and got an answer the complete index does not give (on a first run:
/// the TUs that call into other TUs; on an unchanged project: none, their cached results
/// were made with the same index). Returns how many TUs it analyzed again.
size_t completeWithProjectIndex(const std::vector<Job> &Jobs, std::vector<WorkerOutcome> &Outcomes,
                                const std::vector<WorkerOutcome> &Others, StringRef Self,
                                ArrayRef<const char *> OriginalArgs, unsigned Parallel, ResultCache *Cache) {
  torchtidy::ProjectIndex Index = projectIndexOf(Outcomes);
  Index.merge(projectIndexOf(Others));
  std::vector<size_t> Stale;
  for (size_t I = 0; I < Outcomes.size(); ++I)
    if (!Outcomes[I].Internal &&
        llvm::any_of(Outcomes[I].Result.Consulted,
                     [&](const auto &C) { return Index.answerHash(C.first) != C.second; }))
      Stale.push_back(I);
  if (Stale.empty())
    return 0;
  SmallString<128> Path;
  int FD;
  if (std::error_code EC = sys::fs::createTemporaryFile("torchtidy-index", "json", FD, Path)) {
    warning("cannot write the project index: " + EC.message() +
            "; calls into other translation units are not followed");
    return 0;
  }
  sys::fs::closeFile(FD);
  removeOnInterrupt(Path);
  if (Error E = Index.save(Path)) {
    warning(toString(std::move(E)) + "; calls into other translation units are not followed");
    sys::fs::remove(Path);
    forgetTemporary(Path);
    return 0;
  }
  std::vector<Job> Again;
  for (size_t I : Stale) {
    Again.push_back(Jobs[I]);
    Again.back().IndexFile = std::string(Path);
  }
  std::vector<WorkerOutcome> Second = runJobs(Again, Self, OriginalArgs, Parallel, Cache, /*Replay=*/false);
  for (size_t K = 0; K < Stale.size(); ++K)
    Outcomes[Stale[K]] = std::move(Second[K]);
  sys::fs::remove(Path);
  forgetTemporary(Path);
  return Stale.size();
}

int runWorkerFromFile(StringRef Path) {
#ifdef __linux__
  // A worker dies with the driver, even one killed with SIGKILL; the parent may have gone
  // before this call (then the worker was reparented and exits now).
  pid_t Parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != Parent || Parent == 1)
    return ExitInternal;
#endif
  exitOnOutOfMemory();
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path);
  if (!Buffer) {
    error(Path + ": cannot read the job: " + Buffer.getError().message());
    return ExitInternal;
  }
  Expected<json> Parsed = parseCbor((*Buffer)->getBuffer(), Path);
  if (!Parsed) {
    error(toString(Parsed.takeError()));
    return ExitInternal;
  }
  json &J = *Parsed;
  try {
    return runWorker(J.at("job").get<Job>(), J.at("out").get<std::string>());
  } catch (const json::exception &E) {
    error(Path + ": malformed job: " + E.what());
    return ExitInternal;
  }
}

/// Captures what the command-line parser prints on stderr itself (invalid option values)
/// besides what it writes to the stream it is given (unknown options). The file is
/// unlinked at once: --help and --version exit inside the parser.
class StderrCapture {
public:
  StderrCapture() {
    errs().flush();
    SmallString<128> Path;
    SmallString<128> Tmp;
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Tmp);
    if (createUniqueFileIn(Tmp, "torchtidy-args-", Fd, Path))
      return;
    sys::fs::remove(Path);
    Saved = ::dup(2);
    ::dup2(Fd, 2);
  }
  std::string take() {
    errs().flush();
    if (Saved < 0)
      return "";
    ::dup2(Saved, 2);
    ::close(Saved);
    Saved = -1;
    std::string Text;
    char Chunk[4096];
    ::lseek(Fd, 0, SEEK_SET);
    for (ssize_t N; (N = ::read(Fd, Chunk, sizeof(Chunk))) > 0;)
      Text.append(Chunk, N);
    ::close(Fd);
    return Text;
  }
  ~StderrCapture() { take(); }

private:
  int Fd = -1, Saved = -1;
};

/// The parser's first message in the "torchtidy: error: ..." form, without LLVM's hints:
/// "for the -j option: 'x' value invalid for uint argument!" -> "-j: 'x' value invalid...".
std::string optionError(StringRef Text, StringRef Program) {
  SmallVector<StringRef, 4> Lines;
  Text.split(Lines, '\n', -1, false);
  for (StringRef L : Lines) {
    L = L.trim();
    if (!L.consume_front(Program) || !L.consume_front(": "))
      continue;
    L = L.split(".  Try:").first.rtrim().rtrim('!');
    std::string Option;
    if (L.consume_front("for the ")) {
      auto [Name, Why] = L.split(" option: ");
      Option = (Name + ": ").str();
      L = Why;
    }
    if (!L.empty())
      return Option + L.substr(0, 1).lower() + L.drop_front(1).str();
  }
  return "invalid command line";
}

} // namespace

int main(int argc, const char **argv) {
  InitLLVM X(argc, argv);
  if (argc > 1 && StringRef(argv[1]) == "merge")
    return runMerge(argc - 1, argv + 1);
  // Run by the clang-tidy-torch wrapper on its arguments, before stock clang-tidy reads them.
  if (argc > 1 && StringRef(argv[1]) == "verify-clang-tidy-inputs") {
    if (Error E = verifyClangTidyInputs(std::vector<std::string>(argv + 1, argv + argc))) {
      error(toString(std::move(E)));
      return ExitBadInput;
    }
    return 0;
  }
  // Response files, before `--` and after it, are read here, bounded as a database's are
  // (regular files only, 1 MiB, not nested): the option parser would read @/dev/zero
  // forever, and the compile flags after `--` would never be read.
  std::vector<std::string> ArgStrings(argv, argv + argc);
  if (Error E = expandResponseFileArgs(ArgStrings, "")) {
    error(toString(std::move(E)));
    return ExitBadInput;
  }
  std::vector<const char *> ArgPointers;
  for (const std::string &A : ArgStrings)
    ArgPointers.push_back(A.c_str());
  ArgPointers.push_back(nullptr);
  argc = int(ArgStrings.size());
  argv = ArgPointers.data();
  // `torchtidy lsp [options]`: the options apply to every analysis the server runs.
  bool Lsp = argc > 1 && StringRef(argv[1]) == "lsp";
  // `torchtidy index [options] [files]`: writes the project index for the clang-tidy plugin.
  bool IndexOnly = argc > 1 && StringRef(argv[1]) == "index";
  if (Lsp || IndexOnly) {
    argv[1] = argv[0];
    ++argv;
    --argc;
  }

  std::vector<const char *> OriginalArgs(argv + 1, argv + argc);
  int OptionArgc = argc;
  std::unique_ptr<clang::tooling::CompilationDatabase> FixedDB;
  if (llvm::is_contained(OriginalArgs, StringRef("--"))) {
    std::string Err;
    FixedDB = clang::tooling::FixedCompilationDatabase::loadFromCommandLine(OptionArgc, argv, Err);
    if (!FixedDB) {
      error("invalid compile flags after --: " + Err);
      return ExitBadInput;
    }
  }

  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << "torchtidy " << TORCHTIDY_VERSION << " (clang-tidy library " << LLVM_VERSION_STRING
       << ", " << torchtidy::registeredChecks().size() << " torch checks)\n";
  });
  std::string ParseErrors;
  raw_string_ostream ParseErrorStream(ParseErrors);
  StderrCapture Capture;
  bool Parsed = cl::ParseCommandLineOptions(OptionArgc, argv, Overview, &ParseErrorStream);
  std::string Printed = Capture.take();
  if (!Parsed) {
    error(optionError(ParseErrorStream.str() + Printed, sys::path::filename(argv[0])));
    return ExitBadInput;
  }
  errs() << Printed;

  if (!WorkerJob.empty())
    return runWorkerFromFile(WorkerJob);

  // Numbers are checked before anything runs: a status that wraps at 256, a thread and
  // a process table per -j, a shard that selects nothing.
  if (FindingsExitCode > 255) {
    error("invalid --findings-exit-code " + Twine(FindingsExitCode) + ": expected 0 to 255");
    return ExitBadInput;
  }
  if (Jobs > MaxParallel) {
    error("invalid -j " + Twine(Jobs) + ": at most " + Twine(MaxParallel) + " jobs in parallel");
    return ExitBadInput;
  }
  if (Expected<uint64_t> Limit = workerMemoryLimit(); !Limit) {
    error(toString(Limit.takeError()));
    return ExitBadInput;
  }
  if (Shard.getNumOccurrences())
    if (Expected<std::pair<unsigned, unsigned>> KN = parseShard(Shard); !KN) {
      error(toString(KN.takeError()));
      return ExitBadInput;
    }

  // An empty name is no file: not stdout either (that is no -o at all).
  for (auto *Named : {&Output, &ExportFixes, &SarifOutput})
    if (Named->getNumOccurrences() && Named->empty()) {
      error("--" + Named->ArgStr + ": an empty file name");
      return ExitBadInput;
    }

  auto Provider = createOptionsProvider();
  if (!Provider) {
    error(toString(Provider.takeError()));
    return ExitBadInput;
  }
  clang::tidy::ClangTidyContext Context(std::move(*Provider));
  unsigned Parallel = Jobs ? unsigned(Jobs) : std::max(1u, std::thread::hardware_concurrency());
  // Before any temporary file (an output's, a `git` capture's) exists.
  handleInterrupts(Parallel);

  // Without --checks, a configuration that enables no torch check gets the defaults.
  if (Checks.getNumOccurrences() || ListChecks) {
    SmallString<256> Probe(Files.empty() ? "dummy.cpp" : Files.front());
    sys::fs::make_absolute(Probe);
    Context.setCurrentFile(Probe);
    std::vector<std::string> Names =
        clang::tidy::ClangTidyASTConsumerFactory(Context).getCheckNames();
    if (Names.empty()) {
      // As clang-tidy: a run that can find nothing must not pass as a clean one.
      error("no checks enabled" + (Checks.getNumOccurrences()
                                       ? ": --checks='" + Checks +
                                             "' matches none of torchtidy's checks (torch-*)"
                                       : std::string()));
      return ExitBadInput;
    }
    if (ListChecks) {
      outs() << "Enabled checks:";
      for (const std::string &N : Names) {
        outs() << "\n    " << N;
        // The set says why a check is on: performance checks only run when named.
        for (const torchtidy::CheckInfo &C : torchtidy::registeredChecks())
          if (C.Id == N)
            outs() << " (" << C.Set << ")";
      }
      outs() << "\n\n";
      return ExitClean;
    }
  }

  // Everything that can be refused is checked before the analysis, which may take long.
  std::optional<StringSet<>> Known;
  if (!Baseline.empty()) {
    Expected<StringSet<>> B = loadBaseline(Baseline);
    if (!B) {
      error(toString(B.takeError()));
      return ExitBadInput;
    }
    Known = std::move(*B);
  }
  if (IndexOnly && Output.empty())
    Output = "torchtidy-index.json";
  Expected<std::unique_ptr<OutputFile>> ReportOut = OutputFile::create(Output);
  Expected<std::unique_ptr<OutputFile>> FixesOut = OutputFile::create(ExportFixes);
  Expected<std::unique_ptr<OutputFile>> SarifOut = OutputFile::create(SarifOutput);
  for (auto *Out : {&ReportOut, &FixesOut, &SarifOut})
    if (!*Out) {
      error(toString(Out->takeError()));
      return ExitBadInput;
    }
  if (Expected<uint64_t> Size = parseCacheSize(CacheMaxSize); !Size) {
    error(toString(Size.takeError()));
    return ExitBadInput;
  }
  if (Lsp) {
    if (!Files.empty() || FixedDB) {
      error("lsp: the editor names the files: give options only");
      return ExitBadInput;
    }
    return runLsp(sys::fs::getMainExecutable(argv[0], (void *)&runWorkerFromFile), OriginalArgs);
  }
  Expected<Plan> P = planJobs(std::move(FixedDB));
  if (!P) {
    error(toString(P.takeError()));
    return ExitBadInput;
  }
  const std::vector<NamedFile> Outputs = {
      {"-o", Output}, {"--export-fixes", ExportFixes}, {"--sarif-output", SarifOutput}};
  {
    // No output replaces an input or another output.
    std::vector<NamedFile> Inputs = {{"--baseline", Baseline}, {"--config-file", ConfigFile}};
    if (FilesFrom != "-")
      Inputs.push_back({"--files-from", FilesFrom});
    for (const Job &J : P->Jobs)
      for (const std::string &F : {J.File, J.Header})
        Inputs.push_back({"an input", F});
    for (const Problem &Pr : P->Problems)
      Inputs.push_back({"an input", Pr.File});
    Inputs.push_back({"the compilation database", P->Database});
    for (const std::string &C : configFiles(P->Jobs))
      Inputs.push_back({"the configuration", C});
    if (Error E = refuseOverlap(Outputs, Inputs)) {
      error(toString(std::move(E)));
      return ExitBadInput;
    }
    for (const NamedFile &Out : Outputs)
      if (Error E = refuseInside(Out, "the cache directory", cacheDirectory())) {
        error(toString(std::move(E)));
        return ExitBadInput;
      }
  }
  if (!P->Dropped.empty())
    warning("compile options ignored (they do more than change how a file is parsed): " +
            droppedList(P->Dropped));
  // An invalid header filter would fail every worker; say so once, before any analysis.
  for (const Job &J : P->Jobs)
    if (Expected<HeaderFilters> Filters = headerFiltersFor(J.File); !Filters) {
      error(toString(Filters.takeError()));
      return ExitBadInput;
    }

  RunReport Report;
  // Asking git for the root costs a process start that plain text output does not need.
  if (OutputFormat != Format::Text || !Baseline.empty() || !SarifOutput.empty())
    Report.Root = sourceRoot();
  Report.AutomationId = AutomationId;
  if (P->NothingChanged && !Quiet)
    errs() << "torchtidy: no changed C/C++ files to analyze\n";

  std::string Self = sys::fs::getMainExecutable(argv[0], (void *)&runWorkerFromFile);
  std::unique_ptr<ResultCache> Cache = ResultCache::open();
  std::vector<WorkerOutcome> Others =
      NoProjectIndex && !IndexOnly ? std::vector<WorkerOutcome>() : cachedOutcomes(P->IndexOnly, Cache.get());
  // The checks see no index in `torchtidy index`, whose summaries never depend on one.
  std::optional<GrowingIndex> Growing;
  if (!NoProjectIndex && !IndexOnly)
    Growing.emplace(projectIndexOf(Others));
  std::vector<WorkerOutcome> Outcomes =
      runJobs(P->Jobs, Self, OriginalArgs, Parallel, Cache.get(), /*Replay=*/true, Growing ? &*Growing : nullptr);
  if (IndexOnly)
    return writeProjectIndex(Outcomes, Others, **ReportOut);
  size_t AnalyzedAgain = 0;
  if (!NoProjectIndex)
    AnalyzedAgain = completeWithProjectIndex(P->Jobs, Outcomes, Others, Self, OriginalArgs, Parallel, Cache.get());
  if (Cache) {
    Cache->trim();
    if (CacheStats) {
      unsigned Built = 0, Used = 0;
      for (const WorkerOutcome &O : Outcomes) {
        Built += O.Result.Preamble == "built";
        Used += O.Result.Preamble == "used";
      }
      errs() << "torchtidy: cache: " << Cache->Hits << " hit(s), " << Cache->Misses
             << " miss(es), " << Cache->Stored << " stored; preambles: " << Built << " built, "
             << Used << " reused; " << AnalyzedAgain << " analyzed again with the project index\n";
    }
  }

  bool Internal = false;
  std::string DowngradeWarnedFor;
  unsigned CudaSources = 0;
  std::string FirstCuda;
  for (const Problem &Pr : P->Problems)
    Report.Notifications.push_back({Pr.Kind, Pr.File, Pr.Message, {}, {}, false});
  // A header's findings come once from every TU that includes it, their wording possibly
  // differing per instantiation: one finding per check, header, line and column (the first
  // TU's). Findings without a place (clang-tidy-config) are kept once per run, told apart by text.
  std::set<std::tuple<std::string, std::string, unsigned, unsigned, unsigned, std::string>> Seen;
  for (WorkerOutcome &O : Outcomes) {
    JobResult &R = O.Result;
    StringRef Subject = R.Header.empty() ? R.File : R.Header;
    if (!R.DowngradedStd.empty() && DowngradeWarnedFor.empty()) {
      DowngradeWarnedFor = R.DowngradedStd;
      warning(R.File + ": -std=" + R.DowngradedStd + " is analyzed as C++17: " + R.DowngradeReason);
    }
    if (R.Cuda && !CudaSources++)
      FirstCuda = R.File;
    Internal |= O.Internal;
    if (R.Analyzed) {
      ++Report.FilesAnalyzed;
    } else {
      Notification N{O.Internal ? "internal-error" : "parse-error", Subject.str(),
                     R.Header.empty() ? R.Problem : "through " + R.File + ": " + R.Problem, {}, {}, false};
      N.Errors = R.Errors;
      if (!N.Errors.empty())
        N.Where = N.Errors.front().Where;
      N.PartiallyAnalyzed = !O.Internal && !R.Errors.empty();
      Report.Notifications.push_back(std::move(N));
    }
    for (Finding &F : R.Findings) {
      const Span &W = F.Primary.Where;
      bool InHeader = !W.File.empty() && W.File != R.File;
      if (!Seen.insert({F.Check, W.File, InHeader ? W.Line : 0, InHeader ? W.Column : 0,
                        InHeader ? 0 : F.Primary.Offset, InHeader ? "" : F.Primary.Text})
               .second)
        continue;
      Report.Findings.push_back(std::move(F));
    }
  }
  if (CudaSources && !Quiet) {
    std::string Msg = CudaSources == 1 ? FirstCuda + ": a CUDA source"
                                       : std::to_string(CudaSources) + " CUDA sources (" + FirstCuda + ", ...)";
    Msg += " analyzed on the host side only: kernels and other device code are not checked";
    errs() << "torchtidy: note: " << Msg << "\n";
  }
  for (const Notification &N : Report.Notifications)
    errs() << "torchtidy: " << (N.Kind == "internal-error" ? "internal error: " : "error: ")
           << N.File << ": " << N.Message << "\n";

  // A header the analysis read is known only now: the report is not written over it.
  for (const WorkerOutcome &O : Outcomes) {
    std::vector<NamedFile> Read;
    for (const std::string &In : O.Result.Inputs)
      Read.push_back({"a file the analysis read", In});
    if (Error E = refuseOverlap(Outputs, Read)) {
      error(toString(std::move(E)));
      return ExitBadInput;
    }
  }

  fingerprint(Report);
  if (Known) {
    applyBaseline(Report, *Known);
    if (Report.Suppressed && !Quiet)
      errs() << "torchtidy: " << Report.Suppressed << " finding(s) suppressed by the baseline\n";
  }

  Report.ExitCode = Internal                        ? ExitInternal
                    : !Report.Notifications.empty() ? ExitBadInput
                    : countFindings(Report)         ? int(FindingsExitCode)
                                                    : ExitClean;

  clang::tidy::FixBehaviour FixMode = clang::tidy::FB_NoFix;
  if (Fix || FixNotes) {
    bool CompilerErrors = llvm::any_of(Report.Findings, isCompilerError);
    if (CompilerErrors && !FixErrors)
      errs() << "torchtidy: found compiler errors, but --fix-errors was not specified; fixes "
                "have not been applied\n";
    else
      FixMode = FixNotes ? clang::tidy::FB_FixNotes : clang::tidy::FB_Fix;
  }

  Error Written = Error::success();
  if (OutputFormat == Format::Text) {
    Written = emitText(Report, Context, FixMode, (*ReportOut)->writePath(),
                       Output.empty() ? StringRef("stdout") : StringRef(Output));
  } else {
    if (FixMode != clang::tidy::FB_NoFix)
      Written = emitText(Report, Context, FixMode, "/dev/null");
    if (!Written)
      Written = (*ReportOut)->write(
          dumpReport(OutputFormat == Format::Json ? toJson(Report) : toSarif(Report)));
  }
  if (!Written)
    Written = (*ReportOut)->commit();
  if (!Written && !SarifOutput.empty()) {
    Written = (*SarifOut)->write(dumpReport(toSarif(Report)));
    if (!Written)
      Written = (*SarifOut)->commit();
  }
  if (!Written && !ExportFixes.empty()) {
    std::string Yaml;
    raw_string_ostream OS(Yaml);
    std::vector<clang::tidy::ClangTidyError> Errors;
    for (const Finding &F : Report.Findings)
      Errors.push_back(toClangTidyError(F));
    clang::tidy::exportReplacements(P->Jobs.empty() ? "" : P->Jobs.front().File, Errors, OS);
    Written = (*FixesOut)->write(OS.str());
    if (!Written)
      Written = (*FixesOut)->commit();
  }
  if (Written) {
    error(toString(std::move(Written)));
    return std::max<int>(Report.ExitCode, ExitBadInput);
  }
  return Report.ExitCode;
}
