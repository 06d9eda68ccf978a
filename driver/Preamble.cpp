#include "Preamble.h"
#include "Cache.h"
#include "ReportReader.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>

using namespace clang;
using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

/// Bumped whenever the manifest layout or the meaning of a key changes.
constexpr const char *PreambleFormat = "torchtidy-preamble/2";

// CompilerInvocation::getLangOpts() gives a pointer in LLVM 16, a reference in LLVM 19.
LangOptions &langOpts(CompilerInvocation &Invocation) {
#if LLVM_VERSION_MAJOR >= 18
  return Invocation.getLangOpts();
#else
  return *Invocation.getLangOpts();
#endif
}

// PPCallbacks::InclusionDirective takes `bool ModuleImported` after the module in LLVM 19.
#if LLVM_VERSION_MAJOR >= 19
#define TORCHTIDY_MODULE_IMPORTED , bool
#else
#define TORCHTIDY_MODULE_IMPORTED
#endif

bool isLibTorchInclude(StringRef Spelled) {
  return Spelled.starts_with("torch/") || Spelled.starts_with("ATen/");
}

/// What a translation unit does before its first LibTorch include, in a plain parse.
struct Region {
  /// The TU reaches a LibTorch header found in a system directory.
  bool Found = false;
  /// Nothing before that include rules the preamble out.
  bool Sound = true;
  /// The include as written (`torch/torch.h`) and the file it names (inputPath).
  std::string Anchor, AnchorFile;
  /// Macros that project files define or test before it: the LibTorch headers must not
  /// name them, or the preamble (built without them) could differ from the plain parse.
  std::set<std::string> Names;
  /// System headers read before it. Each must be in the preamble: an include-once header
  /// is then skipped by the main parse, as the plain parse skips LibTorch's own include of
  /// it; one made to be read repeatedly (<stddef.h>, <assert.h>) is read again in both, in
  /// the same macro state (no macro the LibTorch headers name differs before them).
  std::vector<std::string> SystemFiles;
};

/// Watches the plain parse up to the first LibTorch include. Project files there may hold
/// only comments, include guards, `#pragma once` and includes: anything else would be read
/// after the preamble in the main parse (and see LibTorch's declarations and macros).
class RegionScan : public PPCallbacks {
public:
  RegionScan(Preprocessor &PP, Region &R) : SM(PP.getSourceManager()), R(R) {}

  void InclusionDirective(SourceLocation HashLoc, const Token &, StringRef FileName,
                          bool IsAngled, CharSourceRange, OptionalFileEntryRef File, StringRef,
                          StringRef, const Module * TORCHTIDY_MODULE_IMPORTED,
                          SrcMgr::CharacteristicKind Kind) override {
    if (R.Found || !File || !isLibTorchInclude(FileName) || !SrcMgr::isSystem(Kind))
      return;
    R.Found = true;
    R.Anchor = FileName.str();
    R.AnchorFile = inputPath(File->getName(), workingDir());
    // Every file that includes it is read partly before the preamble, partly after.
    for (SourceLocation L = HashLoc; L.isValid(); L = SM.getIncludeLoc(SM.getFileID(L)))
      if (SM.isInSystemHeader(L))
        R.Sound = false;
  }

  void FileChanged(SourceLocation Loc, FileChangeReason Reason, SrcMgr::CharacteristicKind Kind,
                   FileID) override {
    if (Reason != EnterFile || R.Found)
      return;
    if (SrcMgr::isSystem(Kind))
#if LLVM_VERSION_MAJOR >= 19
      if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(SM.getFileID(Loc)))
#else
      if (const FileEntry *FE = SM.getFileEntryForID(SM.getFileID(Loc)))
#endif
        R.SystemFiles.push_back(inputPath(FE->getName(), workingDir()));
  }

  void MacroDefined(const Token &Name, const MacroDirective *) override {
    named(Name.getLocation(), Name);
  }
  void MacroUndefined(const Token &Name, const MacroDefinition &, const MacroDirective *) override {
    unsound(Name.getLocation());
  }
  void Ifdef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override {
    named(Loc, Name);
  }
  void Ifndef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override {
    named(Loc, Name);
  }
  void Defined(const Token &Name, const MacroDefinition &, SourceRange) override {
    named(Name.getLocation(), Name);
  }
  void Elifdef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override {
    named(Loc, Name);
  }
  void Elifndef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override {
    named(Loc, Name);
  }
  // An #if may name a macro the LibTorch headers define, which is undefined before them.
  void If(SourceLocation Loc, SourceRange, ConditionValueKind) override { unsound(Loc); }
  void Elif(SourceLocation Loc, SourceRange, ConditionValueKind, SourceLocation) override {
    unsound(Loc);
  }
  void MacroExpands(const Token &Name, const MacroDefinition &, SourceRange,
                    const MacroArgs *) override {
    unsound(Name.getLocation());
  }
  void PragmaDirective(SourceLocation Loc, PragmaIntroducerKind) override {
    if (!inProjectFile(Loc))
      return;
    // `#pragma once` only: others (pack, push_macro, diagnostics) carry state across.
    StringRef Rest = StringRef(SM.getCharacterData(Loc)).split('\n').first;
    Rest = Rest.ltrim(" \t#").drop_front(StringRef("pragma").size()).ltrim(" \t");
    if (!Rest.starts_with("once"))
      R.Sound = false;
  }

  /// A token of the program itself before the LibTorch include.
  void token(const Token &Tok) { unsound(Tok.getLocation()); }

