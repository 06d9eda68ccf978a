#include "utils/TorchCheck.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace clang;
using namespace clang::ast_matchers;
using clang::tidy::ClangTidyCheck;

namespace torchtidy {
namespace {

/// The deepest call depth accepted: every level multiplies the functions a query visits.
constexpr unsigned MaxCallDepth = 8;

/// "true"/"1" or "false"/"0", in any case; nullopt for anything else.
std::optional<bool> parseBool(StringRef Value) {
  return llvm::StringSwitch<std::optional<bool>>(Value.lower())
      .Cases("true", "1", true)
      .Cases("false", "0", false)
      .Default(std::nullopt);
}

/// Options are looked up for the check first, then globally (`CheckOptions: {CallDepth: 5}`
/// sets every check's).
ModelOptions readModelOptions(const ClangTidyCheck::OptionsView &Options,
                              const std::function<void(StringRef, StringRef, StringRef)> &Invalid) {
  ModelOptions O;
  StringRef Depth = Options.getLocalOrGlobal("CallDepth", "");
  unsigned Value;
  if (!Depth.empty()) {
    if (Depth.trim().getAsInteger(10, Value) || Value > MaxCallDepth)
      Invalid("CallDepth", Depth, "a number from 0 to 8");
    else
      O.CallDepth = Value;
  }
  StringRef Templates = Options.getLocalOrGlobal("UninstantiatedTemplates", "");
  if (!Templates.empty()) {
    std::optional<bool> B = parseBool(Templates.trim());
    if (!B)
      Invalid("UninstantiatedTemplates", Templates, "true or false");
    else
      O.UninstantiatedTemplates = *B;
  }
  StringRef Names = Options.getLocalOrGlobal("TrainingCallNames", O.TrainingCallNames);
  std::string Error;
  if (!llvm::Regex(Names).isValid(Error))
    Invalid("TrainingCallNames", Names, "a regular expression");
  else
    O.TrainingCallNames = Names.str();
  O.ProjectIndexPath = Options.getLocalOrGlobal("ProjectIndex", "").str();
  return O;
}

/// Whether \p N lies in a template pattern, whose instantiations are matched themselves.
bool inTemplatePattern(const DynTypedNode &N, ASTContext &Ctx) {
  const DeclContext *DC = nullptr;
  if (const auto *D = N.get<Decl>())
    DC = isa<DeclContext>(D) ? cast<DeclContext>(D) : D->getDeclContext();
  else if (const auto *S = N.get<Stmt>())
    for (DynTypedNodeList P = Ctx.getParents(*S); !P.empty() && !DC; P = Ctx.getParents(P[0]))
      if (const auto *D = P[0].get<Decl>())
        DC = isa<DeclContext>(D) ? cast<DeclContext>(D) : D->getDeclContext();
  return DC && DC->isDependentContext();
}

/// Whether the `Checks` globs \p Globs may enable a check other than torch-* and
/// clang-diagnostic-* (bugprone-*, ...): a positive glob outside those after the last `-*`.
bool mayEnableOtherChecks(StringRef Globs) {
  SmallVector<StringRef, 8> Items;
  Globs.split(Items, ',', -1, /*KeepEmpty=*/false);
  bool May = false;
  for (StringRef G : Items) {
    G = G.trim();
    if (G.empty())
      continue;
    if (G.consume_front("-")) {
      if (G.trim() == "*")
        May = false;
      continue;
    }
    if (!G.starts_with("torch-") && !G.starts_with("clang-diagnostic-"))
      May = true;
  }
  return May;
}

} // namespace

TorchCheck::TorchCheck(StringRef Name, clang::tidy::ClangTidyContext *Context)
    : ClangTidyCheck(Name, Context),
      ModelOpts(readModelOptions(Options, [this, Prefix = (Name + ".").str()](StringRef Option, StringRef Value,
                                                                             StringRef Expected) {
        configurationDiag("invalid configuration value '%0' for option '%1%2'; expected %3")
            << Value << Prefix << Option << Expected;
      })),
      SystemHeaders(Context->getOptions().SystemHeaders.value_or(false)),
      OtherChecks(mayEnableOtherChecks(Context->getOptions().Checks.value_or(""))) {}

void TorchCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) {
  Options.store(Opts, "CallDepth", std::to_string(ModelOpts.CallDepth));
  storeBoolOption(Options, Opts, "UninstantiatedTemplates", ModelOpts.UninstantiatedTemplates);
}

