// The worker side: analyzes one translation unit with the clang-tidy library and the
// torch checks, restricting AST matching to the user's own top-level declarations.
#include "Cache.h"
#include "CompileFlags.h"
#include "Cuda.h"
#include "Job.h"
#include "Options.h"
#include "Preamble.h"
#include "TorchTidyModule.h"
#include "utils/ProjectIndex.h"
#include "utils/Summaries.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <thread>

using namespace clang;
using namespace clang::tidy;
using namespace clang::tooling;
using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

void to_json(json &J, const Job &Jb) {
  json Commands = json::array();
  for (const CompileCommand &C : Jb.Commands)
    Commands.push_back({{"directory", C.Directory},
                        {"file", C.Filename},
                        {"arguments", C.CommandLine},
                        {"output", C.Output}});
  J = json{{"file", Jb.File},
           {"header", Jb.Header},
           {"commands", Commands},
           {"header_roots", Jb.HeaderRoots},
           {"overlay", Jb.Overlay},
           {"index", Jb.IndexFile},
           {"await", Jb.AwaitFile}};
}

void from_json(const json &J, Job &Jb) {
  J.at("file").get_to(Jb.File);
  J.at("header").get_to(Jb.Header);
  J.at("header_roots").get_to(Jb.HeaderRoots);
  J.at("overlay").get_to(Jb.Overlay);
  J.at("index").get_to(Jb.IndexFile);
  J.at("await").get_to(Jb.AwaitFile);
  for (const json &C : J.at("commands"))
    Jb.Commands.emplace_back(C.at("directory").get<std::string>(), C.at("file").get<std::string>(),
                             C.at("arguments").get<std::vector<std::string>>(),
                             C.at("output").get<std::string>());
}

namespace {

class JobCompilationDatabase : public CompilationDatabase {
public:
  explicit JobCompilationDatabase(std::vector<CompileCommand> Commands)
      : Commands(std::move(Commands)) {}
  std::vector<CompileCommand> getCompileCommands(StringRef) const override { return Commands; }

private:
  std::vector<CompileCommand> Commands;
};

/// Runs the clang-tidy consumer over the declarations written in non-system files only.
/// Matching the whole TU would also walk every LibTorch header (and, with a PCH, first
/// deserialize them all), which costs several times the parse itself.
class UserCodeConsumer : public MultiplexConsumer {
public:
  UserCodeConsumer(std::unique_ptr<ASTConsumer> Tidy, const SourceManager &SM, ProjectIndex &Summaries,
                   const std::function<void()> &BeforeChecks)
      : MultiplexConsumer(makeVector(std::move(Tidy))), SM(SM), Summaries(Summaries),
        BeforeChecks(BeforeChecks) {}

  bool HandleTopLevelDecl(DeclGroupRef Group) override {
    for (Decl *D : Group) {
      SourceLocation Loc = D->getLocation();
      if (Loc.isValid() && !SM.isInSystemHeader(SM.getExpansionLoc(Loc)))
        UserDecls.push_back(D);
    }
    return MultiplexConsumer::HandleTopLevelDecl(Group);
  }

  void HandleTranslationUnit(ASTContext &Ctx) override {
    Ctx.setTraversalScope(UserDecls);
    if (BeforeChecks)
      BeforeChecks();
    MultiplexConsumer::HandleTranslationUnit(Ctx);
    // What this TU's functions do, for the project index (from this TU alone).
    Summaries.merge(summarizeTranslationUnit(Ctx));
  }

private:
  static std::vector<std::unique_ptr<ASTConsumer>> makeVector(std::unique_ptr<ASTConsumer> C) {
    std::vector<std::unique_ptr<ASTConsumer>> V;
    V.push_back(std::move(C));
    return V;
  }
  const SourceManager &SM;
  ProjectIndex &Summaries;
  const std::function<void()> &BeforeChecks;
  std::vector<Decl *> UserDecls;
};

class TidyActionFactory : public FrontendActionFactory {
public:
  TidyActionFactory(ClangTidyContext &Context, IntrusiveRefCntPtr<vfs::OverlayFileSystem> FS,
                    std::string CacheDir)
      : ConsumerFactory(Context, std::move(FS)), CacheDir(std::move(CacheDir)) {}

