#ifndef TORCHTIDY_CHECKS_NONCONTIGUOUSINLOOPCHECK_H
#define TORCHTIDY_CHECKS_NONCONTIGUOUSINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-noncontiguous-in-loop: see docs/checks/noncontiguous-in-loop.md.
class NoncontiguousInLoopCheck : public TorchCheck {
public:
  NoncontiguousInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
