#include "Cuda.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace llvm;

namespace torchtidy::driver {

namespace {

/// What an nvcc option means for the host-side parse.
enum class Role {
  Include,       // -I DIR
  SystemInclude, // -isystem DIR
  Define,        // -D NAME[=VALUE]
  Undefine,      // -U NAME
  PreInclude,    // -include FILE
  Std,           // -std VALUE
  Language,      // -x LANG
  HostOptions,   // -Xcompiler A,B: the host compiler's own options
  DefaultStream, // --default-stream per-thread|legacy
  KeepFlag,      // meaningful to clang as it is (-O2, -g, -w, -c)
  DropValue,     // device-side, with a value (-gencode arch=...,code=...)
  DropFlag,      // device-side, no value
  OutputValue,   // a build output (-o, -MF, -MT): removed without a word, as for any compiler
  OutputFlag,    // -MD, -MMD
};

struct NvccOption {
  StringRef Short, Long;
  Role R;
};

// nvcc's options by short and long name (the CUDA 11-13 documentation). An option not listed is
// dropped and named in the note, except the host options nvcc forwards itself.
const NvccOption Options[] = {
    {"-I", "--include-path", Role::Include},
    {"-isystem", "--system-include", Role::SystemInclude},
    {"-D", "--define-macro", Role::Define},
    {"-U", "--undefine-macro", Role::Undefine},
    {"-include", "--pre-include", Role::PreInclude},
    {"-std", "--std", Role::Std},
    {"-x", "--x", Role::Language},
    {"-Xcompiler", "--compiler-options", Role::HostOptions},
    {"-default-stream", "--default-stream", Role::DefaultStream},
    {"-c", "--compile", Role::KeepFlag},
    {"-g", "--debug", Role::KeepFlag},
    {"-w", "--disable-warnings", Role::KeepFlag},
    {"-O0", "", Role::KeepFlag},
    {"-O1", "", Role::KeepFlag},
    {"-O2", "", Role::KeepFlag},
    {"-O3", "", Role::KeepFlag},
    {"-o", "--output-file", Role::OutputValue},
    {"-gencode", "--generate-code", Role::DropValue},
    {"-arch", "--gpu-architecture", Role::DropValue},
    {"-code", "--gpu-code", Role::DropValue},
    {"-Xptxas", "--ptxas-options", Role::DropValue},
    {"-Xlinker", "--linker-options", Role::DropValue},
    {"-Xnvlink", "--nvlink-options", Role::DropValue},
    {"-Xfatbin", "--fatbin-options", Role::DropValue},
    {"-Xarchive", "--archive-options", Role::DropValue},
    {"-Xcudafe", "", Role::DropValue},
    {"-ccbin", "--compiler-bindir", Role::DropValue},
    {"-t", "--threads", Role::DropValue},
    {"-split-compile", "--split-compile", Role::DropValue},
    {"-maxrregcount", "--maxrregcount", Role::DropValue},
    {"-diag-suppress", "--diag-suppress", Role::DropValue},
    {"-diag-warn", "--diag-warn", Role::DropValue},
    {"-diag-error", "--diag-error", Role::DropValue},
    {"-Werror", "--Werror", Role::DropValue},
    {"-rdc", "--relocatable-device-code", Role::DropValue},
    {"-ftz", "--ftz", Role::DropValue},
    {"-prec-div", "--prec-div", Role::DropValue},
    {"-prec-sqrt", "--prec-sqrt", Role::DropValue},
    {"-fmad", "--fmad", Role::DropValue},
    {"-odir", "--output-directory", Role::DropValue},
    {"-MF", "--dependency-output", Role::OutputValue},
    {"-MT", "--dependency-target-name", Role::OutputValue},
    {"-l", "--library", Role::DropValue},
    {"-L", "--library-path", Role::DropValue},
    {"-keep-dir", "--keep-dir", Role::DropValue},
    {"-expt-relaxed-constexpr", "--expt-relaxed-constexpr", Role::DropFlag},
    {"-expt-extended-lambda", "--expt-extended-lambda", Role::DropFlag},
    {"-extended-lambda", "--extended-lambda", Role::DropFlag},
    {"-use_fast_math", "--use_fast_math", Role::DropFlag},
    {"-lineinfo", "--generate-line-info", Role::DropFlag},
    {"-G", "--device-debug", Role::DropFlag},
    {"-dc", "--device-c", Role::DropFlag},
    {"-dw", "--device-w", Role::DropFlag},
    {"-dlink", "--device-link", Role::DropFlag},
    {"-forward-unknown-to-host-compiler", "--forward-unknown-to-host-compiler", Role::DropFlag},
    {"-allow-unsupported-compiler", "--allow-unsupported-compiler", Role::DropFlag},
    {"-res-usage", "--resource-usage", Role::DropFlag},
    {"-keep", "--keep", Role::DropFlag},
    {"-MD", "--generate-dependencies-with-compile", Role::OutputFlag},
    {"-MMD", "--generate-nonsystem-dependencies-with-compile", Role::OutputFlag},
    {"-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets", Role::DropFlag},
    {"-Wno-deprecated-declarations", "--Wno-deprecated-declarations", Role::DropFlag},
    {"-restrict", "--restrict", Role::DropFlag},
    {"-src-in-ptx", "--source-in-ptx", Role::DropFlag},
};

const NvccOption *lookup(StringRef Name) {
  for (const NvccOption &O : Options)
    if (Name == O.Short || (!O.Long.empty() && Name == O.Long))
      return &O;
  return nullptr;
}

bool isNvcc(StringRef Argv0) {
  StringRef Name = sys::path::filename(Argv0);
  return Name == "nvcc" || Name.starts_with("nvcc.") || Name.starts_with("nvcc-");
}

/// Whether the command compiles CUDA with clang already (-x cuda, or a .cu input).
bool isClangCuda(ArrayRef<std::string> Args, StringRef File) {
  for (size_t I = 0; I + 1 < Args.size(); ++I)
    if (Args[I] == "-x")
      return Args[I + 1] == "cuda";
  return llvm::any_of(Args, [](StringRef A) { return A == "-xcuda"; }) ||
         sys::path::extension(File).equals_insensitive(".cu");
}

/// The toolkit: nvcc's own (…/bin/nvcc), else $CUDA_PATH or $CUDA_HOME, else /usr/local/cuda.
std::string toolkitFor(StringRef Argv0) {
  auto HasRuntime = [](StringRef Root) {
    SmallString<256> P(Root);
    sys::path::append(P, "include", "cuda_runtime.h");
    return sys::fs::exists(P);
  };
  if (isNvcc(Argv0) && sys::path::is_absolute(Argv0)) {
    StringRef Root = sys::path::parent_path(sys::path::parent_path(Argv0));
    if (HasRuntime(Root))
      return Root.str();
  }
  for (const char *Var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> Root = sys::Process::GetEnv(Var); Root && HasRuntime(*Root))
      return *Root;
  return "/usr/local/cuda";
}

/// Rewrites an nvcc command line; returns the options it dropped.
std::vector<std::string> fromNvcc(std::vector<std::string> &Args) {
  std::vector<std::string> Out{"clang++"}, Dropped;
  auto Drop = [&](StringRef Name) {
    if (!llvm::is_contained(Dropped, Name))
      Dropped.push_back(Name.str());
  };
  for (size_t I = 1; I < Args.size(); ++I) {
    StringRef A(Args[I]);
    if (!A.starts_with("-") || A == "-") {
      Out.push_back(A.str());
      continue;
    }
    // -I/-D/-U take their value joined too (-I/opt/include, -DNDEBUG).
    for (StringRef Joined : {"-I", "-D", "-U"})
      if (A.size() > 2 && A.starts_with(Joined) && !lookup(A.split('=').first)) {
        Out.push_back(A.str());
        A = "";
        break;
      }
    if (A.empty())
      continue;
    auto [Name, Value] = A.split('=');
    bool HasValue = A.contains('=');
    const NvccOption *O = lookup(Name);
    if (!O) {
      // Host options nvcc forwards (-forward-unknown-to-host-compiler, CMake's default).
      if (A.starts_with("-f") || A.starts_with("-m") || A.starts_with("-W") || A == "-pthread")
        Out.push_back(A.str());
      else
        Drop(Name);
      continue;
    }
    bool TakesValue = O->R != Role::KeepFlag && O->R != Role::DropFlag && O->R != Role::OutputFlag;
    std::string V = Value.str();
    if (TakesValue && !HasValue && I + 1 < Args.size())
      V = Args[++I];
    switch (O->R) {
    case Role::Include:
      Out.insert(Out.end(), {"-I", V});
      break;
    case Role::SystemInclude:
      Out.insert(Out.end(), {"-isystem", V});
      break;
    case Role::Define:
      Out.insert(Out.end(), {"-D", V});
      break;
    case Role::Undefine:
      Out.insert(Out.end(), {"-U", V});
      break;
    case Role::PreInclude:
      Out.insert(Out.end(), {"-include", V});
      break;
    case Role::Std:
      Out.push_back("-std=" + V);
      break;
    case Role::Language:
      Out.insert(Out.end(), {"-x", V == "cu" ? "cuda" : V});
      break;
    case Role::HostOptions: {
      SmallVector<StringRef, 4> Parts;
      StringRef(V).split(Parts, ',', -1, /*KeepEmpty=*/false);
      for (StringRef P : Parts)
        Out.push_back(P.trim().str());
      break;
    }
    case Role::DefaultStream:
      Out.push_back("-fgpu-default-stream=" + V);
      break;
    case Role::KeepFlag:
      Out.push_back(A.str());
      break;
    case Role::DropValue:
    case Role::DropFlag:
      Drop(Name);
      break;
    case Role::OutputValue:
    case Role::OutputFlag:
      break;
    }
  }
  Args = std::move(Out);
  return Dropped;
}

} // namespace

/// CUDA 13 keeps thrust, cub and libcu++ in include/cccl, which nvcc searches by itself.
void addCccl(std::vector<std::string> &Args, StringRef Toolkit) {
  SmallString<256> Cccl(Toolkit);
  sys::path::append(Cccl, "include", "cccl");
  if (sys::fs::is_directory(Cccl) && !llvm::is_contained(Args, std::string(Cccl)))
    Args.insert(Args.end(), {"-idirafter", std::string(Cccl)});
}

std::vector<std::string> nvccToClang(std::vector<std::string> &Args, StringRef File) {
  if (Args.empty() || !isNvcc(Args.front()))
    return {};
  std::string Toolkit = toolkitFor(Args.front());
  std::vector<std::string> Dropped = fromNvcc(Args);
  // nvcc compiles a .cu file as CUDA without -x; so does clang, but not other extensions.
  if (!isClangCuda(Args, File))
    Args.insert(Args.begin() + 1, {"-x", "cuda"});
  Args.push_back("--cuda-path=" + Toolkit);
  addCccl(Args, Toolkit);
  return Dropped;
}

bool addCudaHostArguments(std::vector<std::string> &Args, StringRef File) {
  if (Args.empty() || !isClangCuda(Args, File))
    return false;
  std::string Toolkit = toolkitFor(Args.front());
  for (StringRef A : Args)
    if (A.consume_front("--cuda-path="))
      Toolkit = A.str();
  if (!llvm::any_of(Args, [](StringRef A) { return A.starts_with("--cuda-path="); }))
    Args.push_back("--cuda-path=" + Toolkit);
  llvm::erase_if(Args, [](StringRef A) { return A == "--cuda-device-only"; });
  Args.insert(Args.end(), {"--cuda-host-only",
                           // Clang 16 knows CUDA up to 11.8; the host side parses with 12 and 13.
                           "-Wno-unknown-cuda-version",
                           // CCCL's host-device SFINAE helpers are C variadic functions.
                           "-Xclang", "-fcuda-allow-variadic-functions"});
  addCccl(Args, Toolkit);
  return true;
}

StringRef compatHeaderDir() { return "/torchtidy-compat-headers"; }

IntrusiveRefCntPtr<vfs::FileSystem> compatHeaderFileSystem() {
  IntrusiveRefCntPtr<vfs::InMemoryFileSystem> FS(new vfs::InMemoryFileSystem);
  auto Add = [&](StringRef Rel, StringRef Text) {
    SmallString<128> Path(compatHeaderDir());
    sys::path::append(Path, Rel);
    FS->addFile(Path, /*ModificationTime=*/0, MemoryBuffer::getMemBufferCopy(Text, Path));
  };
  // What a CUDA build of LibTorch generates (c10/cuda/impl/cuda_cmake_macros.h.in).
  Add("c10/cuda/impl/cuda_cmake_macros.h", "#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n");
  // Texture fetches are device code, which a host-side analysis never reads.
  Add("texture_fetch_functions.h", "#pragma once\n");
  return FS;
}

} // namespace torchtidy::driver
