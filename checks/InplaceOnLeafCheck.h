#ifndef TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H
#define TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-inplace-on-leaf: see docs/checks/inplace-on-leaf.md.
class InplaceOnLeafCheck : public TorchCheck {
public:
  InplaceOnLeafCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
