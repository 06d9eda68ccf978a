#include "ReportReader.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>
#include <optional>
#include <set>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// nlohmann's messages without their "[json.exception.type_error.302] " prefix.
StringRef plain(const json::exception &E) {
  StringRef What = E.what();
  if (What.starts_with("[json.exception."))
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

/// Throws a json::exception saying \p What when \p Holds is false.
void require(bool Holds, const Twine &What) {
  if (!Holds)
    throw json::other_error::create(501, What.str(), static_cast<const json *>(nullptr));
}

bool isString(const json &J, const char *Key) { return J.contains(Key) && J[Key].is_string(); }

/// A count of the summary: a JSON integer from 0 to UINT_MAX (a number written as
/// 7777...771 parses as a double, whose conversion to unsigned would be undefined).
bool isCount(const json &J) {
  return J.is_number_unsigned() && J.get<uint64_t>() <= std::numeric_limits<unsigned>::max();
}

bool isIn(const json &J, std::initializer_list<StringRef> Values) {
  return J.is_string() && llvm::is_contained(Values, StringRef(J.get_ref<const std::string &>()));
}

/// Throws json::exception when \p Doc is not what the SARIF 2.1.0 schema allows in the parts
/// torchtidy writes (a merge must not pass an invalid document through), naming the part.
void validateSarif(const json &Doc) {
  require(!Doc.contains("version") || Doc["version"] == "2.1.0", "version must be \"2.1.0\"");
  require(Doc.at("runs").is_array(), "runs must be an array");
  for (size_t R = 0; R < Doc["runs"].size(); ++R) {
    const json &Run = Doc["runs"][R];
    std::string At = "runs[" + std::to_string(R) + "]";
    require(Run.is_object() && Run.contains("tool") && Run["tool"].is_object() &&
                Run["tool"].contains("driver") && Run["tool"]["driver"].is_object() &&
                isString(Run["tool"]["driver"], "name"),
            At + ": tool.driver.name must be a string");
    const json Rules = Run["tool"]["driver"].value("rules", json::array());
    require(Rules.is_array(), At + ": tool.driver.rules must be an array");
    for (size_t I = 0; I < Rules.size(); ++I)
      require(Rules[I].is_object() && isString(Rules[I], "id"),
              At + ".tool.driver.rules[" + Twine(I) + "]: id must be a string");
    const json Results = Run.value("results", json::array());
    require(Results.is_array(), At + ": results must be an array");
    for (size_t I = 0; I < Results.size(); ++I) {
      const json &Res = Results[I];
      std::string Where = At + ".results[" + std::to_string(I) + "]";
      require(Res.is_object() && isString(Res, "ruleId"), Where + ": ruleId must be a string");
      require(Res.contains("message") && Res["message"].is_object() &&
                  (isString(Res["message"], "text") || isString(Res["message"], "id")),
              Where + ": message must be an object with a text");
      require(!Res.contains("level") || isIn(Res["level"], {"none", "note", "warning", "error"}),
              Where + ": level must be none, note, warning or error");
      require(!Res.contains("kind") || isIn(Res["kind"], {"notApplicable", "pass", "fail", "review",
                                                          "open", "informational"}),
              Where + ": kind is not a SARIF result kind");
      require(!Res.contains("ruleIndex") ||
                  (Res["ruleIndex"].is_number_integer() && Res["ruleIndex"].get<int64_t>() >= -1),
              Where + ": ruleIndex must be an integer");
      for (const char *List : {"locations", "relatedLocations"}) {
        require(!Res.contains(List) || Res[List].is_array(),
                Where + ": " + List + " must be an array");
        for (const json &L : Res.value(List, json::array()))
          require(L.is_object() && (!L.contains("physicalLocation") || L["physicalLocation"].is_object()),
                  Where + ": " + List + " must hold location objects");
      }
      require(!Res.contains("partialFingerprints") ||
                  (Res["partialFingerprints"].is_object() &&
                   llvm::all_of(Res["partialFingerprints"], [](const json &F) { return F.is_string(); })),
              Where + ": partialFingerprints must map names to strings");
    }
    const json Invocations = Run.value("invocations", json::array());
    require(Invocations.is_array(), At + ": invocations must be an array");
    for (const json &Inv : Invocations)
      require(Inv.is_object() && Inv.contains("executionSuccessful") &&
                  Inv["executionSuccessful"].is_boolean(),
              At + ": an invocation must say executionSuccessful (a boolean)");
  }
}

const char *const SummaryCounts[] = {"filesAnalyzed", "filesNotAnalyzed", "findings",
                                     "suppressedByBaseline"};

void validateJson(const json &Doc) {
  if (!Doc.at("findings").is_array() || !Doc.at("notifications").is_array())
    throw json::type_error::create(302, "findings and notifications must be arrays", &Doc);
  const json &Summary = Doc.at("summary");
  for (const char *Key : SummaryCounts)
    require(isCount(Summary.at(Key)), Twine("summary.") + Key + " must be a count (an integer from 0)");
  if (Summary.contains("filesPartiallyAnalyzed"))
    require(isCount(Summary["filesPartiallyAnalyzed"]), "summary.filesPartiallyAnalyzed must be a count");
  const json &Exit = Summary.at("exitCode");
  require(Exit.is_number_integer() && Exit.get<int64_t>() >= 0 && Exit.get<int64_t>() <= 255,
          "summary.exitCode must be an integer from 0 to 255");
  for (size_t I = 0; I < Doc["findings"].size(); ++I) {
    const json &F = Doc["findings"][I];
    std::string Where = "findings[" + std::to_string(I) + "]";
    require(F.is_object(), Where + ": not an object");
    for (const char *Key : {"check", "level", "message", "uri", "fingerprint"})
      require(isString(F, Key), Where + ": " + Key + " must be a string");
    for (const char *Key : {"line", "column"})
      require(F.contains(Key) && F[Key].is_number_unsigned(),
              Where + ": " + Key + " must be a number");
  }
  for (size_t I = 0; I < Doc["notifications"].size(); ++I) {
    const json &N = Doc["notifications"][I];
    require(N.is_object() && isString(N, "kind") && isString(N, "file") && isString(N, "message"),
            "notifications[" + Twine(I) + "]: kind, file and message must be strings");
  }
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

namespace {

/// nlohmann's DOM builder, refusing to open an array or object deeper than MaxJsonDepth:
/// the binary reader recurses once per level, so the bound must hold while reading.
class BoundedDom : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  explicit BoundedDom(json &Into) : json_sax_dom_parser(Into, /*allow_exceptions=*/false) {}
  bool start_object(std::size_t N) { return enter() && json_sax_dom_parser::start_object(N); }
  bool end_object() { return leave() && json_sax_dom_parser::end_object(); }
  bool start_array(std::size_t N) { return enter() && json_sax_dom_parser::start_array(N); }
  bool end_array() { return leave() && json_sax_dom_parser::end_array(); }
  bool TooDeep = false;

private:
  bool enter() {
    TooDeep = ++Depth > MaxJsonDepth;
    return !TooDeep;
  }
  bool leave() { return Depth-- > 0; }
  unsigned Depth = 0;
};

} // namespace

Expected<json> parseCbor(StringRef Bytes, StringRef Origin) {
  json Result;
  BoundedDom Dom(Result);
  bool Parsed;
  try {
    Parsed = json::sax_parse(Bytes.begin(), Bytes.end(), &Dom, json::input_format_t::cbor,
                             /*strict=*/true);
  } catch (const json::exception &E) {
    return fail(Origin + ": invalid CBOR: " + plain(E));
  }
  if (Dom.TooDeep)
    return fail(Origin + ": CBOR nested deeper than " + Twine(MaxJsonDepth) + " levels");
  if (!Parsed || Dom.is_errored())
    return fail(Origin + ": invalid CBOR");
  return Result;
}

json cborOrDiscarded(StringRef Bytes) {
  Expected<json> J = parseCbor(Bytes, "");
  if (!J) {
    consumeError(J.takeError());
    return json(json::value_t::discarded);
  }
  return std::move(*J);
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
      // Newer reports only.
      if (S.contains("filesPartiallyAnalyzed") || Add.contains("filesPartiallyAnalyzed"))
        S["filesPartiallyAnalyzed"] = S.value("filesPartiallyAnalyzed", 0u) +
                                      Add.value("filesPartiallyAnalyzed", 0u);
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

namespace {

/// Why clang's reader would refuse the database for \p Entry, if it would.
std::optional<std::string> badEntry(const json &Entry) {
  if (!Entry.is_object())
    return "not an object";
  for (const auto &[Key, Value] : Entry.items()) {
    if (Key == "arguments") {
      if (!Value.is_array() || !llvm::all_of(Value, [](const json &A) { return A.is_string(); }))
        return "'arguments' must be an array of strings";
    } else if (Key == "directory" || Key == "file" || Key == "command" || Key == "output") {
      if (!Value.is_string())
        return "'" + Key + "' must be a string";
    } else {
      return "unknown key '" + Key + "'";
    }
  }
  if (!Entry.contains("directory") || !Entry.contains("file"))
    return "no 'directory' or no 'file'";
  if (!Entry.contains("command") && !Entry.contains("arguments"))
    return "neither 'command' nor 'arguments'";
  return std::nullopt;
}

/// The byte ranges of the elements of the top-level JSON array \p Text (valid JSON).
std::vector<std::pair<size_t, size_t>> elementRanges(StringRef Text) {
  std::vector<std::pair<size_t, size_t>> Ranges;
  size_t I = Text.find('[');
  if (I == StringRef::npos)
    return Ranges;
  unsigned Depth = 0;
  bool InString = false, Escaped = false;
  size_t Start = StringRef::npos;
  for (++I; I < Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (Escaped)
        Escaped = false;
      else if (C == '\\')
        Escaped = true;
      else if (C == '"')
        InString = false;
      continue;
    }
    if (Depth == 0 && (C == ',' || C == ']')) {
      if (Start != StringRef::npos)
        Ranges.emplace_back(Start, I);
      Start = StringRef::npos;
      if (C == ']')
        break;
      continue;
    }
    if (Start == StringRef::npos && !isSpace(C))
      Start = I;
    if (C == '"')
      InString = true;
    else if (C == '[' || C == '{')
      ++Depth;
    else if (C == ']' || C == '}')
      --Depth;
  }
  return Ranges;
}

} // namespace

Expected<std::unique_ptr<clang::tooling::CompilationDatabase>>
readCompileDatabase(StringRef Text, StringRef Origin, std::vector<SkippedEntry> *Skipped) {
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
  // One bad entry costs that entry: the others are kept, byte for byte (paths need not be
  // UTF-8), and the caller says which entry was left out and why.
  std::string Kept, FirstBad;
  std::vector<std::pair<size_t, size_t>> Ranges = elementRanges(Text);
  for (unsigned I = 0; I < Doc->size(); ++I) {
    const json &Entry = (*Doc)[I];
    std::optional<std::string> Why = badEntry(Entry);
    if (Why && FirstBad.empty())
      FirstBad = "entry " + std::to_string(I + 1) + ": " + *Why;
    if (!Why) {
      if (I < Ranges.size())
        Kept += (Kept.empty() ? "[" : ",") + Text.slice(Ranges[I].first, Ranges[I].second).str();
      continue;
    }
    if (Skipped) {
      SkippedEntry S{I, "", "", *Why};
      if (Entry.is_object() && Entry.contains("file") && Entry["file"].is_string())
        S.File = Entry["file"].get<std::string>();
      if (Entry.is_object() && Entry.contains("directory") && Entry["directory"].is_string())
        S.Directory = Entry["directory"].get<std::string>();
      Skipped->push_back(std::move(S));
    }
  }
  if (Ranges.size() != Doc->size())
    Kept.clear(); // cannot happen for valid JSON; clang's reader then says what is wrong
  else if (Kept.empty())
    return fail(Origin + ": the compilation database has no valid entry (" + FirstBad + ")");
  else
    Kept += "]";
  std::string Err;
  std::unique_ptr<clang::tooling::CompilationDatabase> DB =
      clang::tooling::JSONCompilationDatabase::loadFromBuffer(
          Kept.empty() ? Text : StringRef(Kept), Err,
          clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!DB)
    return fail(Origin + ": invalid compilation database: " + StringRef(Err).split('\n').first);
  return DB;
}

} // namespace torchtidy::driver
