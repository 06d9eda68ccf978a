// Command-line options of torchtidy, shared by the coordinator and its worker processes
// (a worker is the same binary re-run with the same options plus --worker=<job>).
#ifndef TORCHTIDY_DRIVER_OPTIONS_H
#define TORCHTIDY_DRIVER_OPTIONS_H

#include "clang-tidy/ClangTidyOptions.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>

namespace torchtidy::driver {

extern llvm::cl::OptionCategory Category;

extern llvm::cl::list<std::string> Files;
extern llvm::cl::opt<std::string> BuildPath;
extern llvm::cl::opt<std::string> Checks;
extern llvm::cl::opt<std::string> Config;
extern llvm::cl::opt<std::string> ConfigFile;
extern llvm::cl::opt<std::string> HeaderFilter;
extern llvm::cl::opt<std::string> ExcludeHeaderFilter;
extern llvm::cl::opt<bool> SystemHeaders;
extern llvm::cl::opt<std::string> WarningsAsErrors;
extern llvm::cl::list<std::string> ExtraArgs;
extern llvm::cl::list<std::string> ExtraArgsBefore;
extern llvm::cl::opt<bool> Fix;
extern llvm::cl::opt<bool> FixErrors;
extern llvm::cl::opt<bool> FixNotes;
extern llvm::cl::opt<std::string> FormatStyle;
extern llvm::cl::opt<std::string> ExportFixes;
extern llvm::cl::opt<std::string> SarifOutput;
extern llvm::cl::opt<bool> ListChecks;
extern llvm::cl::opt<bool> Quiet;
extern llvm::cl::opt<bool> UseColor;

enum class Format { Text, Json, Sarif };
extern llvm::cl::opt<Format> OutputFormat;
extern llvm::cl::opt<std::string> Output;
extern llvm::cl::opt<bool> NoProjectIndex;
extern llvm::cl::opt<unsigned> Jobs;
extern llvm::cl::opt<std::string> Shard;
extern llvm::cl::opt<std::string> Baseline;
extern llvm::cl::opt<std::string> FilesFrom;
extern llvm::cl::opt<std::string> DiffBase;
extern llvm::cl::list<std::string> Exclude;
extern llvm::cl::opt<std::string> SourceRoot;
extern llvm::cl::opt<std::string> AutomationId;
extern llvm::cl::opt<unsigned> FindingsExitCode;
extern llvm::cl::opt<std::string> CacheDir;
extern llvm::cl::opt<bool> NoCache;
extern llvm::cl::opt<std::string> CacheMaxSize;
extern llvm::cl::opt<bool> CacheStats;
extern llvm::cl::opt<std::string> WorkerMemoryLimit;
extern llvm::cl::opt<std::string> WorkerJob;

/// The checks that run when neither --checks nor a configuration enables a torch check.

/// Builds the clang-tidy options provider from the command line, exactly as clang-tidy
/// does (.clang-tidy files, --config, --config-file), with torchtidy's default checks.
/// The header filters in force for one file's translation unit, applied to absolute
/// normalized paths: --header-filter, else the HeaderFilterRegex of the file's configuration
/// (none: the project's own headers; '' = no header), and --exclude-header-filter.
struct HeaderFilters {
  std::optional<llvm::Regex> Include, Exclude;
  bool NoHeaders = false;
};
/// Fails on an invalid regex, naming where it comes from.
llvm::Expected<HeaderFilters> headerFiltersFor(llvm::StringRef File);

/// HeaderFilterRegex is left unset unless --header-filter or a configuration sets it;
/// \p KeepAllHeaders overrides it with ".*" so that clang-tidy keeps every non-system
/// header's diagnostics and the worker applies the header filter itself (HeaderScope).
llvm::Expected<std::unique_ptr<clang::tidy::ClangTidyOptionsProvider>>
createOptionsProvider(bool KeepAllHeaders = false);

} // namespace torchtidy::driver

#endif
