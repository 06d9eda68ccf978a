#include "TrainNotRestoredAfterEvalCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"
#include "utils/TorchMatchers.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// Where an eval() call shows in the function of a training loop: the call itself, or the
/// call of the helper (validate(model)) that runs it, with the module it puts in eval mode.
struct EvalSite {
  const Stmt *Loop = nullptr;
  const CallExpr *Site = nullptr;
  const ValueDecl *Module = nullptr;
  /// Through a helper: the statement of its body that leads to the eval() (the eval() itself).
  const Stmt *Inner = nullptr;
};

/// The variable or field holding the module \p E names: a ModuleHolder or shared_ptr passed by
/// value is a copy sharing the same module.
const ValueDecl *moduleRoot(const Expr *E) { return E ? containerRoot(E->IgnoreUnlessSpelledInSource()) : nullptr; }

/// \p D seen from the caller of \p Via: the argument's module for a parameter of its callee.
const ValueDecl *throughCall(const ValueDecl *D, const CallExpr *Via) {
  const auto *Param = dyn_cast_or_null<ParmVarDecl>(D);
  // A parameter of the function that holds the helper (a lambda's capture) is no argument of Via.
  const auto *Owner = Param ? dyn_cast<Decl>(Param->getDeclContext()) : nullptr;
  const Decl *Callee = Via ? Via->getCalleeDecl() : nullptr;
  if (!Owner || !Callee || Owner->getCanonicalDecl() != Callee->getCanonicalDecl())
    return D;
  return moduleRoot(argumentFor(Via, Param));
}

/// The module a call's object names in the loop's function (see throughCall).
const ValueDecl *moduleOf(const Expr *Object, const CallExpr *Via) { return throughCall(moduleRoot(Object), Via); }

/// The training loop around \p Eval (or the helper call running it), in its function or around
/// a caller, with \p Object, the module put in eval mode, seen from the loop's function.
std::optional<EvalSite> evalSite(const CallExpr *Eval, const Expr *Object, AutogradModel &Model) {
  llvm::SmallVector<const CallExpr *, 2> Calls;
  const Stmt *L = Model.trainingLoopOf(Eval, &Calls, /*ThroughLambdas=*/true);
  if (!L)
    return std::nullopt;
  EvalSite At{L, Calls.empty() ? Eval : Calls.back(), moduleRoot(Object)};
  for (const CallExpr *Via : Calls)
    At.Module = throughCall(At.Module, Via);
  if (!Calls.empty())
    At.Inner = Calls.size() > 1 ? Calls[Calls.size() - 2] : Eval;
  return At;
}

/// `m->train()` or `m->train(true)`, not `m->train(false)`.
bool restoresTraining(const LoopEvent &E, ASTContext &Ctx) {
  const auto *Call = cast<CallExpr>(E.Call);
  bool Enabled = true;
  if (Call->getNumArgs() == 1 && !Call->getArg(0)->isValueDependent())
    Call->getArg(0)->EvaluateAsBooleanCondition(Enabled, Ctx);
  return Enabled;
}

/// A call of a user function whose body is in another translation unit.
AST_MATCHER(CallExpr, callsBodyElsewhere) {
  const FunctionDecl *FD = Node.getDirectCallee();
  return FD && !FD->getDefinition() && !isInSystemHeader(FD);
}

/// The module a helper of another TU is handed: its object, or its first module argument.
const Expr *moduleHandedTo(const CallExpr *Helper, AutogradModel &Model) {
  if (const Expr *Object = Model.callShape(Helper).Object; Object && isModuleType(Object->getType()))
    return Object;
  for (const Expr *Arg : Helper->arguments())
    if (isModuleType(Arg->getType().getNonReferenceType()))
      return Arg;
  return nullptr;
}

} // namespace

void TrainNotRestoredAfterEvalCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), matchers::moduleMethodCall({"eval"})).bind("eval"),
                     this);
  // A helper of another TU that the project index says switches to eval() and not back.
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), callsBodyElsewhere()).bind("helper"), this);
}

void TrainNotRestoredAfterEvalCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Eval = Result.Nodes.getNodeAs<CallExpr>("eval");
  const auto *Helper = Result.Nodes.getNodeAs<CallExpr>("helper");
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  if (Helper) {
    std::optional<uint32_t> Facts = Model.indexedFacts(Helper->getDirectCallee());
    if (!Facts || !(*Facts & FunctionSummary::Eval) || (*Facts & FunctionSummary::Train))
      return;
    Eval = Helper;
  }
  const FunctionDecl *Fn = enclosingFunction(Eval, Ctx);
  if (Eval->getBeginLoc().isMacroID() || !Fn || (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  std::optional<EvalSite> At =
      evalSite(Eval, Helper ? moduleHandedTo(Helper, Model) : Model.callShape(Eval).Object, Model);
  if (!At || !At->Module)
    return;
  // A helper (or lambda) that switches the module back with train() after its eval() leaves it
  // in training mode.
  if (At->Site != Eval) {
    const ValueDecl *Local = moduleRoot(Model.callShape(Eval).Object);
    for (const LoopEvent &E : Model.eventsIn(Fn->getBody()))
      if (E.Kind == LoopEventKind::Train && E.Site == E.Call && restoresTraining(E, Ctx) &&
          moduleRoot(Model.callShape(cast<CallExpr>(E.Call)).Object) == Local && Model.mayRunBefore(Eval, E.Call))
        return;
  }
  const SourceManager &SM = Ctx.getSourceManager();
  auto Before = [&](const Stmt *A, const Stmt *B) {
    return SM.isBeforeInTranslationUnit(A->getBeginLoc(), B->getBeginLoc());
  };
  // train() on this module, or in a helper of the loop (a training epoch that starts with
  // model->train()), restores training mode.
  std::vector<const Stmt *> Restores;
  for (const LoopEvent &E : Model.loop(At->Loop).Events)
    if (E.Kind == LoopEventKind::Train && restoresTraining(E, Ctx) &&
        (E.Site != E.Call || moduleOf(Model.callShape(cast<CallExpr>(E.Call)).Object, nullptr) == At->Module))
      Restores.push_back(E.Site);
  // The module must be the one trained: a forward of it, or a training helper given it, ahead of
  // a backward() or step() of the iteration. A separate evaluation copy never is. And eval()
  // must come after a training step of the iteration: a frozen encoder put in eval mode before
  // the steps stays in it on purpose.
  // Steps run through the same call of the loop as the eval() (a fold's train-then-test helper)
  // come before it when one of that helper's statements before Inner runs one.
  auto StepBeforeInside = [&] {
    const FunctionDecl *Inside = At->Inner ? enclosingFunction(At->Inner, Ctx) : nullptr;
    for (LoopEventKind K : {LoopEventKind::Backward, LoopEventKind::Step})
      for (const Stmt *S : Inside && Inside->hasBody() ? Model.sitesIn(Inside->getBody(), K)
                                                       : llvm::SmallVector<const Stmt *, 4>())
        if (S != At->Inner && Model.mayRunBefore(S, At->Inner))
          return true;
    return false;
  };
  const LoopEvent *Next = nullptr;
  bool Trained = false, AfterStep = false;
  for (const LoopEvent &Step : Model.loop(At->Loop).Events) {
    if ((Step.Kind != LoopEventKind::Backward && Step.Kind != LoopEventKind::Step) ||
        llvm::is_contained(Restores, Step.Site))
      continue;
    bool Same = Step.Site == At->Site;
    AfterStep |= Before(Step.Site, At->Site) || (Same && StepBeforeInside());
    for (const LoopEvent &F : Model.loop(At->Loop).Events) {
      if (Before(Step.Site, F.Site) || (F.Site == At->Site && !Same))
        continue;
      const auto *Call = cast<CallExpr>(F.Site);
      bool Uses = F.Kind == LoopEventKind::Forward && F.Site == F.Call &&
                  moduleOf(Model.callShape(Call).Object, nullptr) == At->Module;
      Uses |= F.Site != F.Call && llvm::any_of(Call->arguments(), [&](const Expr *Arg) {
        return moduleRoot(Arg) == At->Module;
      });
      Trained |= Uses;
    }
    if (!Next && (Same ? Model.mayRunInLaterIteration(At->Site, Step.Site, Restores)
                       : Model.mayRunBeforeAvoiding(At->Site, Step.Site, Restores)))
      Next = &Step;
  }
  if (!Next || !Trained || !AfterStep || holdsUnparsedCode(Eval, Ctx) ||
      holdsUnparsedCode(At->Loop, Ctx))
    return;
  // `model->train();` first in the loop's body restores training mode for every step, when every
  // step of the iteration comes before the eval() (the next step is the next iteration's).
  fixits::Fixes Fix;
  const auto *Body = dyn_cast<CompoundStmt>(loopBody(At->Loop));
  bool StepsBefore = llvm::all_of(Model.loop(At->Loop).Events, [&](const LoopEvent &E) {
    return (E.Kind != LoopEventKind::Backward && E.Kind != LoopEventKind::Step) || Before(E.Site, At->Site);
  });
  if (!Helper && At->Site == Eval && StepsBefore && Body && !Body->body_empty())
    if (std::string Train = fixits::sameObjectCall(Eval, "train", At->Loop, Ctx); !Train.empty())
      Fix = fixits::insertBefore(Body->body_front(), Train + ";", Ctx);
  diag(Eval->getBeginLoc(), "'%0' is put in evaluation mode %1 and not back in training mode before "
                            "the next training step: dropout stays off and batch norm keeps using its "
                            "running statistics; consider calling %0->train() at the start of each "
                            "training phase")
      << At->Module->getName()
      << (Helper ? ("by '" + Helper->getDirectCallee()->getNameAsString() + "' (defined in another file)")
                 : std::string("here"))
      << Fix;
  if (At->Site != Eval)
    diag(At->Site->getBeginLoc(), "evaluation called here", DiagnosticIDs::Note);
  diag(Next->Site->getBeginLoc(), "next training step", DiagnosticIDs::Note);
}

} // namespace torchtidy
