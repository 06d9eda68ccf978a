#include "GradFnRetainedCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// Where a node is kept: a store into a container, or an assignment to a variable or field.
struct Keep {
  const Stmt *Site = nullptr;
  const ValueDecl *Holder = nullptr;
  /// Each store adds a node (`push_back`, `c[step] = ...`) instead of replacing the last one.
  bool Adds = false;
  /// A local initialized with the node; its uses say where the node goes.
  const VarDecl *Local = nullptr;
};

/// What the value of \p E (a grad_fn() call or a reference to a local holding its result)
/// ends up in, looking through copies, braced lists and pairs.
std::optional<Keep> keptBy(const Expr *E, AutogradModel &M) {
  ValueDestination D = M.destinationOf(E);
  const Expr *Lhs = D.Target ? D.Target->IgnoreParenImpCasts() : nullptr;
  const auto *Sub = dyn_cast_or_null<CXXOperatorCallExpr>(Lhs);
  if (D.K == Destination::Variable && D.Var->isLocalVarDecl())
    return Keep{nullptr, nullptr, false, D.Var};
  if (D.K == Destination::Stored)
    return Keep{D.Site, namedDecl(D.Target), true};
  if (D.K != Destination::Assigned)
    return std::nullopt;
  if (Sub && Sub->getOperator() == OO_Subscript)
    return Keep{D.Site, namedDecl(Sub->getArg(0)), !Sub->getArg(1)->isEvaluatable(M.context())};
  return Keep{D.Site, namedDecl(Lhs), false};
}

/// A loop recording graphs around \p Write, declared inside \p Holder's scope, after whose
/// iterations the node \p Write assigns to the local \p Holder is read: in a later iteration
/// before a write replaces it, or after the loop.
const Stmt *loopReadingLater(const Stmt *Write, const VarDecl *Holder, const FunctionDecl *Fn, AutogradModel &M) {
  ASTContext &Ctx = M.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Stmt *Loop = nullptr;
  for (const Stmt *L = M.enclosingLoop(Write); L && !Loop; L = M.enclosingLoop(L))
    if (M.loop(L).Kind != LoopKind::Other && SM.isBeforeInTranslationUnit(Holder->getLocation(), L->getBeginLoc()))
      Loop = L;
  if (!Loop)
    return nullptr;
  auto Named = ignoringParenImpCasts(declRefExpr(to(varDecl(equalsNode(Holder)))).bind("lhs"));
  llvm::SmallVector<const Stmt *, 4> Writes;
  llvm::SmallPtrSet<const Expr *, 4> Written;
  for (const BoundNodes &B :
       match(findAll(stmt(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Named)),
                                binaryOperator(isAssignmentOperator(), hasLHS(Named)),
                                cxxMemberCallExpr(on(Named), callee(cxxMethodDecl(hasName("reset"))))))
                         .bind("write")),
             *Fn->getBody(), Ctx)) {
    Writes.push_back(B.getNodeAs<Stmt>("write"));
    Written.insert(B.getNodeAs<Expr>("lhs"));
  }
  for (const BoundNodes &B : match(findAll(declRefExpr(to(varDecl(equalsNode(Holder)))).bind("read")), *Fn->getBody(), Ctx)) {
    const auto *Read = B.getNodeAs<Expr>("read");
    if (Written.contains(Read))
      continue;
    bool InLoop = false;
    for (const Stmt *L = M.enclosingLoop(Read); L && !InLoop; L = M.enclosingLoop(L))
      InLoop = L == Loop;
    if (InLoop ? M.mayRunInLaterIteration(Write, Read, Writes) : M.mayRunBeforeAvoiding(Write, Read, Writes))
      return Loop;
  }
  return nullptr;
}

/// A std::weak_ptr holds no node alive.
bool holdsWeakly(const ValueDecl *Holder) {
  return Holder->getType().getAsString().find("weak_ptr") != std::string::npos;
}
} // namespace

void GradFnRetainedCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(stmt(unless(matchers::isExpansionInSystemHeader()),
                          anyOf(tensorMethodCall({"grad_fn"}), callExpr(dependentMemberCall({"grad_fn"}))))
                         .bind("grad_fn"),
                     this);
}

void GradFnRetainedCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *GradFn = Result.Nodes.getNodeAs<CallExpr>("grad_fn");
  if (!GradFn || GradFn->getBeginLoc().isMacroID())
    return;
  AutogradModel &M = model(*Result.Context);
  const FunctionDecl *Fn = enclosingFunction(GradFn, *Result.Context);
  if (!Fn || !Fn->getBody() || (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)) ||
      M.gradDisabledAt(GradFn))
    return;
  std::optional<Keep> K = keptBy(GradFn, M);
  llvm::SmallVector<Keep, 2> Keeps;
  if (K && K->Local) {
    // `auto node = loss.grad_fn(); history.push_back(node);`
    for (const BoundNodes &B : match(findAll(declRefExpr(to(varDecl(equalsNode(K->Local)))).bind("use")),
                                     *Fn->getBody(), *Result.Context))
      if (std::optional<Keep> Use = keptBy(B.getNodeAs<Expr>("use"), M); Use && !Use->Local)
        Keeps.push_back(*Use);
  } else if (K) {
    Keeps.push_back(*K);
  }
  for (const Keep &Kept : Keeps) {
    if (!Kept.Holder || holdsWeakly(Kept.Holder))
      continue;
    // A loop that records graphs and over which what the holder keeps survives.
    const Stmt *Loop = nullptr;
    for (const Stmt *L = M.enclosingLoop(Kept.Site); L && !Loop; L = M.enclosingLoop(L))
      if (M.loop(L).Kind != LoopKind::Other && M.outlivesIteration(Kept.Holder, L))
        Loop = L;
    // A member that grows in a method called from a training loop.
    if (!Loop && Kept.Adds && isa<FieldDecl>(Kept.Holder))
      Loop = M.trainingLoopOf(Kept.Site);
    // The last node, kept in an outer variable that a later iteration or the code after the
    // loop reads: the previous graph stays alive while the next one is recorded.
    if (const auto *Var = dyn_cast<VarDecl>(Kept.Holder); !Loop && !Kept.Adds && Var && Var->isLocalVarDecl())
      Loop = loopReadingLater(Kept.Site, Var, Fn, M);
    if (!Loop)
      continue;
    diag(Kept.Site->getBeginLoc(),
         "autograd node from grad_fn() is kept in '%0' across loop iterations: every kept node pins "
         "its iteration's autograd graph; consider keeping plain data such as the node's name()")
        << Kept.Holder->getName();
    diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
    return;
  }
}

} // namespace torchtidy
