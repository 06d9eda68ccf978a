#include "LossStoredInContainerCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// Whether the container \p Root is a local of one iteration of \p Loop.
bool diesWithIteration(const ValueDecl *Root, const Stmt *Loop, const SourceManager &SM) {
  const auto *VD = dyn_cast<VarDecl>(Root);
  return VD && VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) &&
         isWithin(VD->getLocation(), loopBody(Loop)->getSourceRange(), SM);
}

/// Whether the key of a map write or the index of a subscript write can differ between
/// iterations of \p Loop (a constant key overwrites one slot: nothing accumulates).
bool keyVaries(const Expr *Key, const Stmt *Loop, AutogradModel &M) {
  if (!Key || Key->isValueDependent())
    return true;
  for (const BoundNodes &B : match(findAll(expr(anyOf(declRefExpr(to(varDecl())), callExpr())).bind("e")), *Key,
                                   M.context()))
    if (!M.invariantEntity(B.getNodeAs<Expr>("e"), Loop))
      return true; // a call, or a variable the loop declares or writes
  return false;
}

/// A key fixed for the loop overwrites one slot, so nothing accumulates, when it is a true
/// constant (`latest["loss"]`) or the container dies with the function. A container that
/// outlives the call keyed by, say, the epoch parameter gains one graph per call.
bool keepsOneSlot(const Expr *Key, const ValueDecl *Container, const Stmt *Loop, AutogradModel &M) {
  // The key must also stay fixed across every enclosing loop the container outlives:
  // `epoch_loss[epoch] = loss` in a batch loop adds one slot per epoch.
  const SourceManager &SM = M.context().getSourceManager();
  for (const Stmt *L = Loop; L && !diesWithIteration(Container, L, SM); L = M.enclosingLoop(L))
    if (keyVaries(Key, L, M))
      return false;
  auto Variables = match(
      findAll(declRefExpr(to(varDecl(anyOf(parmVarDecl(), unless(hasType(isConstQualified())))))).bind("v")),
      *Key, M.context());
  if (Variables.empty())
    return true;
  const auto *VD = dyn_cast<VarDecl>(Container);
  return VD && VD->isLocalVarDecl() && !VD->isStaticLocal();
}

/// `for (auto &p : model->parameters())`: copies of parameters pin no iteration graph.
bool overParameters(const Stmt *Loop) {
  const auto *For = dyn_cast<CXXForRangeStmt>(Loop);
  const auto *MCE = For ? dyn_cast<CXXMemberCallExpr>(For->getRangeInit()->IgnoreUnlessSpelledInSource()) : nullptr;
  const CXXMethodDecl *MD = MCE ? MCE->getMethodDecl() : nullptr;
  static constexpr llvm::StringLiteral Parameters[] = {"parameters", "named_parameters", "buffers"};
  return MD && MD->getIdentifier() && llvm::is_contained(Parameters, MD->getName());
}

/// Whether \p S belongs to a template instantiation (a rewrite there would hit the pattern).
bool inTemplateInstantiation(const Stmt *S, ASTContext &Ctx) {
  for (const DeclContext *DC = enclosingFunction(S, Ctx); DC; DC = DC->getParent()) {
    if (const auto *FD = dyn_cast<FunctionDecl>(DC); FD && FD->getTemplateInstantiationPattern())
      return true;
    if (isa<ClassTemplateSpecializationDecl>(DC))
      return true;
  }
  return false;
}

/// Where a stored part comes from: a tensor's origin; an aggregate holding a graph-attached
/// tensor is attached as a whole.
OriginResult storedOrigin(const Expr *Part, AutogradModel &M) {
  if (isTensorType(Part->getType()) || Part->isTypeDependent())
    return M.originAt(Part);
  return M.isGraphAttached(Part) ? OriginResult{TensorOrigin::GraphAttached, nullptr} : OriginResult{};
}

