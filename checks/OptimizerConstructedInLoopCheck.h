#ifndef TORCHTIDY_CHECKS_OPTIMIZERCONSTRUCTEDINLOOPCHECK_H
#define TORCHTIDY_CHECKS_OPTIMIZERCONSTRUCTEDINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-optimizer-constructed-in-loop: see docs/checks/optimizer-constructed-in-loop.md.
class OptimizerConstructedInLoopCheck : public TorchCheck {
public:
  OptimizerConstructedInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
