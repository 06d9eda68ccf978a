#include "Emit.h"

#include "Interrupt.h"
#include "OutputFile.h"
#include "ReportReader.h"
#include "TorchTidyModule.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <fcntl.h>
#include <map>
#include <optional>
#include <unistd.h>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

struct CheckDoc {
  const char *Id;
  const char *Markdown;
};
const CheckDoc CheckDocs[] = {
#include "CheckDocs.inc"
};

StringRef docFor(StringRef Id) {
  for (const CheckDoc &D : CheckDocs)
    if (Id == D.Id)
      return D.Markdown;
  return "";
}

std::string hex(uint64_t N, unsigned Digits) {
  std::string S;
  raw_string_ostream(S) << format_hex_no_prefix(N, Digits, /*Upper=*/true);
  return S;
}

std::string percentEncode(StringRef Path) {
  std::string Out;
  for (unsigned char C : Path) {
    if (isAlnum(C) || StringRef("-._~/").contains(C))
      Out += C;
    else
      Out += "%" + hex(C, 2);
  }
  return Out;
}

/// Root-relative when the file lies under the root, an absolute file URI otherwise.
std::string uriFor(StringRef File, StringRef Root) {
  StringRef Rel = File;
  if (Rel.consume_front(Root) && Rel.consume_front("/"))
    return percentEncode(Rel);
  return "file://" + percentEncode(File);
}

bool isRelativeUri(StringRef Uri) { return !Uri.starts_with("file://"); }

json artifactLocation(StringRef Uri) {
  json A = {{"uri", Uri}};
  if (isRelativeUri(Uri))
    A["uriBaseId"] = "SRCROOT";
  return A;
}

json region(const Span &S) {
  json R = {{"startLine", S.Line}, {"startColumn", S.Column}};
  R["endLine"] = std::max(S.EndLine, S.Line);
  R["endColumn"] = S.EndLine > S.Line ? S.EndColumn : std::max(S.EndColumn, S.Column);
  return R;
}

json physicalLocation(const Span &S, StringRef Root) {
  json P = {{"artifactLocation", artifactLocation(uriFor(S.File, Root))}};
  if (S.Line)
    P["region"] = region(S);
  return P;
}

std::vector<std::string> splitTags(StringRef Tags) {
  SmallVector<StringRef, 4> Parts;
  Tags.split(Parts, ',', -1, false);
  std::vector<std::string> Out;
  for (StringRef P : Parts)
    Out.push_back(P.trim().str());
  return Out;
}

std::string ruleName(StringRef ClassName) {
  StringRef N = ClassName;
  N.consume_back("Check");
  return N.str();
}

/// The first paragraph of a docs page that is not a heading.
std::string firstParagraph(StringRef Markdown) {
  SmallVector<StringRef, 16> Paragraphs;
  Markdown.split(Paragraphs, "\n\n", -1, false);
  for (StringRef P : Paragraphs) {
    P = P.trim();
    if (!P.empty() && !P.starts_with("#"))
      return P.str();
  }
  return "";
}

json sarifRule(const CheckInfo &C) {
  StringRef Doc = docFor(C.Id);
  std::string Full = firstParagraph(Doc);
  std::string Short = C.ShortDescription;
  std::string Help = Short + ". See " + helpUri(C.Id);
  return {{"id", C.Id},
          {"name", ruleName(C.ClassName)},
          {"shortDescription", {{"text", Short}}},
          {"fullDescription", {{"text", Full.empty() ? Short : Full}}},
          {"help", {{"text", Help}, {"markdown", Doc.empty() ? Help : Doc.str()}}},
          {"helpUri", helpUri(C.Id)},
          {"defaultConfiguration", {{"level", C.Level}, {"enabled", enabledByDefault(C)}}},
          {"properties",
           {{"tags", splitTags(C.Tags)},
            {"precision", C.Precision},
            {"problem.severity", C.Level == "note" ? "recommendation" : C.Level}}}};
}

