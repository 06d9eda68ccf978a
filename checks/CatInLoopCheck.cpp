#include "CatInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// The two sides of `a = b` (a tensor's operator=, or a dependent assignment in a template).
std::pair<const Expr *, const Expr *> assignmentSides(const Expr *E) {
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E); Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2)
    return {asSpelled(Op->getArg(0)), Op->getArg(1)};
  if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->getOpcode() == BO_Assign)
    return {asSpelled(BO->getLHS()), BO->getRHS()};
  return {nullptr, nullptr};
}

/// The short name of a join function (`cat`), resolved or named in a template; empty otherwise.
StringRef joinName(const CallExpr *Call) {
  if (const FunctionDecl *FD = Call->getDirectCallee()) {
    bool Listed = FD->getIdentifier() && llvm::any_of(names::JoinFunctions, [&](StringRef N) {
                    return N.drop_front(2) == FD->getQualifiedNameAsString();
                  });
    return Listed ? FD->getName() : StringRef();
  }
  const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Call->getCallee()->IgnoreParenImpCasts());
  if (!Lookup || Lookup->decls().empty())
    return {};
  const auto *FD = Lookup->decls().begin()->getAsFunction();
  bool Listed = FD && FD->getIdentifier() && isInSystemHeader(FD) && llvm::any_of(names::JoinFunctions, [&](StringRef N) {
                  return N.drop_front(2) == FD->getQualifiedNameAsString();
                });
  return Listed ? FD->getName() : StringRef();
}

/// The join call that \p Rhs is (`torch::cat({...})`, also in a branch of `?:`), or null.
const CallExpr *joinOf(const Expr *Rhs) {
  Rhs = asSpelled(Rhs);
  if (const auto *CO = dyn_cast_or_null<ConditionalOperator>(Rhs)) {
    const CallExpr *True = joinOf(CO->getTrueExpr());
    return True ? True : joinOf(CO->getFalseExpr());
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(Rhs);
  return Call && !joinName(Call).empty() ? Call : nullptr;
}

bool sameEntity(const Expr *A, const Expr *B, const ASTContext &Ctx) {
  llvm::FoldingSetNodeID IA, IB;
  asSpelled(A)->Profile(IA, Ctx, /*Canonical=*/true);
  asSpelled(B)->Profile(IB, Ctx, /*Canonical=*/true);
  return IA == IB;
}

/// The element of \p Join's tensor list that is \p Acc taken whole (not a slice of it).
const Expr *selfElement(const CallExpr *Join, const Expr *Acc, ASTContext &Ctx) {
  if (Join->getNumArgs() == 0)
    return nullptr;
  for (const BoundNodes &B : match(findAll(initListExpr().bind("list")), *Join->getArg(0), Ctx))
    for (const Expr *Element : B.getNodeAs<InitListExpr>("list")->inits())
      if (sameEntity(Element, Acc, Ctx))
        return asSpelled(Element);
  return nullptr;
}

/// Whether \p E reads \p Acc.
bool mentions(const Expr *E, const Expr *Acc, ASTContext &Ctx) {
  return llvm::any_of(match(findAll(expr(anyOf(declRefExpr(), memberExpr())).bind("r")), *E, Ctx),
                      [&](const BoundNodes &B) { return sameEntity(B.getNodeAs<Expr>("r"), Acc, Ctx); });
}

/// Whether \p Acc keeps growing in \p Scope (the loop body, or a helper's body): every
/// assignment to it there joins it with more, or is a conditional initialisation with a
/// fresh value (the first piece), and nothing else reads it but shape queries. A reset on
/// every iteration or a trim bounds it; another read means each iteration needs the whole
/// concatenation (DenseNet blocks, autoregressive decoding).
bool growsUnbounded(const Expr *Acc, const Stmt *Scope, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  llvm::SmallPtrSet<const Expr *, 8> Accounted;
  auto Assignments = match(findAll(expr(anyOf(cxxOperatorCallExpr(hasOverloadedOperatorName("=")),
                                              binaryOperator(hasOperatorName("=")))).bind("a")),
                           *Scope, Ctx);
  for (const BoundNodes &B : Assignments) {
    const auto *A = B.getNodeAs<Expr>("a");
    auto [Lhs, Rhs] = assignmentSides(A);
    if (!Lhs || !sameEntity(Lhs, Acc, Ctx))
      continue;
    Accounted.insert(Lhs);
    if (const CallExpr *Join = joinOf(Rhs); Join && selfElement(Join, Acc, Ctx))
      Accounted.insert(selfElement(Join, Acc, Ctx));
    else if (!underConditionWithin(A, Scope, Ctx) || mentions(Rhs, Acc, Ctx))
      return false;
  }
  auto Uses = match(findAll(expr(anyOf(declRefExpr(), memberExpr())).bind("use")), *Scope, Ctx);
  for (const BoundNodes &B : Uses) {
    const auto *Use = B.getNodeAs<Expr>("use");
    if (Accounted.count(Use) || !sameEntity(Use, Acc, Ctx))
      continue;
    ValueDestination D = Model.destinationOf(Use, Through::Copies);
    const auto *Member = D.K == Destination::Object ? cast<MemberExpr>(D.Site) : nullptr;
    bool ShapeQuery = Member && Member->getMemberDecl()->getIdentifier() &&
                      llvm::is_contained({StringRef("defined"), StringRef("size"), StringRef("sizes"),
                                          StringRef("numel"), StringRef("dim")},
                                         Member->getMemberDecl()->getName());
    if (!ShapeQuery)
      return false;
  }
  return true;
}

} // namespace

void CatInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(expr(unless(matchers::isExpansionInSystemHeader()),
                          anyOf(cxxOperatorCallExpr(hasOverloadedOperatorName("="), argumentCountIs(2)),
                                binaryOperator(hasOperatorName("="))))
                         .bind("assign"),
                     this);
}

void CatInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Assign = Result.Nodes.getNodeAs<Expr>("assign");
  auto [Acc, Rhs] = assignmentSides(Assign);
  const CallExpr *Join = Acc ? joinOf(Rhs) : nullptr;
  if (!Join || Join->getBeginLoc().isMacroID() || !selfElement(Join, Acc, Ctx))
    return;
  const FunctionDecl *Fn = enclosingFunction(Assign, Ctx);
  if (!Fn || !Fn->hasBody() || (!Join->getDirectCallee() && !isUninstantiatedPattern(Fn)))
    return;
  const ValueDecl *Root = objectRoot(Acc);
  if (!Root || (!isTensorType(Acc->getType()) && !Acc->isTypeDependent()))
    return;
  AutogradModel &Model = model(Ctx);

  const CallExpr *Via = nullptr;
  const Stmt *Loop = Model.enclosingLoop(Assign);
  if (Loop) {
    if (!Model.outlivesIteration(Root, Loop) || !growsUnbounded(Acc, loopBody(Loop), Model))
      return;
  } else {
    // A helper that grows what its callers keep: a field, a global, a reference parameter, a
    // local captured by a lambda.
    const auto *VD = dyn_cast<VarDecl>(Root);
    bool Kept = isa<FieldDecl>(Root) ||
                (VD && (VD->hasGlobalStorage() || (isa<ParmVarDecl>(VD) && VD->getType()->isReferenceType()) ||
                        (!isa<ParmVarDecl>(VD) && VD->getDeclContext() != Fn)));
    if (!Kept || !growsUnbounded(Acc, Fn->getBody(), Model))
      return;
    LoopSite Site = Model.loopKeeping(Assign, Root);
    if (!Site.Loop)
      return;
    Loop = Site.Loop;
    Via = Site.Via;
  }
  diag(Join->getBeginLoc(),
       "'%0' is grown by 'torch::%1' of itself on every iteration, copying everything accumulated so far "
       "(quadratic time); consider collecting the pieces in a std::vector<torch::Tensor> and calling "
       "'torch::%1' once after the loop")
      << namedDecl(Acc)->getName() << joinName(Join);
  if (Via)
    diag(Via->getBeginLoc(), "called on every iteration here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
