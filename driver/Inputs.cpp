#include "Inputs.h"
#include "Interrupt.h"
#include "Cuda.h"
#include "CompileFlags.h"
#include "Options.h"
#include "OutputFile.h"
#include "ReportReader.h"

#include "clang-tidy/ClangTidyOptions.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <algorithm>
#include <unistd.h>

using namespace clang::tooling;
using namespace llvm;

namespace torchtidy::driver {

namespace {

std::string absolutePath(StringRef Path) {
  SmallString<256> P(Path);
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

bool hasExtension(StringRef Path, std::initializer_list<StringRef> Exts) {
  StringRef Ext = sys::path::extension(Path);
  return llvm::any_of(Exts, [&](StringRef E) { return Ext.equals_insensitive(E); });
}

bool isHeader(StringRef Path) {
  return hasExtension(Path, {".h", ".hh", ".hpp", ".hxx", ".h++", ".cuh", ".inl", ".ipp", ".tcc"});
}

bool isCxxFile(StringRef Path) {
  return isHeader(Path) ||
         hasExtension(Path, {".cpp", ".cc", ".cxx", ".c++", ".cp", ".c", ".cu", ".m", ".mm"});
}

Expected<std::unique_ptr<CompilationDatabase>> loadJsonDatabase(StringRef Path,
                                                                std::vector<Problem> &Skipped) {
  Expected<std::string> Text =
      readRegularFile(Path, Path + ": cannot read the compilation database", MaxDatabaseBytes);
  if (!Text)
    return Text.takeError();
  std::vector<SkippedEntry> Entries;
  Expected<std::unique_ptr<CompilationDatabase>> DB =
      readCompileDatabase(*Text, Path, &Entries);
  if (!DB)
    return DB.takeError();
  for (const SkippedEntry &E : Entries) {
    SmallString<256> File(E.File);
    if (!File.empty() && !sys::path::is_absolute(File) && !E.Directory.empty())
      File = E.Directory + "/" + E.File;
    Skipped.push_back({"bad-compile-command", File.empty() ? Path.str() : absolutePath(File),
                       (Path + ": entry " + Twine(E.Index + 1) + ": " + E.Why +
                        "; the entry is skipped")
                           .str()});
  }
  // What clang-tidy gets from its JSON plugin: commands for files not in the database
  // (headers, new files) inferred from similar entries. Response files are expanded by
  // planFiles, bounded (CompileFlags.h), not by clang's reader, which reads any file.
  return inferTargetAndDriverMode(inferMissingCompileCommands(std::move(*DB)));
}

/// The first compile_commands.json in the directory of \p FirstFile (the working directory
/// when empty) or above it, as clang-tidy finds it; empty when there is none.
std::string databaseAbove(StringRef FirstFile) {
  SmallString<256> Start(FirstFile.empty() ? absolutePath(".") : absolutePath(FirstFile));
  if (!FirstFile.empty())
    sys::path::remove_filename(Start);
  for (StringRef D = Start; !D.empty(); D = sys::path::parent_path(D)) {
    SmallString<256> Json(D);
    sys::path::append(Json, "compile_commands.json");
    if (sys::fs::exists(Json))
      return Json.str().str();
  }
  return "";
}

/// Finds and loads the compilation database; \p Dir receives the directory it is in.
Expected<std::unique_ptr<CompilationDatabase>> findDatabase(StringRef FirstFile, std::string &Dir,
                                                            std::string &File,
                                                            std::vector<Problem> &Skipped) {
  if (!BuildPath.empty()) {
    if (sys::fs::is_regular_file(BuildPath)) {
      Dir = sys::path::parent_path(absolutePath(BuildPath)).str();
      File = absolutePath(BuildPath);
      return loadJsonDatabase(BuildPath, Skipped);
    }
    if (!sys::fs::is_directory(BuildPath))
      return createStringError(inconvertibleErrorCode(), "%s: no such build directory",
                               BuildPath.c_str());
    Dir = absolutePath(BuildPath);
    SmallString<256> Json(BuildPath);
    sys::path::append(Json, "compile_commands.json");
    if (sys::fs::exists(Json)) {
      File = absolutePath(Json);
      return loadJsonDatabase(Json, Skipped);
    }
    std::string Err;
    if (auto DB = CompilationDatabase::loadFromDirectory(BuildPath, Err))
      return DB;
    return createStringError(inconvertibleErrorCode(), "%s: no compile_commands.json in this directory",
                             BuildPath.c_str());
  }
  if (std::string Json = databaseAbove(FirstFile); !Json.empty()) {
    Dir = sys::path::parent_path(Json).str();
    File = Json;
    return loadJsonDatabase(Json, Skipped);
  }
  SmallString<256> Start(FirstFile.empty() ? absolutePath(".") : absolutePath(FirstFile));
  if (!FirstFile.empty())
    sys::path::remove_filename(Start);
  return createStringError(inconvertibleErrorCode(),
                           "no compile_commands.json found in %s or its parents; pass -p "
                           "<build-dir> or compile flags after --",
                           Start.c_str());
}

/// The deepest directory holding every one of \p Paths (absolute, normalized); empty when
/// that is the file system root, which would make every header the project's own.
std::string commonAncestor(ArrayRef<std::string> Paths) {
  if (Paths.empty())
    return "";
  StringRef Common = sys::path::parent_path(Paths.front());
  for (StringRef P : Paths.drop_front())
    while (!Common.empty() && !(P.starts_with(Common) && P.drop_front(Common.size()).starts_with("/")))
      Common = sys::path::parent_path(Common);
  return Common == sys::path::root_path(Common) ? "" : Common.str();
}

Expected<std::vector<std::string>> readList(StringRef Path) {
  // Standard input is named as a stream; any other list must be a file.
  std::string Text;
  if (Path == "-") {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getSTDIN();
    if (!Buffer)
      return createStringError(Buffer.getError(), "%s: cannot read file list: %s",
                               Path.str().c_str(), Buffer.getError().message().c_str());
    Text = (*Buffer)->getBuffer().str();
  } else {
    Expected<std::string> Read = readRegularFile(Path, Path + ": cannot read file list", MaxListBytes,
                                           /*AllowPipe=*/true);
    if (!Read)
      return Read.takeError();
    Text = std::move(*Read);
  }
  std::vector<std::string> Lines;
  SmallVector<StringRef, 64> Split;
  StringRef(Text).split(Split, '\n', -1, false);
  for (StringRef L : Split) {
    L = L.trim();
    if (!L.empty() && !L.starts_with("#"))
      Lines.push_back(L.str());
  }
  return Lines;
}

Expected<std::vector<std::string>> changedFiles(StringRef Rev) {
  if (Rev.starts_with("-"))
    return createStringError(inconvertibleErrorCode(),
                             "invalid --diff-base '%s': a git revision cannot start with '-'",
                             Rev.str().c_str());
  std::string Root = sourceRoot();
  // --end-of-options: whatever the revision says, git never reads it as an option.
  std::optional<std::string> Out = captureOutput({"git", "-C", Root, "diff", "--name-only",
                                                  "--diff-filter=d", "--end-of-options",
                                                  Rev.str(), "--"});
  if (!Out)
    return createStringError(inconvertibleErrorCode(), "git diff --name-only %s failed in %s",
                             Rev.str().c_str(), Root.c_str());
  std::vector<std::string> Files;
  SmallVector<StringRef, 64> Lines;
  StringRef(*Out).split(Lines, '\n', -1, false);
  for (StringRef L : Lines) {
    SmallString<256> P(Root);
    sys::path::append(P, L.trim());
    Files.push_back(std::string(P));
  }
  return Files;
}

bool matches(const GlobPattern &G, StringRef Abs) {
  if (G.match(Abs))
    return true;
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  StringRef Rel = Abs;
  return Rel.consume_front(Cwd) && Rel.consume_front("/") && G.match(Rel);
}

/// A translation unit of \p DBFiles that #includes \p Header directly; prefers foo.cpp for
/// foo.h. Include directives are matched by path suffix, not resolved against -I flags.
std::optional<std::string> findIncluder(StringRef Header, ArrayRef<std::string> DBFiles) {
  static Regex Include("^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]");
  std::optional<std::string> First;
  for (const std::string &File : DBFiles) {
    if (isHeader(File))
      continue;
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(File);
    if (!Buffer)
      continue;
    SmallVector<StringRef, 256> Lines;
    (*Buffer)->getBuffer().split(Lines, '\n');
    bool Includes = false;
    for (StringRef L : Lines) {
      SmallVector<StringRef, 2> M;
      if (!L.contains("include") || !Include.match(L, &M))
        continue;
      SmallString<128> Spelled(M[1]);
      sys::path::remove_dots(Spelled, true);
      if (Header.ends_with(("/" + Spelled).str())) {
        Includes = true;
        break;
      }
    }
    if (!Includes)
      continue;
    if (sys::path::stem(File) == sys::path::stem(Header))
      return File;
    if (!First)
      First = File;
  }
  return First;
}

/// Why the database's commands for a file cannot run, checked here because clang's
/// tooling aborts on a missing directory and says "no input files" for an empty command.
std::optional<std::string> badCommand(ArrayRef<CompileCommand> Commands) {
  for (const CompileCommand &C : Commands) {
    if (llvm::all_of(C.CommandLine, [](StringRef A) { return A.trim().empty(); }))
      return "its compile command in the database is empty";
    if (!sys::fs::is_directory(C.Directory))
      return "the directory of its compile command does not exist: " + C.Directory;
  }
  return std::nullopt;
}

/// Validates the .clang-tidy files that apply to a file, as clang-tidy reads them (the
/// nearest one upwards, and its parents while InheritParentConfig is set): clang-tidy's
/// provider would silently analyze with defaults instead of an invalid file.
class ConfigFiles {
public:
  std::optional<std::string> invalidFor(StringRef File) {
    if (!Config.empty() || !ConfigFile.empty())
      return std::nullopt;
    SmallString<256> Dir(File);
    sys::path::remove_filename(Dir);
    for (StringRef D = Dir; !D.empty(); D = sys::path::parent_path(D)) {
      auto [It, New] = Checked.try_emplace(D);
      if (New)
        It->second = check(D);
      if (It->second.Problem || !It->second.Inherit)
        return It->second.Problem;
    }
    return std::nullopt;
  }

private:
  struct Verdict {
    std::optional<std::string> Problem;
    bool Inherit = true; // no file here, or one that inherits from its parent
  };
  Verdict check(StringRef Dir) {
    SmallString<256> Path(Dir);
    sys::path::append(Path, ".clang-tidy");
    if (!sys::fs::exists(Path))
      return {};
    // A FIFO or a device here is refused, never waited for.
    Expected<std::string> Text =
        readRegularFile(Path, "configuration " + Path, MaxConfigBytes);
    if (!Text)
      return {toString(Text.takeError()), false};
    std::string Problem;
    ErrorOr<clang::tidy::ClangTidyOptions> Parsed = clang::tidy::parseConfigurationWithDiags(
        MemoryBufferRef(*Text, Path), [&](const SMDiagnostic &D) {
          if (Problem.empty())
            Problem = (Twine(D.getLineNo()) + ":" + Twine(D.getColumnNo() + 1) + ": " +
                       D.getMessage()).str();
        });
    if (!Parsed)
      return {"invalid configuration " + std::string(Path) + ": " +
                  (Problem.empty() ? Parsed.getError().message() : Problem),
              false};
    return {std::nullopt, Parsed->InheritParentConfig.value_or(false)};
  }
  StringMap<Verdict> Checked;
};

void insertExtraArgs(CompileCommand &C) {
  auto I = C.CommandLine.empty() ? C.CommandLine.end() : C.CommandLine.begin() + 1;
  C.CommandLine.insert(I, ExtraArgsBefore.begin(), ExtraArgsBefore.end());
  C.CommandLine.insert(C.CommandLine.end(), ExtraArgs.begin(), ExtraArgs.end());
}

} // namespace

Expected<std::pair<unsigned, unsigned>> parseShard(StringRef Text) {
  unsigned K = 0, N = 0;
  auto [KS, NS] = Text.split('/');
  if (KS.getAsInteger(10, K) || NS.getAsInteger(10, N) || N == 0 || K == 0 || K > N)
    return createStringError(inconvertibleErrorCode(),
                             "invalid --shard '%s': expected K/N with 1 <= K <= N",
                             Text.str().c_str());
  return std::make_pair(K, N);
}

std::string droppedList(const std::set<std::string> &Dropped) {
  constexpr size_t Shown = 8;
  std::string Line;
  size_t N = 0;
  for (const std::string &D : Dropped) {
    if (N++ == Shown)
      return Line + " and " + std::to_string(Dropped.size() - Shown) + " more";
    Line += (Line.empty() ? "" : ", ") + D;
  }
  return Line;
}

std::optional<std::string> captureOutput(std::vector<std::string> Args) {
  ErrorOr<std::string> Program = sys::findProgramByName(Args[0]);
  if (!Program)
    return std::nullopt;
  SmallString<128> OutFile, Tmp;
  sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Tmp);
  int Fd;
  if (createUniqueFileIn(Tmp, "torchtidy-cmd-", Fd, OutFile))
    return std::nullopt;
  ::close(Fd);
  removeOnInterrupt(OutFile);
  std::vector<StringRef> Refs(Args.begin(), Args.end());
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(OutFile), StringRef("")};
  int RC = sys::ExecuteAndWait(*Program, Refs, std::nullopt, Redirects);
  ErrorOr<std::unique_ptr<MemoryBuffer>> Out = MemoryBuffer::getFile(OutFile);
  sys::fs::remove(OutFile);
  forgetTemporary(OutFile);
  if (RC != 0 || !Out)
    return std::nullopt;
  return (*Out)->getBuffer().str();
}

