#include "OutputFile.h"
#include "Interrupt.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace torchtidy::driver {

namespace {

Error writeError(StringRef Path, std::error_code EC) {
  return createStringError(EC, "%s: cannot write: %s", Path.str().c_str(), EC.message().c_str());
}

/// What tells two names of one file apart from two files: device and inode when the file
/// exists, else the absolute path with its directory resolved (links, `..`).
std::optional<std::string> identity(StringRef Path) {
  sys::fs::file_status St;
  if (!sys::fs::status(Path, St)) {
    if (St.type() != sys::fs::file_type::regular_file)
      return std::nullopt;
    sys::fs::UniqueID ID = St.getUniqueID();
    return "inode " + std::to_string(ID.getDevice()) + ":" + std::to_string(ID.getFile());
  }
  SmallString<256> Abs(Path), Dir;
  sys::fs::make_absolute(Abs);
  if (sys::fs::real_path(sys::path::parent_path(Abs), Dir))
    Dir = sys::path::parent_path(Abs);
  sys::path::append(Dir, sys::path::filename(Abs));
  return "path " + std::string(Dir);
}

} // namespace

namespace {

/// Tries \p Create on <Dir>/<Stem><random hex> until a name is free.
std::error_code createUnique(StringRef Dir, StringRef Stem, SmallVectorImpl<char> &Path,
                             function_ref<std::error_code(const Twine &)> Create) {
  std::error_code EC;
  for (int Try = 0; Try < 128; ++Try) {
    Path.clear();
    raw_svector_ostream OS(Path);
    OS << Dir << (Dir.empty() || Dir.ends_with("/") ? "" : "/") << Stem;
    OS.write_hex((uint64_t(sys::Process::GetRandomNumber()) << 32) ^ sys::Process::GetRandomNumber());
    EC = Create(OS.str());
    if (EC != std::errc::file_exists)
      return EC;
  }
  return EC;
}

} // namespace

std::error_code createUniqueFileIn(StringRef Dir, StringRef Stem, int &FD,
                                   SmallVectorImpl<char> &Path) {
  return createUnique(Dir, Stem, Path, [&](const Twine &P) {
    return sys::fs::openFileForReadWrite(P, FD, sys::fs::CD_CreateNew, sys::fs::OF_None, 0600);
  });
}

std::error_code createTemporaryDirectory(StringRef Stem, SmallVectorImpl<char> &Path) {
  SmallString<128> Tmp;
  sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Tmp);
  return createUnique(Tmp, (Stem + "-").str(), Path, [](const Twine &P) {
    return sys::fs::create_directory(P, /*IgnoreExisting=*/false, sys::fs::perms::owner_all);
  });
}

Error refuseOverlap(ArrayRef<NamedFile> Outputs, ArrayRef<NamedFile> Inputs) {
  for (size_t I = 0; I < Outputs.size(); ++I) {
    std::optional<std::string> Out = identity(Outputs[I].Path);
    if (Outputs[I].Path.empty() || !Out)
      continue;
    auto Clash = [&](const NamedFile &Other) -> Error {
      if (Other.Path.empty() || identity(Other.Path) != Out)
        return Error::success();
      return createStringError(std::make_error_code(std::errc::file_exists),
                               "%s %s is also %s %s: refusing to replace it",
                               Outputs[I].Role.c_str(), Outputs[I].Path.c_str(),
                               Other.Role.c_str(), Other.Path.c_str());
    };
    for (size_t J = I + 1; J < Outputs.size(); ++J)
      if (Error E = Clash(Outputs[J]))
        return E;
    for (const NamedFile &In : Inputs)
      if (Error E = Clash(In))
        return E;
  }
  return Error::success();
}

namespace {

/// \p Path absolute, with its directory's links and `..` resolved (the file itself may be
/// missing); through a symbolic link at \p Path, the file the link names.
std::string resolved(StringRef Path) {
  SmallString<256> Abs(Path), Real;
  sys::fs::make_absolute(Abs);
  if (!sys::fs::real_path(Abs, Real))
    return std::string(Real);
  SmallString<256> Dir;
  if (sys::fs::real_path(sys::path::parent_path(Abs), Dir))
    Dir = sys::path::parent_path(Abs);
  sys::path::append(Dir, sys::path::filename(Abs));
  return std::string(Dir);
}

} // namespace

