// The LibTorch preamble: a precompiled header of the first LibTorch header a translation
// unit includes (`<torch/torch.h>` in most), wherever that include sits (in the TU or in a
// project header such as "model.h"). It is built once per configuration (the LibTorch
// headers found, the language, target and macros: not the project's own -I directories),
// kept in the cache directory and shared by every TU, project and the language server. The
// main parse loads it first and then reads the TU unchanged: the LibTorch include becomes a
// no-op (LibTorch's headers are include-once), project headers are still parsed and report
// their findings. It is used only where that parse provably equals the plain one, else the
// TU is parsed as usual, silently.
#ifndef TORCHTIDY_DRIVER_PREAMBLE_H
#define TORCHTIDY_DRIVER_PREAMBLE_H

#include "clang/Basic/FileManager.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Serialization/PCHContainerOperations.h"

#include <string>
#include <utility>
#include <vector>

namespace torchtidy::driver {

struct PreambleUse {
  enum { None, Used, Built } How = None;
  /// The files the preamble was built from: the main parse does not read them, but its
  /// result depends on them.
  std::vector<std::string> Inputs;
  /// The lookups of its build (and of the checks that it applies), with their outcomes
  /// (lookupOutcome in Cache.h).
  std::vector<std::pair<std::string, std::string>> Lookups;
};

/// Makes \p Invocation (a syntax-only parse of one main file) load the LibTorch preamble
/// from \p CacheDir, building it first when it is missing, stale or does not load. Leaves
/// the invocation untouched, and returns None, whenever the preamble cannot apply: no
/// LibTorch include, a PCH or -include already in the flags, modules, anything before the
/// LibTorch include that the preamble could change or that could change it (code, macros
/// the LibTorch headers name, a conditional, a system header the preamble does not hold), a
/// project directory that would shadow one of LibTorch's headers, a preamble that does not
/// compile.
PreambleUse applyPreamble(clang::CompilerInvocation &Invocation, clang::FileManager &Files,
                          std::shared_ptr<clang::PCHContainerOperations> PCHContainerOps,
                          llvm::StringRef CacheDir);

/// The names of the files \p Files has read, each once (what a parse depended on).
std::vector<llvm::StringRef> filesRead(const clang::FileManager &Files);

} // namespace torchtidy::driver

#endif