const CheckInfo *findCheck(StringRef Id) {
  for (const CheckInfo &C : registeredChecks())
    if (Id == C.Id)
      return &C;
  return nullptr;
}

std::string sarifLevel(const Finding &F) {
  if (F.WarningAsError || F.Level == "error")
    return "error";
  if (const CheckInfo *C = findCheck(F.Check))
    return C->Level;
  return F.Level == "remark" ? "note" : "warning";
}

/// Replaces stdout by \p Path (or /dev/null) for the lifetime of the object: clang-tidy's
/// renderer writes to stdout only.
class StdoutRedirect {
public:
  explicit StdoutRedirect(StringRef Path) {
    outs().flush();
    fflush(stdout);
    int Fd = ::open(Path.str().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (Fd < 0)
      return;
    Saved = ::dup(1);
    ::dup2(Fd, 1);
    ::close(Fd);
  }
  ~StdoutRedirect() {
    outs().flush();
    fflush(stdout);
    if (Saved < 0)
      return;
    ::dup2(Saved, 1);
    ::close(Saved);
  }
  bool ok() const { return Saved >= 0; }

private:
  int Saved = -1;
};

} // namespace

void fingerprint(RunReport &R) {
  std::map<std::string, unsigned> Seen;
  for (Finding &F : R.Findings) {
    F.Uri = uriFor(F.Primary.Where.File, R.Root);
    std::string Normalized;
    for (char C : F.Primary.LineText)
      if (!isSpace(C))
        Normalized += C;
    std::string Key = F.Check + "\n" + F.Uri + "\n" + Normalized;
    unsigned Occurrence = ++Seen[Key];
    F.Fingerprint = hex(xxHash64(Key), 16) + ":" + std::to_string(Occurrence);
  }
}

std::string helpUri(StringRef Id) {
  StringRef Name = Id;
  Name.consume_front("torch-");
  return (Twine(TORCHTIDY_HOMEPAGE) + "/blob/main/docs/checks/" + Name + ".md").str();
}

unsigned countFindings(const RunReport &R) {
  return llvm::count_if(R.Findings, [](const Finding &F) { return !isCompilerError(F); });
}

Expected<StringSet<>> loadBaseline(StringRef Path) {
  Expected<std::string> Text = readRegularFile(Path, Path + ": cannot read baseline", MaxReportBytes);
  if (!Text)
    return Text.takeError();
  return readBaseline(*Text, Path);
}

void applyBaseline(RunReport &R, const StringSet<> &Known) {
  std::vector<Finding> Kept;
  for (Finding &F : R.Findings) {
    if (!isCompilerError(F) && Known.contains(baselineKey(F.Check, F.Uri, F.Fingerprint)))
      ++R.Suppressed;
    else
      Kept.push_back(std::move(F));
  }
  R.Findings = std::move(Kept);
}

/// Makes the fix-its of \p D edit the files that symbolic links name: clang-tidy writes a
/// new file in place of the one it fixes, which would turn a linked source into a copy.
static void fixThroughLinks(clang::tooling::DiagnosticMessage &D, StringRef BuildDir) {
  StringMap<clang::tooling::Replacements> Fixes;
  for (const auto &Entry : D.Fix) {
    StringRef Path = Entry.getKey();
    SmallString<256> Abs(Path), Real;
    if (!sys::path::is_absolute(Abs)) {
      Abs = BuildDir;
      sys::path::append(Abs, Path);
    }
    sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    std::string Target =
        !sys::fs::real_path(Abs, Real) && Real != Abs ? std::string(Real) : Path.str();
    for (const clang::tooling::Replacement &Rep : Entry.getValue())
      consumeError(Fixes[Target].add(clang::tooling::Replacement(
          Target, Rep.getOffset(), Rep.getLength(), Rep.getReplacementText())));
  }
  D.Fix = std::move(Fixes);
}

