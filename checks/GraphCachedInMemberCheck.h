#ifndef TORCHTIDY_CHECKS_GRAPHCACHEDINMEMBERCHECK_H
#define TORCHTIDY_CHECKS_GRAPHCACHEDINMEMBERCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-graph-cached-in-member: see docs/checks/graph-cached-in-member.md.
class GraphCachedInMemberCheck : public TorchCheck {
public:
  GraphCachedInMemberCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
