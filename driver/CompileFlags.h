// What a compile command may do to an analysis: change how the file is parsed, nothing
// else. A compile database is data from the project (possibly hostile: a cloned repository
// ships its own), and clang's driver reads many options that write files (-MD, -Wp,-MD,
// --serialize-diagnostics, -Xclang -header-include-file, -Xclang -stats-file=), load code
// (-fplugin, -Xclang -load) or read what they should not (@/dev/stdin). Every command is
// passed through here before a worker sees it.
#ifndef TORCHTIDY_DRIVER_COMPILEFLAGS_H
#define TORCHTIDY_DRIVER_COMPILEFLAGS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <set>
#include <string>
#include <vector>

namespace torchtidy::driver {

/// A response file larger than this is refused: no real command line comes near it.
inline constexpr uint64_t MaxResponseFileBytes = 1 << 20;

/// Replaces each `@file` argument of \p Args (argv[0] excluded) by the arguments the file
/// holds, tokenized as GNU command lines, a relative path being relative to \p Directory.
/// Only regular files of at most MaxResponseFileBytes are read (never a FIFO, a device,
/// /dev/stdin); an `@file` inside a response file is refused, not expanded.
llvm::Error expandResponseFileArgs(std::vector<std::string> &Args, llvm::StringRef Directory);

/// What stock clang-tidy would read for the `@file` arguments of \p Args (argv[0] excluded),
/// checked the driver's way without changing \p Args: each existing one must be a regular
/// file of at most MaxResponseFileBytes, and so must the response files it names, up to a
/// depth of 8. A missing file is not an error (clang leaves the argument as it is).
llvm::Error checkResponseFiles(llvm::ArrayRef<std::string> Args, llvm::StringRef Directory);

/// Keeps the arguments of the compiler command \p Args (argv[0] is the compiler) that affect
/// how a file is parsed: inputs, include paths, macros, the language and its standard, the
/// target, -f options that change the language, warnings, -m options, -O and -g. The rest is
/// removed: options that write files, load plugins or are not understood. -Xclang values are
/// filtered the same way, as the cc1 command line they form. Returns the spellings of the
/// options removed (for one message per run), without the build outputs every command has
/// (-o, -MD, -MF, ...), which are removed silently.
std::set<std::string> filterCompileCommand(std::vector<std::string> &Args);

} // namespace torchtidy::driver

#endif
