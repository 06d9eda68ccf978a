#ifndef TORCHTIDY_CHECKS_ZEROGRADBETWEENBACKWARDANDSTEPCHECK_H
#define TORCHTIDY_CHECKS_ZEROGRADBETWEENBACKWARDANDSTEPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-zero-grad-between-backward-and-step: see docs/checks/zero-grad-between-backward-and-step.md.
class ZeroGradBetweenBackwardAndStepCheck : public TorchCheck {
public:
  ZeroGradBetweenBackwardAndStepCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
