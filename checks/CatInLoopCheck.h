#ifndef TORCHTIDY_CHECKS_CATINLOOPCHECK_H
#define TORCHTIDY_CHECKS_CATINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-cat-in-loop: see docs/checks/cat-in-loop.md.
class CatInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  CatInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