/// Whether \p E probably holds a scalar loss, so that `.item<float>()` is a fitting remedy.
bool looksLikeLoss(const Expr *E, unsigned Depth = 0) {
  E = E->IgnoreUnlessSpelledInSource();
  auto NamedLoss = [](StringRef Name) { return Name.contains_insensitive("loss"); };
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (NamedLoss(DRE->getDecl()->getName()))
      return true;
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && VD->getInit() && Depth == 0 && looksLikeLoss(VD->getInit(), Depth + 1);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) // `out.loss`
    return ME->getMemberDecl()->getIdentifier() && NamedLoss(ME->getMemberDecl()->getName());
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (MD && isTensorMethod(MD, {"sum", "mean", "norm"}) &&
        llvm::all_of(MCE->arguments(), [](const Expr *A) { return isa<CXXDefaultArgExpr>(A); }))
      return true;
    if (MD && isTensorMethod(MD, {"clone", "cpu", "to"}))
      return looksLikeLoss(MCE->getImplicitObjectArgument(), Depth);
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E); OCE && OCE->getOperator() == OO_Call) {
    const CXXRecordDecl *RD = recordOf(OCE->getArg(0)->getType());
    return RD && RD->getIdentifier() && NamedLoss(RD->getName());
  }
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (FD && FD->getIdentifier() && FD->getName() == "move" && CE->getNumArgs() == 1)
      return looksLikeLoss(CE->getArg(0), Depth);
    return FD && FD->getIdentifier() && NamedLoss(FD->getName());
  }
  return false;
}

/// The parameter of \p Helper that \p Value is or views (`images`, `images[i]`,
/// `images.select(0, i)`): what the caller passes is what gets stored.
const ParmVarDecl *parameterViewed(const Expr *Value, const FunctionDecl *Helper) {
  for (unsigned Steps = 0; Steps < 8 && viewedTensor(Value); ++Steps)
    Value = viewedTensor(Value);
  const auto *Ref = dyn_cast<DeclRefExpr>(Value->IgnoreUnlessSpelledInSource());
  const auto *P = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  return P && P->getDeclContext() == Helper ? P : nullptr;
}

} // namespace

void LossStoredInContainerCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  std::vector<StringRef> Insertions(std::begin(names::ContainerStoreMethods), std::end(names::ContainerStoreMethods));
  // Stores whose values have dependent types stay unresolved in a template pattern.
  Finder->addMatcher(
      traverse(TK_AsIs,
               expr(unless(matchers::isExpansionInSystemHeader()),
                    anyOf(cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName(Insertions)))),
                          cxxOperatorCallExpr(hasOverloadedOperatorName("="), argumentCountIs(2)),
                          callExpr(callee(expr(anyOf(unresolvedMemberExpr(), cxxDependentScopeMemberExpr())))),
                          binaryOperator(hasOperatorName("="), isTypeDependent())))
                   .bind("store")),
      this);
}

void LossStoredInContainerCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Site = Result.Nodes.getNodeAs<Expr>("store");
  const FunctionDecl *Fn = enclosingFunction(Site, Ctx);
  if (Site->getBeginLoc().isMacroID() || !Fn)
    return;
  // Template patterns are analysed through their instantiations, where calls resolve; a
  // template nobody instantiates is analysed here, by name where types are dependent.
  bool InPattern = Fn->isDependentContext();
  if (InPattern && !isUninstantiatedPattern(Fn))
    return;
  AutogradModel &M = model(Ctx);
  std::optional<ContainerStore> S = M.containerStore(Site);
  const ValueDecl *Root = S ? containerRoot(S->Container) : nullptr;
  if (!Root)
    return;
  const Stmt *Loop = M.enclosingLoop(Site);
  if (!Loop) {
    if (!InPattern)
      reportThroughCallers(Site, S->Values, Root, Fn, M);
    return;
  }
  if (!M.outlivesIteration(Root, Loop, Site) || overParameters(Loop) || keepsOneSlot(S->Key, Root, Loop, M))
    return;
  bool Attached = false;
  for (const Expr *Value : S->Values) {
    OriginResult Origin = storedOrigin(Value, M);
    if (Origin.Kind != TensorOrigin::GraphAttached)
      continue;
    Attached = true;
    ValueFate Fate = M.fateOf(Root);
    if (Fate == ValueFate::Backpropagated)
      return;
    // Uses of the container in dependent code are only partly visible: no rewrite there.
    bool Fix = Fate == ValueFate::Contained && !InPattern && !inTemplateInstantiation(Site, Ctx);
    report(Site, Value, Origin.Source, Loop, nullptr, Fix, Ctx);
    return;
  }
  // A helper looping over what its caller hands it (the images of a batch) into a container
  // that outlives the call: judged at the caller's loop, like a store outside any loop.
  if (!Attached && !InPattern && M.enclosingLoop(Loop) == nullptr)
    reportThroughCallers(Site, S->Values, Root, Fn, M);
}

