#ifndef TORCHTIDY_CHECKS_REQUIRESGRADONLOSSCHECK_H
#define TORCHTIDY_CHECKS_REQUIRESGRADONLOSSCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-requires-grad-on-loss: see docs/checks/requires-grad-on-loss.md.
class RequiresGradOnLossCheck : public TorchCheck {
public:
  RequiresGradOnLossCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
