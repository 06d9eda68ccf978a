#include "Preamble.h"
#include "Cache.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
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

using namespace clang;
using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

/// Bumped whenever the manifest layout or the meaning of a key changes.
constexpr const char *PreambleFormat = "torchtidy-preamble/1";

struct IncludeBlock {
  /// The header the preamble is built from: one `#include <...>` per line of the block.
  std::string Header;
  /// The main file with the block's directives replaced by spaces.
  std::string Blanked;
};

/// The leading `#include <...>` lines of \p Text, with comments and blank lines between
/// them. Anything else (a quoted include, a macro definition, a conditional, code) ends
/// the block: what follows may depend on it, or be a project header whose findings count.
std::optional<IncludeBlock> leadingAngleIncludes(StringRef Text) {
  IncludeBlock B;
  B.Blanked = Text.str();
  size_t I = 0;
  while (I < Text.size()) {
    StringRef Rest = Text.substr(I);
    if (isSpace(Rest.front())) {
      ++I;
      continue;
    }
    size_t LineEnd = std::min(Text.find('\n', I), Text.size());
    StringRef Line = Text.slice(I, LineEnd).rtrim('\r');
    if (Line.endswith("\\"))
      break;
    if (Rest.startswith("//")) {
      I = LineEnd;
      continue;
    }
    if (Rest.startswith("/*")) {
      size_t Close = Text.find("*/", I + 2);
      if (Close == StringRef::npos)
        break;
      I = Close + 2;
      continue;
    }
    StringRef D = Line;
    if (!D.consume_front("#"))
      break;
    D = D.ltrim(" \t");
    if (!D.consume_front("include"))
      break;
    D = D.ltrim(" \t");
    size_t Close = D.find('>');
    if (!D.startswith("<") || Close == StringRef::npos)
      break;
    StringRef After = D.drop_front(Close + 1).ltrim(" \t");
    if (!After.empty() && !After.startswith("//"))
      break;
    B.Header += ("#include " + D.take_front(Close + 1) + "\n").str();
    std::fill(B.Blanked.begin() + I, B.Blanked.begin() + I + Line.size(), ' ');
    I = LineEnd;
  }
  if (B.Header.empty())
    return std::nullopt;
  return B;
}

/// Everything the preamble depends on besides its headers' contents: the full cc1
/// configuration (language, target, macros, search paths) and the working directory
/// that relative search paths are resolved against.
std::string preambleKey(const CompilerInvocation &Invocation, StringRef Header,
                        StringRef WorkingDir) {
  CompilerInvocation Config(Invocation);
  Config.getFrontendOpts().Inputs.clear();
  Config.getFrontendOpts().OutputFile.clear();
  Config.getDependencyOutputOpts() = DependencyOutputOptions();
  Config.getCodeGenOpts().MainFileName.clear();
  json K = {{"format", PreambleFormat},
            {"llvm", LLVM_VERSION_STRING},
            {"cc1", Config.getCC1CommandLine()},
            {"analyzer", Invocation.getPreprocessorOpts().SetUpStaticAnalyzer},
            {"cwd", WorkingDir},
            {"header", Header}};
  return hashBytes(toCbor(K));
}

/// Notes whether the block pulled in a header that is not a system header: declarations
/// loaded from a PCH are not the TU's own, so such a header's findings would be lost.
class SystemOnly : public PPCallbacks {
public:
  SystemOnly(const SourceManager &SM, bool &Violated) : SM(SM), Violated(Violated) {}
  void FileChanged(SourceLocation Loc, FileChangeReason Reason, SrcMgr::CharacteristicKind Kind,
                   FileID) override {
    if (Reason != EnterFile || Kind != SrcMgr::C_User)
      return;
    FileID F = SM.getFileID(Loc);
    if (F != SM.getMainFileID() && SM.getFileEntryForID(F))
      Violated = true;
  }

private:
  const SourceManager &SM;
  bool &Violated;
};

class BuildPreambleAction : public GeneratePCHAction {
public:
  bool NonSystemHeader = false;

protected:
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().addPPCallbacks(
        std::make_unique<SystemOnly>(CI.getSourceManager(), NonSystemHeader));
    return GeneratePCHAction::BeginSourceFileAction(CI);
  }
};

struct Manifest {
  bool Usable = false;
  std::vector<std::string> Inputs;
};

/// The manifest at \p Path when it belongs to \p Key and none of its inputs changed.
std::optional<Manifest> readManifest(StringRef Path, StringRef Key, FileHasher &Hasher) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path);
  if (!Buffer)
    return std::nullopt;
  json M = json::from_cbor((*Buffer)->getBuffer(), /*strict=*/true, /*allow_exceptions=*/false);
  Manifest Out;
  try {
    if (M.is_discarded() || M.at("format") != PreambleFormat || M.at("key") != Key)
      return std::nullopt;
    for (const json &In : M.at("inputs")) {
      std::string File = In.at(0).get<std::string>();
      std::optional<std::string> H = Hasher.hash(File);
      if (!H || *H != In.at(1).get<std::string>())
        return std::nullopt;
      Out.Inputs.push_back(std::move(File));
    }
    Out.Usable = M.at("usable").get<bool>();
  } catch (const json::exception &) {
    return std::nullopt; // rebuilt and replaced
  }
  return Out;
}

