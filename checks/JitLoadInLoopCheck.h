#ifndef TORCHTIDY_CHECKS_JITLOADINLOOPCHECK_H
#define TORCHTIDY_CHECKS_JITLOADINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-jit-load-in-loop: see docs/checks/jit-load-in-loop.md.
class JitLoadInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  JitLoadInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
