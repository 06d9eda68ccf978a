#ifndef TORCHTIDY_CHECKS_SYNCINHOTLOOPCHECK_H
#define TORCHTIDY_CHECKS_SYNCINHOTLOOPCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

/// torch-sync-in-hot-loop: see docs/checks/sync-in-hot-loop.md.
class SyncInHotLoopCheck : public TorchCheck {
public:
  SyncInHotLoopCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context);
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  const bool TrainingLoopsOnly;
  const bool IgnoreCpuOnly;
};

} // namespace torchtidy

#endif