private:
  bool inSystemFile(SourceLocation Loc) const {
    return SM.isInSystemHeader(SM.getExpansionLoc(Loc));
  }
  /// In the main file or a project header (not the predefines and command-line macros: the
  /// preamble is built with them).
  bool inProjectFile(SourceLocation Loc) const {
    Loc = SM.getExpansionLoc(Loc);
    return !R.Found && Loc.isValid() && SM.getFileEntryForID(SM.getFileID(Loc)) &&
           !SM.isInSystemHeader(Loc);
  }
  void unsound(SourceLocation Loc) {
    if (inProjectFile(Loc))
      R.Sound = false;
  }
  void named(SourceLocation Loc, const Token &Name) {
    if (inProjectFile(Loc) && Name.getIdentifierInfo())
      R.Names.insert(Name.getIdentifierInfo()->getName().str());
  }
  std::string workingDir() const {
    ErrorOr<std::string> WD =
        SM.getFileManager().getVirtualFileSystem().getCurrentWorkingDirectory();
    return WD ? *WD : "";
  }

  SourceManager &SM;
  Region &R;
};

/// Preprocesses the main file up to its first LibTorch include (and on to the first token
/// after it, a few headers into LibTorch, which the callbacks no longer count).
class ScanAction : public PreprocessorFrontendAction {
public:
  Region R;

protected:
  void ExecuteAction() override {
    Preprocessor &PP = getCompilerInstance().getPreprocessor();
    auto Scan = std::make_unique<RegionScan>(PP, R);
    RegionScan &S = *Scan;
    PP.addPPCallbacks(std::move(Scan));
    PP.EnterMainSourceFile();
    Token Tok;
    for (PP.Lex(Tok); Tok.isNot(tok::eof) && !R.Found; PP.Lex(Tok))
      S.token(Tok);
  }
};

