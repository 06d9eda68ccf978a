#ifndef TORCHTIDY_CHECKS_MODULECLONEINLOOPCHECK_H
#define TORCHTIDY_CHECKS_MODULECLONEINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-module-clone-in-loop: see docs/checks/module-clone-in-loop.md.
class ModuleCloneInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  ModuleCloneInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