void TorchCheck::registerPPCallbacks(const SourceManager &SM, Preprocessor *, Preprocessor *) {
  // clang-tidy writes --export-fixes after the analysis, over whatever file it names: naming the
  // file being analyzed would replace the source with YAML. Refused before anything is written.
  // clang-tidy's option and the driver's are both a cl::opt<std::string> named "export-fixes".
  const auto &Registered = llvm::cl::getRegisteredOptions();
  auto It = Registered.find("export-fixes");
  if (It == Registered.end())
    return;
  const std::string &Fixes = static_cast<llvm::cl::opt<std::string> *>(It->second)->getValue();
  OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID());
  if (Fixes.empty() || !Main || !llvm::sys::fs::equivalent(Main->getName(), Fixes))
    return;
  llvm::errs() << "torchtidy: error: --export-fixes=" << Fixes << " names the file being analyzed ("
               << Main->getName() << "); refusing to replace the source with fixes\n";
  std::_Exit(2);
}

// <torch/torch.h> brings hundreds of thousands of declarations, costlier to walk than the checks.
// The driver limits the traversal scope to user declarations, and under clang-tidy so does the
// first match, on the TranslationUnitDecl (what checks reach from user code is not limited). Next
// to clang-tidy's own checks (some read system headers) it stays whole: they report as if alone.
void TorchCheck::registerMatchers(MatchFinder *Finder) {
  if (!SystemHeaders && !OtherChecks)
    Finder->addMatcher(translationUnitDecl().bind("torchtidy-unit"), this);
}

void TorchCheck::noteLoop(const PerIteration &Hot, StringRef Every) {
  if (Hot.Via)
    diag(Hot.Via->getBeginLoc(), "called on every %0 here", DiagnosticIDs::Note) << Every;
  if (Hot.Loop)
    diag(Hot.Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  else if (Hot.Entry && Hot.Across)
    diag(Hot.Entry->getLocation(), "'%0' is called on every %1 by the loop at %2 (another translation unit)",
         DiagnosticIDs::Note)
        << Hot.Entry->getQualifiedNameAsString() << Every << Hot.Across->Loop;
}

void TorchCheck::run(const MatchFinder::MatchResult &Result) {
  if (const auto *Unit = Result.Nodes.getNodeAs<TranslationUnitDecl>("torchtidy-unit")) {
    ASTContext &Ctx = *Result.Context;
    std::vector<Decl *> Scope = Ctx.getTraversalScope();
    if (Scope.size() != 1 || Scope.front() != Unit)
      return; // limited already (by the driver, or by another check)
    const SourceManager &SM = Ctx.getSourceManager();
    std::vector<Decl *> User;
    for (Decl *D : Unit->decls())
      if (D->getLocation().isValid() && !SM.isInSystemHeader(SM.getExpansionLoc(D->getLocation())))
        User.push_back(D);
    Ctx.setTraversalScope(User);
    return;
  }
  if (!ModelOpts.UninstantiatedTemplates)
    for (const auto &[Id, Node] : Result.Nodes.getMap())
      if (inTemplatePattern(Node, *Result.Context))
        return;
  check(Result);
}

bool getBoolOption(const ClangTidyCheck::OptionsView &Options, StringRef Name, bool Default) {
  return parseBool(Options.get(Name, Default ? "true" : "false")).value_or(Default);
}

void storeBoolOption(const ClangTidyCheck::OptionsView &Options, clang::tidy::ClangTidyOptions::OptionMap &Opts,
                     StringRef Name, bool Value) {
  Options.store(Opts, Name, Value ? "true" : "false");
}

} // namespace torchtidy
