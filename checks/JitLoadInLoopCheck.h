#ifndef TORCHTIDY_CHECKS_JITLOADINLOOPCHECK_H
#define TORCHTIDY_CHECKS_JITLOADINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-jit-load-in-loop: see docs/checks/jit-load-in-loop.md.
class JitLoadInLoopCheck : public TorchCheck {
public:
  JitLoadInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