/// Builds the PCH of \p HeaderPath with the configuration of \p Invocation and writes its
/// manifest; nothing when the block does not compile (the main parse then reports why).
std::optional<Manifest> buildPreamble(const CompilerInvocation &Invocation, FileManager &Files,
                                      std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                                      StringRef HeaderPath, StringRef PchPath,
                                      StringRef ManifestPath, StringRef Key, FileHasher &Hasher) {
  auto Build = std::make_shared<CompilerInvocation>(Invocation);
  FrontendOptions &FO = Build->getFrontendOpts();
  FO.Inputs = {FrontendInputFile(HeaderPath, Invocation.getFrontendOpts().Inputs[0].getKind().getHeader())};
  FO.ProgramAction = frontend::GeneratePCH;
  FO.OutputFile = PchPath.str();
  Build->getDependencyOutputOpts() = DependencyOutputOptions();
  // Instantiating in the PCH what its headers use saves that work in every main parse.
  Build->getLangOpts()->PCHInstantiateTemplates = true;

  CompilerInstance CI(std::move(PCHContainerOps));
  CI.setInvocation(Build);
  CI.createDiagnostics(new IgnoringDiagConsumer(), /*ShouldOwnClient=*/true);
  CI.createFileManager(Files.getVirtualFileSystemPtr());
  BuildPreambleAction Action;
  if (!CI.ExecuteAction(Action) || CI.getDiagnostics().hasErrorOccurred())
    return std::nullopt;

  Manifest M;
  M.Usable = !Action.NonSystemHeader;
  json Inputs = json::array();
  SmallVector<const FileEntry *> Read;
  CI.getFileManager().GetUniqueIDMapping(Read);
  std::string Self = inputPath(HeaderPath);
  for (const FileEntry *FE : Read) {
    if (!FE)
      continue;
    SmallString<256> Name(FE->getName());
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
  json Doc = {{"format", PreambleFormat}, {"key", Key}, {"usable", M.Usable}, {"inputs", Inputs}};
  if (!M.Usable)
    sys::fs::remove(PchPath);
  if (Error E = writeAtomically(ManifestPath, toCbor(Doc))) {
    consumeError(std::move(E));
    return std::nullopt;
  }
  return M;
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
      Invocation.getLangOpts()->Modules)
    return {};
  std::string Main = FO.Inputs[0].getFile().str();
  ErrorOr<std::unique_ptr<MemoryBuffer>> Text = Files.getBufferForFile(Main);
  if (!Text)
    return {};
  std::optional<IncludeBlock> Block = leadingAngleIncludes((*Text)->getBuffer());
  if (!Block)
    return {};
  ErrorOr<std::string> WorkingDir = Files.getVirtualFileSystem().getCurrentWorkingDirectory();
  std::string Key = preambleKey(Invocation, Block->Header, WorkingDir ? *WorkingDir : "");
  std::string Base = (CacheDir + "/preambles/" + Key).str();
  std::string HeaderPath = Base + ".h", PchPath = Base + ".pch", ManifestPath = Base + ".cbor";

  // One process per worker: the memo only spares rehashing when a worker runs several
  // compile commands.
  static FileHasher Hasher;
  PreambleUse Use;
  std::optional<Manifest> M;
  for (int Attempt = 0; Attempt < 2 && !M; ++Attempt) {
    M = readManifest(ManifestPath, Key, Hasher);
    if (M && M->Usable && (!sys::fs::exists(PchPath) || !sys::fs::exists(HeaderPath)))
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
      if (Error E = writeAtomically(HeaderPath, Block->Header)) {
        consumeError(std::move(E));
        return {};
      }
      M = buildPreamble(Invocation, Files, PCHContainerOps, HeaderPath, PchPath, ManifestPath,
                        Key, Hasher);
      if (!M)
        return {};
      Use.How = PreambleUse::Built;
      break;
    }
  }
  if (!M || !M->Usable)
    return {};
  if (Use.How == PreambleUse::None)
    Use.How = PreambleUse::Used;
  for (StringRef F : {StringRef(ManifestPath), StringRef(PchPath), StringRef(HeaderPath)})
    markUsed(F);
  Use.Inputs = std::move(M->Inputs);
  // The key covers the configuration and the manifest every input's content: clang's own
  // checks (options, modification times) would only repeat them, and a header touched
  // without being changed would fail them.
  PPO.ImplicitPCHInclude = PchPath;
  PPO.DisablePCHOrModuleValidation = DisableValidationForModuleKind::PCH;
  PPO.addRemappedFile(Main, MemoryBuffer::getMemBufferCopy(Block->Blanked, Main).release());
  return Use;
}

} // namespace torchtidy::driver
