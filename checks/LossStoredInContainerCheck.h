#ifndef TORCHTIDY_CHECKS_LOSSSTOREDINCONTAINERCHECK_H
#define TORCHTIDY_CHECKS_LOSSSTOREDINCONTAINERCHECK_H

#include "utils/TorchCheck.h"

namespace torchtidy {

class AutogradModel;

/// torch-loss-stored-in-container: see docs/checks/loss-stored-in-container.md.
class LossStoredInContainerCheck : public TorchCheck {
public:
  LossStoredInContainerCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : TorchCheck(Name, Context) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  /// A store outside any loop, into a container its caller owns: reports the calls made
  /// from loops.
  void reportThroughCallers(const clang::Expr *StoreSite, llvm::ArrayRef<const clang::Expr *> Values,
                            const clang::ValueDecl *Root, const clang::FunctionDecl *Helper,
                            AutogradModel &M);
  void report(const clang::Expr *Site, const clang::Expr *Value, const clang::Expr *Source,
              const clang::Stmt *Loop, const clang::Expr *HelperStore, bool Fix, clang::ASTContext &Ctx);
};

} // namespace torchtidy

#endif
