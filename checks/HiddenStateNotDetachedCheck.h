#ifndef TORCHTIDY_CHECKS_HIDDENSTATENOTDETACHEDCHECK_H
#define TORCHTIDY_CHECKS_HIDDENSTATENOTDETACHEDCHECK_H

#include "utils/TorchCheck.h"

#include "llvm/ADT/DenseSet.h"

namespace torchtidy {

/// torch-hidden-state-not-detached: see docs/checks/hidden-state-not-detached.md.
class HiddenStateNotDetachedCheck : public TorchCheck {
public:
  HiddenStateNotDetachedCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// A state write is reported once, whichever forward it reaches.
  llvm::DenseSet<const clang::Stmt *> Reported;
};

} // namespace torchtidy

#endif
