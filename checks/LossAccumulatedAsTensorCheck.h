#ifndef TORCHTIDY_CHECKS_LOSSACCUMULATEDASTENSORCHECK_H
#define TORCHTIDY_CHECKS_LOSSACCUMULATEDASTENSORCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-loss-accumulated-as-tensor: see docs/checks/loss-accumulated-as-tensor.md.
class LossAccumulatedAsTensorCheck : public TorchCheck {
public:
  LossAccumulatedAsTensorCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
