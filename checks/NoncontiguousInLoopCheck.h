#ifndef TORCHTIDY_CHECKS_NONCONTIGUOUSINLOOPCHECK_H
#define TORCHTIDY_CHECKS_NONCONTIGUOUSINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-noncontiguous-in-loop: see docs/checks/noncontiguous-in-loop.md.
class NoncontiguousInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  NoncontiguousInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
