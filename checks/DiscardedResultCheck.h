#ifndef TORCHTIDY_CHECKS_DISCARDEDRESULTCHECK_H
#define TORCHTIDY_CHECKS_DISCARDEDRESULTCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-discarded-result: see docs/checks/discarded-result.md.
class DiscardedResultCheck : public TorchCheck {
public:
  DiscardedResultCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
