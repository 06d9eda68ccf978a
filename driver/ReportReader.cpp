#include "ReportReader.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// nlohmann's messages without their "[json.exception.type_error.302] " prefix.
StringRef plain(const json::exception &E) {
  StringRef What = E.what();
  if (What.startswith("[json.exception."))
    What = What.split("] ").second;
  return What;
}

bool tooDeep(StringRef Text) {
  unsigned Depth = 0;
  bool InString = false, Escaped = false;
  for (char C : Text) {
    if (InString) {
      if (Escaped)
        Escaped = false;
      else if (C == '\\')
        Escaped = true;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
    } else if (C == '[' || C == '{') {
      if (++Depth > MaxJsonDepth)
        return true;
    } else if ((C == ']' || C == '}') && Depth) {
      --Depth;
    }
  }
  return false;
}

std::string toolName(const json &Run) { return Run.at("tool").at("driver").at("name").get<std::string>(); }

/// Throws json::exception when \p Doc lacks what merging and baselines read.
void validateSarif(const json &Doc) {
  for (const json &Run : Doc.at("runs")) {
    toolName(Run);
    for (const json &Rule : Run.at("tool").at("driver").value("rules", json::array()))
      Rule.at("id").get<std::string>();
    for (const json &Res : Run.value("results", json::array()))
      Res.at("ruleId").get<std::string>();
    if (!Run.value("invocations", json::array()).is_array())
      throw json::type_error::create(302, "invocations must be an array", &Run);
  }
}

const char *const SummaryCounts[] = {"filesAnalyzed", "filesNotAnalyzed", "findings",
                                     "suppressedByBaseline"};

void validateJson(const json &Doc) {
  if (!Doc.at("findings").is_array() || !Doc.at("notifications").is_array())
    throw json::type_error::create(302, "findings and notifications must be arrays", &Doc);
  for (const char *Key : SummaryCounts)
    Doc.at("summary").at(Key).get<unsigned>();
  Doc.at("summary").at("exitCode").get<int>();
}

/// Appends \p Run's rules, results and invocations to \p Into (the first run seen).
/// A result whose rule is missing from its run gets a minimal rule, never a crash.
void appendRun(json &Into, json &Run, std::map<std::string, unsigned> &RuleIndex) {
  json &Rules = Into["tool"]["driver"]["rules"];
  auto IndexOf = [&](const std::string &Id, const json *Rule) {
    auto [It, New] = RuleIndex.try_emplace(Id, Rules.size());
    if (New)
      Rules.push_back(Rule ? *Rule : json{{"id", Id}});
    return It->second;
  };
  for (const json &Rule : Run["tool"]["driver"].value("rules", json::array()))
    IndexOf(Rule["id"].get<std::string>(), &Rule);
  json &Results = Into["results"];
  for (json &Res : Run.value("results", json::array())) {
    Res["ruleIndex"] = IndexOf(Res["ruleId"].get<std::string>(), nullptr);
    Results.push_back(std::move(Res));
  }
  json &Invocations = Into["invocations"];
  for (json &Inv : Run.value("invocations", json::array()))
    Invocations.push_back(std::move(Inv));
}

/// A header's finding comes from every shard with a TU that includes it: keeps the first of
/// the results that differ only in wording, notes and rule index.
void dropRepeatedFindings(json &Merged) {
  bool Sarif = Merged.contains("runs");
  if (Sarif && Merged["runs"].empty())
    return;
  json &Results = Sarif ? Merged["runs"][0]["results"] : Merged["findings"];
  std::set<std::string> Seen;
  json Kept = json::array();
  for (json &Res : Results) {
    json Key = Res;
    if (Key.is_object())
      for (const char *Wording : {"message", "notes", "relatedLocations", "ruleIndex"})
        Key.erase(Wording);
    if (Seen.insert(Key.dump(-1, ' ', false, json::error_handler_t::replace)).second)
      Kept.push_back(std::move(Res));
  }
  if (!Sarif)
    Merged["summary"]["findings"] = Kept.size();
  Results = std::move(Kept);
}

} // namespace

Expected<json> parseJson(StringRef Text, StringRef Origin) {
  if (tooDeep(Text))
    return fail(Origin + ": JSON nested deeper than " + Twine(MaxJsonDepth) + " levels");
  try {
    return json::parse(Text.begin(), Text.end());
  } catch (const json::exception &E) {
    return fail(Origin + ": invalid JSON: " + plain(E));
  }
}

