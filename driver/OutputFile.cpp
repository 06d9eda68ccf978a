#include "OutputFile.h"
#include "Interrupt.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <sys/stat.h>

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
  if (Out->Target.empty())
    Out->Target = Out->Path;
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

Error flushStdout(StringRef Where) {
  outs().flush();
  if (!outs().has_error())
    return Error::success();
  std::error_code EC = outs().error();
  outs().clear_error();
  return writeError(Where, EC);
}

} // namespace torchtidy::driver
