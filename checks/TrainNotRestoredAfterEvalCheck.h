#ifndef TORCHTIDY_CHECKS_TRAINNOTRESTOREDAFTEREVALCHECK_H
#define TORCHTIDY_CHECKS_TRAINNOTRESTOREDAFTEREVALCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-train-not-restored-after-eval: see docs/checks/train-not-restored-after-eval.md.
class TrainNotRestoredAfterEvalCheck : public TorchCheck {
public:
  TrainNotRestoredAfterEvalCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torchtidy

#endif
