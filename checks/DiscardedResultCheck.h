#ifndef TORCHTIDY_CHECKS_DISCARDEDRESULTCHECK_H
#define TORCHTIDY_CHECKS_DISCARDEDRESULTCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-discarded-result: see docs/checks/discarded-result.md.
class DiscardedResultCheck : public clang::tidy::ClangTidyCheck {
public:
  DiscardedResultCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
