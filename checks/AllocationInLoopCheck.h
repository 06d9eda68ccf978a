#ifndef TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H
#define TORCHTIDY_CHECKS_ALLOCATIONINLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-allocation-in-loop: see docs/checks/allocation-in-loop.md.
class AllocationInLoopCheck : public TorchCheck {
public:
  AllocationInLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  void report(const clang::CallExpr *Call, const clang::FunctionDecl *Factory);
  /// \p Call in \p Fn, which a loop of another translation unit calls on every iteration.
  void checkAcrossTUs(const clang::CallExpr *Call, const clang::FunctionDecl *Factory, const clang::FunctionDecl *Fn,
                      AutogradModel &Model);
};

} // namespace torchtidy

#endif
