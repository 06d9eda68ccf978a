#ifndef TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H
#define TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-allocation-in-loop: see docs/checks/allocation-in-loop.md.
class AllocationInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  AllocationInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