Error refuseInside(const NamedFile &Out, StringRef Role, StringRef Dir) {
  if (Out.Path.empty() || Dir.empty())
    return Error::success();
  std::string File = resolved(Out.Path), In = resolved(Dir);
  if (File != In && !StringRef(File).starts_with(In + "/"))
    return Error::success();
  return createStringError(std::make_error_code(std::errc::file_exists),
                           "%s %s is inside %s %s: refusing to write there", Out.Role.c_str(),
                           Out.Path.c_str(), Role.str().c_str(), Dir.str().c_str());
}

Expected<std::unique_ptr<OutputFile>> OutputFile::create(StringRef Path) {
  std::unique_ptr<OutputFile> Out(new OutputFile);
  Out->Path = Path.str();
  if (Path.empty())
    return Out;
  sys::fs::file_status Status;
  if (!sys::fs::status(Path, Status) && Status.type() != sys::fs::file_type::regular_file) {
    if (sys::fs::is_directory(Status))
      return writeError(Path, std::make_error_code(std::errc::is_a_directory));
    // A device or pipe cannot be replaced by a rename; it is written in place.
    if (std::error_code EC = sys::fs::access(Path, sys::fs::AccessMode::Write))
      return writeError(Path, EC);
    Out->WritePath = Out->Path;
    return Out;
  }
  if (!sys::fs::status(Path, Status)) {
    // A read-only report stays: the rename below would replace it regardless. A file
    // nobody may write is read-only for root too, who passes every access() test.
    if (std::error_code EC = sys::fs::access(Path, sys::fs::AccessMode::Write))
      return writeError(Path, EC);
    if ((Status.permissions() & sys::fs::all_write) == 0)
      return writeError(Path, std::make_error_code(std::errc::permission_denied));
    // Through a symbolic link, the file it names is replaced, not the link.
    SmallString<256> Real;
    if (!sys::fs::real_path(Path, Real))
      Out->Target = std::string(Real);
  }
  if (Out->Target.empty()) {
    // A dangling symbolic link stays a link: the file it names is created.
    char Buf[4096];
    ssize_t N = sys::fs::is_symlink_file(Path) ? ::readlink(Out->Path.c_str(), Buf, sizeof(Buf)) : -1;
    if (N > 0 && size_t(N) < sizeof(Buf)) {
      SmallString<256> Link(StringRef(Buf, N));
      if (sys::path::is_relative(Link)) {
        SmallString<256> Abs(sys::path::parent_path(Path));
        sys::path::append(Abs, Link);
        Link = Abs;
      }
      Out->Target = std::string(Link);
    } else {
      Out->Target = Out->Path;
    }
  }
  SmallString<256> Temp;
  int Fd;
  if (std::error_code EC =
          createUniqueFileIn(sys::path::parent_path(Out->Target),
                             (sys::path::filename(Out->Target) + ".tmp-").str(), Fd, Temp))
    return writeError(Path, EC);
  sys::Process::SafelyCloseFileDescriptor(Fd);
  Out->WritePath = std::string(Temp);
  Out->Temporary = true;
  removeOnInterrupt(Out->WritePath);
  return Out;
}

OutputFile::~OutputFile() {
  if (!Temporary)
    return;
  sys::fs::remove(WritePath);
  forgetTemporary(WritePath);
}

Error OutputFile::write(StringRef Text) {
  if (Path.empty()) {
    outs() << Text;
    return flushStdout("stdout");
  }
  std::error_code EC;
  raw_fd_ostream OS(WritePath, EC);
  if (EC)
    return writeError(Path, EC);
  OS << Text;
  OS.close();
  if (OS.has_error()) {
    EC = OS.error();
    OS.clear_error();
    return writeError(Path, EC);
  }
  return Error::success();
}