/// The configuration the preamble is built with: the TU's, less what cannot change how the
/// LibTorch headers parse (inputs, outputs, diagnostics, code generation), less the
/// project's own -I and -iquote directories (returned in \p UserDirs, made absolute): with
/// them the preamble would differ from project to project. That they shadow none of the
/// headers the preamble includes is checked on every use.
std::shared_ptr<CompilerInvocation> preambleConfig(const CompilerInvocation &Invocation,
                                                   StringRef WorkingDir,
                                                   std::vector<std::string> &UserDirs) {
  auto Config = std::make_shared<CompilerInvocation>(Invocation);
  // What to do with the file (-fsyntax-only, -c) is set for the build. LLVM 16's
  // FrontendOptions() leaves four flags uninitialized, three of which getCC1CommandLine
  // writes out (-print-supported-cpus, -ast-dump-decl-types, -fsystem-module): the key then
  // followed whatever the memory held, and changed from run to run under ASan.
  FrontendOptions &FO = Config->getFrontendOpts();
  FO = FrontendOptions();
  FO.PrintSupportedCPUs = FO.ASTDumpAll = FO.ASTDumpDeclTypes = FO.IsSystemModule = false;
  Config->getDependencyOutputOpts() = DependencyOutputOptions();
  DiagnosticOptions &Diag = Config->getDiagnosticOpts();
  const DiagnosticOptions Fresh;
#define DIAGOPT(Name, Bits, Default) Diag.Name = Fresh.Name;
#define ENUM_DIAGOPT(Name, Type, Bits, Default) Diag.set##Name(Fresh.get##Name());
#include "clang/Basic/DiagnosticOptions.def"
  Diag.Warnings.clear();
  Diag.Remarks.clear();
  Diag.DiagnosticLogFile.clear();
  Diag.DiagnosticSerializationFile.clear();
  Config->getCodeGenOpts() = CodeGenOptions();
  HeaderSearchOptions &HSO = Config->getHeaderSearchOpts();
  auto Absolute = [&](std::string &Path) {
    SmallString<256> P(Path);
    if (!P.empty() && !sys::path::is_absolute(P)) {
      P = WorkingDir;
      sys::path::append(P, Path);
      sys::path::remove_dots(P);
    }
    Path = std::string(P);
  };
  // The directories the preamble is built with, as the files they name: a compiler named
  // without a directory in a compile database ("clang++") finds GCC's headers through
  // "/../lib/gcc/...", the same files as "/usr/lib/gcc/..." found by another project or by
  // flags after '--'; spelled as given, each spelling had a preamble of its own. A
  // directory that does not exist (yet) is named through its nearest existing parent.
  auto Canonical = [&](std::string &Path) {
    Absolute(Path);
    if (Path.empty())
      return;
    SmallString<256> Head(Path), Real;
    std::vector<std::string> Tail;
    while (sys::fs::real_path(Head, Real)) {
      if (!sys::path::has_parent_path(Head) || sys::path::parent_path(Head) == Head)
        return;
      Tail.push_back(sys::path::filename(Head).str());
      Head = sys::path::parent_path(Head).str(); // not a view of its own buffer
    }
    for (auto I = Tail.rbegin(); I != Tail.rend(); ++I)
      sys::path::append(Real, *I);
    sys::path::remove_dots(Real, /*remove_dot_dot=*/true);
    Path = std::string(Real);
  };
  std::vector<HeaderSearchOptions::Entry> Kept;
  for (HeaderSearchOptions::Entry E : HSO.UserEntries) {
    if (E.Group == frontend::Angled || E.Group == frontend::Quoted) {
      Absolute(E.Path);
      UserDirs.push_back(E.Path);
    } else {
      Canonical(E.Path);
      Kept.push_back(E);
    }
  }
  HSO.UserEntries = std::move(Kept);
  Canonical(HSO.Sysroot);
  Canonical(HSO.ResourceDir);
  return Config;
}

std::string preambleKey(CompilerInvocation &Config, StringRef Anchor) {
  json K = {{"format", PreambleFormat},
            {"llvm", LLVM_VERSION_STRING},
            {"cc1", Config.getCC1CommandLine()},
            {"analyzer", Config.getPreprocessorOpts().SetUpStaticAnalyzer},
            {"anchor", Anchor}};
  return hashBytes(toCbor(K));
}

/// Watches the preamble's build: every include as written (a project directory that holds
/// one of them would shadow it), and whether a header is not a system header (declarations
/// loaded from a PCH are not the TU's own, so its findings would be lost).
class BuildWatch : public PPCallbacks {
public:
  BuildWatch(const SourceManager &SM, bool &NonSystem, std::set<std::string> &Includes)
      : SM(SM), NonSystem(NonSystem), Includes(Includes) {}
  void FileChanged(SourceLocation Loc, FileChangeReason Reason, SrcMgr::CharacteristicKind Kind,
                   FileID) override {
    if (Reason != EnterFile || Kind != SrcMgr::C_User)
      return;
    FileID F = SM.getFileID(Loc);
    if (F != SM.getMainFileID() && SM.getFileEntryForID(F))
      NonSystem = true;
  }
  void InclusionDirective(SourceLocation, const Token &, StringRef FileName, bool,
                          CharSourceRange, OptionalFileEntryRef, StringRef, StringRef,
                          const Module * TORCHTIDY_MODULE_IMPORTED, SrcMgr::CharacteristicKind) override {
    Includes.insert(FileName.str());
  }

private:
  const SourceManager &SM;
  bool &NonSystem;
  std::set<std::string> &Includes;
};

