#include "NoncontiguousInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

const std::vector<StringRef> Views(std::begin(names::NoncontiguousViews), std::end(names::NoncontiguousViews));
const std::vector<StringRef> Copies(std::begin(names::ContiguousCopies), std::end(names::ContiguousCopies));

/// The non-contiguous view call \p E is (`w.t()`, `x.permute({0, 2, 1})`), or null.
const CXXMemberCallExpr *viewCall(const Expr *E) {
  const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(E ? E->IgnoreUnlessSpelledInSource()->IgnoreParens() : nullptr);
  const CXXMethodDecl *MD = Call ? Call->getMethodDecl() : nullptr;
  return MD && MD->getIdentifier() && isTensorMethod(MD, Views) ? Call : nullptr;
}

/// Whether \p V gets a value other than its initializer anywhere in its function.
bool reassigned(const VarDecl *V, ASTContext &Ctx) {
  const auto *Fn = dyn_cast_or_null<FunctionDecl>(V->getParentFunctionOrMethod());
  if (!Fn || !Fn->hasBody())
    return true;
  auto Ref = ignoringParenImpCasts(declRefExpr(to(varDecl(equalsNode(V)))));
  return !match(findAll(expr(anyOf(cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, Ref)),
                                   unaryOperator(hasOperatorName("&"), hasUnaryOperand(Ref))))),
                *Fn->getBody(), Ctx)
              .empty();
}

} // namespace

void NoncontiguousInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(cxxMemberCallExpr(unless(matchers::isExpansionInSystemHeader()), matchers::tensorMethodCall(Copies))
                         .bind("copy"),
                     this);
}

void NoncontiguousInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Copy = Result.Nodes.getNodeAs<CXXMemberCallExpr>("copy");
  if (Copy->getExprLoc().isMacroID())
    return;
  AutogradModel &Model = model(Ctx);
  const Stmt *Loop = Model.enclosingLoop(Copy);
  if (!Loop || Model.everyNth(Copy, Loop) != 1)
    return;
  const Expr *Object = Copy->getImplicitObjectArgument()->IgnoreUnlessSpelledInSource()->IgnoreParens();
  // The view is made in the loop from what does not change there (`w.t().contiguous()`), or
  // before it into a local that keeps it (`auto wt = w.t();`).
  const CXXMemberCallExpr *View = viewCall(Object);
  const VarDecl *Local = nullptr;
  if (View) {
    if (!Model.readsOnlyInvariants(View, Loop))
      return;
  } else {
    const auto *Ref = dyn_cast<DeclRefExpr>(Object);
    Local = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    View = Local && Local->hasLocalStorage() ? viewCall(Local->getInit()) : nullptr;
    if (!View || !Model.invariantEntity(Object, Loop) || reassigned(Local, Ctx))
      return;
  }
  // The weights an optimizer steps change every iteration: their copy is needed each time.
  if (Model.loop(Loop).has(LoopEventKind::Step) && Model.leafAt(Object, Copy))
    return;
  StringRef ViewName = View->getMethodDecl()->getName();
  if (Local)
    diag(Copy->getExprLoc(), "'%0()' copies '%1', a non-contiguous view ('%2()') that does not change in the "
                             "loop, on every iteration; consider making it contiguous once before the loop")
        << Copy->getMethodDecl()->getName() << Local->getName() << ViewName;
  else
    diag(Copy->getExprLoc(), "'%0()' copies a non-contiguous view ('%1()') of tensors that do not change in the "
                             "loop on every iteration; consider making it contiguous once before the loop")
        << Copy->getMethodDecl()->getName() << ViewName;
  diag(View->getExprLoc(), "view made here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
