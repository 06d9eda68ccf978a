#ifndef TORCHTIDY_CHECKS_CATINLOOPCHECK_H
#define TORCHTIDY_CHECKS_CATINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-cat-in-loop: see docs/checks/cat-in-loop.md.
class CatInLoopCheck : public TorchCheck {
public:
  CatInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
