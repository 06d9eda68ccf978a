#ifndef TORCHTIDY_CHECKS_EMPTYCACHEINLOOPCHECK_H
#define TORCHTIDY_CHECKS_EMPTYCACHEINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-empty-cache-in-loop: see docs/checks/empty-cache-in-loop.md.
class EmptyCacheInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  EmptyCacheInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