void LossStoredInContainerCheck::reportThroughCallers(const Expr *StoreSite, ArrayRef<const Expr *> Values,
                                                      const ValueDecl *Root, const FunctionDecl *Helper,
                                                      AutogradModel &M) {
  // A helper that stores into a container the caller owns (a reference parameter, a member,
  // a variable a lambda captured), called from a loop: the storing happens once per iteration.
  const auto *ContainerParam = dyn_cast<ParmVarDecl>(Root);
  if (ContainerParam && !ContainerParam->getType()->isReferenceType() &&
      !ContainerParam->getType()->isPointerType())
    return;
  if (const auto *VD = dyn_cast<VarDecl>(Root);
      VD && !ContainerParam && VD->isLocalVarDecl() && VD->getParentFunctionOrMethod() == Helper)
    return;
  ASTContext &Ctx = M.context();
  for (const Expr *Value : Values) {
    OriginResult Origin = storedOrigin(Value, M);
    const ParmVarDecl *ValueParam = parameterViewed(Value, Helper);
    if (Origin.Kind != TensorOrigin::GraphAttached && !ValueParam)
      continue;
    for (const LoopSite &Site : M.callsInLoops(Helper)) {
      const auto *Call = Site.Via;
      const Stmt *Loop = Site.Loop;
      if (Call->getBeginLoc().isMacroID() || enclosingFunction(Call, Ctx)->isDependentContext())
        continue;
      const ValueDecl *CallerRoot = Root;
      if (ContainerParam) {
        const Expr *Arg = argumentFor(Call, ContainerParam);
        CallerRoot = Arg ? containerRoot(Arg) : nullptr;
      }
      if (!CallerRoot || !M.outlivesIteration(CallerRoot, Loop, Call) || overParameters(Loop))
        continue;
      const Expr *Shown = Value;
      OriginResult CallerOrigin = Origin;
      if (Origin.Kind != TensorOrigin::GraphAttached) {
        const Expr *Arg = argumentFor(Call, ValueParam);
        if (!Arg)
          continue;
        Shown = Arg->IgnoreUnlessSpelledInSource();
        CallerOrigin = storedOrigin(Shown, M);
        if (CallerOrigin.Kind != TensorOrigin::GraphAttached)
          continue;
      }
      if (M.fateOf(CallerRoot) != ValueFate::Backpropagated)
        report(Call, Shown, CallerOrigin.Source, Loop, StoreSite, false, Ctx);
    }
    return;
  }
}

void LossStoredInContainerCheck::report(const Expr *Site, const Expr *Value, const Expr *Source,
                                        const Stmt *Loop, const Expr *HelperStore, bool Fix,
                                        ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange Range = CharSourceRange::getTokenRange(Value->getSourceRange());
  StringRef Text = Lexer::getSourceText(Range, SM, Ctx.getLangOpts());
  bool Named = !Text.empty() && Text.size() <= 50 && !Text.contains('\n') &&
               !Value->getBeginLoc().isMacroID() && !Value->getEndLoc().isMacroID();
  bool Tensor = isTensorType(Value->getType()) || Value->isTypeDependent();
  bool Parens = fixits::needsParens(Value);
  std::string Shown = Named ? (Parens ? "(" + Text.str() + ")" : Text.str()) : "";
  std::string Remedy = !Tensor ? std::string("detached tensors in it")
                       : !Named ? std::string("its '.item<float>()' or '.detach()'")
                       : looksLikeLoss(Value) ? "'" + Shown + ".item<float>()' or '" + Shown + ".detach()'"
                                              : "'" + Shown + ".detach()'";
  std::string What = Tensor ? "graph-attached tensor" : "value holding a graph-attached tensor";
  std::string Message = What + (Named ? " '" + Text.str() + "'" : std::string()) +
                        " stored in a container inside a loop" +
                        (HelperStore ? std::string(" (by the called function)") : std::string()) +
                        " keeps its autograd graph alive; consider storing " + Remedy;
  {
    auto D = diag(Site->getBeginLoc(), Message);
    if (Fix && Named && Tensor) {
      SourceLocation End = Lexer::getLocForEndOfToken(Value->getEndLoc(), 0, SM, Ctx.getLangOpts());
      if (Parens)
        D << FixItHint::CreateInsertion(Value->getBeginLoc(), "(");
      D << FixItHint::CreateInsertion(End, Parens ? ").detach()" : ".detach()");
    }
  }
  if (HelperStore)
    diag(HelperStore->getBeginLoc(), "the called function stores it here", DiagnosticIDs::Note);
  if (Source && Source->getBeginLoc().isValid())
    diag(Source->getBeginLoc(), "the tensor became graph-attached here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
