// The diagnostics of one run, as workers hand them to the coordinator and as every
// output format consumes them.
#ifndef TORCHTIDY_DRIVER_REPORT_H
#define TORCHTIDY_DRIVER_REPORT_H

#include "clang-tidy/ClangTidyDiagnosticConsumer.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace torchtidy::driver {

/// A point or span in a file; lines and columns are 1-based, columns count bytes as
/// clang does. File is absolute and normalized.
struct Span {
  std::string File;
  unsigned Line = 0, Column = 0, EndLine = 0, EndColumn = 0;
};

struct Replacement {
  std::string FilePath; // as clang-tidy recorded it
  unsigned Offset = 0, Length = 0;
  std::string Text;
  Span Where;
};

struct Message {
  std::string Text;
  std::string FilePath; // as clang-tidy recorded it (may be relative to BuildDirectory)
  unsigned Offset = 0;
  struct Range {
    std::string FilePath;
    unsigned Offset = 0, Length = 0;
  };
  std::vector<Range> Ranges;
  std::vector<Replacement> Fix;
  Span Where;
  std::string LineText; // the source line of Where.Line, for fingerprints and snippets
  /// 0 when LineText is the whole line; else the (byte) column it starts at: of a line
  /// longer than MaxLineText, only that much around the finding is kept.
  unsigned LineTextColumn = 0;
};

/// The most of a source line a finding keeps (an 8 MB minified line is no snippet).
inline constexpr unsigned MaxLineText = 512;

struct Finding {
  std::string Check;
  std::string Level; // "warning", "error", "remark"
  Message Primary;
  std::vector<Message> Notes;
  std::string BuildDirectory;
  bool WarningAsError = false;
  std::vector<std::string> Aliases;
  /// Found on the AST the compiler recovered from a translation unit that does not compile:
  /// what the parser could not understand was not analyzed.
  bool PartialParse = false;
  // Filled by the coordinator.
  std::string Fingerprint;
  std::string Uri;
};

/// What a worker reports for one job (one translation unit).
struct JobResult {
  std::string File;   // the translation unit
  std::string Header; // non-empty when the job analyzes this header through File
  bool Analyzed = false;
  std::string Problem; // why the TU could not be analyzed
  /// The first compiler errors, in the order the compiler emitted them (never clang's
  /// "too many errors emitted"), when the TU does not compile.
  std::vector<Message> Errors;
  std::string DowngradedStd;   // the -std the compile command asked for, when replaced
  std::string DowngradeReason; // why it was replaced
  bool Cuda = false;           // a CUDA source, analyzed on the host side only
  std::vector<Finding> Findings;
  /// Every file the analysis read (absolute): what the result cache validates.
  std::vector<std::string> Inputs;
  /// Every path the analysis looked up, found or not, with what it found (lookupOutcome in
  /// Cache.h): what decided which files it read.
  std::vector<std::pair<std::string, std::string>> Lookups;
  /// "built" or "used" when the analysis loaded an automatic preamble (Preamble.h).
  std::string Preamble;
  /// The summaries of the functions this TU defines (ProjectIndex JSON), for the project index.
  std::string Summaries;
  /// The functions of other TUs the checks asked the project index about, with a hash of the
  /// answer (ProjectIndex::answerHash; 0: unknown): the result holds while these hold.
  std::map<std::string, uint64_t> Consulted;
};

bool isCompilerError(const Finding &F);

clang::tidy::ClangTidyError toClangTidyError(const Finding &F);

void to_json(nlohmann::json &J, const Message::Range &R);
void from_json(const nlohmann::json &J, Message::Range &R);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Span, File, Line, Column, EndLine, EndColumn)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Replacement, FilePath, Offset, Length, Text, Where)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Message, Text, FilePath, Offset, Ranges, Fix, Where,
                                                LineText, LineTextColumn)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Finding, Check, Level, Primary, Notes,
                                                BuildDirectory, WarningAsError, Aliases, PartialParse)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobResult, File, Header, Analyzed, Problem, Errors,
                                                DowngradedStd, DowngradeReason, Cuda, Findings, Inputs, Lookups,
                                                Preamble, Summaries, Consulted)

} // namespace torchtidy::driver

#endif
