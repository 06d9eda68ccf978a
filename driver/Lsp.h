// `torchtidy lsp`: a Language Server over stdio that publishes torchtidy's findings as
// diagnostics (beside clangd, which cannot load clang-tidy plugins) and offers their
// fix-its as code actions.
#ifndef TORCHTIDY_DRIVER_LSP_H
#define TORCHTIDY_DRIVER_LSP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace torchtidy::driver {

/// Serves until `exit`. \p Self is this executable, re-run with \p WorkerArgs (the
/// options given after `lsp`) as the worker of each analysis.
int runLsp(llvm::StringRef Self, llvm::ArrayRef<const char *> WorkerArgs);

} // namespace torchtidy::driver

#endif
