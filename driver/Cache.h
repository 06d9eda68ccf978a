// The on-disk cache shared by runs, worker processes and parallel CI jobs: results of
// unchanged translation units (and, see Preamble.h, precompiled preambles). Every write is
// a temporary file renamed into place, so concurrent writers never expose a partial entry.
#ifndef TORCHTIDY_DRIVER_CACHE_H
#define TORCHTIDY_DRIVER_CACHE_H

#include "Job.h"
#include "OutputFile.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace torchtidy::driver {

/// The cache directory named by --cache-dir, else $XDG_CACHE_HOME/torchtidy, else
/// ~/.cache/torchtidy; empty with --no-cache.
std::string cacheDirectory();

/// Parses a size ("500M", "2G", "1048576") given to \p Option (--cache-max-size).
llvm::Expected<uint64_t> parseCacheSize(llvm::StringRef Text,
                                        llvm::StringRef Option = "--cache-max-size");

/// Hex BLAKE3 of \p Data (128 bits: collisions are not a practical concern).
std::string hashBytes(llvm::StringRef Data);

/// \p J as CBOR: unlike JSON text it carries paths and source lines that are not UTF-8.
std::string toCbor(const nlohmann::json &J);

/// Writes \p Content to \p Path through a temporary file in the same directory.
llvm::Error writeAtomically(llvm::StringRef Path, llvm::StringRef Content);

/// Sets the modification time of \p Path to now: trim() removes the least recently used
/// entries first.
void markUsed(llvm::StringRef Path);

/// The absolute path under which an input file the compiler read is recorded and hashed:
/// \p Path made absolute against \p Base (the current directory when empty) and resolved by
/// the file system (symbolic links and `..`), so that it names the file the compiler read.
/// `..` is never removed by text alone: with /lib a link to /usr/lib (merged /usr), the
/// compiler's `/../lib/gcc/x86_64-linux-gnu/12/../../../../include` is /usr/include, not
/// /include. Falls back to the lexical form when the file does not exist.
std::string inputPath(llvm::StringRef Path, llvm::StringRef Base = "");

/// What looking up \p Path finds now: "f " or "d " and the real path of the file or
/// directory it names (symbolic links and `..` resolved), or "" when nothing is there.
/// The outcomes of every lookup a parse made, with the contents of the files it read, prove
/// that parsing again would read the same files: a header that now shadows another earlier
/// on the search path, a `__has_include` target that appeared, a retargeted link all change
/// an outcome.
std::string lookupOutcome(llvm::StringRef Path);

/// Whether every lookup of \p Lookups (pairs of an absolute path and its outcome) still
/// has its recorded outcome.
bool lookupsHold(const nlohmann::json &Lookups);

/// Records every path the compiler looks up through it, found or not, with the outcome
/// (lookupOutcome) at the time of the lookup.
class LookupRecorder : public llvm::vfs::ProxyFileSystem {
public:
  explicit LookupRecorder(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS)
      : ProxyFileSystem(FS), Regular(FS) {}
  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &Path) override;
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine &Path) override;
  /// Absolute path -> outcome.
  const std::map<std::string, std::string> &lookups() const { return Lookups; }

private:
  void record(const llvm::Twine &Path, bool Found);
  std::map<std::string, std::string> Lookups;
  /// What is opened: never a FIFO or a device, which would block or never end.
  RegularFilesOnly Regular;
};

/// Content hashes of files, memoized within one process; a memo is reused only while the
/// file's size and modification time are unchanged, so an edit during the run is seen.
class FileHasher {
public:
  /// Nothing when the file cannot be read.
  std::optional<std::string> hash(llvm::StringRef Path);

private:
  struct Memo {
    uint64_t Size;
    llvm::sys::TimePoint<> Modified;
    std::string Hash;
  };
  std::mutex Lock;
  llvm::StringMap<Memo> Memos;
};

/// Replays the JobResult of a translation unit whose tool, configuration, compile command
/// and every input file (main file, headers, PCHs: what the last analysis read) are
/// unchanged. Only complete analyses are stored: a TU that did not compile may compile once
/// a missing header appears, which no recorded input would reveal.
class ResultCache {
public:
  /// Null when the cache is disabled or its directory cannot be created (with a warning).
  static std::unique_ptr<ResultCache> open();

  /// Everything the result depends on except the contents of the input files.
  std::string key(const Job &J);
  std::optional<JobResult> lookup(llvm::StringRef Key);
  /// As lookup, without counting a hit or a miss (a TU outside the run, read for its summaries).
  std::optional<JobResult> peek(llvm::StringRef Key) { return replay(Key); }
  /// Stores \p R unless one of its inputs changed after \p Started (the analysis may
  /// have seen either version).
  void store(llvm::StringRef Key, const JobResult &R, llvm::sys::TimePoint<> Started);
  /// Removes the least recently used entries (results and preambles) until the cache
  /// fits --cache-max-size.
  void trim();

  /// Lookups answered, lookups that had to analyze, results stored.
  std::atomic<unsigned> Hits{0}, Misses{0}, Stored{0};

private:
  explicit ResultCache(std::string Dir) : Dir(std::move(Dir)) {}
  std::string entryPath(llvm::StringRef Key) const;
  std::optional<JobResult> replay(llvm::StringRef Key);
  std::string Dir;
  /// Dir with its symbolic links resolved, as the recorded inputs name it.
  std::string RealDir;
  std::string ToolIdentity;
  FileHasher Hasher;
};

} // namespace torchtidy::driver

#endif
