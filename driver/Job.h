// One unit of work: a translation unit (optionally standing in for a header named on the
// command line) with its resolved compile commands.
#ifndef TORCHTIDY_DRIVER_JOB_H
#define TORCHTIDY_DRIVER_JOB_H

#include "Report.h"

#include "clang/Tooling/CompilationDatabase.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace torchtidy::driver {

struct Job {
  std::string File;
  std::string Header;
  std::vector<clang::tooling::CompileCommand> Commands;
  /// Directories whose headers are the project's own: their findings are reported unless a
  /// header filter says otherwise. The same for every job of a run, whatever its shard.
  std::vector<std::string> HeaderRoots;
  /// A file holding the text to analyze instead of the contents on disk of Header, or of
  /// File without one (an editor's unsaved buffer).
  std::string Overlay;
  /// The project index (ProjectIndex JSON) the checks answer calls into other TUs from;
  /// empty: an empty index (the first pass over a project, which builds it).
  std::string IndexFile;
  /// A file the coordinator writes once the TUs this one calls into have finished; it names
  /// the index file (empty: none) the checks then answer from. The worker parses first and
  /// waits for it before the checks run. Empty: IndexFile from the start.
  std::string AwaitFile;
};

void to_json(nlohmann::json &J, const Job &Jb);
void from_json(const nlohmann::json &J, Job &Jb);

/// Runs one job in this process (the worker side) and writes its JobResult as JSON to
/// \p OutPath. Returns 0 when the result was written.
int runWorker(const Job &J, llvm::StringRef OutPath);

} // namespace torchtidy::driver

#endif
