#ifndef TORCHTIDY_CHECKS_GRADMODENOTINHERITEDBYTHREADCHECK_H
#define TORCHTIDY_CHECKS_GRADMODENOTINHERITEDBYTHREADCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace torchtidy {

/// torch-grad-mode-not-inherited-by-thread: see docs/checks/grad-mode-not-inherited-by-thread.md.
class GradModeNotInheritedByThreadCheck : public clang::tidy::ClangTidyCheck {
public:
  GradModeNotInheritedByThreadCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// One finding per thread launch, at its first forward.
  llvm::SmallPtrSet<const clang::Expr *, 4> Reported;
};

} // namespace torchtidy

#endif
