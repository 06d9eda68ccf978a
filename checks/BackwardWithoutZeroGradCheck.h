#ifndef TORCHTIDY_CHECKS_BACKWARDWITHOUTZEROGRADCHECK_H
#define TORCHTIDY_CHECKS_BACKWARDWITHOUTZEROGRADCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-backward-without-zero-grad: see docs/checks/backward-without-zero-grad.md.
class BackwardWithoutZeroGradCheck : public clang::tidy::ClangTidyCheck {
public:
  BackwardWithoutZeroGradCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