class BuildPreambleAction : public GeneratePCHAction {
public:
  bool NonSystemHeader = false;
  /// The anchor is include-once, so that the TU's own include of it is a no-op.
  bool AnchorOnce = false;
  std::string AnchorFile;
  std::set<std::string> Includes;
  std::vector<std::string> Identifiers;

protected:
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().addPPCallbacks(
        std::make_unique<BuildWatch>(CI.getSourceManager(), NonSystemHeader, Includes));
    return GeneratePCHAction::BeginSourceFileAction(CI);
  }
  void EndSourceFileAction() override {
    Preprocessor &PP = getCompilerInstance().getPreprocessor();
    // Every identifier the headers name, in code or in directives: a macro of that name
    // defined before the LibTorch include could change them.
    for (const auto &Entry : PP.getIdentifierTable())
      Identifiers.push_back(Entry.getKey().str());
    if (!AnchorFile.empty())
#if LLVM_VERSION_MAJOR >= 19
      if (OptionalFileEntryRef FE = getCompilerInstance().getFileManager().getOptionalFileRef(AnchorFile)) {
#else
      if (auto FE = getCompilerInstance().getFileManager().getFile(AnchorFile)) {
#endif
        HeaderFileInfo &Info = PP.getHeaderSearchInfo().getFileInfo(*FE);
        AnchorOnce = Info.isPragmaOnce || Info.getControllingMacro(nullptr);
      }
    GeneratePCHAction::EndSourceFileAction();
  }
};

struct Manifest {
  bool Usable = false;
  std::string AnchorFile;
  std::vector<std::string> Inputs;
  std::vector<std::pair<std::string, std::string>> Lookups;
  std::vector<std::string> Includes;
};

/// The manifest at \p Path when it belongs to \p Key, none of its inputs changed, every
/// lookup of its build has the same outcome and its PCH is the one it built (a truncated
/// or damaged PCH is rebuilt, never loaded).
std::optional<Manifest> readManifest(StringRef Path, StringRef Key, StringRef PchPath,
                                     FileHasher &Hasher) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path);
  if (!Buffer)
    return std::nullopt;
  json M = cborOrDiscarded((*Buffer)->getBuffer());
  Manifest Out;
  try {
    if (M.is_discarded() || M.at("format") != PreambleFormat || M.at("key") != Key)
      return std::nullopt;
    Out.Usable = M.at("usable").get<bool>();
    for (const json &In : M.at("inputs")) {
      std::string File = In.at(0).get<std::string>();
      std::optional<std::string> H = Hasher.hash(File);
      if (!H || *H != In.at(1).get<std::string>())
        return std::nullopt;
      Out.Inputs.push_back(std::move(File));
    }
    if (!lookupsHold(M.at("lookups")))
      return std::nullopt;
    Out.Lookups = M.at("lookups").get<decltype(Out.Lookups)>();
    if (!Out.Usable)
      return Out;
    std::optional<std::string> Pch = Hasher.hash(PchPath);
    if (!Pch || *Pch != M.at("pch").get<std::string>())
      return std::nullopt;
    Out.AnchorFile = M.at("anchor").get<std::string>();
    Out.Includes = M.at("includes").get<std::vector<std::string>>();
  } catch (const json::exception &) {
    return std::nullopt; // rebuilt and replaced
  }
  return Out;
}

