#ifndef TORCHTIDY_CHECKS_MODULECLONEINLOOPCHECK_H
#define TORCHTIDY_CHECKS_MODULECLONEINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-module-clone-in-loop: see docs/checks/module-clone-in-loop.md.
class ModuleCloneInLoopCheck : public TorchCheck {
public:
  ModuleCloneInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