Error emitText(const RunReport &R, clang::tidy::ClangTidyContext &Context,
               clang::tidy::FixBehaviour Fix, StringRef StdoutPath, StringRef ReportName) {
  std::optional<StdoutRedirect> Redirect;
  if (!StdoutPath.empty()) {
    Redirect.emplace(StdoutPath);
    if (!Redirect->ok())
      return createStringError(inconvertibleErrorCode(), "%s: cannot write the report",
                               ReportName.str().c_str());
  }
  std::vector<clang::tidy::ClangTidyError> Errors;
  for (const Finding &F : R.Findings) {
    Errors.push_back(toClangTidyError(F));
    if (F.PartialParse) {
      clang::tooling::DiagnosticMessage Note;
      Note.Message = "found in a translation unit that does not compile: what the compiler could "
                     "not understand was not analyzed";
      Note.FilePath = F.Primary.FilePath;
      Note.FileOffset = F.Primary.Offset;
      Errors.back().Notes.push_back(std::move(Note));
    }
  }
  if (Fix != clang::tidy::FB_NoFix)
    for (clang::tidy::ClangTidyError &E : Errors) {
      fixThroughLinks(E.Message, E.BuildDirectory);
      for (clang::tooling::DiagnosticMessage &N : E.Notes)
        fixThroughLinks(N, E.BuildDirectory);
    }
  unsigned WarningsAsErrors = 0;
  clang::tidy::handleErrors(Errors, Context, Fix, WarningsAsErrors, vfs::getRealFileSystem());
  return flushStdout(ReportName);
}

/// Files that do not compile whose recovered AST the checks analyzed (a subset of the
/// files not analyzed, since what the parser lost was not).
static unsigned countPartiallyAnalyzed(const RunReport &R) {
  return llvm::count_if(R.Notifications, [](const Notification &N) { return N.PartiallyAnalyzed; });
}

json toJson(const RunReport &R) {
  json Findings = json::array();
  json Notifications = json::array();
  auto Point = [](json &J, const Span &S) {
    J["file"] = S.File;
    J["line"] = S.Line;
    J["column"] = S.Column;
  };
  // Notes of a finding, errors of a notification: each message at its place.
  auto Messages = [&](const std::vector<Message> &Ms) {
    json Out = json::array();
    for (const Message &M : Ms) {
      json MJ = {{"message", M.Text}};
      Point(MJ, M.Where);
      Out.push_back(std::move(MJ));
    }
    return Out;
  };
  for (const Notification &N : R.Notifications) {
    json J = {{"kind", N.Kind}, {"file", N.File}, {"message", N.Message}};
    if (N.Where.Line) {
      J["line"] = N.Where.Line;
      J["column"] = N.Where.Column;
    }
    if (!N.Errors.empty()) {
      J["errors"] = Messages(N.Errors);
      J["partiallyAnalyzed"] = N.PartiallyAnalyzed;
    }
    Notifications.push_back(std::move(J));
  }
  for (const Finding &F : R.Findings) {
    if (isCompilerError(F))
      continue;
    json J = {{"check", F.Check}, {"level", F.WarningAsError ? "error" : F.Level},
              {"message", F.Primary.Text}};
    if (F.PartialParse)
      J["partialParse"] = true;
    Point(J, F.Primary.Where);
    J["endLine"] = F.Primary.Where.EndLine;
    J["endColumn"] = F.Primary.Where.EndColumn;
    J["uri"] = F.Uri;
    J["fingerprint"] = F.Fingerprint;
    J["notes"] = Messages(F.Notes);
    json Fixes = json::array();
    for (const Replacement &Rep : F.Primary.Fix) {
      json FJ = {{"offset", Rep.Offset}, {"length", Rep.Length}, {"replacement", Rep.Text}};
      Point(FJ, Rep.Where);
      FJ["endLine"] = Rep.Where.EndLine;
      FJ["endColumn"] = Rep.Where.EndColumn;
      Fixes.push_back(std::move(FJ));
    }
    J["fixes"] = std::move(Fixes);
    Findings.push_back(std::move(J));
  }
  return {{"version", 1},
          {"tool", {{"name", "torchtidy"}, {"version", TORCHTIDY_VERSION}}},
          {"sourceRoot", R.Root},
          {"findings", std::move(Findings)},
          {"notifications", std::move(Notifications)},
          {"summary",
           {{"filesAnalyzed", R.FilesAnalyzed},
            {"filesNotAnalyzed", R.Notifications.size()},
            {"filesPartiallyAnalyzed", countPartiallyAnalyzed(R)},
            {"findings", countFindings(R)},
            {"suppressedByBaseline", R.Suppressed},
            {"exitCode", R.ExitCode}}}};
}

