#ifndef TORCHTIDY_CHECKS_GRADFNRETAINEDCHECK_H
#define TORCHTIDY_CHECKS_GRADFNRETAINEDCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-grad-fn-retained: see docs/checks/grad-fn-retained.md.
class GradFnRetainedCheck : public TorchCheck {
public:
  GradFnRetainedCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
