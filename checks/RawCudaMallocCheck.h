#ifndef TORCHTIDY_CHECKS_RAWCUDAMALLOCCHECK_H
#define TORCHTIDY_CHECKS_RAWCUDAMALLOCCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-raw-cuda-malloc: see docs/checks/raw-cuda-malloc.md.
class RawCudaMallocCheck : public clang::tidy::ClangTidyCheck {
public:
  RawCudaMallocCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