/// Builds the PCH of \p HeaderPath with \p Config and writes its manifest and identifier
/// list; nothing when it does not compile (the main parse then reports why).
std::optional<Manifest> buildPreamble(const CompilerInvocation &Config, InputKind Kind,
                                      FileManager &Files,
                                      std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                                      StringRef HeaderPath, StringRef AnchorFile, StringRef Base,
                                      StringRef Key, StringRef CacheDir, FileHasher &Hasher) {
  std::string PchPath = (Base + ".pch").str(), ManifestPath = (Base + ".cbor").str();
  auto Build = std::make_shared<CompilerInvocation>(Config);
  FrontendOptions &FO = Build->getFrontendOpts();
  FO.Inputs = {FrontendInputFile(HeaderPath, Kind.getHeader())};
  FO.ProgramAction = frontend::GeneratePCH;
  FO.OutputFile = PchPath;
  // Instantiating in the PCH what its headers use saves that work in every main parse.
  langOpts(*Build).PCHInstantiateTemplates = true;

  IntrusiveRefCntPtr<LookupRecorder> Recorder(
      new LookupRecorder(Files.getVirtualFileSystemPtr()));
  CompilerInstance CI(std::move(PCHContainerOps));
  CI.setInvocation(Build);
  CI.createDiagnostics(new IgnoringDiagConsumer(), /*ShouldOwnClient=*/true);
  CI.createFileManager(Recorder);
  BuildPreambleAction Action;
  Action.AnchorFile = AnchorFile.str();
  bool Compiled = CI.ExecuteAction(Action) && !CI.getDiagnostics().hasErrorOccurred();
  // A preamble that does not compile is recorded as unusable (until one of its inputs or
  // lookups changes), so that not every TU tries again; any other failure is retried.
  if (!Compiled && !CI.getDiagnostics().hasErrorOccurred())
    return std::nullopt;

  Manifest M;
  M.Usable = Compiled && !Action.NonSystemHeader && Action.AnchorOnce;
  json Inputs = json::array();
  std::string Self = inputPath(HeaderPath);
  for (StringRef Read : filesRead(CI.getFileManager())) {
    SmallString<256> Name(Read);
    CI.getFileManager().makeAbsolutePath(Name);
    std::string Path = inputPath(Name);
    if (Path == Self)
      continue;
    std::optional<std::string> H = Hasher.hash(Path);
    if (!H)
      return std::nullopt;
    Inputs.push_back({Path, *H});
    M.Inputs.push_back(Path);
  }
  for (const auto &[Path, Outcome] : Recorder->lookups())
    if (!StringRef(Path).starts_with(CacheDir))
      M.Lookups.emplace_back(Path, Outcome);
  M.AnchorFile = AnchorFile.str();
  M.Includes.assign(Action.Includes.begin(), Action.Includes.end());
  std::optional<std::string> Pch = M.Usable ? Hasher.hash(PchPath) : std::string();
  if (!Pch)
    return std::nullopt;
  std::sort(Action.Identifiers.begin(), Action.Identifiers.end());
  std::string Ids = "\n";
  for (const std::string &Id : Action.Identifiers)
    Ids += Id + "\n";
  json Doc = {{"format", PreambleFormat}, {"key", Key},          {"usable", M.Usable},
              {"inputs", Inputs},         {"lookups", M.Lookups}, {"pch", *Pch},
              {"anchor", M.AnchorFile},   {"includes", M.Includes}};
  if (!M.Usable)
    sys::fs::remove(PchPath);
  if (Error E = writeAtomically((Base + ".ids").str(), Ids)) {
    consumeError(std::move(E));
    return std::nullopt;
  }
  if (Error E = writeAtomically(ManifestPath, toCbor(Doc))) {
    consumeError(std::move(E));
    return std::nullopt;
  }
  return M;
}

/// Whether the preamble of \p M stands for what \p R includes before the LibTorch include,
/// adding to \p Lookups what the answer rests on.
bool preambleFits(const Region &R, const Manifest &M, StringRef Base,
                  const std::vector<std::string> &UserDirs,
                  std::vector<std::pair<std::string, std::string>> &Lookups) {
  if (R.AnchorFile != M.AnchorFile)
    return false;
  std::set<StringRef> Held(M.Inputs.begin(), M.Inputs.end());
  for (const std::string &File : R.SystemFiles)
    if (!Held.count(File))
      return false;
  if (!R.Names.empty()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Ids = MemoryBuffer::getFile((Base + ".ids").str());
    if (!Ids)
      return false;
    for (const std::string &Name : R.Names)
      if ((*Ids)->getBuffer().contains(("\n" + Name + "\n")))
        return false;
  }
  // The main parse would find any of these before LibTorch's own headers.
  for (const std::string &Dir : UserDirs)
    for (const std::string &Include : M.Includes) {
      SmallString<256> P(Dir);
      sys::path::append(P, Include);
      std::string Outcome = lookupOutcome(P);
      if (!Outcome.empty())
        return false;
      Lookups.emplace_back(std::string(P), Outcome);
    }
  return true;
}

} // namespace

