#ifndef TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H
#define TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-allocation-in-loop: see docs/checks/allocation-in-loop.md.
class AllocationInLoopCheck : public TorchCheck {
public:
  AllocationInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
