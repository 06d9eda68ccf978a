#ifndef TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H
#define TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-inplace-on-leaf: see docs/checks/inplace-on-leaf.md.
class InplaceOnLeafCheck : public clang::tidy::ClangTidyCheck {
public:
  InplaceOnLeafCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
