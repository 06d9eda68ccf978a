#ifndef TORCHTIDY_CHECKS_GRADFNRETAINEDCHECK_H
#define TORCHTIDY_CHECKS_GRADFNRETAINEDCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-grad-fn-retained: see docs/checks/grad-fn-retained.md.
class GradFnRetainedCheck : public clang::tidy::ClangTidyCheck {
public:
  GradFnRetainedCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
