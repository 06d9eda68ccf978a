#ifndef TORCHTIDY_CHECKS_BACKWARDWITHOUTZEROGRADCHECK_H
#define TORCHTIDY_CHECKS_BACKWARDWITHOUTZEROGRADCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-backward-without-zero-grad: see docs/checks/backward-without-zero-grad.md.
class BackwardWithoutZeroGradCheck : public TorchCheck {
public:
  BackwardWithoutZeroGradCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
