#include "LossAccumulatedAsTensorCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// Whether the accumulator outlives one iteration of the loop the accumulation runs in,
/// directly or in a function called from a loop: a local declared before the loop, a
/// static or global, a reference parameter, a field, a local captured by a lambda.
bool outlivesIteration(AutogradModel &M, const ValueDecl *D, const Stmt *Acc, const FunctionDecl *Fn) {
  const Stmt *Loop = M.enclosingLoop(Acc);
  const auto *VD = dyn_cast<VarDecl>(D);
  if (VD && isa<ParmVarDecl>(VD) && !VD->getType()->isReferenceType())
    return false;
  if (VD && VD->isLocalVarDecl() && !VD->isStaticLocal() && VD->getDeclContext() == Fn)
    return Loop && M.outlivesIteration(VD, Loop, Acc);
  if (Loop)
    return true;
  return !M.callsInLoops(Fn).empty();
}

/// Whether every read of the local \p VD in \p Fn, besides the accumulations and the
/// assignments to it, takes its value as a number (`.item()`) or prints it: accumulating
/// `.item<double>()` instead then changes no result.
bool readOnlyAsNumber(const VarDecl *VD, const FunctionDecl *Fn, ASTContext &Ctx) {
  if (!VD->isLocalVarDecl() || !Fn || !Fn->getBody())
    return false;
  auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
  auto Self = ignoringImplicit(Ref);
  // eachOf: `total = total + loss` holds two allowed references.
  auto Allowed = stmt(eachOf(
      cxxMemberCallExpr(on(ignoringImplicit(Ref.bind("r"))),
                        callee(cxxMethodDecl(hasAnyName("item", "add_", "sub_", "zero_")))),
      cxxOperatorCallExpr(hasAnyOverloadedOperatorName("=", "+=", "-="),
                          hasArgument(0, ignoringImplicit(Ref.bind("r")))),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, Self),
                          hasArgument(1, forEachDescendant(Ref.bind("r")))),
      cxxOperatorCallExpr(hasOverloadedOperatorName("<<"),
                          hasArgument(1, ignoringImplicit(Ref.bind("r"))))));
  llvm::SmallPtrSet<const DeclRefExpr *, 8> Numeric;
  for (const BoundNodes &B : match(findAll(Allowed), *Fn->getBody(), Ctx))
    Numeric.insert(B.getNodeAs<DeclRefExpr>("r"));
  // A lambda's capture of the accumulator is no read of its value.
  auto Read = declRefExpr(Ref, unless(hasParent(lambdaExpr())));
  return llvm::all_of(match(findAll(Read.bind("r")), *Fn->getBody(), Ctx),
                      [&](const BoundNodes &B) { return Numeric.contains(B.getNodeAs<DeclRefExpr>("r")); });
}

/// `loss` -> `loss.item<double>()`; `(a + b)` for anything that is not a primary expression.
FixItHint itemFix(const Expr *Value, ASTContext &Ctx) {
  const Expr *Spelled = Value->IgnoreImplicit();
  CharSourceRange Range = CharSourceRange::getTokenRange(Spelled->getSourceRange());
  StringRef Text = Lexer::getSourceText(Range, Ctx.getSourceManager(), Ctx.getLangOpts());
  bool Primary = isa<DeclRefExpr, CallExpr, ParenExpr, MemberExpr>(Spelled) &&
                 !isa<CXXOperatorCallExpr>(Spelled);
  return FixItHint::CreateReplacement(
      Range, (Primary ? Text.str() : "(" + Text.str() + ")") + ".item<double>()");
}
} // namespace

void LossAccumulatedAsTensorCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Target = expr(ignoringImplicit(anyOf(declRefExpr(), memberExpr()))).bind("target");
  auto Value = expr(ignoringImplicit(expr(isTensorExpr()))).bind("value");
  auto Accumulation = stmt(
      unless(matchers::isExpansionInSystemHeader()),
      anyOf(cxxOperatorCallExpr(hasAnyOverloadedOperatorName("+=", "-="), hasArgument(0, Target),
                                hasArgument(1, Value)),
            cxxMemberCallExpr(on(Target), tensorMethodCall({"add_", "sub_"}),
                              hasArgument(0, Value)),
            cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, Target),
                                hasArgument(1, ignoringImplicit(
                                                   cxxOperatorCallExpr(hasAnyOverloadedOperatorName("+", "-"),
                                                                       argumentCountIs(2))
                                                       .bind("sum"))))));
  Finder->addMatcher(Accumulation.bind("acc"), this);
}

void LossAccumulatedAsTensorCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Acc = Result.Nodes.getNodeAs<Stmt>("acc");
  const auto *Value = Result.Nodes.getNodeAs<Expr>("value");
  if (Acc->getBeginLoc().isMacroID())
    return;
  const ValueDecl *Total = namedDecl(Result.Nodes.getNodeAs<Expr>("target"));
  if (!Total || !isTensorType(Total->getType()))
    return;
  // `total = total + loss`, `total = loss + total`, `total = total - loss`.
  if (const auto *Sum = Result.Nodes.getNodeAs<CXXOperatorCallExpr>("sum")) {
    if (namedDecl(Sum->getArg(0)) == Total)
      Value = Sum->getArg(1);
    else if (Sum->getOperator() == OO_Plus && namedDecl(Sum->getArg(1)) == Total)
      Value = Sum->getArg(0);
    if (!Value || !isTensorType(Value->IgnoreImplicit()->getType()))
      return;
  }
  if (namedDecl(Value) == Total)
    return;
  const FunctionDecl *Fn = enclosingFunction(Acc, Ctx);
  if (!Fn || Fn->isDependentContext())
    return;
  AutogradModel &M = model(Ctx);
  OriginResult Origin = M.originAt(Value);
  if (Origin.Kind != TensorOrigin::GraphAttached || M.gradDisabledAt(Acc))
    return;
  // Meant to carry gradients: backpropagated, returned, handed on or kept where this unit cannot
  // see; not once the loop's own backward() has freed the graphs it sums.
  FateQuery Visible;
  Visible.FieldsEscape = false;
  if (!outlivesIteration(M, Total, Acc, Fn))
    return;
  ValueFate Fate = M.fateOf(Total, Visible);
  if (Fate == ValueFate::Backpropagated ||
      (Fate == ValueFate::Escapes && !M.freesGraphsEachIteration(M.enclosingLoop(Acc))))
    return;

  {
    auto Diag = diag(Acc->getBeginLoc(),
                     "graph-attached tensor accumulated into '%0' keeps the autograd graph of "
                     "every iteration alive; consider accumulating '.item<double>()' or '.detach()'")
                << Total->getNameAsString() << Value->getSourceRange();
    const auto *VD = dyn_cast<VarDecl>(Total);
    const auto *Owner = VD ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod()) : nullptr;
    if (VD && !Value->getBeginLoc().isMacroID() && readOnlyAsNumber(VD, Owner, Ctx))
      Diag << itemFix(Value, Ctx);
    else // the total feeds no gradient: a detached sum is the same number without the graphs
      Diag << fixits::appendCall(Value->IgnoreImplicit(), ".detach()", Ctx);
  }
  if (Origin.Source && Origin.Source != Value->IgnoreImplicit() &&
      !Origin.Source->getBeginLoc().isMacroID())
    diag(Origin.Source->getBeginLoc(), "the tensor became graph-attached here", DiagnosticIDs::Note);
  if (const Stmt *Loop = M.enclosingLoop(Acc))
    diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