std::string sourceRoot() {
  static const std::string Root = [] {
    if (!SourceRoot.empty())
      return absolutePath(SourceRoot);
    if (std::optional<std::string> Top =
            captureOutput({"git", "-C", absolutePath("."), "rev-parse", "--show-toplevel"}))
      return absolutePath(StringRef(*Top).trim());
    return absolutePath(".");
  }();
  return Root;
}

Expected<Plan> planJobs(std::unique_ptr<CompilationDatabase> FixedDB) {
  Plan Result;
  std::vector<std::string> Requested(Files.begin(), Files.end());
  bool ChangedMode = !FilesFrom.empty() || !DiffBase.empty();
  auto AddChanged = [&](Expected<std::vector<std::string>> List) -> Error {
    if (!List)
      return List.takeError();
    for (std::string &F : *List)
      if (isCxxFile(F))
        Requested.push_back(std::move(F));
    return Error::success();
  };
  if (!FilesFrom.empty())
    if (Error E = AddChanged(readList(FilesFrom)))
      return E;
  if (!DiffBase.empty())
    if (Error E = AddChanged(changedFiles(DiffBase)))
      return E;
  if (ChangedMode && Requested.empty()) {
    Result.NothingChanged = true;
    return Result;
  }
  return planFiles(std::move(Requested), std::move(FixedDB));
}