  /// How the preambles of the compile commands run so far were used, and their inputs.
  PreambleUse Preamble;
  /// The summaries of the functions the TU defines (of every compile command's parse).
  ProjectIndex Summaries;
  /// Runs after each parse, before the checks.
  std::function<void()> BeforeChecks;

  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<Action>(ConsumerFactory, Summaries, BeforeChecks);
  }

  bool runInvocation(std::shared_ptr<CompilerInvocation> Invocation, FileManager *Files,
                     std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                     DiagnosticConsumer *DiagConsumer) override {
    // clang-tidy defines __clang_analyzer__; code guarded by it must look the same here.
    Invocation->getPreprocessorOpts().SetUpStaticAnalyzer = true;
    if (!SystemHeaders) {
      // With --system-headers the checks must see the headers' code, not a PCH of it.
      PreambleUse P = applyPreamble(*Invocation, *Files, PCHContainerOps, CacheDir);
      Preamble.How = std::max(Preamble.How, P.How);
      Preamble.Inputs.insert(Preamble.Inputs.end(), P.Inputs.begin(), P.Inputs.end());
      Preamble.Lookups.insert(Preamble.Lookups.end(), P.Lookups.begin(), P.Lookups.end());
    }
    return FrontendActionFactory::runInvocation(Invocation, Files, PCHContainerOps, DiagConsumer);
  }

private:
  class Action : public ASTFrontendAction {
  public:
    Action(ClangTidyASTConsumerFactory &Factory, ProjectIndex &Summaries,
           const std::function<void()> &BeforeChecks)
        : Factory(Factory), Summaries(Summaries), BeforeChecks(BeforeChecks) {}
    std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef File) override {
      return std::make_unique<UserCodeConsumer>(Factory.createASTConsumer(CI, File),
                                                CI.getSourceManager(), Summaries, BeforeChecks);
    }

  private:
    ClangTidyASTConsumerFactory &Factory;
    ProjectIndex &Summaries;
    const std::function<void()> &BeforeChecks;
  };

  ClangTidyASTConsumerFactory ConsumerFactory;
  std::string CacheDir;
};

/// clang-tidy's consumer, also keeping the first compiler errors in the order they were
/// emitted: clang-tidy's own list is sorted by file and offset, which puts an error of a
/// header or "too many errors emitted" (no location) before the one that caused the rest.
class FirstErrorsConsumer : public ClangTidyDiagnosticConsumer {
public:
  using ClangTidyDiagnosticConsumer::ClangTidyDiagnosticConsumer;
  static constexpr unsigned Kept = 5;
  std::vector<Message> Errors;

  void HandleDiagnostic(DiagnosticsEngine::Level Level, const clang::Diagnostic &Info) override {
    if (Level >= DiagnosticsEngine::Error && Errors.size() < Kept &&
        Info.getID() != diag::fatal_too_many_errors) {
      Message M;
      SmallString<256> Text;
      Info.FormatDiagnostic(Text);
      M.Text = std::string(Text);
      if (Info.hasSourceManager() && Info.getLocation().isValid()) {
        const SourceManager &SM = Info.getSourceManager();
        PresumedLoc P = SM.getPresumedLoc(SM.getFileLoc(Info.getLocation()));
        if (P.isValid()) {
          M.Where.File = P.getFilename();
          M.Where.Line = M.Where.EndLine = P.getLine();
          M.Where.Column = M.Where.EndColumn = P.getColumn();
        }
      }
      Errors.push_back(std::move(M));
    }
    ClangTidyDiagnosticConsumer::HandleDiagnostic(Level, Info);
  }
};

/// The LibTorch version a compile command reaches: the major number in the first
/// `torch/version.h` on its include path (-I, -isystem, -idirafter, in that search order), and
/// that directory; 0 when the command reaches no LibTorch.
struct TorchHeaders {
  unsigned Major = 0, Minor = 0;
  std::string IncludeDir;
};

