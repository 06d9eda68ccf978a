#ifndef TORCHTIDY_CHECKS_FROMBLOBDANGLINGCHECK_H
#define TORCHTIDY_CHECKS_FROMBLOBDANGLINGCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-from-blob-dangling: see docs/checks/from-blob-dangling.md.
class FromBlobDanglingCheck : public clang::tidy::ClangTidyCheck {
public:
  FromBlobDanglingCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
