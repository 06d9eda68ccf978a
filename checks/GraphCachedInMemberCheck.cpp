#include "GraphCachedInMemberCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// A module, or a class that drives one (a trainer or an agent holding a module or an
/// optimizer): the classes whose members outlive the steps that run them.
bool holdsTraining(const CXXRecordDecl *RD) {
  if (!RD || !RD->hasDefinition())
    return false;
  if (isModuleType(QualType(RD->getTypeForDecl(), 0)))
    return true;
  return llvm::any_of(RD->fields(), [](const FieldDecl *F) {
    return isModuleType(F->getType()) || isOptimizerType(F->getType());
  });
}

/// Whether \p S refers to the field \p FD.
bool mentions(const Stmt *S, const FieldDecl *FD, ASTContext &Ctx) {
  return !match(findAll(memberExpr(member(equalsNode(FD)))), *S, Ctx).empty();
}
} // namespace

void GraphCachedInMemberCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Field = memberExpr(hasObjectExpression(ignoringParenImpCasts(cxxThisExpr())),
                          member(fieldDecl(hasType(tensorType())).bind("field")));
  Finder->addMatcher(cxxOperatorCallExpr(unless(matchers::isExpansionInSystemHeader()), hasOverloadedOperatorName("="),
                                         argumentCountIs(2), hasArgument(0, ignoringParenImpCasts(Field)))
                         .bind("assign"),
                     this);
}

void GraphCachedInMemberCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Assign = Result.Nodes.getNodeAs<CXXOperatorCallExpr>("assign");
  const auto *Field = Result.Nodes.getNodeAs<FieldDecl>("field");
  if (Assign->getBeginLoc().isMacroID())
    return;
  AutogradModel &M = model(*Result.Context);
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(M.outermostFunction(Assign));
  if (!Method || isa<CXXConstructorDecl, CXXDestructorDecl>(Method) ||
      (Method->isDependentContext() && !isUninstantiatedPattern(Method)) || !holdsTraining(Method->getParent()))
    return;
  const Expr *Value = Assign->getArg(1);
  if (!M.isGraphAttached(Value))
    return;
  // A member used as the step's loss, backpropagated before the method returns, is not a cache.
  FateQuery Later;
  Later.After = Assign;
  if (M.fateOf(containerRoot(Assign->getArg(0)), Later) == ValueFate::Backpropagated)
    return;
  // The method's other writes of the member: one after this one on every path replaces the
  // value before the call returns (`x = cat(...); x = lin(x);` caches only the second); one
  // before it on every path makes the member it reads this call's, not the previous call's.
  auto Write = cxxOperatorCallExpr(hasOverloadedOperatorName("="), argumentCountIs(2),
                                   hasArgument(0, ignoringParenImpCasts(memberExpr(member(equalsNode(Field))))))
                   .bind("w");
  bool ReadsEarlierCall = mentions(Value, Field, *Result.Context);
  for (const BoundNodes &B : match(findAll(Write), *Method->getBody(), *Result.Context))
    if (const auto *Other = B.getNodeAs<Stmt>("w"); Other != Assign) {
      if (M.runsAfterOnEveryPath(Assign, Other))
        return;
      ReadsEarlierCall &= !M.runsBeforeOnEveryPath(Other, Assign);
    }
  // The member keeps the value without its graph.
  fixits::Fixes Fix = fixits::appendCall(Value->IgnoreImplicit(), ".detach()", *Result.Context);
  if (ReadsEarlierCall)
    diag(Assign->getOperatorLoc(),
         "graph-attached tensor computed from member '%0' is stored back into it: every call chains "
         "its autograd graph onto the previous ones, which are never freed; consider computing the "
         "update under torch::NoGradGuard or from '.detach()'")
        << Field->getName() << Fix;
  else
    diag(Assign->getOperatorLoc(),
         "graph-attached tensor is cached in member '%0': it keeps the autograd graph of the call "
         "that computed it alive until the member is overwritten; consider caching '.detach()' or nothing")
        << Field->getName() << Fix;
  if (const Expr *Source = M.originAt(Value).Source; Source && Source != Value->IgnoreImplicit())
    diag(Source->getBeginLoc(), "autograd records the graph here", DiagnosticIDs::Note);
}

} // namespace torchtidy