json toSarif(const RunReport &R) {
  json Rules = json::array();
  std::map<std::string, unsigned> RuleIndex;
  for (const CheckInfo &C : registeredChecks()) {
    RuleIndex[C.Id] = Rules.size();
    Rules.push_back(sarifRule(C));
  }
  json Results = json::array();
  for (const Finding &F : R.Findings) {
    if (isCompilerError(F))
      continue;
    if (!RuleIndex.count(F.Check)) {
      // Compiler warnings enabled through clang-diagnostic-* have no registry entry.
      RuleIndex[F.Check] = Rules.size();
      Rules.push_back({{"id", F.Check},
                       {"name", F.Check},
                       {"shortDescription", {{"text", "clang compiler diagnostic " + F.Check}}},
                       {"defaultConfiguration", {{"level", "warning"}}}});
    }
    json Res = {{"ruleId", F.Check},
                {"ruleIndex", RuleIndex[F.Check]},
                {"level", sarifLevel(F)},
                {"message", {{"text", F.Primary.Text}}},
                {"partialFingerprints", {{"primaryLocationLineHash", F.Fingerprint}}}};
    if (F.PartialParse)
      Res["properties"] = {{"partialParse", true}};
    json Loc = {{"physicalLocation", physicalLocation(F.Primary.Where, R.Root)}};
    if (F.Primary.Where.Line && F.Primary.Where.EndLine <= F.Primary.Where.Line &&
        !F.Primary.LineText.empty())
      Loc["physicalLocation"]["contextRegion"] = {{"startLine", F.Primary.Where.Line},
                                                  {"endLine", F.Primary.Where.Line},
                                                  {"snippet", {{"text", F.Primary.LineText}}}};
    if (unsigned From = F.Primary.LineTextColumn) {
      // Only the part of a long line around the finding: the region says which.
      Loc["physicalLocation"]["contextRegion"]["startColumn"] = From;
      Loc["physicalLocation"]["contextRegion"]["endColumn"] = From + F.Primary.LineText.size();
    }
    Res["locations"] = json::array({Loc});
    json Related = json::array();
    for (const Message &N : F.Notes) {
      if (N.Where.File.empty())
        continue;
      Related.push_back({{"id", Related.size()},
                         {"message", {{"text", N.Text}}},
                         {"physicalLocation", physicalLocation(N.Where, R.Root)}});
    }
    if (!Related.empty())
      Res["relatedLocations"] = std::move(Related);
    if (!F.Primary.Fix.empty()) {
      std::map<std::string, json> ByFile;
      for (const Replacement &Rep : F.Primary.Fix)
        ByFile[Rep.Where.File].push_back(
            {{"deletedRegion", region(Rep.Where)}, {"insertedContent", {{"text", Rep.Text}}}});
      json Changes = json::array();
      for (auto &[File, Replacements] : ByFile)
        Changes.push_back({{"artifactLocation", artifactLocation(uriFor(File, R.Root))},
                           {"replacements", Replacements}});
      Res["fixes"] = json::array(
          {{{"description", {{"text", "apply the suggested fix"}}}, {"artifactChanges", Changes}}});
    }
    Results.push_back(std::move(Res));
  }

  json Notifications = json::array();
  for (const Notification &N : R.Notifications) {
    json Note = {{"level", "error"},
                 {"message", {{"text", N.File + ": " + N.Message}}},
                 {"descriptor", {{"id", N.Kind}}}};
    Span Where = N.Where;
    if (Where.File.empty())
      Where.File = N.File;
    Note["locations"] = json::array({{{"physicalLocation", physicalLocation(Where, R.Root)}}});
    if (!N.Errors.empty()) {
      json Errors = json::array();
      for (const Message &E : N.Errors) {
        json EJ = {{"message", E.Text}};
        if (!E.Where.File.empty())
          EJ["location"] = physicalLocation(E.Where, R.Root);
        Errors.push_back(std::move(EJ));
      }
      Note["properties"] = {{"errors", std::move(Errors)},
                            {"partiallyAnalyzed", N.PartiallyAnalyzed}};
    }
    Notifications.push_back(std::move(Note));
  }
  json Invocation = {{"executionSuccessful", R.Notifications.empty()}, {"exitCode", R.ExitCode}};
  if (!Notifications.empty())
    Invocation["toolExecutionNotifications"] = std::move(Notifications);

  json Run = {
      {"tool",
       {{"driver",
         {{"name", "torchtidy"},
          {"version", TORCHTIDY_VERSION},
          {"semanticVersion", TORCHTIDY_VERSION},
          {"informationUri", TORCHTIDY_HOMEPAGE},
          {"rules", std::move(Rules)}}}}},
      {"automationDetails", {{"id", R.AutomationId}}},
      {"originalUriBaseIds", {{"SRCROOT", {{"uri", "file://" + percentEncode(R.Root) + "/"}}}}},
      {"invocations", json::array({std::move(Invocation)})},
      {"results", std::move(Results)}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(Run)})}};
}

