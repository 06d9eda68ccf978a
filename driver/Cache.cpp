#include "Cache.h"
#include "ReportReader.h"
#include "Options.h"
#include "OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

/// Bumped whenever the entry layout or the meaning of a key changes.
constexpr const char *ResultFormat = "torchtidy-result-cache/2";

void notice(const Twine &Msg) {
  if (!Quiet)
    errs() << "torchtidy: warning: " << Msg << "\n";
}

/// Size and modification time of this executable: a rebuilt torchtidy (new or changed
/// checks with the same version number) must not replay its predecessor's results.
std::string toolIdentity() {
  std::string Self = sys::fs::getMainExecutable(nullptr, (void *)&toolIdentity);
  sys::fs::file_status St;
  if (sys::fs::status(Self, St))
    return Self;
  return Self + ":" + std::to_string(St.getSize()) + ":" +
         std::to_string(St.getLastModificationTime().time_since_epoch().count());
}

/// The compile command without what cannot change the analysis (the object file and
/// dependency-file outputs), so that build trees differing only there share entries.
std::vector<std::string> normalizedArguments(const std::vector<std::string> &Args) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "-o" || A == "-MF" || A == "-MT" || A == "-MQ") {
      ++I;
      continue;
    }
    if ((A.starts_with("-o") && A.size() > 2) || A == "-MD" || A == "-MMD" || A == "-MP")
      continue;
    Out.push_back(A.str());
  }
  return Out;
}

} // namespace

std::string cacheDirectory() {
  if (NoCache)
    return "";
  if (!CacheDir.empty())
    return CacheDir;
  SmallString<256> Dir;
  if (!sys::path::cache_directory(Dir))
    return "";
  sys::path::append(Dir, "torchtidy");
  return std::string(Dir);
}

Expected<uint64_t> parseCacheSize(StringRef Text, StringRef Option) {
  StringRef Digits = Text.rtrim("kKmMgGtT");
  uint64_t N = 0;
  if (Digits.getAsInteger(10, N) || Text.size() - Digits.size() > 1)
    return createStringError(inconvertibleErrorCode(),
                             "invalid %s '%s': expected a size such as 500M or 2G",
                             Option.str().c_str(), Text.str().c_str());
  unsigned Shift = 0;
  if (Text.size() > Digits.size())
    Shift = 10 * (1 + StringRef("kmgt").find(toLower(Text.back())));
  if (N > (UINT64_MAX >> Shift))
    return createStringError(inconvertibleErrorCode(),
                             "invalid %s '%s': larger than 16 EiB", Option.str().c_str(),
                             Text.str().c_str());
  return N << Shift;
}

std::string hashBytes(StringRef Data) {
  return toHex(BLAKE3::hash<16>(arrayRefFromStringRef(Data)), /*LowerCase=*/true);
}

std::string toCbor(const json &J) {
  std::vector<uint8_t> Bytes = json::to_cbor(J);
  return std::string(Bytes.begin(), Bytes.end());
}

Error writeAtomically(StringRef Path, StringRef Content) {
  StringRef Dir = sys::path::parent_path(Path);
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "cannot create %s: %s", Dir.str().c_str(), EC.message().c_str());
  int FD;
  SmallString<256> Temp;
  if (std::error_code EC =
          createUniqueFileIn(Dir, ".tmp-", FD, Temp))
    return createStringError(EC, "cannot write in %s: %s", Dir.str().c_str(), EC.message().c_str());
  {
    raw_fd_ostream Out(FD, /*shouldClose=*/true);
    Out << Content;
    Out.close();
    if (Out.has_error()) {
      Out.clear_error();
      sys::fs::remove(Temp);
      return createStringError(inconvertibleErrorCode(), "cannot write %s", Temp.c_str());
    }
  }
  if (std::error_code EC = sys::fs::rename(Temp, Path)) {
    sys::fs::remove(Temp);
    return createStringError(EC, "cannot write %s: %s", Path.str().c_str(), EC.message().c_str());
  }
  return Error::success();
}

void markUsed(StringRef Path) {
  utimensat(AT_FDCWD, Path.str().c_str(), nullptr, 0);
}

