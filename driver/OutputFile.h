// Where a report (or exported fixes) goes. The path is checked before the analysis, so
// an unwritable -o fails at once instead of after an hour; a regular file is replaced
// atomically (a temporary file in the same directory, renamed when complete), so an
// interrupted or failed run leaves an existing report untouched; write errors (a full
// disk) are reported, never an LLVM I/O abort.
#ifndef TORCHTIDY_DRIVER_OUTPUTFILE_H
#define TORCHTIDY_DRIVER_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <memory>
#include <string>

namespace torchtidy::driver {

class OutputFile {
public:
  /// Prepares writing to \p Path; an empty path means stdout.
  static llvm::Expected<std::unique_ptr<OutputFile>> create(llvm::StringRef Path);
  ~OutputFile();

  /// The path to write to until commit(): the temporary file, or \p Path itself when it
  /// is not a regular file (/dev/stdout, a pipe, a device). Empty for stdout.
  llvm::StringRef writePath() const { return WritePath; }

  /// Writes \p Text to writePath() (or stdout).
  llvm::Error write(llvm::StringRef Text);

  /// Moves the written file into place.
  llvm::Error commit();

private:
  OutputFile() = default;
  std::string Path, WritePath;
  /// What commit() replaces: Path, or the file a symbolic link at Path names.
  std::string Target;
  bool Temporary = false;
};

/// Creates and opens a new file \p Dir/<Stem><random>, mode 0600 (0666 & ~umask for
/// \p Public). Unlike llvm::sys::fs::createUniqueFile, a '%' in \p Dir is kept: a Jenkins
/// workspace (.../job%2Fbranch) is a directory like any other.
std::error_code createUniqueFileIn(llvm::StringRef Dir, llvm::StringRef Stem, int &FD,
                                   llvm::SmallVectorImpl<char> &Path);

/// Creates a new directory <temp dir>/<Stem>-<random>, '%' in the temporary directory kept.
std::error_code createTemporaryDirectory(llvm::StringRef Stem, llvm::SmallVectorImpl<char> &Path);

/// A file named on the command line: its role in messages ("-o", "--baseline", "input")
/// and its path.
struct NamedFile {
  std::string Role, Path;
};

/// Refuses an output that is one of \p Inputs or another of \p Outputs, with an error naming
/// both: the same file by device and inode when it exists (symbolic and hard links
/// included), else the same absolute path once its directory is resolved. An output that
/// exists and is not a regular file (/dev/stdout, a pipe) is never refused.
llvm::Error refuseOverlap(llvm::ArrayRef<NamedFile> Outputs, llvm::ArrayRef<NamedFile> Inputs);

/// Refuses \p Out when its file is inside the directory \p Dir (\p Role in the message):
/// a report written there would replace a file the driver keeps, such as a cache entry.
llvm::Error refuseInside(const NamedFile &Out, llvm::StringRef Role, llvm::StringRef Dir);

/// Bounds on the files the driver reads (readRegularFile), far beyond any real one.
inline constexpr uint64_t MaxDatabaseBytes = uint64_t(1) << 30;
inline constexpr uint64_t MaxReportBytes = uint64_t(1) << 30;
inline constexpr uint64_t MaxListBytes = uint64_t(64) << 20;
inline constexpr uint64_t MaxConfigBytes = uint64_t(16) << 20;

/// The bytes of \p Path, which must be a regular file of at most \p MaxBytes, read without
/// blocking on open: a FIFO, a device (/dev/zero, /dev/stdin) or a file under /proc, /sys or
/// /dev is refused, never waited for nor read forever. Errors start with \p What (e.g.
/// "compile_commands.json: cannot read the compilation database").
/// With \p AllowPipe, a pipe or FIFO (a stream the user named) is read to its end instead,
/// bounded the same way.
llvm::Expected<std::string> readRegularFile(llvm::StringRef Path, const llvm::Twine &What,
                                            uint64_t MaxBytes, bool AllowPipe = false);

/// Whether \p Path is a file whose content is real: a regular file outside the kernel's
/// pseudo file systems (/proc, /sys report size 0 and generate their content; /dev).
bool isRealFile(llvm::StringRef Path);

/// The file system the driver and its workers read through: a path that is not a regular
/// file with real content (isRealFile: a FIFO, /dev/zero, /dev/stdin, /proc/...) cannot be
/// opened, so that `#include "fifo"` or a .clang-tidy FIFO fails with "not a regular file"
/// instead of blocking, and /dev/zero is never read as an empty header.
class RegularFilesOnly : public llvm::vfs::ProxyFileSystem {
public:
  explicit RegularFilesOnly(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS)
      : ProxyFileSystem(std::move(FS)) {}
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine &Path) override;
};

/// The error of a file that is not a regular file: its message is "not a regular file".
std::error_code notRegularFile();

/// Flushes llvm::outs() and turns a pending write error into an llvm::Error naming
/// \p Where (clearing it, so that LLVM does not abort at exit).
llvm::Error flushStdout(llvm::StringRef Where);

} // namespace torchtidy::driver

#endif
