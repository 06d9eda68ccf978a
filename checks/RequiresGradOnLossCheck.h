#ifndef TORCHTIDY_CHECKS_REQUIRESGRADONLOSSCHECK_H
#define TORCHTIDY_CHECKS_REQUIRESGRADONLOSSCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-requires-grad-on-loss: see docs/checks/requires-grad-on-loss.md.
class RequiresGradOnLossCheck : public clang::tidy::ClangTidyCheck {
public:
  RequiresGradOnLossCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
