#ifndef TORCHTIDY_CHECKS_HIDDENSTATENOTDETACHEDCHECK_H
#define TORCHTIDY_CHECKS_HIDDENSTATENOTDETACHEDCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/DenseSet.h"

namespace torchtidy {

/// torch-hidden-state-not-detached: see docs/checks/hidden-state-not-detached.md.
class HiddenStateNotDetachedCheck : public clang::tidy::ClangTidyCheck {
public:
  HiddenStateNotDetachedCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// A state write is reported once, whichever forward it reaches.
  llvm::DenseSet<const clang::Stmt *> Reported;
};

} // namespace torchtidy

#endif
