// Reading what users hand to torchtidy: reports (baselines, merge inputs) and compile
// databases. Every reader is strict and bounded and answers a hostile input with one
// plain error that names it; the libFuzzer target in test/fuzz drives these entry points.
#ifndef TORCHTIDY_DRIVER_REPORTREADER_H
#define TORCHTIDY_DRIVER_REPORTREADER_H

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace torchtidy::driver {

/// Deeper nesting is rejected before parsing: recursive consumers (nlohmann's dump, the
/// YAML parser behind clang's compile databases) would overflow the stack.
inline constexpr unsigned MaxJsonDepth = 64;

/// Parses \p Text from \p Origin; the error names the origin, the line and the column.
llvm::Expected<nlohmann::json> parseJson(llvm::StringRef Text, llvm::StringRef Origin);

/// Parses the CBOR \p Bytes (a cache entry, a preamble manifest, a worker's job or
/// result), nesting bounded by MaxJsonDepth while it is read: a hostile entry is an error,
/// never a stack overflow.
llvm::Expected<nlohmann::json> parseCbor(llvm::StringRef Bytes, llvm::StringRef Origin);

/// parseCbor for readers to which an unreadable entry is a missing one: a discarded value
/// (json::is_discarded) instead of an error.
nlohmann::json cborOrDiscarded(llvm::StringRef Bytes);

/// Serializes a report. Paths and messages are bytes, not necessarily UTF-8; the output
/// format needs UTF-8, so invalid bytes become U+FFFD instead of aborting the run.
std::string dumpReport(const nlohmann::json &J);

/// The key a finding is matched by against a baseline.
std::string baselineKey(llvm::StringRef Check, llvm::StringRef Uri, llvm::StringRef Fingerprint);

/// The baseline keys of the torchtidy SARIF or JSON report \p Text.
llvm::Expected<llvm::StringSet<>> readBaseline(llvm::StringRef Text, llvm::StringRef Origin);

/// Merges torchtidy reports (all SARIF or all JSON), given as (origin, text) pairs.
llvm::Expected<nlohmann::json>
mergeReports(const std::vector<std::pair<std::string, std::string>> &Inputs);

/// An entry of a compile database that was left out, and why.
struct SkippedEntry {
  unsigned Index = 0; // 0-based position in the array
  std::string File;   // its "file" as written, when it has one
  std::string Directory;
  std::string Why;
};

/// Loads a compile_commands.json from its text, as clang-tidy would, once it is known to
/// be well-formed JSON of bounded depth. An entry clang's reader would reject (not an
/// object, an unknown key, a value of the wrong type, no file or directory) is left out and
/// described in \p Skipped instead of refusing the whole database.
llvm::Expected<std::unique_ptr<clang::tooling::CompilationDatabase>>
readCompileDatabase(llvm::StringRef Text, llvm::StringRef Origin,
                    std::vector<SkippedEntry> *Skipped = nullptr);

} // namespace torchtidy::driver

#endif
