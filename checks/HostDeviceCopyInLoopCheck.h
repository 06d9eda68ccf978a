#ifndef TORCHTIDY_CHECKS_HOSTDEVICECOPYINLOOPCHECK_H
#define TORCHTIDY_CHECKS_HOSTDEVICECOPYINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-host-device-copy-in-loop: see docs/checks/host-device-copy-in-loop.md.
class HostDeviceCopyInLoopCheck : public TorchCheck {
public:
  HostDeviceCopyInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// A move to the device outside any loop of its function, which a loop calls.
  void checkCalled(const clang::CXXMemberCallExpr *Call, AutogradModel &Model);
};

} // namespace torchtidy

#endif