std::string inputPath(StringRef Path, StringRef Base) {
  SmallString<256> P(Path);
  if (!sys::path::is_absolute(P)) {
    SmallString<256> Abs(Base);
    if (Abs.empty())
      sys::fs::current_path(Abs);
    sys::path::append(Abs, P);
    P = Abs;
  }
  SmallString<256> Real;
  if (!sys::fs::real_path(P, Real))
    return std::string(Real);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

std::string lookupOutcome(StringRef Path) {
  SmallString<256> Real;
  sys::fs::file_status St;
  if (sys::fs::real_path(Path, Real) || sys::fs::status(Real, St))
    return "";
  return (sys::fs::is_directory(St) ? "d " : "f ") + std::string(Real);
}

bool lookupsHold(const json &Lookups) {
  for (const json &L : Lookups)
    if (lookupOutcome(L.at(0).get<std::string>()) != L.at(1).get<std::string>())
      return false;
  return true;
}

void LookupRecorder::record(const Twine &Path, bool Found) {
  SmallString<256> Abs;
  Path.toVector(Abs);
  if (makeAbsolute(Abs))
    return;
  // Only the first outcome counts: the compiler's file manager asks once and remembers.
  auto [It, New] = Lookups.try_emplace(std::string(Abs));
  if (New && Found)
    It->second = lookupOutcome(Abs);
}

ErrorOr<vfs::Status> LookupRecorder::status(const Twine &Path) {
  ErrorOr<vfs::Status> S = ProxyFileSystem::status(Path);
  record(Path, bool(S));
  return S;
}

ErrorOr<std::unique_ptr<vfs::File>> LookupRecorder::openFileForRead(const Twine &Path) {
  ErrorOr<std::unique_ptr<vfs::File>> F = Regular.openFileForRead(Path);
  record(Path, bool(F));
  return F;
}

std::optional<std::string> FileHasher::hash(StringRef Path) {
  sys::fs::file_status St;
  if (sys::fs::status(Path, St) || !sys::fs::is_regular_file(St))
    return std::nullopt;
  {
    std::lock_guard<std::mutex> G(Lock);
    auto It = Memos.find(Path);
    if (It != Memos.end() && It->second.Size == St.getSize() &&
        It->second.Modified == St.getLastModificationTime())
      return It->second.Hash;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer =
      MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return std::nullopt;
  std::string H = hashBytes((*Buffer)->getBuffer());
  std::lock_guard<std::mutex> G(Lock);
  Memos[Path] = {St.getSize(), St.getLastModificationTime(), H};
  return H;
}

std::unique_ptr<ResultCache> ResultCache::open() {
  std::string Dir = cacheDirectory();
  if (Dir.empty())
    return nullptr;
  SmallString<256> Abs(Dir);
  sys::fs::make_absolute(Abs);
  if (std::error_code EC = sys::fs::create_directories(Abs)) {
    notice("cannot use the cache directory " + Abs + ": " + EC.message() +
           "; analyzing without the cache");
    return nullptr;
  }
  std::unique_ptr<ResultCache> C(new ResultCache(std::string(Abs)));
  C->ToolIdentity = toolIdentity();
  SmallString<256> Real;
  C->RealDir = sys::fs::real_path(Abs, Real) ? std::string(Abs) : std::string(Real);
  return C;
}

std::string ResultCache::key(const Job &J) {
  auto Provider = createOptionsProvider();
  if (!Provider) {
    consumeError(Provider.takeError());
    return "";
  }
  json K = {{"format", ResultFormat},
            {"version", TORCHTIDY_VERSION},
            {"llvm", LLVM_VERSION_STRING},
            {"tool", ToolIdentity},
            {"options", clang::tidy::configurationAsText((*Provider)->getOptions(J.File))},
            {"fix-notes", bool(FixNotes)},
            // Results made with the project index differ from those of each TU alone.
            {"project-index", !NoProjectIndex},
            {"file", J.File},
            {"header", J.Header},
            // Which headers report findings (HeaderScope in the worker).
            {"header-roots", J.HeaderRoots},
            {"exclude-header-filter", std::string(ExcludeHeaderFilter)}};
  // The driver consults these when it searches for headers.
  for (const char *Var : {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"})
    K["env"][Var] = sys::Process::GetEnv(Var).value_or("");
  for (const clang::tooling::CompileCommand &C : J.Commands)
    K["commands"].push_back(
        {{"directory", C.Directory}, {"file", C.Filename}, {"arguments", normalizedArguments(C.CommandLine)}});
  return hashBytes(toCbor(K));
}

std::string ResultCache::entryPath(StringRef Key) const {
  return (Dir + "/results/" + Key.take_front(2) + "/" + Key + ".cbor").str();
}

std::optional<JobResult> ResultCache::lookup(StringRef Key) {
  std::optional<JobResult> R = replay(Key);
  ++(R ? Hits : Misses);
  return R;
}

std::optional<JobResult> ResultCache::replay(StringRef Key) {
  if (Key.empty())
    return std::nullopt;
  std::string Path = entryPath(Key);
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path);
  if (!Buffer)
    return std::nullopt;
  json E = cborOrDiscarded((*Buffer)->getBuffer());
  try {
    if (E.is_discarded() || E.at("format") != ResultFormat || E.at("key") != Key)
      throw std::runtime_error("not an entry of this torchtidy");
    for (const json &In : E.at("inputs")) {
      std::optional<std::string> H = Hasher.hash(In.at(0).get<std::string>());
      if (!H || *H != In.at(1).get<std::string>())
        return std::nullopt;
    }
    if (!lookupsHold(E.at("lookups")))
      return std::nullopt;
    JobResult R = E.at("result").get<JobResult>();
    // The files the result was computed from, as an analysis would list them: no output
    // may replace one of them (main.cpp), whether the answer came from a worker or from here.
    for (const json &In : E.at("inputs"))
      R.Inputs.push_back(In.at(0).get<std::string>());
    markUsed(Path);
    return R;
  } catch (const std::exception &Ex) {
    notice("ignoring a corrupt cache entry " + Path + " (" + Ex.what() + ")");
    return std::nullopt;
  }
}

void ResultCache::store(StringRef Key, const JobResult &R, sys::TimePoint<> Started) {
  if (Key.empty() || !R.Analyzed)
    return;
  json Inputs = json::array();
  // Preambles live here and are keyed by their own inputs and lookups, which are listed as
  // well.
  auto InCache = [&](StringRef Path) {
    return Path.starts_with(Dir + "/") || Path.starts_with(RealDir + "/");
  };
  for (const std::string &In : R.Inputs) {
    if (InCache(In))
      continue;
    sys::fs::file_status St;
    if (sys::fs::status(In, St) || St.getLastModificationTime() >= Started)
      return;
    std::optional<std::string> H = Hasher.hash(In);
    if (!H)
      return;
    Inputs.push_back({In, *H});
  }
  json Lookups = json::array();
  for (const auto &[Path, Outcome] : R.Lookups)
    if (!InCache(Path))
      Lookups.push_back({Path, Outcome});
  JobResult Entry = R;
  Entry.Inputs.clear();
  Entry.Lookups.clear();
  Entry.Preamble.clear();
  json E = {{"format", ResultFormat}, {"key", Key}, {"inputs", Inputs}, {"lookups", Lookups},
            {"result", Entry}};
  if (Error Err = writeAtomically(entryPath(Key), toCbor(E)))
    notice("cannot store a cache entry: " + toString(std::move(Err)));
  else
    ++Stored;
}

void ResultCache::trim() {
  Expected<uint64_t> Max = parseCacheSize(CacheMaxSize);
  if (!Max) {
    consumeError(Max.takeError());
    return;
  }
  struct File {
    std::string Path;
    sys::TimePoint<> Used;
    uint64_t Size;
  };
  std::vector<File> Files;
  uint64_t Total = 0;
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator I(Dir, EC), End; I != End && !EC; I.increment(EC)) {
    sys::fs::file_status St;
    if (I->status().getError() || sys::fs::status(I->path(), St) || !sys::fs::is_regular_file(St))
      continue;
    Files.push_back({I->path(), St.getLastModificationTime(), St.getSize()});
    Total += St.getSize();
  }
  if (Total <= *Max)
    return;
  // Down to 90%, so that a full cache is not trimmed again on every run.
  llvm::sort(Files, [](const File &A, const File &B) { return A.Used < B.Used; });
  for (const File &F : Files) {
    if (Total <= *Max / 10 * 9)
      break;
    if (!sys::fs::remove(F.Path))
      Total -= F.Size;
  }
}

} // namespace torchtidy::driver
