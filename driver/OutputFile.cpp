#include "OutputFile.h"
#include "Interrupt.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/stat.h>

using namespace llvm;

namespace torchtidy::driver {

namespace {

Error writeError(StringRef Path, std::error_code EC) {
  return createStringError(EC, "%s: cannot write: %s", Path.str().c_str(), EC.message().c_str());
}

} // namespace

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
  SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  SmallString<256> Temp;
  int Fd;
  if (std::error_code EC = sys::fs::createUniqueFile(Model, Fd, Temp))
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
  // createUniqueFile makes the file 0600; a report is as readable as any file the user makes.
  unsigned Mask = ::umask(0);
  ::umask(Mask);
  sys::fs::setPermissions(WritePath, static_cast<sys::fs::perms>(0666 & ~Mask));
  if (std::error_code EC = sys::fs::rename(WritePath, Path))
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