Expected<Plan> planFiles(std::vector<std::string> Requested,
                         std::unique_ptr<CompilationDatabase> FixedDB) {
  Plan Result;
  bool Fixed = FixedDB != nullptr;
  std::vector<Problem> Skipped; // entries of the database left out
  std::unique_ptr<CompilationDatabase> DB = std::move(FixedDB);
  std::string DBDir;
  if (!DB) {
    auto Found = findDatabase(Requested.empty() ? StringRef() : StringRef(Requested.front()), DBDir,
                              Result.Database, Skipped);
    if (!Found)
      return Found.takeError();
    DB = std::move(*Found);
  }
  std::vector<std::string> DBFiles;
  for (const std::string &F : DB->getAllFiles())
    DBFiles.push_back(absolutePath(F));
  llvm::sort(DBFiles);
  DBFiles.erase(std::unique(DBFiles.begin(), DBFiles.end()), DBFiles.end());

  if (Requested.empty()) {
    if (Fixed)
      return createStringError(inconvertibleErrorCode(), "no input files");
    Requested = DBFiles;
    // Every entry was asked for: the skipped ones are bad input.
    Result.Problems = Skipped;
  }

  std::vector<GlobPattern> Excludes;
  for (const std::string &X : Exclude) {
    Expected<GlobPattern> G = GlobPattern::create(X);
    if (!G)
      return createStringError(inconvertibleErrorCode(), "invalid --exclude glob '%s': %s",
                               X.c_str(), toString(G.takeError()).c_str());
    Excludes.push_back(std::move(*G));
  }

  std::vector<std::string> Paths;
  for (const std::string &R : Requested) {
    // A name that exists is that file even when it holds glob characters (`a[1].cpp`).
    if (StringRef(R).find_first_of("*?[") == StringRef::npos || sys::fs::exists(R)) {
      Paths.push_back(absolutePath(R));
      continue;
    }
    Expected<GlobPattern> G = GlobPattern::create(R);
    if (!G)
      return createStringError(inconvertibleErrorCode(), "invalid glob '%s': %s", R.c_str(),
                               toString(G.takeError()).c_str());
    size_t Before = Paths.size();
    for (const std::string &F : DBFiles)
      if (matches(*G, F))
        Paths.push_back(F);
    if (Paths.size() == Before)
      Result.Problems.push_back(
          {"no-match", R, "the pattern matches no file of the compilation database"});
  }

  // The project's own headers: under the source root, or under the tree that holds the
  // compilation database and its translation units (the named files for flags after --).
  // Computed before any selection, so that every shard and diff run agrees on them.
  std::vector<std::string> Tree = Fixed ? Paths : DBFiles;
  if (!DBDir.empty())
    Tree.push_back(DBDir + "/compile_commands.json");
  std::vector<std::string> HeaderRoots = {sourceRoot()};
  if (std::string Common = commonAncestor(Tree); !Common.empty())
    HeaderRoots.push_back(Common);

  StringSet<> Seen;
  ConfigFiles Configs;
  for (const std::string &Path : Paths) {
    if (llvm::any_of(Excludes, [&](const GlobPattern &G) { return matches(G, Path); }) ||
        !Seen.insert(Path).second)
      continue;
    sys::fs::file_status Status;
    if (std::error_code EC = sys::fs::status(Path, Status)) {
      // A symlink loop or an unreadable directory is not a missing file.
      Result.Problems.push_back({"missing-file", Path,
                                 EC == std::errc::no_such_file_or_directory
                                     ? "no such file"
                                     : "cannot read it: " + EC.message()});
      continue;
    }
    // A FIFO or a device (/dev/stdin, /dev/zero) would block the worker or never end;
    // such a file is refused, never reported clean without an analysis.
    // A file under /proc or /sys says size 0 and is made up as it is read.
    if (Status.type() != sys::fs::file_type::regular_file || !isRealFile(Path)) {
      Result.Problems.push_back({"missing-file", Path,
                                 sys::fs::is_directory(Status)
                                     ? "a directory, not a source file"
                                     : "not a regular file (a pipe, a socket or a device)"});
      continue;
    }
    // Said here, by its name, rather than as the compiler's bare "error reading".
    int FD = -1;
    if (std::error_code EC = sys::fs::openFileForRead(Path, FD)) {
      Result.Problems.push_back({"missing-file", Path, "cannot read it: " + EC.message()});
      continue;
    }
    sys::Process::SafelyCloseFileDescriptor(FD);
    Job J;
    J.File = Path;
    J.HeaderRoots = HeaderRoots;
    if (isHeader(Path)) {
      if (std::optional<std::string> Includer = findIncluder(Path, DBFiles)) {
        J.File = *Includer;
        J.Header = Path;
      }
    }
    J.Commands = DB->getCompileCommands(J.File);
    auto Left = llvm::find_if(Skipped, [&](const Problem &S) { return S.File == J.File; });
    if (Left != Skipped.end() &&
        llvm::none_of(DBFiles, [&](const std::string &F) { return F == J.File; })) {
      Result.Problems.push_back({Left->Kind, Path, Left->Message});
      continue;
    }
    if (J.Commands.empty()) {
      Result.Problems.push_back(
          {"no-compile-command", Path, "no compile command for it in the compilation database"});
      continue;
    }
    if (std::optional<std::string> Bad = badCommand(J.Commands)) {
      Result.Problems.push_back({"bad-compile-command", Path, *Bad});
      continue;
    }
    if (std::optional<std::string> Bad = Configs.invalidFor(J.File)) {
      Result.Problems.push_back({"bad-configuration", Path, *Bad});
      continue;
    }
    std::optional<std::string> BadResponseFile;
    for (CompileCommand &C : J.Commands) {
      if (Error E = expandResponseFileArgs(C.CommandLine, C.Directory)) {
        BadResponseFile = toString(std::move(E));
        break;
      }
      // A header analyzed on its own is C++, whatever its extension tells the driver.
      if (J.Header.empty() && isHeader(Path) && Fixed && !C.CommandLine.empty())
        C.CommandLine.insert(C.CommandLine.end() - 1, "-xc++-header");
      // An nvcc command becomes the clang command that parses the same source's host side.
      std::vector<std::string> NvccOnly = nvccToClang(C.CommandLine, C.Filename);
      Result.Dropped.insert(NvccOnly.begin(), NvccOnly.end());
      insertExtraArgs(C);
      std::set<std::string> Dropped = filterCompileCommand(C.CommandLine);
      Result.Dropped.insert(Dropped.begin(), Dropped.end());
    }
    if (BadResponseFile) {
      Result.Problems.push_back({"bad-compile-command", Path, *BadResponseFile});
      continue;
    }
    Result.Jobs.push_back(std::move(J));
  }

  if (Shard.getNumOccurrences()) {
    Expected<std::pair<unsigned, unsigned>> KN = parseShard(Shard);
    if (!KN)
      return KN.takeError();
    auto [K, N] = *KN;
    std::vector<Job> Mine;
    for (size_t I = 0; I < Result.Jobs.size(); ++I)
      if (I % N == K - 1)
        Mine.push_back(std::move(Result.Jobs[I]));
    Result.Jobs = std::move(Mine);
  }

  // The rest of the database, for the project index: as the selected TUs' jobs are made.
  if (!Fixed) {
    StringSet<> Selected;
    for (const Job &J : Result.Jobs)
      if (J.Header.empty())
        Selected.insert(J.File);
    for (const std::string &F : DBFiles) {
      if (Selected.contains(F) || isHeader(F))
        continue;
      Job J;
      J.File = F;
      J.HeaderRoots = HeaderRoots;
      J.Commands = DB->getCompileCommands(F);
      if (J.Commands.empty() || badCommand(J.Commands))
        continue;
      bool Usable = true;
      for (CompileCommand &C : J.Commands) {
        if (Error E = expandResponseFileArgs(C.CommandLine, C.Directory)) {
          consumeError(std::move(E));
          Usable = false;
          break;
        }
        nvccToClang(C.CommandLine, C.Filename);
        insertExtraArgs(C);
        filterCompileCommand(C.CommandLine);
      }
      if (Usable)
        Result.IndexOnly.push_back(std::move(J));
    }
  }
  return Result;
}

