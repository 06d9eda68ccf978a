#ifndef TORCHTIDY_CHECKS_ZEROGRADBETWEENBACKWARDANDSTEPCHECK_H
#define TORCHTIDY_CHECKS_ZEROGRADBETWEENBACKWARDANDSTEPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-zero-grad-between-backward-and-step: see docs/checks/zero-grad-between-backward-and-step.md.
class ZeroGradBetweenBackwardAndStepCheck : public clang::tidy::ClangTidyCheck {
public:
  ZeroGradBetweenBackwardAndStepCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
