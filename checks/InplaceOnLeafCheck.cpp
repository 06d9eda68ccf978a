#include "InplaceOnLeafCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

AST_MATCHER(Expr, isInplaceTensorOp) {
  // What an operation is does not depend on the model's settings.
  return AutogradModel::get(Finder->getASTContext()).inplaceOp(&Node).has_value();
}

std::string sourceText(const Expr *E, ASTContext &Ctx) {
  // `item->add_(..)` applies to `item.operator->()`, spelled `item->`.
  if (const auto *Arrow = dyn_cast<CXXOperatorCallExpr>(E->IgnoreUnlessSpelledInSource()); Arrow && Arrow->getOperator() == OO_Arrow)
    E = Arrow->getArg(0);
  StringRef Text = Lexer::getSourceText(CharSourceRange::getTokenRange(E->getSourceRange()),
                                        Ctx.getSourceManager(), Ctx.getLangOpts());
  std::string Out;
  for (char C : Text) {
    bool Space = C == ' ' || C == '\n' || C == '\t' || C == '\r';
    if (Space && (Out.empty() || Out.back() == ' '))
      continue;
    Out.push_back(Space ? ' ' : C);
  }
  while (!Out.empty() && Out.back() == ' ')
    Out.pop_back();
  return Out.empty() ? "tensor" : Out;
}

StringRef noteText(const LeafFact &L) {
  switch (L.Kind) {
  case LeafKind::Created:
    return "the tensor was created with requires_grad here";
  case LeafKind::Marked:
    return "the tensor was marked as requiring grad here";
  case LeafKind::Parameter:
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(L.Source);
        MCE && MCE->getMethodDecl() && MCE->getMethodDecl()->getIdentifier() &&
        MCE->getMethodDecl()->getName() == "register_parameter")
      return "the tensor was registered as a module parameter here";
    return "module parameters, leaves that require grad, come from here";
  }
  return "";
}

/// The statement of the update wrapped in `{ torch::NoGradGuard no_grad; ... }`. Not for a
/// declaration (the block would end its scope) nor where `no_grad` already names something.
fixits::Fixes guardFix(const Expr *Op, ASTContext &Ctx) {
  const Stmt *S = fixits::blockStatement(Op, Ctx);
  if (!S || isa<DeclStmt>(S) || !fixits::declaresTorch("NoGradGuard", Ctx) ||
      fixits::sourceText(S, Ctx).contains("no_grad"))
    return {};
  return fixits::wrapInBlock(S, "torch::NoGradGuard no_grad;", Ctx);
}

} // namespace

void InplaceOnLeafCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(traverse(TK_AsIs, expr(anyOf(callExpr(), binaryOperator()), unless(matchers::isExpansionInSystemHeader()),
                                            isInplaceTensorOp())
                                           .bind("op")),
                     this);
}

void InplaceOnLeafCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const auto *Call = Result.Nodes.getNodeAs<Expr>("op");
  std::optional<InplaceOp> Op = Model.inplaceOp(Call);
  SourceLocation Loc = Call->getExprLoc();
  // An unresolved `w.mul_(s)` is reported at the member's name, as a resolved one is.
  if (const auto *CE = dyn_cast<CallExpr>(Call); CE && Call->isTypeDependent()) {
    const Expr *Callee = CE->getCallee()->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MemberExpr>(Callee))
      Loc = M->getMemberLoc();
    else if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee))
      Loc = M->getMemberLoc();
    else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
      Loc = M->getMemberLoc();
  }
  // Templates are analysed in their instantiations, where the types are known; a template
  // nobody instantiates here is analysed as written, unresolved operations by name.
  const FunctionDecl *FD = enclosingFunction(Call, Ctx);
  if (FD ? FD->isDependentContext() && !isUninstantiatedPattern(FD) : Call->isTypeDependent())
    return;
  // `w.mul_(a).add_(b)`: the first in-place op is the one that throws.
  if (const auto *Inner = dyn_cast<CallExpr>(Op->Target->IgnoreUnlessSpelledInSource()); Inner && Model.inplaceOp(Inner))
    return;

  std::optional<LeafFact> L = Model.leafAt(Op->Target, Call);
  if (!L || Model.gradDisabledAt(Call))
    return;

  std::string What = Op->IsAssignment ? "in-place assignment to" : "in-place '" + Op->Spelling + "' on";
  std::string Name = sourceText(Op->Target, Ctx);
  std::string Subject = L->View ? "'" + Name + "', a view of a leaf tensor that requires grad,"
                                : "leaf tensor '" + Name + "' that requires grad";
  std::string Remedy = Op->OutOfPlace.empty() ? "" : " or using the out-of-place '" + Op->OutOfPlace + "'";
  diag(Loc, "%0 %1 throws at runtime; consider wrapping the update in 'torch::NoGradGuard'%2")
      << What << Subject << Remedy << guardFix(Call, Ctx);

  // The note is noise when the source is the very expression the op is applied to.
  SourceRange TargetRange = Op->Target->getSourceRange();
  SourceLocation SourceLoc = L->Source->getBeginLoc();
  const SourceManager &SM = Ctx.getSourceManager();
  bool InsideTarget = isWithin(SourceLoc, TargetRange, SM);
  if (!InsideTarget && SourceLoc.isValid())
    diag(SourceLoc, noteText(*L), DiagnosticIDs::Note);
}

} // namespace torchtidy
