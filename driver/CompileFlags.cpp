#include "CompileFlags.h"
#include "OutputFile.h"

#include "clang/Driver/Driver.h"
#include "clang/Driver/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::opt;
using namespace clang::driver::options;

namespace torchtidy::driver {

namespace {

Error flagsError(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// The text of the response file \p Path (readRegularFile: never a FIFO or a device).
Expected<std::string> readResponseFile(StringRef Path) {
  return readRegularFile(Path, "response file @" + Path, MaxResponseFileBytes);
}

/// Options whose only effect on an analysis is how the file is parsed. Matched with
/// Option::matches, so a group stands for all its members.
const unsigned ParsingOptions[] = {
    OPT_INPUT,
    // Where headers are found.
    OPT_I, OPT_I_, OPT_isystem, OPT_iquote, OPT_idirafter, OPT_isysroot, OPT_iprefix,
    OPT_iwithprefix, OPT_iwithprefixbefore, OPT_isystem_after, OPT_cxx_isystem, OPT_iframework,
    OPT_iframeworkwithsysroot, OPT_F, OPT_nostdinc, OPT_nostdincxx, OPT_nostdlibinc,
    OPT_nobuiltininc, OPT__sysroot_EQ, OPT__sysroot, OPT_resource_dir, OPT_resource_dir_EQ,
    OPT_stdlib_EQ, OPT_gcc_toolchain, OPT_gcc_install_dir_EQ, OPT_cuda_path_EQ, OPT_nogpuinc,
    OPT_nogpulib,
    // What is read before the file.
    OPT_include, OPT_imacros, OPT_include_pch,
    // Macros, the language, its standard, the target.
    OPT_D, OPT_U, OPT_std_EQ, OPT_x, OPT_ansi, OPT_driver_mode, OPT_target,
    OPT_target_legacy_spelling, OPT_offload_arch_EQ, OPT_cuda_host_only, OPT_cuda_device_only,
    OPT_pthread, OPT_m_Group, OPT_O_Group, OPT_g_Group,
    // Diagnostics and the action (clang's tooling makes every command -fsyntax-only).
    OPT_W_Group, OPT_W_value_Group, OPT_w, OPT_pedantic, OPT_pedantic_errors, OPT_c,
    OPT_fsyntax_only, OPT_pipe,
};

/// clang-cl's own options that change how a file is parsed (its aliases of GNU options,
/// /I, /D, /FI, /external:I, /Zc:sizedDealloc..., are matched through ParsingOptions).
/// cl_ignored_Group stays: clang-cl ignores those itself, and keeping them parses an
/// ambiguous path (/work/a.cpp reads as the ignored /w) exactly as the build did.
const unsigned ClParsingOptions[] = {
    OPT__SLASH_std, OPT__SLASH_EH, OPT__SLASH_GR, OPT__SLASH_GR_, OPT__SLASH_GX,
    OPT__SLASH_GX_, OPT__SLASH_permissive, OPT__SLASH_permissive_, OPT__SLASH_TC,
    OPT__SLASH_Tc, OPT__SLASH_TP, OPT__SLASH_Tp, OPT__SLASH_M_Group, OPT__SLASH_LD,
    OPT__SLASH_LDd, OPT__SLASH_O, OPT__SLASH_Zc, OPT__SLASH_Zc_wchar_t, OPT__SLASH_Zc_wchar_t_,
    OPT__SLASH_Zc_dllexportInlines, OPT__SLASH_Zc_dllexportInlines_, OPT__SLASH_imsvc,
    OPT__SLASH_arch, OPT__SLASH_vctoolsdir, OPT__SLASH_vctoolsversion, OPT__SLASH_winsdkdir,
    OPT__SLASH_winsdkversion, OPT__SLASH_winsysroot, OPT__SLASH_external_env, OPT__SLASH_u,
    OPT__SLASH_vmb, OPT__SLASH_vmg, OPT__SLASH_vmm, OPT__SLASH_vms, OPT__SLASH_vmv,
    OPT__SLASH_volatile_Group, OPT__SLASH_Za, OPT__SLASH_Ze, OPT__SLASH_Zi, OPT__SLASH_Z7,
    OPT__SLASH_Gd, OPT__SLASH_Gr, OPT__SLASH_Gv, OPT__SLASH_Gz, OPT__SLASH_Gregcall,
    OPT__SLASH_wd, OPT__SLASH_WX, OPT__SLASH_WX_, OPT_cl_ignored_Group,
};

/// The build outputs every build system asks for: removed without a word. clang-cl's
/// /Fo, /Fe, /Fd and /showIncludes are its -o, -MF and -MD.
const unsigned BuildOutputs[] = {OPT_o,         OPT_MD,        OPT_MMD,       OPT_MF,
                                 OPT_MT,        OPT_MQ,        OPT_MP,        OPT__SLASH_Fo,
                                 OPT__SLASH_Fe, OPT__SLASH_Fd, OPT__SLASH_FS, OPT__SLASH_showIncludes,
                                 OPT__SLASH_showIncludes_user};

/// -f options (named without "-f", "no-" and "=") that change the language or the macros
/// a file sees, or only diagnostics and code generation, which an analysis never runs.
/// Anything else (-fplugin=, -fmodules-cache-path=, -ftime-trace, -fcrash-diagnostics-dir=,
/// -fproc-stat-report=, ...) is removed.
bool languageOption(StringRef Name) {
  static const StringRef Names[] = {
      "exceptions", "cxx-exceptions", "rtti", "rtti-data", "asm", "builtin", "signed-char",
      "unsigned-char", "char8_t", "short-wchar", "wchar-type", "short-enums", "ms-extensions",
      "ms-compatibility", "ms-compatibility-version", "msc-version", "delayed-template-parsing",
      "gnu-keywords", "gnu89-inline", "declspec", "openmp", "openmp-simd", "openmp-version",
      "openmp-targets", "sized-deallocation", "aligned-allocation", "coroutines-ts",
      "access-control", "threadsafe-statics", "operator-names", "dollars-in-identifiers",
      "trigraphs", "digraphs", "pic", "PIC", "pie", "PIE", "fast-math", "finite-math-only",
      "math-errno", "honor-nans", "honor-infinities", "unsafe-math-optimizations",
      "reciprocal-math", "associative-math", "signed-zeros", "trapping-math", "sanitize",
      "sanitize-recover", "sanitize-trap", "template-depth", "constexpr-depth",
      "constexpr-steps", "bracket-depth", "new-alignment", "strict-aliasing", "permissive",
      "lax-vector-conversions", "blocks", "gnu-inline-asm", "common", "wrapv", "trapv",
      "strict-enums", "relaxed-template-template-args", "pascal-strings", "freestanding",
      "hosted", "input-charset", "exec-charset", "extended-identifiers", "gpu-rdc",
      "cuda-approx-transcendentals", "hip-new-launch-api", "visibility",
      "visibility-inlines-hidden", "stack-protector", "stack-protector-strong",
      "stack-protector-all", "stack-clash-protection", "cf-protection", "omit-frame-pointer",
      "function-sections", "data-sections", "plt", "semantic-interposition", "unwind-tables",
      "asynchronous-unwind-tables", "inline", "inline-functions", "unroll-loops", "vectorize",
      "slp-vectorize", "strict-overflow", "emulated-tls", "use-cxa-atexit", "use-init-array",
      "ident", "debug-prefix-map", "macro-prefix-map", "file-prefix-map", "color-diagnostics",
      "diagnostics-color", "diagnostics-show-option", "diagnostics-format",
      "diagnostics-show-template-tree", "caret-diagnostics", "show-column",
      "show-source-location", "message-length", "macro-backtrace-limit",
      "template-backtrace-limit", "error-limit", "spell-checking", "elide-type",
      "no-elide-type", "keep-static-consts", "merge-all-constants", "zero-initialized-in-bss",
      "lto", "fat-lto-objects", "whole-program-vtables", "split-lto-unit", "jump-tables",
      "delete-null-pointer-checks", "finite-loops", "char-signedness", "gnu-runtime",
      "experimental-library", "new-infallible", "assume-sane-operator-new", "modules-ts",
      "ms-volatile", "fixed-point", "strict-float-cast-overflow", "apple-kext",
      "record-command-line", "record-gcc-switches", "ms-runtime-lib", "vectorize-loops"};
  Name.consume_front("f");
  Name.consume_front("no-");
  Name.consume_back("=");
  return llvm::is_contained(Names, Name);
}

bool affectsParsing(const Option &O, bool CL) {
  if (O.matches(OPT_f_Group) || O.matches(OPT_f_clang_Group))
    return languageOption(O.getName());
  auto Matches = [&](unsigned Id) { return O.matches(Id); };
  return llvm::any_of(ParsingOptions, Matches) || (CL && llvm::any_of(ClParsingOptions, Matches));
}

/// Filters \p Strings, parsed with \p Table for the driver (or, with \p CC1, as the cc1
/// command line -Xclang values form). Appends what is kept to \p Kept and the spellings of
/// what is removed to \p Dropped; -Xclang values are appended to \p XclangValues instead.
void filter(ArrayRef<std::string> Strings, bool CC1, bool CL, std::vector<std::string> &Kept,
            std::vector<std::string> *XclangValues, std::set<std::string> &Dropped) {
  const OptTable &Table = clang::driver::getDriverOptTable();
  std::vector<const char *> Ptrs;
  for (const std::string &S : Strings)
    Ptrs.push_back(S.c_str());
  unsigned MissingIndex = 0, MissingCount = 0;
  // As clang's driver parses a GNU-style or a clang-cl command line (/Fo, /FI, /std:...);
  // cc1 options for -Xclang values. Which options a driver sees: flags in LLVM 16, a
  // visibility mask in LLVM 19.
#if LLVM_VERSION_MAJOR >= 17
  InputArgList List = Table.ParseArgs(
      Ptrs, MissingIndex, MissingCount,
      Visibility(CC1 ? CC1Option : CL ? CLOption : ClangOption));
#else
  unsigned Include = CC1  ? unsigned(CC1Option)
                     : CL ? unsigned(CLOption | CLDXCOption | CoreOption)
                          : 0;
  unsigned Exclude = CC1  ? 0
                     : CL ? unsigned(NoDriverOption | DXCOption | FlangOnlyOption)
                          : unsigned(NoDriverOption | CLOption | DXCOption | FlangOnlyOption);
  InputArgList List = Table.ParseArgs(Ptrs, MissingIndex, MissingCount, Include, Exclude);
#endif
  size_t End = MissingCount ? MissingIndex : Strings.size();
  std::string Prefix = CC1 ? "-Xclang " : "";
  SmallVector<const Arg *, 64> Args(List.begin(), List.end());
  for (size_t K = 0; K < Args.size(); ++K) {
    const Arg *A = Args[K];
    size_t From = A->getIndex(), To = K + 1 < Args.size() ? Args[K + 1]->getIndex() : End;
    const Option &O = A->getOption();
    if (!CC1 && O.matches(OPT_Xclang)) {
      XclangValues->push_back(A->getValue());
      continue;
    }
    // A cc1 command line has one input, the file: a stray -Xclang value is not another.
    if (affectsParsing(O, CL) && !(CC1 && O.getKind() == Option::InputClass)) {
      for (size_t I = From; I < To && I < Strings.size(); ++I)
        if (!Strings[I].empty())
          Kept.push_back(Strings[I]);
      continue;
    }
    // An option by its spelling (-MF, -Xclang -stats-file=), anything else as written.
    StringRef Spelling = A->getSpelling();
    if (O.getKind() == Option::UnknownClass || Spelling.size() < 2 || Spelling == "--")
      Spelling = StringRef(Strings[From]).split('=').first;
    if (!llvm::any_of(BuildOutputs, [&](unsigned Id) { return O.matches(Id); }))
      Dropped.insert(Prefix + Spelling.str());
  }
  if (MissingCount && MissingIndex < Strings.size())
    Dropped.insert(Prefix + Strings[MissingIndex]);
}

} // namespace

Error expandResponseFileArgs(std::vector<std::string> &Args, StringRef Directory) {
  if (llvm::none_of(llvm::drop_begin(Args), [](StringRef A) { return A.starts_with("@"); }))
    return Error::success();
  std::vector<std::string> Out;
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (I == 0 || !A.starts_with("@") || A.size() == 1) {
      Out.push_back(A.str());
      continue;
    }
    SmallString<256> Path(A.drop_front());
    if (!sys::path::is_absolute(Path) && !Directory.empty()) {
      SmallString<256> Abs(Directory);
      sys::path::append(Abs, Path);
      Path = Abs;
    }
    Expected<std::string> Text = readResponseFile(Path);
    if (!Text)
      return Text.takeError();
    SmallVector<const char *, 64> Tokens;
    cl::TokenizeGNUCommandLine(*Text, Saver, Tokens);
    for (const char *T : Tokens) {
      if (StringRef(T).starts_with("@"))
        return flagsError("response file @" + Path + " names another (" + T +
                    "): nested response files are not read");
      Out.push_back(T);
    }
  }
  Args = std::move(Out);
  return Error::success();
}

Error checkResponseFiles(ArrayRef<std::string> Args, StringRef Directory) {
  // (argument, depth) pairs still to check; arguments of response files join the list.
  std::vector<std::pair<std::string, unsigned>> Todo;
  for (const std::string &A : llvm::drop_begin(Args))
    Todo.push_back({A, 0});
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  while (!Todo.empty()) {
    auto [A, Depth] = Todo.back();
    Todo.pop_back();
    if (!StringRef(A).starts_with("@") || A.size() == 1)
      continue;
    SmallString<256> Path(StringRef(A).drop_front());
    if (!sys::path::is_absolute(Path) && !Directory.empty()) {
      SmallString<256> Abs(Directory);
      sys::path::append(Abs, Path);
      Path = Abs;
    }
    if (!sys::fs::exists(Path))
      continue;
    if (Depth >= 8)
      return flagsError("response file @" + Path + ": response files nested more than 8 deep");
    Expected<std::string> Text = readResponseFile(Path);
    if (!Text)
      return Text.takeError();
    SmallVector<const char *, 64> Tokens;
    cl::TokenizeGNUCommandLine(*Text, Saver, Tokens);
    for (const char *T : Tokens)
      Todo.push_back({T, Depth + 1});
  }
  return Error::success();
}

std::set<std::string> filterCompileCommand(std::vector<std::string> &Args) {
  std::set<std::string> Dropped;
  if (Args.empty())
    return Dropped;
  std::vector<std::string> Kept = {Args.front()}, Xclang, KeptCC1;
  // clang-cl's options when the compiler is clang-cl or cl.exe, or --driver-mode=cl.
  std::vector<const char *> Ptrs;
  for (const std::string &A : llvm::drop_begin(Args))
    Ptrs.push_back(A.c_str());
  bool CL = clang::driver::IsClangCL(clang::driver::getDriverMode(Args.front(), Ptrs));
  filter(ArrayRef<std::string>(Args).drop_front(), false, CL, Kept, &Xclang, Dropped);
  // The driver hands every -Xclang value to cc1 in order, wherever it stood: they are one
  // cc1 command line (-Xclang -include-pch -Xclang x.pch is one option).
  if (!Xclang.empty())
    filter(Xclang, true, false, KeptCC1, nullptr, Dropped);
  for (std::string &V : KeptCC1) {
    Kept.push_back("-Xclang");
    Kept.push_back(std::move(V));
  }
  Args = std::move(Kept);
  return Dropped;
}

} // namespace torchtidy::driver