int runMerge(int Argc, const char **Argv) {
  std::vector<std::string> Inputs;
  std::string OutPath;
  for (int I = 1; I < Argc; ++I) {
    StringRef A = Argv[I];
    if ((A == "-o" || A == "--output") && I + 1 < Argc)
      OutPath = Argv[++I];
    else if (A.consume_front("--output=") || A.consume_front("-o="))
      OutPath = A.str();
    else if (A.starts_with("-")) {
      errs() << "torchtidy merge: error: unknown option '" << A
             << "' (usage: torchtidy merge a.sarif b.sarif... [-o out.sarif])\n";
      return 2;
    } else
      Inputs.push_back(A.str());
  }
  if (Inputs.empty()) {
    errs() << "torchtidy merge: error: no input reports (usage: torchtidy merge a.sarif "
              "b.sarif... [-o out.sarif])\n";
    return 2;
  }
  std::vector<NamedFile> Named;
  for (const std::string &In : Inputs)
    Named.push_back({"an input", In});
  if (Error E = refuseOverlap({{"-o", OutPath}}, Named)) {
    errs() << "torchtidy merge: error: " << toString(std::move(E)) << "\n";
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> Texts;
  for (const std::string &In : Inputs) {
    Expected<std::string> Text = readRegularFile(In, In, MaxReportBytes);
    if (!Text) {
      errs() << "torchtidy merge: error: " << toString(Text.takeError()) << "\n";
      return 2;
    }
    Texts.emplace_back(In, std::move(*Text));
  }
  handleInterrupts(0);
  Expected<std::unique_ptr<OutputFile>> Out = OutputFile::create(OutPath);
  Expected<json> Merged = Out ? mergeReports(Texts) : Out.takeError();
  Error Written = Merged ? (*Out)->write(dumpReport(*Merged)) : Merged.takeError();
  if (!Written)
    Written = (*Out)->commit();
  if (Written) {
    errs() << "torchtidy merge: error: " << toString(std::move(Written)) << "\n";
    return 2;
  }
  return 0;
}

} // namespace torchtidy::driver
