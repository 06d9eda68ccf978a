#include "AllocationInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// `::at::zeros`, `::torch::zeros`, ... for every factory with a deterministic fill.
std::vector<std::string> factoryNames() {
  std::vector<std::string> Names;
  for (StringRef N : names::FilledFactories) {
    Names.push_back(("::at::" + N).str());
    Names.push_back(("::torch::" + N).str());
  }
  return Names;
}

/// The factory a call names: its callee, or in a template nobody instantiates, the first
/// candidate of its name.
const FunctionDecl *factoryOf(const CallExpr *Call) {
  if (const FunctionDecl *FD = Call->getDirectCallee())
    return FD;
  const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Call->getCallee()->IgnoreParenImpCasts());
  return Lookup && !Lookup->decls().empty() ? Lookup->decls().begin()->getAsFunction() : nullptr;
}

/// A call of one of names::RandomFills (`noise.normal_()`, `torch::bernoulli(p)`) that fills
/// or reads \p Ref's tensor.
auto randomUseOf(const clang::ast_matchers::internal::Matcher<Expr> &Ref) {
  auto Random = callee(functionDecl(hasAnyName(std::vector<StringRef>(std::begin(names::RandomFills),
                                                                      std::end(names::RandomFills)))));
  return callExpr(Random, anyOf(cxxMemberCallExpr(on(ignoringParenImpCasts(Ref))),
                                hasArgument(0, ignoringParenImpCasts(Ref))));
}

enum class Fate { Scratch, Kept, Random, Accumulator, Moved };

/// What becomes of the tensor the factory call \p Call makes in one run of \p Scope: scratch
/// (used and dropped), kept beyond it (returned, stored, assigned to something declared
/// outside), filled with random numbers (noise must be fresh), the start of a sum, or made on
/// the host and moved to the device (torch-host-device-copy-in-loop's finding).
Fate fateOf(const Expr *Call, const Stmt *Scope, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  const SourceManager &SM = Ctx.getSourceManager();
  auto FateOfLocal = [&](const VarDecl *V) {
    if (!V->hasLocalStorage() || !isWithin(V->getLocation(), Scope->getSourceRange(), SM))
      return Fate::Kept;
    auto Ref = declRefExpr(to(varDecl(equalsNode(V))));
    if (!match(findAll(randomUseOf(Ref)), *Scope, Ctx).empty())
      return Fate::Random;
    // An initial value the iteration accumulates into (`loss_sum += l`) or rebinds from itself
    // (`h = cell(x, h)`), not a buffer it could refill. A rebinding that does not read it
    // (`normal_loss = w.pow(2).mean()` under a condition) leaves it scratch.
    auto ReadsRef = ignoringParenImpCasts(expr(anyOf(Ref, hasDescendant(Ref))));
    if (!match(findAll(cxxOperatorCallExpr(
                   hasArgument(0, ignoringParenImpCasts(Ref)),
                   anyOf(hasAnyOverloadedOperatorName("+=", "-=", "*=", "/="),
                         allOf(hasOverloadedOperatorName("="), hasArgument(1, ReadsRef))))),
               *Scope, Ctx)
             .empty())
      return Fate::Accumulator;
    FateQuery Kept;
    Kept.Scope = Scope;
    Kept.Derived = false;
    return Model.fateOf(V, Kept) == ValueFate::Escapes ? Fate::Kept : Fate::Scratch;
  };
  auto Random = [](const Stmt *S) {
    const auto *Used = dyn_cast_or_null<CallExpr>(S);
    const FunctionDecl *Callee = Used ? Used->getDirectCallee() : nullptr;
    return Callee && Callee->getIdentifier() && llvm::is_contained(names::RandomFills, Callee->getName());
  };
  // Other methods of the new tensor (`.to(device)`, `.fill_(v)`, `.t()`) pass a tensor on.
  std::optional<Fate> Stop;
  ValueDestination D = Model.destinationOf(Call, Through::Conversions, [&](const CXXMemberCallExpr *Method) {
    std::optional<DeviceKind> To = deviceMoveOf(Method, Ctx);
    if (Random(Method) || (To && *To != DeviceKind::Host && hostFactoryCall(Call, Ctx)))
      Stop = Random(Method) ? Fate::Random : Fate::Moved;
    else if (!isTensorType(Method->getType()))
      Stop = Fate::Scratch;
    return !Stop;
  });
  // Random fills make noise: `torch::empty(...).normal_()`, `torch::bernoulli(torch::full(...))`.
  if (Stop || Random(D.Site))
    return Stop ? *Stop : Fate::Random;
  if (D.K == Destination::Variable)
    return FateOfLocal(D.Var);
  if (D.K == Destination::Returned)
    return Fate::Kept;
  if (D.K == Destination::Assigned) {
    const auto *To = dyn_cast<DeclRefExpr>(D.Target->IgnoreParenImpCasts());
    const auto *V = To ? dyn_cast<VarDecl>(To->getDecl()) : nullptr;
    return V ? FateOfLocal(V) : Fate::Kept;
  }
  // Into a container, a pair or tuple, an aggregate: kept with it.
  auto Stores = expr(anyOf(cxxMemberCallExpr(callee(cxxMethodDecl(
                               hasAnyName("push_back", "emplace_back", "push_front", "emplace_front", "insert",
                                          "emplace", "push", "assign", "insert_or_assign")))),
                           callExpr(callee(functionDecl(hasAnyName("::std::make_pair", "::std::make_tuple",
                                                                   "::std::move")))),
                           initListExpr(hasType(recordDecl()))));
  return D.Site && !match(Stores, *D.Site, Ctx).empty() ? Fate::Kept : Fate::Scratch;
}

} // namespace

void AllocationInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  std::vector<std::string> Names = factoryNames();
  std::vector<StringRef> Refs(Names.begin(), Names.end());
  auto Factory = functionDecl(hasAnyName(Refs));
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), unless(cxxMemberCallExpr()),
                              anyOf(callee(Factory), callee(unresolvedLookupExpr(hasAnyDeclaration(Factory)))))
                         .bind("factory"),
                     this);
}

void AllocationInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("factory");
  const FunctionDecl *Factory = factoryOf(Call);
  const FunctionDecl *Fn = enclosingFunction(Call, Ctx);
  if (!Factory || !Fn || Call->getBeginLoc().isMacroID() ||
      (!Call->getDirectCallee() && !isUninstantiatedPattern(Fn)))
    return;
  AutogradModel &Model = model(Ctx);
  LoopSite Site = Model.loopRunning(Call, {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step});
  if (!Site.Loop) {
    checkAcrossTUs(Call, Factory, Fn, Model);
    return;
  }
  // Every iteration, unconditionally (an interval guard or a condition makes it rarer); in
  // a helper, unconditionally in the helper and at its call.
  const Stmt *Scope = Site.Via ? Fn->getBody() : loopBody(Site.Loop);
  if (Model.everyNth(Call, Site.Via ? Scope : Site.Loop) != 1 ||
      (Site.Via && Model.everyNth(Site.Via, Site.Loop) != 1))
    return;
  // The same sizes and fill every iteration; the options (dtype, device) do not matter.
  for (const Expr *Arg : Call->arguments())
    if (!isSameOrDerivedFrom(recordOf(Arg->getType()), names::TensorOptions) && !isa<CXXDefaultArgExpr>(Arg) &&
        !Model.readsOnlyInvariants(Arg, Site.Loop))
      return;
  if (fateOf(Call, Scope, Model) != Fate::Scratch)
    return;
  report(Call, Factory);
  noteLoop(PerIteration{Site}, "iteration");
}

void AllocationInLoopCheck::report(const CallExpr *Call, const FunctionDecl *Factory) {
  diag(Call->getBeginLoc(), "'torch::%0' allocates a tensor of the same size on every iteration of a loop that "
                            "runs the model; consider allocating it once before the loop (and refilling it "
                            "in place with 'zero_()' or 'fill_()' if the iteration writes it)")
      << Factory->getName();
}

void AllocationInLoopCheck::checkAcrossTUs(const CallExpr *Call, const FunctionDecl *Factory,
                                           const FunctionDecl *Fn, AutogradModel &Model) {
  std::optional<PerIteration> Hot = Model.perIterationLoop(
      Call, {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step}, /*AcrossTUs=*/true);
  if (!Hot || !Hot->Across)
    return;
  // The loop is out of sight: the same sizes every iteration only when they are constants.
  ASTContext &Ctx = Model.context();
  auto Variable = expr(anyOf(declRefExpr(to(varDecl(unless(isConstexpr())))),
                             memberExpr(member(fieldDecl())), cxxThisExpr()));
  for (const Expr *Arg : Call->arguments())
    if (!isSameOrDerivedFrom(recordOf(Arg->getType()), names::TensorOptions) && !isa<CXXDefaultArgExpr>(Arg) &&
        !match(findAll(Variable.bind("v")), *Arg, Ctx).empty())
      return;
  if (fateOf(Call, Fn->getBody(), Model) != Fate::Scratch)
    return;
  report(Call, Factory);
  noteLoop(*Hot, "iteration");
}

} // namespace torchtidy