std::string dumpReport(const json &J) {
  return J.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string baselineKey(StringRef Check, StringRef Uri, StringRef Fingerprint) {
  return (Check + "\n" + Uri + "\n" + Fingerprint).str();
}

Expected<StringSet<>> readBaseline(StringRef Text, StringRef Origin) {
  Expected<json> B = parseJson(Text, Origin);
  if (!B)
    return B.takeError();
  StringSet<> Known;
  try {
    if (B->is_object() && B->contains("runs")) {
      validateSarif(*B);
      for (const json &Run : B->at("runs")) {
        if (std::string Tool = toolName(Run); Tool != "torchtidy")
          return fail(Origin + ": a SARIF report of " + Tool + ", not of torchtidy");
        for (const json &Res : Run.value("results", json::array()))
          Known.insert(baselineKey(
              Res.at("ruleId").get<std::string>(),
              Res.at("locations").at(0).at("physicalLocation").at("artifactLocation").at("uri").get<std::string>(),
              Res.at("partialFingerprints").at("primaryLocationLineHash").get<std::string>()));
      }
    } else if (B->is_object() && B->contains("findings")) {
      validateJson(*B);
      for (const json &F : B->at("findings"))
        Known.insert(baselineKey(F.at("check").get<std::string>(), F.at("uri").get<std::string>(),
                                 F.at("fingerprint").get<std::string>()));
    } else {
      return fail(Origin + ": not a torchtidy JSON or SARIF report");
    }
  } catch (const json::exception &E) {
    return fail(Origin + ": malformed baseline: " + plain(E));
  }
  return Known;
}

Expected<json> mergeReports(const std::vector<std::pair<std::string, std::string>> &Inputs) {
  json Merged;
  std::string First;
  std::map<std::string, unsigned> RuleIndex;
  for (const auto &[Origin, Text] : Inputs) {
    Expected<json> Doc = parseJson(Text, Origin);
    if (!Doc)
      return Doc.takeError();
    bool Sarif = Doc->is_object() && Doc->contains("runs");
    bool Json = Doc->is_object() && Doc->contains("findings");
    if (!Sarif && !Json)
      return fail(Origin + ": not a torchtidy SARIF or JSON report");
    // Each input is validated on its own, so an error always names the input at fault.
    try {
      Sarif ? validateSarif(*Doc) : validateJson(*Doc);
    } catch (const json::exception &E) {
      return fail(Origin + ": malformed report: " + plain(E));
    }
    if (Merged.is_null()) {
      First = Origin;
      Merged = std::move(*Doc);
      if (!Sarif)
        continue;
      json Runs = std::move(Merged["runs"]);
      Merged["runs"] = json::array();
      Doc = json{{"runs", std::move(Runs)}};
    } else if (Merged.contains("runs") != Sarif) {
      return fail("cannot merge SARIF and JSON reports: " + Origin + " is " +
                  (Sarif ? "SARIF" : "JSON") + ", " + First + " is " + (Sarif ? "JSON" : "SARIF"));
    }
    if (!Sarif) {
      for (const char *Key : {"findings", "notifications"})
        for (json &X : (*Doc)[Key])
          Merged[Key].push_back(std::move(X));
      json &S = Merged["summary"];
      const json &Add = (*Doc)["summary"];
      for (const char *Key : SummaryCounts)
        S[Key] = S[Key].get<unsigned>() + Add[Key].get<unsigned>();
      S["exitCode"] = std::max(S["exitCode"].get<int>(), Add["exitCode"].get<int>());
      continue;
    }
    for (json &Run : (*Doc)["runs"]) {
      json &Runs = Merged["runs"];
      if (Runs.empty()) {
        json Into = Run;
        Into["tool"]["driver"]["rules"] = json::array();
        Into["results"] = json::array();
        Into["invocations"] = json::array();
        Runs.push_back(std::move(Into));
      } else if (toolName(Run) != toolName(Runs[0])) {
        return fail(Origin + ": produced by another tool (" + toolName(Run) + ", not " +
                    toolName(Runs[0]) + ")");
      }
      appendRun(Runs[0], Run, RuleIndex);
    }
  }
  if (Merged.is_object())
    dropRepeatedFindings(Merged);
  return Merged;
}

Expected<std::unique_ptr<clang::tooling::CompilationDatabase>>
readCompileDatabase(StringRef Text, StringRef Origin) {
  // clang's reader takes any bytes inside strings (paths need not be UTF-8), so only the
  // syntax and shape are checked here, on a copy whose non-ASCII bytes are neutral.
  std::string Ascii = Text.str();
  for (char &C : Ascii)
    if (static_cast<unsigned char>(C) >= 0x80)
      C = '_';
  Expected<json> Doc = parseJson(Ascii, (Origin + ": invalid compilation database").str());
  if (!Doc)
    return Doc.takeError();
  if (!Doc->is_array())
    return fail(Origin + ": not a compilation database (expected a JSON array of entries)");
  if (Doc->empty())
    return fail(Origin + ": the compilation database has no translation units");
  std::string Err;
  std::unique_ptr<clang::tooling::CompilationDatabase> DB =
      clang::tooling::JSONCompilationDatabase::loadFromBuffer(
          Text, Err, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!DB)
    return fail(Origin + ": invalid compilation database: " + StringRef(Err).split('\n').first);
  return DB;
}

} // namespace torchtidy::driver
