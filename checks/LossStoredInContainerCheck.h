#ifndef TORCHTIDY_CHECKS_LOSSSTOREDINCONTAINERCHECK_H
#define TORCHTIDY_CHECKS_LOSSSTOREDINCONTAINERCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-loss-stored-in-container: see docs/checks/loss-stored-in-container.md.
class LossStoredInContainerCheck : public clang::tidy::ClangTidyCheck {
public:
  LossStoredInContainerCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
