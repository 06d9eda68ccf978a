#ifndef TORCHTIDY_CHECKS_OPTIMIZERCONSTRUCTEDINLOOPCHECK_H
#define TORCHTIDY_CHECKS_OPTIMIZERCONSTRUCTEDINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-optimizer-constructed-in-loop: see docs/checks/optimizer-constructed-in-loop.md.
class OptimizerConstructedInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  OptimizerConstructedInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
