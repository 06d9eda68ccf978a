#ifndef TORCHTIDY_CHECKS_ELEMENTWISETENSORWRITESINLOOPCHECK_H
#define TORCHTIDY_CHECKS_ELEMENTWISETENSORWRITESINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-elementwise-tensor-writes-in-loop: see docs/checks/elementwise-tensor-writes-in-loop.md.
class ElementwiseTensorWritesInLoopCheck : public TorchCheck {
public:
  ElementwiseTensorWritesInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
