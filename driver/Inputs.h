// Turns the command line (files, globs, --files-from, --diff-base, -p, `--` flags,
// --exclude, --shard) into the list of jobs to run.
#ifndef TORCHTIDY_DRIVER_INPUTS_H
#define TORCHTIDY_DRIVER_INPUTS_H

#include "Job.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torchtidy::driver {

/// A requested file that cannot be analyzed at all.
struct Problem {
  std::string Kind; // "missing-file", "no-match", "no-compile-command", "bad-compile-command",
                    // "bad-configuration"
  std::string File;
  std::string Message;
};

struct Plan {
  std::vector<Job> Jobs;
  std::vector<Problem> Problems;
  /// The compile options removed from the commands because they do not only affect
  /// parsing (CompileFlags.h), by spelling: said once per run.
  std::set<std::string> Dropped;
  /// A changed-files mode (--files-from, --diff-base) selected no C/C++ file.
  bool NothingChanged = false;
  /// The compilation database file read, if any, and the .clang-tidy files that configure
  /// the jobs: inputs no output may replace.
  std::string Database;
  std::vector<std::string> Configs;
  /// The other translation units of the compilation database (not selected, or in another
  /// shard): their cached summaries join the project index; they are never analyzed for it.
  std::vector<Job> IndexOnly;
};

/// \p FixedDB is the database built from flags after `--`, if any.
llvm::Expected<Plan> planJobs(std::unique_ptr<clang::tooling::CompilationDatabase> FixedDB);

/// The jobs for \p Requested (files or globs) as planJobs makes them, without the
/// changed-files modes.
llvm::Expected<Plan> planFiles(std::vector<std::string> Requested,
                               std::unique_ptr<clang::tooling::CompilationDatabase> FixedDB = nullptr);

/// `torchtidy verify-clang-tidy-inputs ARGS...`, run by the clang-tidy-torch wrapper before
/// stock clang-tidy sees ARGS: the response files that clang-tidy would read without bounds
/// (on its command line, and in the compilation database it would load: -p, or the first
/// compile_commands.json above the first source) must be regular files of a sane size, and so
/// must the database itself. An error names the file; anything else is clang-tidy's to judge.
llvm::Error verifyClangTidyInputs(llvm::ArrayRef<std::string> Args);

/// --shard's K and N (1 <= K <= N), or an error naming \p Text.
llvm::Expected<std::pair<unsigned, unsigned>> parseShard(llvm::StringRef Text);

/// \p Dropped (Plan::Dropped) as one line: the first few spellings, then how many more.
std::string droppedList(const std::set<std::string> &Dropped);

/// Runs \p Args (Args[0] is looked up in PATH) and returns its stdout, or nothing when it
/// cannot be run or fails.
std::optional<std::string> captureOutput(std::vector<std::string> Args);

/// The directory repository-relative paths are relative to: --source-root, else the git
/// top level of the current directory, else the current directory.
std::string sourceRoot();

} // namespace torchtidy::driver

#endif
