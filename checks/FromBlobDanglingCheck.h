#ifndef TORCHTIDY_CHECKS_FROMBLOBDANGLINGCHECK_H
#define TORCHTIDY_CHECKS_FROMBLOBDANGLINGCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-from-blob-dangling: see docs/checks/from-blob-dangling.md.
class FromBlobDanglingCheck : public TorchCheck {
public:
  FromBlobDanglingCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
