#ifndef TORCHTIDY_CHECKS_ELEMENTWISETENSORWRITESINLOOPCHECK_H
#define TORCHTIDY_CHECKS_ELEMENTWISETENSORWRITESINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-elementwise-tensor-writes-in-loop: see docs/checks/elementwise-tensor-writes-in-loop.md.
class ElementwiseTensorWritesInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  ElementwiseTensorWritesInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
