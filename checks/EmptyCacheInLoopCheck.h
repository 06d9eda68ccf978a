#ifndef TORCHTIDY_CHECKS_EMPTYCACHEINLOOPCHECK_H
#define TORCHTIDY_CHECKS_EMPTYCACHEINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-empty-cache-in-loop: see docs/checks/empty-cache-in-loop.md.
class EmptyCacheInLoopCheck : public TorchCheck {
public:
  EmptyCacheInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
