#ifndef TORCHTIDY_CHECKS_GRADMODENOTINHERITEDBYTHREADCHECK_H
#define TORCHTIDY_CHECKS_GRADMODENOTINHERITEDBYTHREADCHECK_H

#include "utils/TorchCheck.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace torchtidy {

/// torch-grad-mode-not-inherited-by-thread: see docs/checks/grad-mode-not-inherited-by-thread.md.
class GradModeNotInheritedByThreadCheck : public TorchCheck {
public:
  GradModeNotInheritedByThreadCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// One finding per thread launch, at its first forward.
  llvm::SmallPtrSet<const clang::Expr *, 4> Reported;
};

} // namespace torchtidy

#endif
