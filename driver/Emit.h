// The one emitter layer: every output format (text, JSON, SARIF), baselines and the
// merge subcommand work on the same RunReport.
#ifndef TORCHTIDY_DRIVER_EMIT_H
#define TORCHTIDY_DRIVER_EMIT_H

#include "Report.h"

#include "clang-tidy/ClangTidy.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace torchtidy::driver {

/// Something that kept a file from being analyzed.
struct Notification {
  std::string Kind; // "missing-file", "no-compile-command", "parse-error", "internal-error"
  std::string File;
  std::string Message;
  Span Where; // the first compiler error, when there is one
  /// The first compiler errors in the order they were emitted (parse-error).
  std::vector<driver::Message> Errors;
  /// The checks ran on the AST the compiler recovered, and their findings are reported.
  bool PartiallyAnalyzed = false;
};

struct RunReport {
  /// Every diagnostic in deterministic order (translation units in job order, each in
  /// clang-tidy's order), compiler errors included.
  std::vector<Finding> Findings;
  std::vector<Notification> Notifications;
  unsigned FilesAnalyzed = 0;
  unsigned Suppressed = 0;
  int ExitCode = 0;
  std::string Root;
  std::string AutomationId;
};

/// Sets every finding's repository-relative Uri and line-shift-robust Fingerprint.
void fingerprint(RunReport &R);

/// The baseline keys of the SARIF or JSON report at \p Path.
llvm::Expected<llvm::StringSet<>> loadBaseline(llvm::StringRef Path);

/// Drops the findings whose keys are in \p Known.
void applyBaseline(RunReport &R, const llvm::StringSet<> &Known);

unsigned countFindings(const RunReport &R);

/// The docs page of check \p Id on the project page.
std::string helpUri(llvm::StringRef Id);

/// clang-tidy's own text rendering (and fix application) of the report, to stdout or,
/// when \p StdoutPath is set, to that file ("/dev/null" to only apply fixes); errors
/// name \p ReportName.
llvm::Error emitText(const RunReport &R, clang::tidy::ClangTidyContext &Context,
                     clang::tidy::FixBehaviour Fix, llvm::StringRef StdoutPath = "",
                     llvm::StringRef ReportName = "stdout");

nlohmann::json toJson(const RunReport &R);
nlohmann::json toSarif(const RunReport &R);

/// `torchtidy merge a.sarif b.sarif ... [-o out]`.
int runMerge(int Argc, const char **Argv);

} // namespace torchtidy::driver

#endif
