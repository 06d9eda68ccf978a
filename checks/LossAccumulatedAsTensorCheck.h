#ifndef TORCHTIDY_CHECKS_LOSSACCUMULATEDASTENSORCHECK_H
#define TORCHTIDY_CHECKS_LOSSACCUMULATEDASTENSORCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-loss-accumulated-as-tensor: see docs/checks/loss-accumulated-as-tensor.md.
class LossAccumulatedAsTensorCheck : public clang::tidy::ClangTidyCheck {
public:
  LossAccumulatedAsTensorCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
