#ifndef TORCHTIDY_CHECKS_HOSTDEVICECOPYINLOOPCHECK_H
#define TORCHTIDY_CHECKS_HOSTDEVICECOPYINLOOPCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

/// torch-host-device-copy-in-loop: see docs/checks/host-device-copy-in-loop.md.
class HostDeviceCopyInLoopCheck : public clang::tidy::ClangTidyCheck {
public:
  HostDeviceCopyInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
