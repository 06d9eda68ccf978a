#ifndef TORCHTIDY_CHECKS_TRAINNOTRESTOREDAFTEREVALCHECK_H
#define TORCHTIDY_CHECKS_TRAINNOTRESTOREDAFTEREVALCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-train-not-restored-after-eval: see docs/checks/train-not-restored-after-eval.md.
class TrainNotRestoredAfterEvalCheck : public clang::tidy::ClangTidyCheck {
public:
  TrainNotRestoredAfterEvalCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