TorchHeaders torchHeadersFor(const CommandLineArguments &Args, StringRef Directory) {
  std::vector<std::string> Dirs[3]; // the <...> search order: -I, then -isystem, then -idirafter
  static constexpr StringRef Flags[] = {"-I", "-isystem", "-idirafter"};
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A(Args[I]);
    for (unsigned K = 0; K < 3; ++K) {
      if (!A.starts_with(Flags[K]))
        continue;
      StringRef Dir = A.drop_front(Flags[K].size());
      if (Dir.empty() && I + 1 < Args.size())
        Dir = Args[++I];
      if (Dir.empty())
        continue;
      SmallString<256> Abs(Dir);
      if (!sys::path::is_absolute(Abs)) {
        Abs = Directory;
        sys::path::append(Abs, Dir);
      }
      Dirs[K].push_back(std::string(Abs));
      break;
    }
  }
  for (const auto &Group : Dirs)
    for (const std::string &Dir : Group) {
      SmallString<256> Version(Dir);
      sys::path::append(Version, "torch", "version.h");
      ErrorOr<std::unique_ptr<MemoryBuffer>> Text = MemoryBuffer::getFile(Version);
      if (!Text)
        continue;
      TorchHeaders T;
      T.IncludeDir = Dir;
      SmallVector<StringRef> Lines;
      (*Text)->getBuffer().split(Lines, '\n');
      for (StringRef L : Lines) {
        L = L.trim();
        if (L.consume_front("#define TORCH_VERSION_MAJOR"))
          L.trim().getAsInteger(10, T.Major);
        else if (L.consume_front("#define TORCH_VERSION_MINOR"))
          L.trim().getAsInteger(10, T.Minor);
      }
      return T;
    }
  return {};
}

/// Analyzes a command with its own -std, except where that is what cannot parse: LibTorch
/// 1.x's headers in C++20 mode or newer under clang 16 and 19 (libstdc++ 12 instantiates
/// std::vector<c10::IValue> with an incomplete type there), analyzed as C++17 instead. Returns
/// the replaced -std value and why, when replaced.
struct StdDowngrade {
  std::string Replaced, Why;
};

StdDowngrade downgradeStd(CommandLineArguments &Args, StringRef Directory) {
  StdDowngrade D;
  std::optional<TorchHeaders> Torch;
  for (std::string &A : Args) {
    StringRef Arg(A);
    StringRef Prefix = Arg.starts_with("--std=") ? "--std=" : Arg.starts_with("-std=") ? "-std=" : "";
    if (Prefix.empty())
      continue;
    StringRef Std = Arg.drop_front(Prefix.size());
    bool Gnu = Std.consume_front("gnu++");
    if (!Gnu && !Std.consume_front("c++"))
      continue;
    if (Std != "20" && Std != "2a" && Std != "23" && Std != "2b" && Std != "26" && Std != "2c")
      continue;
    if (!Torch)
      Torch = torchHeadersFor(Args, Directory);
    // clang 19 fails the same way (checked with Debian 12's clang-19 and libstdc++ 12).
    if (Torch->Major != 1)
      continue;
    D.Replaced = Arg.drop_front(Prefix.size()).str();
    D.Why = ("clang " + Twine(CLANG_VERSION_MAJOR) + " cannot parse LibTorch " +
             Twine(Torch->Major) + "." + Twine(Torch->Minor) + "'s headers (" + Torch->IncludeDir +
             ") in C++20 mode")
                .str();
    A = (Prefix + (Gnu ? "gnu++17" : "c++17")).str();
  }
  return D;
}

/// Line/column lookups on the files as the analysis read them (on disk, or an overlay).
class PositionTable {
public:
  explicit PositionTable(vfs::FileSystem &FS) : FS(FS) {}

