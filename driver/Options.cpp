#include "Options.h"
#include "OutputFile.h"

#include "TorchTidyModule.h"

#include "clang-tidy/GlobList.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace llvm;
using namespace clang::tidy;

namespace torchtidy::driver {

cl::OptionCategory Category("torchtidy options");

cl::list<std::string> Files(cl::Positional, cl::desc("<file or glob>..."), cl::cat(Category));
cl::opt<std::string> BuildPath("p", cl::desc("build directory containing compile_commands.json "
                                             "(default: searched upwards from the first file)"),
                               cl::value_desc("build-dir"), cl::cat(Category));
cl::opt<std::string> Checks("checks",
                            cl::desc("comma-separated check globs, as in clang-tidy "
                                     "(default: the default set, -*,torch-* without the opt-in performance "
                                     "checks, unless a .clang-tidy enables torch checks)"),
                            cl::cat(Category));
cl::opt<std::string> Config("config", cl::desc("clang-tidy configuration in YAML/JSON"),
                            cl::cat(Category));
cl::opt<std::string> ConfigFile("config-file", cl::desc("read the configuration from this file"),
                                cl::value_desc("path"), cl::cat(Category));
cl::opt<std::string> HeaderFilter(
    "header-filter",
    cl::desc("regex of the headers whose findings are reported, matched against their absolute "
             "normalized path ('' = none; default: the project's own headers)"),
    cl::cat(Category));
cl::opt<std::string> ExcludeHeaderFilter(
    "exclude-header-filter",
    cl::desc("regex of headers whose findings are never reported (vendored code), matched "
             "against their absolute normalized path"),
    cl::cat(Category));
cl::opt<bool> SystemHeaders("system-headers", cl::desc("report findings in system headers"),
                            cl::cat(Category));
cl::opt<std::string> WarningsAsErrors("warnings-as-errors",
                                      cl::desc("check globs whose warnings become errors"),
                                      cl::cat(Category));
cl::list<std::string> ExtraArgs("extra-arg", cl::desc("argument appended to every compile command"),
                                cl::cat(Category));
cl::list<std::string> ExtraArgsBefore("extra-arg-before",
                                      cl::desc("argument prepended to every compile command"),
                                      cl::cat(Category));
cl::opt<bool> Fix("fix", cl::desc("apply the suggested fixes"), cl::cat(Category));
cl::opt<bool> FixErrors("fix-errors", cl::desc("apply fixes even when a file has compiler errors"),
                        cl::cat(Category));
cl::opt<bool> FixNotes("fix-notes", cl::desc("also apply fixes attached to notes"),
                       cl::cat(Category));
cl::opt<std::string> FormatStyle("format-style", cl::desc("clang-format style used around fixes"),
                                 cl::init("none"), cl::cat(Category));
cl::opt<std::string> ExportFixes("export-fixes", cl::desc("write the fixes as clang-apply-replacements YAML"),
                                 cl::value_desc("file"), cl::cat(Category));
cl::opt<bool> ListChecks("list-checks", cl::desc("list the enabled checks and exit"),
                         cl::cat(Category));
cl::opt<bool> Quiet("quiet", cl::desc("print nothing on stderr but errors"), cl::cat(Category));
cl::opt<bool> UseColor("use-color", cl::desc("force colours in text output (default: on a terminal)"),
                       cl::cat(Category));

cl::opt<Format> OutputFormat("format", cl::desc("output format"),
                             cl::values(clEnumValN(Format::Text, "text", "clang-style diagnostics"),
                                        clEnumValN(Format::Json, "json", "torchtidy JSON (docs/output-formats.md)"),
                                        clEnumValN(Format::Sarif, "sarif", "SARIF 2.1.0")),
                             cl::init(Format::Text), cl::cat(Category));
cl::opt<std::string> Output("output", cl::desc("write the report to this file instead of stdout"),
                            cl::value_desc("file"), cl::cat(Category));
static cl::alias OutputShort("o", cl::desc("alias for --output"), cl::aliasopt(Output));
cl::opt<std::string> SarifOutput("sarif-output",
                                 cl::desc("also write the report as SARIF to this file (from the "
                                          "same analysis as the --format output)"),
                                 cl::value_desc("file"), cl::cat(Category));
cl::opt<unsigned> Jobs("j", cl::desc("translation units analyzed in parallel (default: cores)"),
                       cl::init(0), cl::Prefix, cl::cat(Category));
cl::opt<std::string> Shard("shard", cl::desc("analyze only shard K of N (1-based) of the translation units"),
                           cl::value_desc("K/N"), cl::cat(Category));
cl::opt<std::string> Baseline("baseline",
                              cl::desc("suppress findings already in this SARIF or JSON report"),
                              cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> FilesFrom("files-from", cl::desc("read the files to analyze from this list ('-': stdin)"),
                               cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> DiffBase("diff-base",
                              cl::desc("analyze the C/C++ files changed since this git revision"),
                              cl::value_desc("rev"), cl::cat(Category));
cl::list<std::string> Exclude("exclude", cl::desc("skip files matching this glob ('*' crosses '/')"),
                              cl::value_desc("glob"), cl::cat(Category));
cl::opt<std::string> SourceRoot("source-root",
                                cl::desc("root for repository-relative paths (default: git top level)"),
                                cl::value_desc("dir"), cl::cat(Category));
cl::opt<std::string> AutomationId("automation-id", cl::desc("SARIF automationDetails.id"),
                                  cl::init("torchtidy/"), cl::cat(Category));
cl::opt<unsigned> FindingsExitCode("findings-exit-code",
                                   cl::desc("exit status when findings are reported (default 1; "
                                            "0 mimics clang-tidy)"),
                                   cl::init(1), cl::cat(Category));
cl::opt<std::string> CacheDir("cache-dir",
                              cl::desc("cache of results and preambles (default: "
                                       "$XDG_CACHE_HOME/torchtidy or ~/.cache/torchtidy)"),
                              cl::value_desc("dir"), cl::cat(Category));
cl::opt<bool> NoProjectIndex("no-project-index",
                             cl::desc("analyze each translation unit alone: calls into other translation "
                                      "units are not followed (docs/project-index.md)"),
                             cl::cat(Category));
cl::opt<bool> NoCache("no-cache", cl::desc("neither read nor write the cache"), cl::cat(Category));
cl::opt<std::string> CacheMaxSize("cache-max-size",
                                  cl::desc("bound of the cache; least recently used entries go "
                                           "first (default 2G)"),
                                  cl::value_desc("size"), cl::init("2G"), cl::cat(Category));
cl::opt<bool> CacheStats("cache-stats",
                         cl::desc("print the cache's hits, misses and stores on stderr"),
                         cl::cat(Category));
cl::opt<std::string> WorkerMemoryLimit(
    "worker-memory-limit",
    cl::desc("memory (heap) one translation unit's analysis may use; a file that needs more "
             "fails with an error (default: half the physical memory; 0: no limit)"),
    cl::value_desc("size"), cl::cat(Category));
cl::opt<std::string> WorkerJob("worker", cl::desc("internal: analyze the job in this file"),
                               cl::Hidden, cl::cat(Category));

namespace {

/// Falls back to torchtidy's default checks when the effective configuration of a file
/// enables no torch check: a project's .clang-tidy written for upstream checks must not
/// silently turn torchtidy into a no-op.
class TorchDefaultsProvider : public ClangTidyOptionsProvider {
public:
  explicit TorchDefaultsProvider(std::unique_ptr<ClangTidyOptionsProvider> Inner)
      : Inner(std::move(Inner)) {}
  const ClangTidyGlobalOptions &getGlobalOptions() override { return Inner->getGlobalOptions(); }
  std::vector<OptionsSource> getRawOptions(StringRef FileName) override {
    std::vector<OptionsSource> Sources = Inner->getRawOptions(FileName);
    ClangTidyOptions Merged;
    for (const OptionsSource &S : Sources)
      Merged.mergeWith(S.first, 0);
    GlobList Enabled(Merged.Checks.value_or(""));
    for (const CheckInfo &C : registeredChecks())
      if (Enabled.contains(C.Id))
        return Sources;
    ClangTidyOptions Torch;
    Torch.Checks = defaultChecksGlob();
    Sources.emplace_back(std::move(Torch), "torchtidy default checks");
    return Sources;
  }

private:
  std::unique_ptr<ClangTidyOptionsProvider> Inner;
};

} // namespace

Expected<std::unique_ptr<ClangTidyOptionsProvider>> createOptionsProvider(bool KeepAllHeaders) {
  ClangTidyGlobalOptions GlobalOptions;
  ClangTidyOptions DefaultOptions;
  DefaultOptions.Checks = defaultChecksGlob();
  DefaultOptions.WarningsAsErrors = "";
  DefaultOptions.SystemHeaders = SystemHeaders;
  DefaultOptions.FormatStyle = FormatStyle;
  DefaultOptions.User = sys::Process::GetEnv("USER");

  ClangTidyOptions OverrideOptions;
  if (Checks.getNumOccurrences())
    OverrideOptions.Checks = Checks;
  if (WarningsAsErrors.getNumOccurrences())
    OverrideOptions.WarningsAsErrors = WarningsAsErrors;
  if (HeaderFilter.getNumOccurrences())
    OverrideOptions.HeaderFilterRegex = HeaderFilter;
  if (SystemHeaders.getNumOccurrences())
    OverrideOptions.SystemHeaders = SystemHeaders;
  if (FormatStyle.getNumOccurrences())
    OverrideOptions.FormatStyle = FormatStyle;
  if (UseColor.getNumOccurrences())
    OverrideOptions.UseColor = UseColor;
  if (KeepAllHeaders)
    OverrideOptions.HeaderFilterRegex = ".*";

  // A .clang-tidy that is a FIFO or a device is never opened (RegularFilesOnly).
  IntrusiveRefCntPtr<vfs::FileSystem> FS(new RegularFilesOnly(vfs::getRealFileSystem()));
  std::unique_ptr<ClangTidyOptionsProvider> Provider;
  auto FromText = [&](StringRef Text, StringRef Origin)
      -> Expected<std::unique_ptr<ClangTidyOptionsProvider>> {
    std::string Problem;
    ErrorOr<ClangTidyOptions> Parsed = parseConfigurationWithDiags(
        MemoryBufferRef(Text, Origin), [&](const SMDiagnostic &D) {
          if (Problem.empty())
            Problem = D.getMessage().str();
        });
    if (!Parsed)
      return createStringError(Parsed.getError(), "invalid configuration in %s: %s",
                               Origin.str().c_str(),
                               Problem.empty() ? Parsed.getError().message().c_str()
                                               : Problem.c_str());
    return std::make_unique<ConfigOptionsProvider>(GlobalOptions, DefaultOptions, *Parsed,
                                                   OverrideOptions, FS);
  };
  if (Config.getNumOccurrences() && ConfigFile.getNumOccurrences())
    return createStringError(inconvertibleErrorCode(),
                             "--config and --config-file are mutually exclusive");
  if (Config.getNumOccurrences()) {
    auto P = FromText(Config, "--config");
    if (!P)
      return P.takeError();
    Provider = std::move(*P);
  } else if (ConfigFile.getNumOccurrences()) {
    Expected<std::string> Text =
        readRegularFile(ConfigFile, "cannot read configuration file " + ConfigFile, MaxConfigBytes);
    if (!Text)
      return Text.takeError();
    auto P = FromText(*Text, ConfigFile);
    if (!P)
      return P.takeError();
    Provider = std::move(*P);
  } else {
    Provider = std::make_unique<FileOptionsProvider>(GlobalOptions, DefaultOptions,
                                                     OverrideOptions, FS);
  }
  if (OverrideOptions.Checks)
    return Provider;
  return std::make_unique<TorchDefaultsProvider>(std::move(Provider));
}

Expected<HeaderFilters> headerFiltersFor(StringRef File) {
  auto Provider = createOptionsProvider();
  if (!Provider)
    return Provider.takeError();
  std::optional<std::string> Include = (*Provider)->getOptions(File).HeaderFilterRegex;
  auto Compile = [](const std::string &Pattern, StringRef Origin) -> Expected<Regex> {
    Regex R(Pattern);
    std::string Err;
    if (!R.isValid(Err))
      return createStringError(inconvertibleErrorCode(), "invalid %s regex '%s': %s",
                               Origin.str().c_str(), Pattern.c_str(), Err.c_str());
    return R;
  };
  HeaderFilters Filters;
  // llvm::Regex rejects an empty pattern; clang-tidy reads HeaderFilterRegex '' as no header.
  Filters.NoHeaders = Include && Include->empty();
  if (Include && !Include->empty()) {
    Expected<Regex> R = Compile(*Include, HeaderFilter.getNumOccurrences()
                                              ? "--header-filter"
                                              : "HeaderFilterRegex (configuration of " + File.str() + ")");
    if (!R)
      return R.takeError();
    Filters.Include = std::move(*R);
  }
  if (!ExcludeHeaderFilter.empty()) {
    Expected<Regex> R = Compile(ExcludeHeaderFilter, "--exclude-header-filter");
    if (!R)
      return R.takeError();
    Filters.Exclude = std::move(*R);
  }
  return Filters;
}

} // namespace torchtidy::driver
