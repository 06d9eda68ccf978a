#ifndef TORCHTIDY_CHECKS_EVALWITHOUTNOGRADCHECK_H
#define TORCHTIDY_CHECKS_EVALWITHOUTNOGRADCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-eval-without-no-grad: see docs/checks/eval-without-no-grad.md.
class EvalWithoutNoGradCheck : public TorchCheck {
public:
  EvalWithoutNoGradCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