  std::string absolute(StringRef Path, StringRef BuildDir) {
    SmallString<256> P(Path);
    if (!sys::path::is_absolute(P)) {
      SmallString<256> Base(BuildDir);
      if (Base.empty())
        sys::fs::current_path(Base);
      sys::path::append(Base, P);
      P = Base;
    }
    sys::path::remove_dots(P, /*remove_dot_dot=*/true);
    return std::string(P);
  }

  /// Fills \p S from \p Offset (and \p Length) in \p File; false when the file is unreadable.
  bool locate(const std::string &File, unsigned Offset, unsigned Length, Span &S,
              std::string *LineText = nullptr, unsigned *LineTextColumn = nullptr) {
    const std::vector<unsigned> *Starts = lineStarts(File);
    if (!Starts)
      return false;
    S.File = File;
    auto Pos = [&](unsigned Off, unsigned &Line, unsigned &Col) {
      auto It = std::upper_bound(Starts->begin(), Starts->end(), Off);
      Line = It - Starts->begin();
      Col = Off - *(It - 1) + 1;
    };
    Pos(Offset, S.Line, S.Column);
    Pos(Offset + Length, S.EndLine, S.EndColumn);
    if (LineText) {
      StringRef Text = Buffers[File]->getBuffer();
      unsigned Begin = (*Starts)[S.Line - 1];
      StringRef Line = Text.substr(Begin).split('\n').first.rtrim('\r');
      *LineText = Line.str();
      if (Line.size() > MaxLineText) {
        size_t From = std::min<size_t>(S.Column - 1 > MaxLineText / 2 ? S.Column - 1 - MaxLineText / 2 : 0,
                                       Line.size() - MaxLineText);
        *LineText = Line.substr(From, MaxLineText).str();
        *LineTextColumn = From + 1;
      }
    }
    return true;
  }

private:
  const std::vector<unsigned> *lineStarts(const std::string &File) {
    auto It = Starts.find(File);
    if (It != Starts.end())
      return &It->second;
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = FS.getBufferForFile(File);
    if (!Buffer)
      return nullptr;
    std::vector<unsigned> &L = Starts[File];
    L.push_back(0);
    StringRef Text = (*Buffer)->getBuffer();
    for (unsigned I = 0; I < Text.size(); ++I)
      if (Text[I] == '\n')
        L.push_back(I + 1);
    Buffers[File] = std::move(*Buffer);
    return &L;
  }

  vfs::FileSystem &FS;
  std::map<std::string, std::vector<unsigned>> Starts;
  std::map<std::string, std::unique_ptr<MemoryBuffer>> Buffers;
};

Message toMessage(const DiagnosticMessage &D, StringRef BuildDir, PositionTable &Positions) {
  Message M;
  M.Text = D.Message;
  M.FilePath = D.FilePath;
  M.Offset = D.FileOffset;
  for (const FileByteRange &R : D.Ranges)
    M.Ranges.push_back({R.FilePath, R.FileOffset, R.Length});
  for (const auto &FileAndReplacements : D.Fix)
    for (const tooling::Replacement &R : FileAndReplacements.second) {
      driver::Replacement Out;
      Out.FilePath = R.getFilePath().str();
      Out.Offset = R.getOffset();
      Out.Length = R.getLength();
      Out.Text = R.getReplacementText().str();
      Positions.locate(Positions.absolute(Out.FilePath, BuildDir), Out.Offset, Out.Length,
                       Out.Where);
      M.Fix.push_back(std::move(Out));
    }
  if (D.FilePath.empty())
    return M;
  std::string File = Positions.absolute(D.FilePath, BuildDir);
  // The first range in the same file and starting at the diagnostic gives its extent.
  unsigned Length = 0;
  for (const FileByteRange &R : D.Ranges)
    if (R.FileOffset == D.FileOffset && Positions.absolute(R.FilePath, BuildDir) == File) {
      Length = R.Length;
      break;
    }
  if (!Positions.locate(File, D.FileOffset, Length, M.Where, &M.LineText, &M.LineTextColumn))
    M.Where.File = File;
  return M;
}

