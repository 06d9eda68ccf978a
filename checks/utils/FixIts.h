#ifndef TORCHTIDY_CHECKS_UTILS_FIXITS_H
#define TORCHTIDY_CHECKS_UTILS_FIXITS_H

// The edits of torchtidy's fix-its. Each returns the hints of a rewrite it is certain of, or
// none: never in a macro, a template (pattern or instantiation), a statement that is not a
// direct child of a `{}` block or shares its lines. Inserted lines take their neighbour's indent.

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Diagnostic.h"

#include <vector>

namespace torchtidy::fixits {

using Fixes = std::vector<clang::FixItHint>;

/// Whether a postfix member call (`.detach()`) on \p E needs parentheses around it.
bool needsParens(const clang::Expr *E);
/// The text of \p E as written, or empty when it is not written in one piece of one file.
llvm::StringRef sourceText(const clang::Stmt *S, clang::ASTContext &Ctx);
/// Whether the translation unit declares `torch::<Name>` (`NoGradGuard`): a fix may name it.
bool declaresTorch(llvm::StringRef Name, clang::ASTContext &Ctx);
/// `obj.Method()` / `obj->Method()` on the object of \p Call (`obj.step()` -> `obj.zero_grad()`)
/// when it is a variable declared before \p Scope or a member of `this`; else empty.
std::string sameObjectCall(const clang::CallExpr *Call, llvm::StringRef Method, const clang::Stmt *Scope,
                           clang::ASTContext &Ctx);
/// The declaration of one variable that \p Init initializes (`T v = Init;`), or null.
const clang::DeclStmt *declarationOf(const clang::Expr *Init, clang::ASTContext &Ctx);
/// The `{}` block \p S is a statement of (a switch's body, whose statements follow case labels,
/// is none), or null.
const clang::CompoundStmt *enclosingBlock(const clang::Stmt *S, clang::ASTContext &Ctx);
/// The statement of a `{}` block that contains \p E (\p E itself when it is one), or null.
const clang::Stmt *blockStatement(const clang::Stmt *E, clang::ASTContext &Ctx);

/// The block statement that is \p E up to implicit nodes, or null when \p E is part of a larger one.
const clang::Stmt *statementOf(const clang::Expr *E, clang::ASTContext &Ctx);

/// `E` -> `E<Suffix>` (`(a + b).detach()` with parentheses where needed).
Fixes appendCall(const clang::Expr *E, llvm::StringRef Suffix, clang::ASTContext &Ctx);
/// \p Code (statements, one a line) on lines of their own before the block statement \p S.
Fixes insertBefore(const clang::Stmt *S, llvm::StringRef Code, clang::ASTContext &Ctx);
/// \p Code (statements, one a line) on lines of their own after the block statement \p S.
Fixes insertAfter(const clang::Stmt *S, llvm::StringRef Code, clang::ASTContext &Ctx);
/// \p Code as the first statement of \p Block (a function or lambda body, not empty).
Fixes insertFirst(const clang::CompoundStmt *Block, llvm::StringRef Code, clang::ASTContext &Ctx);
/// Removes the block statement \p S and its lines.
Fixes remove(const clang::Stmt *S, clang::ASTContext &Ctx);
/// Moves the block statement \p S after the block statement \p After (same file).
Fixes moveAfter(const clang::Stmt *S, const clang::Stmt *After, clang::ASTContext &Ctx);
/// Moves the declaration \p DS, a statement of \p Loop's body (not of a block in it), before the
/// loop when no value changes: one variable, its name free in the function, never assigned or
/// moved from in the loop, initialized from names declared before the loop that it never assigns.
Fixes hoistBefore(const clang::DeclStmt *DS, const clang::Stmt *Loop, clang::ASTContext &Ctx);
/// `S` -> `{ <First> S }`, one statement a line, one indentation step deeper.
Fixes wrapInBlock(const clang::Stmt *S, llvm::StringRef First, clang::ASTContext &Ctx);

} // namespace torchtidy::fixits

#endif
