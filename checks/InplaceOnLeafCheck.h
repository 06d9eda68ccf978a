#ifndef TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H
#define TORCHTIDY_CHECKS_INPLACEONLEAFCHECK_H

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace clang {
class CXXMemberCallExpr;
class Expr;
class FieldDecl;
} // namespace clang

namespace torchtidy {

/// torch-inplace-on-leaf: see docs/checks/inplace-on-leaf.md.
class InplaceOnLeafCheck : public clang::tidy::ClangTidyCheck {
public:
  InplaceOnLeafCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : ClangTidyCheck(Name, Context) {}
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void onStartOfTranslationUnit() override;

  /// What a user-code field is ever given: initializers, assignments, requires_grad marks.
  struct FieldDefs {
    std::vector<const clang::Expr *> Values;
    std::vector<const clang::CXXMemberCallExpr *> Marks;
  };

private:
  /// Per translation unit: scanning the whole unit for a field's assignments is costly.
  llvm::DenseMap<const clang::FieldDecl *, FieldDefs> FieldCache;
};

} // namespace torchtidy

#endif