/// Which files of a TU report findings. clang-tidy 16 keeps only the main file unless
/// HeaderFilterRegex matches the header's path as spelled in the #include; the worker makes
/// clang-tidy keep every non-system header (KeepAllHeaders) and decides here, on absolute
/// normalized paths: only the header named on the command line, if any; else the user's
/// header filter; else the headers under the project's roots; never an excluded header.
class HeaderScope {
public:
  HeaderScope(const Job &J, HeaderFilters Filters) : J(J), Filters(std::move(Filters)) {}

  bool reports(const Finding &F) const {
    StringRef File = F.Primary.Where.File;
    if (isCompilerError(F) || File.empty())
      return true;
    if (!J.Header.empty())
      return File == J.Header;
    if (File == J.File)
      return true;
    if (Filters.NoHeaders || (Filters.Exclude && Filters.Exclude->match(File)))
      return false;
    if (Filters.Include)
      return Filters.Include->match(File);
    return llvm::any_of(J.HeaderRoots, [&](StringRef Root) {
      return File.starts_with(Root) && File.drop_front(Root.size()).starts_with("/");
    });
  }

private:
  const Job &J;
  HeaderFilters Filters;
};

/// A torch check's findings carry the registry's level in every format (text, JSON, SARIF,
/// LSP): torch-inplace-on-leaf is an error everywhere. Other diagnostics keep \p Emitted.
std::string registeredLevel(StringRef Check, StringRef Emitted) {
  for (const CheckInfo &C : registeredChecks())
    if (Check == C.Id)
      return C.Level == "note" ? "remark" : C.Level;
  return std::string(Emitted);
}

const char *levelName(tooling::Diagnostic::Level L) {
  switch (L) {
  case tooling::Diagnostic::Error:
    return "error";
  case tooling::Diagnostic::Remark:
    return "remark";
  default:
    return "warning";
  }
}

} // namespace

