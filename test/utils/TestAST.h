// Parses a unit test's code on the real LibTorch headers (through the test PCH) the way the
// driver analyzes a translation unit: the matchers see the main file's declarations only.
#ifndef TORCHTIDY_TEST_UTILS_TESTAST_H
#define TORCHTIDY_TEST_UTILS_TESTAST_H

#include "utils/TorchMatchers.h"

#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

#include <memory>
#include <string>
#include <vector>

namespace torchtidy::test {

/// The AST of \p Code named \p Name; null when it cannot be built. The caller checks that
/// it parsed without errors.
inline std::unique_ptr<clang::ASTUnit> parseMainFile(llvm::StringRef Code, llvm::StringRef Name) {
  std::vector<std::string> Args = {"-std=c++17", "-isystem", TORCHTIDY_TORCH_INCLUDE,
                                   "-include-pch", TORCHTIDY_TEST_PCH,
                                   "-resource-dir", TORCHTIDY_CLANG_RESOURCE_DIR};
  std::unique_ptr<clang::ASTUnit> AST = clang::tooling::buildASTFromCodeWithArgs(Code, Args, Name);
  if (!AST)
    return AST;
  // Only this file's declarations: the torch headers declare many variables named 'a'.
  clang::ASTContext &Ctx = AST->getASTContext();
  std::vector<clang::Decl *> Scope;
  forEachUserDecl(Ctx, [&](clang::Decl *D) {
    if (Ctx.getSourceManager().isInMainFile(D->getLocation()))
      Scope.push_back(D);
  });
  Ctx.setTraversalScope(Scope);
  return AST;
}

} // namespace torchtidy::test

#endif
