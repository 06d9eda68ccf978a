#ifndef TORCHTIDY_CHECKS_EVALWITHOUTNOGRADCHECK_H
#define TORCHTIDY_CHECKS_EVALWITHOUTNOGRADCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-eval-without-no-grad: see docs/checks/eval-without-no-grad.md.
class EvalWithoutNoGradCheck : public clang::tidy::ClangTidyCheck {
public:
  EvalWithoutNoGradCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