Error OutputFile::commit() {
  if (!Temporary)
    return Error::success();
  // createUniqueFileIn makes the file 0600; a report is as readable as any file the user makes.
  unsigned Mask = ::umask(0);
  ::umask(Mask);
  sys::fs::setPermissions(WritePath, static_cast<sys::fs::perms>(0666 & ~Mask));
  if (std::error_code EC = sys::fs::rename(WritePath, Target))
    return writeError(Path, EC);
  forgetTemporary(WritePath);
  Temporary = false;
  return Error::success();
}

bool isRealFile(StringRef Path) {
  SmallString<256> Real;
  if (sys::fs::real_path(Path, Real))
    return false;
  for (StringRef Pseudo : {"/proc/", "/sys/", "/dev/"})
    if (StringRef(Real).starts_with(Pseudo))
      return false;
  return sys::fs::is_regular_file(Real);
}

namespace {

/// Its one message is what clang shows after "cannot open file '...': ".
class NotRegularCategory : public std::error_category {
public:
  const char *name() const noexcept override { return "torchtidy"; }
  std::string message(int) const override { return "not a regular file"; }
};

} // namespace

std::error_code notRegularFile() {
  static NotRegularCategory Category;
  return std::error_code(1, Category);
}

ErrorOr<std::unique_ptr<vfs::File>> RegularFilesOnly::openFileForRead(const Twine &Path) {
  // Whether the path exists is the underlying file system's answer (an in-memory overlay
  // sits above this one); only what exists on disk and is not a plain file is refused.
  SmallString<256> Name;
  Path.toVector(Name);
  ErrorOr<vfs::Status> St = ProxyFileSystem::status(Name);
  if (St && (St->getType() != sys::fs::file_type::regular_file || !isRealFile(Name)))
    return notRegularFile();
  return ProxyFileSystem::openFileForRead(Name);
}

Expected<std::string> readRegularFile(StringRef Path, const Twine &What, uint64_t MaxBytes,
                                      bool AllowPipe) {
  auto Fail = [&](const Twine &Why, std::error_code EC) -> Error {
    return createStringError(EC, "%s: %s", What.str().c_str(), Why.str().c_str());
  };
  int Fd = ::open(Path.str().c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (Fd < 0) {
    std::error_code EC(errno, std::generic_category());
    return Fail(EC.message(), EC);
  }
  auto Close = make_scope_exit([Fd] { ::close(Fd); });
  struct stat St;
  bool Pipe = AllowPipe && ::fstat(Fd, &St) == 0 && S_ISFIFO(St.st_mode);
  if (Pipe) {
    // A stream the user named (`--files-from <(git diff ...)`): read to its end, bounded; a
    // FIFO nobody writes to ends at once.
    ::fcntl(Fd, F_SETFL, ::fcntl(Fd, F_GETFL) & ~O_NONBLOCK);
    std::string Text;
    char Chunk[65536];
    for (ssize_t N; (N = ::read(Fd, Chunk, sizeof(Chunk))) != 0;) {
      if (N < 0 && errno == EINTR)
        continue;
      if (N < 0) {
        std::error_code EC(errno, std::generic_category());
        return Fail(EC.message(), EC);
      }
      Text.append(Chunk, N);
      if (Text.size() > MaxBytes)
        return Fail("larger than " + Twine(MaxBytes >> 20) + " MiB",
                    std::make_error_code(std::errc::file_too_large));
    }
    return Text;
  }
  if (::fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode) || !isRealFile(Path))
    return Fail("not a regular file", notRegularFile());
  if (uint64_t(St.st_size) > MaxBytes)
    return Fail("larger than " + Twine(MaxBytes >> 20) + " MiB",
                std::make_error_code(std::errc::file_too_large));
  std::string Text(St.st_size, '\0');
  size_t Done = 0;
  while (Done < Text.size()) {
    ssize_t N = ::read(Fd, Text.data() + Done, Text.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      std::error_code EC(errno, std::generic_category());
      return Fail(EC.message(), EC);
    }
    if (N == 0)
      break;
    Done += N;
  }
  Text.resize(Done);
  return Text;
}

Error flushStdout(StringRef Where) {
  outs().flush();
  if (!outs().has_error())
    return Error::success();
  std::error_code EC = outs().error();
  outs().clear_error();
  return writeError(Where, EC);
}

} // namespace torchtidy::driver