PreambleUse applyPreamble(CompilerInvocation &Invocation, FileManager &Files,
                          std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                          StringRef CacheDir) {
  FrontendOptions &FO = Invocation.getFrontendOpts();
  PreprocessorOptions &PPO = Invocation.getPreprocessorOpts();
  if (CacheDir.empty() || FO.Inputs.size() != 1 || !FO.Inputs[0].isFile() ||
      FO.Inputs[0].getKind().isHeader() || FO.Inputs[0].getKind().isPreprocessed() ||
      (FO.Inputs[0].getKind().getLanguage() != Language::CXX &&
       FO.Inputs[0].getKind().getLanguage() != Language::C) ||
      !PPO.ImplicitPCHInclude.empty() || !PPO.Includes.empty() || !PPO.MacroIncludes.empty() ||
      !PPO.RemappedFiles.empty() || !PPO.RemappedFileBuffers.empty() ||
      langOpts(Invocation).Modules)
    return {};

  // The plain parse up to the first LibTorch include.
  ScanAction Scan;
  {
    auto ScanConfig = std::make_shared<CompilerInvocation>(Invocation);
    ScanConfig->getFrontendOpts().ProgramAction = frontend::RunPreprocessorOnly;
    ScanConfig->getDependencyOutputOpts() = DependencyOutputOptions();
    CompilerInstance CI(PCHContainerOps);
    CI.setInvocation(ScanConfig);
    CI.createDiagnostics(new IgnoringDiagConsumer(), /*ShouldOwnClient=*/true);
    CI.createFileManager(Files.getVirtualFileSystemPtr());
    if (!CI.ExecuteAction(Scan))
      return {};
  }
  const Region &R = Scan.R;
  if (!R.Found || !R.Sound)
    return {};

  ErrorOr<std::string> WorkingDir = Files.getVirtualFileSystem().getCurrentWorkingDirectory();
  std::vector<std::string> UserDirs;
  std::shared_ptr<CompilerInvocation> Config =
      preambleConfig(Invocation, WorkingDir ? *WorkingDir : "", UserDirs);
  std::string Key = preambleKey(*Config, R.Anchor);
  std::string Base = (CacheDir + "/preambles/" + Key).str();
  std::string HeaderPath = Base + ".h", PchPath = Base + ".pch", ManifestPath = Base + ".cbor";

  // One process per worker: the memo only spares rehashing when a worker runs several
  // compile commands.
  static FileHasher Hasher;
  PreambleUse Use;
  std::optional<Manifest> M;
  for (int Attempt = 0; Attempt < 2 && !M; ++Attempt) {
    M = readManifest(ManifestPath, Key, PchPath, Hasher);
    if (M && M->Usable && !sys::fs::exists(HeaderPath))
      M.reset();
    if (M)
      break;
    if (std::error_code EC = sys::fs::create_directories(sys::path::parent_path(Base)))
      return {};
    LockFileManager Lock(Base);
    switch (Lock) {
    case LockFileManager::LFS_Error:
      return {};
    case LockFileManager::LFS_Shared:
      // Another worker builds this very preamble; parsing LibTorch meanwhile would cost
      // as much as waiting for it.
      Lock.waitForUnlock(/*MaxSeconds=*/600);
      continue;
    case LockFileManager::LFS_Owned:
      if (Error E = writeAtomically(HeaderPath, "#include <" + R.Anchor + ">\n")) {
        consumeError(std::move(E));
        return {};
      }
      M = buildPreamble(*Config, FO.Inputs[0].getKind(), Files, PCHContainerOps, HeaderPath,
                        R.AnchorFile, Base, Key, CacheDir, Hasher);
      if (!M)
        return {};
      Use.How = PreambleUse::Built;
      break;
    }
  }
  if (!M || !M->Usable || !preambleFits(R, *M, Base, UserDirs, Use.Lookups))
    return {};
  if (Use.How == PreambleUse::None)
    Use.How = PreambleUse::Used;
  for (StringRef Ext : {".cbor", ".pch", ".h", ".ids"})
    markUsed((Base + Ext).str());
  Use.Inputs = std::move(M->Inputs);
  Use.Lookups.insert(Use.Lookups.end(), M->Lookups.begin(), M->Lookups.end());
  // The key covers the configuration and the manifest every input's content and lookup:
  // clang's own checks (options, modification times) would only repeat them, and a header
  // touched without being changed would fail them.
  PPO.ImplicitPCHInclude = PchPath;
  PPO.DisablePCHOrModuleValidation = DisableValidationForModuleKind::PCH;
  return Use;
}

std::vector<StringRef> filesRead(const FileManager &Files) {
  std::vector<StringRef> Names;
  // The file entries, by unique id: plain pointers in LLVM 16, FileEntryRefs in LLVM 19.
#if LLVM_VERSION_MAJOR >= 18
  SmallVector<OptionalFileEntryRef> Read;
#else
  SmallVector<const FileEntry *> Read;
#endif
  Files.GetUniqueIDMapping(Read);
  for (const auto &FE : Read)
    if (FE)
      Names.push_back(FE->getName());
  return Names;
}

} // namespace torchtidy::driver
