// Where a report (or exported fixes) goes. The path is checked before the analysis, so
// an unwritable -o fails at once instead of after an hour; a regular file is replaced
// atomically (a temporary file in the same directory, renamed when complete), so an
// interrupted or failed run leaves an existing report untouched; write errors (a full
// disk) are reported, never an LLVM I/O abort.
#ifndef TORCHTIDY_DRIVER_OUTPUTFILE_H
#define TORCHTIDY_DRIVER_OUTPUTFILE_H

#include "llvm/Support/Error.h"

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
  bool Temporary = false;
};

/// Flushes llvm::outs() and turns a pending write error into an llvm::Error naming
/// \p Where (clearing it, so that LLVM does not abort at exit).
llvm::Error flushStdout(llvm::StringRef Where);

} // namespace torchtidy::driver

#endif
