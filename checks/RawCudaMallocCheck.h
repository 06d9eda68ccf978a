#ifndef TORCHTIDY_CHECKS_RAWCUDAMALLOCCHECK_H
#define TORCHTIDY_CHECKS_RAWCUDAMALLOCCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-raw-cuda-malloc: see docs/checks/raw-cuda-malloc.md.
class RawCudaMallocCheck : public TorchCheck {
public:
  RawCudaMallocCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