int runWorker(const Job &J, StringRef OutPath) {
  // The coordinator has validated the header filters already.
  Expected<HeaderFilters> Filters = headerFiltersFor(J.File);
  if (!Filters) {
    errs() << "torchtidy: error: " << toString(Filters.takeError()) << "\n";
    return 2;
  }
  HeaderScope Scope(J, std::move(*Filters));
  auto Provider = createOptionsProvider(/*KeepAllHeaders=*/true);
  if (!Provider) {
    errs() << "torchtidy: error: " << toString(Provider.takeError()) << "\n";
    return 2;
  }
  ClangTidyContext Context(std::move(*Provider));
  // Every lookup on disk is recorded (an editor's unsaved buffer, above it, is never
  // cached): the result cache replays this analysis only while each has the same outcome.
  IntrusiveRefCntPtr<LookupRecorder> Disk(new LookupRecorder(vfs::getRealFileSystem()));
  IntrusiveRefCntPtr<vfs::OverlayFileSystem> FS(new vfs::OverlayFileSystem(Disk));

  if (!J.Overlay.empty()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Text = MemoryBuffer::getFile(J.Overlay);
    if (!Text) {
      errs() << "torchtidy: error: cannot read " << J.Overlay << ": " << Text.getError().message()
             << "\n";
      return 3;
    }
    // The buffer stands for the file the editor shows: the header, when analyzed through
    // a translation unit that includes it.
    IntrusiveRefCntPtr<vfs::InMemoryFileSystem> Unsaved(new vfs::InMemoryFileSystem);
    Unsaved->addFile(J.Header.empty() ? J.File : J.Header, /*ModificationTime=*/0,
                     std::move(*Text));
    FS->pushOverlay(Unsaved);
  }

  JobResult Result;
  Result.File = J.File;
  Result.Header = J.Header;

  // The checks answer calls into other TUs from the index the coordinator built from the
  // compilation database, never from a file found near the sources (which may be stale);
  // an empty one in the pass that builds it, which still records what was asked.
  auto Index = std::make_shared<ProjectIndex>();
  // Reads the index file at Path into Index; the error, if it cannot.
  auto LoadIndex = [&Index](StringRef Path) -> std::optional<std::string> {
    Expected<ProjectIndex> Loaded = ProjectIndex::load(Path);
    if (!Loaded)
      return toString(Loaded.takeError());
    *Index = std::move(*Loaded);
    return std::nullopt;
  };
  if (!J.IndexFile.empty())
    if (std::optional<std::string> Error = LoadIndex(J.IndexFile)) {
      errs() << "torchtidy: error: " << *Error << "\n";
      return 3;
    }
  ProjectIndex::setForProcess(Index);
  // Parsed while the TUs it calls into were still being analyzed: the index of those comes
  // once they have finished, before the checks ask it anything.
  std::optional<std::string> AwaitError;
  auto AwaitIndex = [&, Awaited = false]() mutable {
    if (J.AwaitFile.empty() || Awaited)
      return;
    Awaited = true;
    while (!sys::fs::exists(J.AwaitFile))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ErrorOr<std::unique_ptr<MemoryBuffer>> Named = MemoryBuffer::getFile(J.AwaitFile);
    if (!Named) {
      AwaitError = J.AwaitFile + ": " + Named.getError().message();
      return;
    }
    if (StringRef Path = (*Named)->getBuffer(); !Path.empty())
      AwaitError = LoadIndex(Path);
  };

  // Absolute now: the tool moves the working directory to each command's directory.
  SmallString<256> CacheDir(cacheDirectory());
  if (!CacheDir.empty())
    sys::fs::make_absolute(CacheDir);

  // Headers a CPU-only LibTorch or a CUDA toolkit newer than Clang lacks (Cuda.h).
  FS->pushOverlay(compatHeaderFileSystem());

  JobCompilationDatabase DB(J.Commands);
  ClangTool Tool(DB, {J.File}, std::make_shared<PCHContainerOperations>(), FS);
  Tool.appendArgumentsAdjuster([&Context](const CommandLineArguments &Args, StringRef File) {
    ClangTidyOptions Opts = Context.getOptionsForFile(File);
    CommandLineArguments Adjusted = Args;
    if (Opts.ExtraArgsBefore) {
      auto I = Adjusted.begin();
      if (I != Adjusted.end() && !StringRef(*I).starts_with("-"))
        ++I;
      Adjusted.insert(I, Opts.ExtraArgsBefore->begin(), Opts.ExtraArgsBefore->end());
    }
    if (Opts.ExtraArgs)
      Adjusted.insert(Adjusted.end(), Opts.ExtraArgs->begin(), Opts.ExtraArgs->end());
    return Adjusted;
  });
  // The coordinator filtered the database's commands (and said what it removed); a
  // configuration's ExtraArgs go through the same allow-list here.
  Tool.appendArgumentsAdjuster([](const CommandLineArguments &Args, StringRef) {
    CommandLineArguments Adjusted = Args;
    filterCompileCommand(Adjusted);
    return Adjusted;
  });
  Tool.appendArgumentsAdjuster(getStripPluginsAdjuster());
  // After the allow-list, which has seen the command as the database wrote it (nvcc's made a
  // clang one by the coordinator): what Clang needs to parse CUDA's host side, and the headers
  // the analysis supplies (Cuda.h).
  Tool.appendArgumentsAdjuster([&Result](const CommandLineArguments &Args, StringRef File) {
    CommandLineArguments Adjusted = Args;
    Result.Cuda |= addCudaHostArguments(Adjusted, File);
    Adjusted.insert(Adjusted.end(), {"-idirafter", compatHeaderDir().str()});
    return Adjusted;
  });
  StringRef CommandDir = J.Commands.empty() ? StringRef() : StringRef(J.Commands.front().Directory);
  Tool.appendArgumentsAdjuster([&Result, CommandDir](const CommandLineArguments &Args, StringRef) {
    CommandLineArguments Adjusted = Args;
    StdDowngrade D = downgradeStd(Adjusted, CommandDir);
    if (!D.Replaced.empty()) {
      Result.DowngradedStd = D.Replaced;
      Result.DowngradeReason = D.Why;
    }
    return Adjusted;
  });

  FirstErrorsConsumer DiagConsumer(Context, nullptr, /*RemoveIncompatibleErrors=*/true,
                                   /*GetFixesFromNotes=*/FixNotes);
  DiagnosticsEngine DE(new DiagnosticIDs(), new DiagnosticOptions(), &DiagConsumer,
                       /*ShouldOwnClient=*/false);
  Context.setDiagnosticsEngine(&DE);
  Tool.setDiagnosticConsumer(&DiagConsumer);

  TidyActionFactory Factory(Context, FS, std::string(CacheDir));
  Factory.BeforeChecks = AwaitIndex;
  int ToolStatus = Tool.run(&Factory);
  if (AwaitError) {
    errs() << "torchtidy: error: " << *AwaitError << "\n";
    return 3;
  }

  PositionTable Positions(*FS);
  for (const ClangTidyError &E : DiagConsumer.take()) {
    Finding F;
    F.Check = E.DiagnosticName;
    F.Level = registeredLevel(F.Check, levelName(E.DiagLevel));
    F.BuildDirectory = E.BuildDirectory;
    F.WarningAsError = E.IsWarningAsError;
    F.Aliases = E.EnabledDiagnosticAliases;
    F.Primary = toMessage(E.Message, E.BuildDirectory, Positions);
    if (!Scope.reports(F))
      continue;
    for (const DiagnosticMessage &N : E.Notes)
      F.Notes.push_back(toMessage(N, E.BuildDirectory, Positions));
    Result.Findings.push_back(std::move(F));
  }
  for (Message &E : DiagConsumer.Errors)
    if (!E.Where.File.empty())
      E.Where.File = Positions.absolute(E.Where.File, CommandDir);
  Result.Errors = std::move(DiagConsumer.Errors);
  if (!Result.Errors.empty()) {
    const Message &First = Result.Errors.front();
    const Span &W = First.Where;
    std::string Where = W.File.empty()     ? ""
                        : W.File == J.File ? (Twine(W.Line) + ":" + Twine(W.Column) + ": ").str()
                                           : (W.File + ":" + Twine(W.Line) + ":" + Twine(W.Column) + ": ").str();
    Result.Problem = "does not compile: " + Where + First.Text;
    for (Finding &F : Result.Findings)
      F.PartialParse = !isCompilerError(F);
  } else if (llvm::any_of(Result.Findings, isCompilerError)) {
    Result.Problem = "does not compile";
  }
  Result.Analyzed = ToolStatus == 0 && Result.Problem.empty();
  for (StringRef Read : filesRead(Tool.getFiles()))
    if (!Read.starts_with(compatHeaderDir()))
      Result.Inputs.push_back(inputPath(Read, CommandDir));
  Result.Inputs.insert(Result.Inputs.end(), Factory.Preamble.Inputs.begin(),
                       Factory.Preamble.Inputs.end());
  Result.Lookups.assign(Disk->lookups().begin(), Disk->lookups().end());
  Result.Lookups.insert(Result.Lookups.end(), Factory.Preamble.Lookups.begin(),
                        Factory.Preamble.Lookups.end());
  Result.Summaries = Factory.Summaries.toJSONText();
  for (const auto &C : Index->consulted())
    Result.Consulted[C.getKey().str()] = C.getValue();
  Result.Preamble = Factory.Preamble.How == PreambleUse::Built  ? "built"
                    : Factory.Preamble.How == PreambleUse::Used ? "used"
                                                                : "";
  if (!Result.Analyzed && Result.Problem.empty())
    Result.Problem = "the compiler could not process it";

  std::error_code EC;
  raw_fd_ostream Out(OutPath, EC);
  if (EC) {
    errs() << "torchtidy: error: cannot write " << OutPath << ": " << EC.message() << "\n";
    return 3;
  }
  // CBOR keeps the bytes of non-UTF-8 paths and source lines (a Latin-1 comment) intact.
  std::vector<uint8_t> Bytes = json::to_cbor(json(Result));
  Out.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  return 0;
}

} // namespace torchtidy::driver