Error verifyClangTidyInputs(ArrayRef<std::string> Args) {
  // Args[0] is the program: the wrapper's own arguments follow, as clang-tidy will read them.
  std::vector<std::string> Own = {"clang-tidy"};
  std::optional<std::string> Build;
  std::string FirstSource;
  bool Fixed = false;
  for (size_t I = 1; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "--") {
      Fixed = true; // a database from the flags that follow: their @files are checked below
      Own.insert(Own.end(), Args.begin() + I + 1, Args.end());
      break;
    }
    for (StringRef Opt : {"-extra-arg=", "--extra-arg=", "-extra-arg-before=", "--extra-arg-before="})
      if (A.starts_with(Opt))
        Own.push_back(A.drop_front(Opt.size()).str());
    if ((A == "-p" || A == "--p") && I + 1 < Args.size())
      Build = Args[++I];
    else if (A.starts_with("-p=") || A.starts_with("--p="))
      Build = A.split('=').second.str();
    else if (A.starts_with("@"))
      Own.push_back(A.str());
    else if (!A.starts_with("-") && FirstSource.empty())
      FirstSource = A.str();
  }
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  if (Error E = checkResponseFiles(Own, Cwd))
    return E;
  if (Fixed)
    return Error::success();
  // The database clang-tidy would load. It is read the driver's way (a FIFO or /dev/zero is
  // refused); a database the driver cannot use for another reason is clang-tidy's to report.
  SmallString<256> Json;
  if (Build) {
    Json = *Build;
    if (sys::fs::is_directory(Json))
      sys::path::append(Json, "compile_commands.json");
  } else {
    Json = databaseAbove(FirstSource);
  }
  if (Json.empty() || !sys::fs::exists(Json))
    return Error::success();
  std::vector<Problem> Skipped;
  Expected<std::unique_ptr<CompilationDatabase>> DB = loadJsonDatabase(Json, Skipped);
  if (!DB) {
    std::string Why = toString(DB.takeError());
    if (StringRef(Why).contains("cannot read the compilation database"))
      return createStringError(inconvertibleErrorCode(), Why);
    return Error::success();
  }
  for (const CompileCommand &C : (*DB)->getAllCompileCommands())
    if (Error E = checkResponseFiles(C.CommandLine, C.Directory))
      return createStringError(inconvertibleErrorCode(), "%s: %s", Json.c_str(),
                               toString(std::move(E)).c_str());
  return Error::success();
}

} // namespace torchtidy::driver
