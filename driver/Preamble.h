// The automatic preamble: a precompiled header of the leading block of `#include <...>`
// lines of a translation unit, built once, kept in the cache directory and shared by every
// TU with the same block and flags. The main parse then loads it instead of re-parsing
// LibTorch (~8 s) and sees the block as blank lines, so offsets, lines and therefore
// findings are exactly those of a plain parse.
#ifndef TORCHTIDY_DRIVER_PREAMBLE_H
#define TORCHTIDY_DRIVER_PREAMBLE_H

#include "clang/Basic/FileManager.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Serialization/PCHContainerOperations.h"

#include <string>
#include <vector>

namespace torchtidy::driver {

struct PreambleUse {
  enum { None, Used, Built } How = None;
  /// The files the preamble was built from: the main parse does not read them, but its
  /// result depends on them.
  std::vector<std::string> Inputs;
};

/// Makes \p Invocation (a syntax-only parse of one main file) load the preamble of its
/// include block from \p CacheDir, building it first when it is missing or stale. Leaves
/// the invocation untouched, and returns None, whenever a preamble cannot apply: no leading
/// `<...>` includes, a PCH or -include already in the flags, modules, a header of the
/// block that is not a system header (its findings must be reported), a block that does
/// not compile.
PreambleUse applyPreamble(clang::CompilerInvocation &Invocation, clang::FileManager &Files,
                          std::shared_ptr<clang::PCHContainerOperations> PCHContainerOps,
                          llvm::StringRef CacheDir);

} // namespace torchtidy::driver

#endif
