#ifndef TORCHTIDY_CHECKS_GRAPHCACHEDINMEMBERCHECK_H
#define TORCHTIDY_CHECKS_GRAPHCACHEDINMEMBERCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-graph-cached-in-member: see docs/checks/graph-cached-in-member.md.
class GraphCachedInMemberCheck : public clang::tidy::ClangTidyCheck {
public:
  GraphCachedInMemberCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
