// The loop layer: what a loop runs each iteration (forward, backward, step, ...), how often a
// statement runs per iteration, and the loop a statement runs in, else its caller's.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"
#include "utils/ProvenanceWalk.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {

/// `X % k` with k a constant > 1 (~0u when k is not a constant); 0 when \p E is no modulo.
unsigned moduloInterval(const Expr *E, ASTContext &Ctx) {
  const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!BO || BO->getOpcode() != BO_Rem)
    return 0;
  Expr::EvalResult R;
  if (BO->getRHS()->isValueDependent() || !BO->getRHS()->EvaluateAsInt(R, Ctx))
    return ~0u;
  int64_t V = R.Val.getInt().getExtValue();
  return V > 1 ? unsigned(V) : 0;
}

/// The interval an `if` condition selects: `i % k == r`, `!(i % k)`, also as one operand of
/// `&&`. 0 for any other condition.
unsigned intervalOf(const Expr *Cond, ASTContext &Ctx) {
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(Cond); U && U->getOpcode() == UO_LNot)
    return moduloInterval(U->getSubExpr(), Ctx);
  const auto *BO = dyn_cast<BinaryOperator>(Cond);
  if (!BO)
    return 0;
  if (BO->getOpcode() == BO_LAnd)
    return std::max(intervalOf(BO->getLHS(), Ctx), intervalOf(BO->getRHS(), Ctx));
  if (BO->getOpcode() != BO_EQ)
    return 0;
  if (unsigned K = moduloInterval(BO->getLHS(), Ctx))
    return K;
  return moduloInterval(BO->getRHS(), Ctx);
}

constexpr LoopEventKind AllEvents[] = {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step,
                                       LoopEventKind::ZeroGrad, LoopEventKind::Eval, LoopEventKind::Train};

/// The parts of a loop that run on every iteration, body first: the range initializer of a
/// range-for runs once and is left out.
llvm::SmallVector<const Stmt *, 3> perIterationParts(const Stmt *Loop) {
  llvm::SmallVector<const Stmt *, 3> Parts{loopBody(Loop) ? loopBody(Loop) : Loop};
  if (const auto *F = dyn_cast<ForStmt>(Loop))
    Parts.append({F->getCond(), F->getInc()});
  else if (const auto *W = dyn_cast<WhileStmt>(Loop))
    Parts.push_back(W->getCond());
  else if (const auto *D = dyn_cast<DoStmt>(Loop))
    Parts.push_back(D->getCond());
  return Parts;
}


AST_MATCHER(Stmt, parameterFreeForward) { return isParameterFreeForward(&Node); }

/// How often \p S runs per iteration of \p Loop (everyNth, with \p M), or, without \p M, on
/// every call of its function (1) or not (0): then a condition on a parameter or a field may
/// differ between calls, so every condition, switch, lambda and `if` that may return counts.
unsigned runsPer(const Stmt *S, const Stmt *Loop, AutogradModel *M, ASTContext &Ctx) {
  auto Same = [&](const Expr *E) { return M && M->sameEveryIteration(E, Loop); };
  // `i % k` without a comparison is true on k - 1 of every k iterations; a switch the same on
  // every iteration (`cfg.enabled && i % k`) does not change that.
  auto AlmostEvery = [&](const Expr *Cond) {
    llvm::SmallVector<const Expr *, 4> Conjuncts{Cond};
    bool Modulo = false;
    while (!Conjuncts.empty()) {
      const Expr *E = Conjuncts.pop_back_val()->IgnoreParenImpCasts();
      if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->getOpcode() == BO_LAnd)
        Conjuncts.append({BO->getLHS(), BO->getRHS()});
      else if (moduloInterval(E, Ctx))
        Modulo = true;
      else if (!Same(E))
        return false;
    }
    return Modulo;
  };
  const Stmt *Body = M ? loopBody(Loop) : nullptr;
  unsigned Every = 1;
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode Parent = parentOf(Child, Ctx); !Parent.getNodeKind().isNone() && (!M || Child.get<Stmt>() != Body);
       Child = Parent, Parent = parentOf(Parent, Ctx)) {
    const Stmt *PS = Parent.get<Stmt>();
    if (!PS) {
      if (const auto *FD = Parent.get<FunctionDecl>(); FD && !M)
        return !isLambdaCallOperator(FD);
      continue; // a lambda's call operator or closure class, a local's declaration
    }
    const Stmt *C = Child.get<Stmt>();
    if (const auto *If = dyn_cast<IfStmt>(PS)) {
      if (C == If->getCond() || C == If->getInit() || C == If->getConditionVariableDeclStmt())
        continue;
      // A switch the same on every iteration (`if (cfg.verbose)`): all of them or none.
      if (M && ((C == If->getThen() && AlmostEvery(If->getCond())) ||
                (!If->getInit() && !If->getConditionVariable() && Same(If->getCond()))))
        continue;
      unsigned K = M && C == If->getThen() ? intervalOf(If->getCond(), Ctx) : 0;
      if (K == 0)
        return 0;
      Every = std::max(Every, K);
    } else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(PS)) {
      if (C != CO->getCond() && !Same(CO->getCond()))
        return 0;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(PS)) {
      if (BO->isLogicalOp() && C == BO->getRHS() && !Same(BO->getLHS()))
        return 0;
    } else if (const auto *Sw = dyn_cast<SwitchStmt>(PS)) {
      if (!M || (C == Sw->getBody() && (Sw->getInit() || !Same(Sw->getCond()))))
        return 0;
    } else if (isa<CXXCatchStmt>(PS) || (!M && isa<LambdaExpr>(PS))) {
      return 0;
    } else if (const auto *CS = dyn_cast<CompoundStmt>(PS)) {
      for (const Stmt *Sibling : CS->body()) {
        if (Sibling == C)
          break;
        const auto *If = dyn_cast<IfStmt>(Sibling);
        const Stmt *Then = If ? If->getThen() : nullptr;
        if (const auto *Block = dyn_cast_or_null<CompoundStmt>(Then); Block && Block->size() == 1)
          Then = Block->body_front();
        // `if (i % k != 0) continue;` (or `return;`, in a helper) before the statement selects
        // every k-th iteration.
        const Expr *CondE = If ? If->getCond()->IgnoreParenImpCasts() : nullptr;
        const auto *Cond = dyn_cast_or_null<BinaryOperator>(CondE);
        unsigned K = 0;
        if (If && !If->getElse() && isa<ContinueStmt, ReturnStmt>(Then))
          K = Cond && Cond->getOpcode() == BO_NE
                  ? std::max(moduloInterval(Cond->getLHS(), Ctx), moduloInterval(Cond->getRHS(), Ctx))
                  : moduloInterval(CondE, Ctx);
        if (M) {
          Every = std::max(Every, K);
          continue;
        }
        // An early return only while a threshold holds (`if (buffer.size() < batch) return;`, a
        // warm-up) leaves every later call to run, as a loop's own walk takes it.
        bool Threshold = Cond && Cond->isRelationalOp() && !If->getElse() && !If->getInit() && K == 0;
        if (isa<IfStmt, SwitchStmt>(Sibling) && !Threshold && !match(findAll(returnStmt()), *Sibling, Ctx).empty())
          return 0;
      }
    }
  }
  return M ? Every : 0;
}
} // namespace

const LoopEvent *LoopFacts::first(LoopEventKind K) const {
  auto It = llvm::find_if(Events, [K](const LoopEvent &E) { return E.Kind == K; });
  return It == Events.end() ? nullptr : &*It;
}

StmtMatcher AutogradModel::forwardCall() {
  return stmt(anyOf(matchers::moduleForwardCall(), callExpr(matchers::dependentMemberCall({"forward"}))));
}

StmtMatcher AutogradModel::event(LoopEventKind K) {
  using namespace matchers;
  switch (K) {
  case LoopEventKind::Forward:
    return stmt(forwardCall(), unless(parameterFreeForward()));
  case LoopEventKind::Backward:
    return stmt(anyOf(backwardCall(), callExpr(dependentMemberCall({"backward"})),
                      callExpr(callee(unresolvedLookupExpr(
                          hasAnyDeclaration(functionDecl(hasName("::torch::autograd::backward"))))))));
  case LoopEventKind::Step:
    return stmt(anyOf(optimizerStepCall(), callExpr(dependentMemberCall({"step"}))));
  case LoopEventKind::ZeroGrad:
    return gradClearing();
  case LoopEventKind::Eval:
    return moduleMethodCall({"eval"});
  case LoopEventKind::Train:
    return moduleMethodCall({"train"});
  }
  llvm_unreachable("unknown loop event");
}

llvm::ArrayRef<LoopEvent> AutogradModel::eventsIn(const Stmt *Root) {
  auto [It, Inserted] = P->Events.try_emplace(Root);
  if (!Inserted || !Root)
    return It->second;
  std::vector<LoopEvent> Events;
  // What the project index says \p Callee, a function of another TU, runs of \p K: nothing, or
  // the event's Looped (only inside its own loops) and GradOff (GradOffForward) flags.
  auto Indexed = [&](const FunctionDecl *Callee, LoopEventKind K) -> std::optional<std::pair<bool, bool>> {
    std::optional<uint32_t> Facts = indexedFacts(Callee);
    if (!Facts || !(*Facts & indexFact(K)))
      return std::nullopt;
    return std::pair(!(Index->ownLevelFactsOf(Callee) & indexFact(K)),
                     K == LoopEventKind::Forward && (*Facts & FunctionSummary::GradOffForward));
  };
  // Binary operators too: an assignment to a gradient left unresolved in a template clears it.
  for (const BoundNodes &B : match(findAll(stmt(anyOf(callExpr(), binaryOperator())).bind("s")), *Root, Ctx)) {
    const auto *S = B.getNodeAs<Stmt>("s");
    bool Direct = false;
    for (LoopEventKind K : AllEvents)
      if (!match(event(K), *S, Ctx).empty()) {
        Events.push_back({K, S, S, 1});
        Direct = true;
      }
    const auto *Call = dyn_cast<CallExpr>(S);
    if (Direct || !Call || Opts.CallDepth == 0)
      continue;
    for (const FunctionDecl *Callee : calledFunctions(Call)) {
      // A function of another translation unit: what the project index says it runs.
      if (indexedFacts(Callee)) {
        for (LoopEventKind K : AllEvents)
          if (std::optional<std::pair<bool, bool>> E = Indexed(Callee, K))
            Events.push_back({K, Call, Call, 1, E->first, E->second});
        continue;
      }
      const FunctionDecl *Def = Callee->getDefinition();
      if (!Def || !Def->hasBody() || isInSystemHeader(Def))
        continue;
      for (LoopEventKind K : AllEvents) {
        // The statement of a body the helper reaches that runs K (outside the body's loops if
        // OwnLevel): K's own call, or a call of another TU's function that runs K (at its own
        // level if OwnLevel) by the project index.
        LoopEvent Found{K, Call, nullptr, 1};
        auto Runs = [&](const Stmt *Body, bool OwnLevel) {
          for (const BoundNodes &Match : match(findAll(stmt(event(K)).bind("s")), *Body, Ctx))
            if (!OwnLevel || !enclosingLoop(Match.getNodeAs<Stmt>("s")))
              return (Found.Call = Match.getNodeAs<Stmt>("s")) != nullptr;
          if (!Index)
            return false;
          for (const BoundNodes &Match : match(findAll(callExpr().bind("c")), *Body, Ctx)) {
            const auto *Inner = Match.getNodeAs<CallExpr>("c");
            if (OwnLevel && enclosingLoop(Inner))
              continue;
            for (const FunctionDecl *Other : calledFunctions(Inner))
              if (std::optional<std::pair<bool, bool>> E = Indexed(Other, K); E && !(OwnLevel && E->first)) {
                Found.GradOff = E->second;
                return (Found.Call = Inner) != nullptr;
              }
          }
          return false;
        };
        // First what every call of the helper runs: outside loops, through calls outside loops.
        forEachReachable(
            Def->getBody(), Opts.CallDepth - 1, [&](const Stmt *Body, const FunctionDecl *) { return Runs(Body, true); },
            /*OutsideLoops=*/true);
        if (!Found.Call) {
          Found.Looped = true;
          forEachReachable(Def->getBody(), Opts.CallDepth - 1,
                           [&](const Stmt *Body, const FunctionDecl *) { return Runs(Body, false); });
        }
        if (Found.Call)
          Events.push_back(Found);
      }
    }
  }
  // The map may have grown (rehashed) while a helper was followed.
  return P->Events[Root] = std::move(Events);
}

llvm::SmallVector<const Stmt *, 4> AutogradModel::sitesIn(const Stmt *Root, LoopEventKind K) {
  llvm::SmallVector<const Stmt *, 4> Sites;
  for (const LoopEvent &E : eventsIn(Root))
    if (E.Kind == K && !llvm::is_contained(Sites, E.Site))
      Sites.push_back(E.Site);
  return Sites;
}

const LoopFacts &AutogradModel::loop(const Stmt *Loop) {
  std::unique_ptr<LoopFacts> &Slot = P->Loops[Loop];
  if (Slot)
    return *Slot;
  Slot = std::make_unique<LoopFacts>();
  LoopFacts &Facts = *Slot;
  auto Parts = perIterationParts(Loop);
  for (const Stmt *Part : Parts)
    for (LoopEvent E : eventsIn(Part)) {
      // A loop's condition and increment run on every iteration.
      E.Every = Part == Parts.front() ? everyNth(E.Site, Loop) : 1;
      Facts.Events.push_back(E);
    }
  if (Facts.has(LoopEventKind::Backward) || Facts.has(LoopEventKind::Step))
    Facts.Kind = LoopKind::Training;
  else if (Facts.has(LoopEventKind::Forward))
    Facts.Kind = LoopKind::Eval;
  return Facts;
}

llvm::SmallVector<LoopSite, 4> AutogradModel::callsInLoops(const FunctionDecl *Fn) {
  llvm::SmallVector<LoopSite, 4> Sites;
  for (const CallExpr *Call : callersOf(Fn))
    if (const Stmt *Loop = enclosingLoop(Call))
      Sites.push_back({Loop, Call});
  return Sites;
}

std::optional<PerIteration> AutogradModel::loopAround(
    const Stmt *S, llvm::function_ref<Verdict(const Stmt *, ArrayRef<const Stmt *>)> Judge, unsigned How,
    llvm::function_ref<std::optional<PerIteration>(const FunctionDecl *, unsigned, ArrayRef<const Stmt *>)> Beyond) {
  std::optional<PerIteration> Found;
  auto Visit = [&](ArrayRef<const Stmt *> Path, unsigned, const FunctionDecl *&Up) {
    const FunctionDecl *FD = enclosingFunction(Path.back(), Ctx);
    if ((How & NotThroughRecursion) && Path.size() > 1 && FD == enclosingFunction(Path.end()[-2], Ctx))
      return false;
    for (const Stmt *L = enclosingLoop(Path.back()); L; L = enclosingLoop(L))
      if (Verdict V = Judge(L, Path); V != Verdict::Skip) {
        const auto *Via = Path.size() > 1 ? cast<CallExpr>(Path.back()) : nullptr;
        if (V == Verdict::Take) {
          Found = PerIteration{{L, Via}, unsigned(Path.size() - 1)};
          for (const Stmt *Call : Path.drop_front())
            Found->Path.push_back(cast<CallExpr>(Call));
        }
        return V == Verdict::Take;
      }
    Up = FD && ((How & ThroughLambdaCalls) || !isLambdaCallOperator(FD)) ? FD : nullptr;
    return false;
  };
  auto Across = [&](const FunctionDecl *FD, unsigned Left, ArrayRef<const Stmt *> Path) {
    return (Found = Beyond(FD, Left, Path)).has_value();
  };
  using BeyondFn = llvm::function_ref<bool(const FunctionDecl *, unsigned, ArrayRef<const Stmt *>)>;
  climbCallers(S, Opts.CallDepth, Visit, Beyond ? BeyondFn(Across) : BeyondFn());
  return Found;
}

LoopSite AutogradModel::loopKeeping(const Stmt *Write, const ValueDecl *Kept) {
  const FunctionDecl *Fn = Write ? enclosingFunction(Write, Ctx) : nullptr;
  if (!Fn || !Kept)
    return {};
  if (const auto *VD = dyn_cast<VarDecl>(Kept); VD && VD->hasLocalStorage()) {
    // A parameter: what the caller passes for it must outlive the caller's loop. A local
    // captured by a lambda: declared outside the loop that calls the lambda.
    const auto *Param = dyn_cast<ParmVarDecl>(VD);
    for (const LoopSite &Site : callsInLoops(Fn)) {
      const Expr *Passed = Param ? argumentFor(Site.Via, Param) : nullptr;
      if (const ValueDecl *Outer = Param ? (Passed ? objectRoot(Passed) : nullptr) : VD;
          Outer && outlivesIteration(Outer, Site.Loop))
        return Site;
    }
    return {};
  }
  return loopAround(Write, [](const Stmt *, ArrayRef<const Stmt *>) { return Verdict::Take; }, ThroughLambdaCalls)
      .value_or(PerIteration());
}

const Stmt *AutogradModel::trainingLoopOf(const Stmt *S, llvm::SmallVectorImpl<const CallExpr *> *Calls,
                                          bool ThroughLambdas) {
  auto Training = [&](const Stmt *L, ArrayRef<const Stmt *> Path) {
    if (loop(L).Kind != LoopKind::Training)
      return Verdict::Skip;
    for (const Stmt *Call : Path.drop_front())
      if (Calls)
        Calls->push_back(cast<CallExpr>(Call));
    return Verdict::Take;
  };
  return loopAround(S, Training, ThroughLambdas ? ThroughLambdaCalls : 0).value_or(PerIteration()).Loop;
}

bool AutogradModel::atOwnLevel(const LoopEvent &E, const Stmt *Loop) {
  return !E.Looped && enclosingLoop(E.Site) == Loop && (E.Call == E.Site || !enclosingLoop(E.Call));
}

const LoopEvent *AutogradModel::ownLevelEvent(const Stmt *Loop, ArrayRef<LoopEventKind> Kinds,
                                              llvm::function_ref<bool(const LoopEvent &)> Where) {
  for (const LoopEvent &E : loop(Loop).Events)
    if (llvm::is_contained(Kinds, E.Kind) && atOwnLevel(E, Loop) && (!Where || Where(E)))
      return &E;
  return nullptr;
}

LoopSite AutogradModel::loopRunning(const Stmt *S, ArrayRef<LoopEventKind> Kinds) {
  // A lambda defined before the loop and called in it is found through its calls.
  auto Running = [&](const Stmt *L, ArrayRef<const Stmt *>) {
    return ownLevelEvent(L, Kinds) ? Verdict::Take : Verdict::Skip;
  };
  return loopAround(S, Running, ThroughLambdaCalls).value_or(PerIteration());
}

bool underConditionWithin(const Stmt *S, const Stmt *Scope, ASTContext &Ctx) {
  for (DynTypedNodeList Parents = Ctx.getParents(*S); !Parents.empty(); Parents = Ctx.getParents(Parents[0])) {
    const auto *P = Parents[0].get<Stmt>();
    if (!P || P == Scope)
      return false;
    if (isa<IfStmt, SwitchStmt, ConditionalOperator>(P))
      return true;
  }
  return false;
}

unsigned AutogradModel::everyNth(const Stmt *S, const Stmt *Loop) { return runsPer(S, Loop, this, Ctx); }

bool runsOnEveryCall(const Stmt *S, ASTContext &Ctx) { return runsPer(S, nullptr, nullptr, Ctx) == 1; }

std::optional<PerIteration> AutogradModel::perIterationLoop(const Stmt *S, ArrayRef<LoopEventKind> Kinds,
                                                           bool AcrossTUs) {
  // Each statement on the path, from S up to the call in the loop, must run on every iteration.
  auto Judge = [&](const Stmt *L, ArrayRef<const Stmt *> Path) {
    if (!Kinds.empty() && !ownLevelEvent(L, Kinds))
      return Verdict::Skip;
    return llvm::any_of(Path, [&](const Stmt *On) { return everyNth(On, L) != 1; }) ? Verdict::Stop : Verdict::Take;
  };
  // A loop of another TU that calls FD on every iteration (ProjectIndex::loopCalling), while each
  // statement on the way runs on every call of its function.
  uint32_t Set = 0;
  for (LoopEventKind K : Kinds)
    Set |= indexFact(K);
  const uint32_t Trains = FunctionSummary::Backward | FunctionSummary::Step;
  auto InOtherTU = [&](const FunctionDecl *FD, unsigned Depth,
                       ArrayRef<const Stmt *> Path) -> std::optional<PerIteration> {
    if (!AcrossTUs || !Index || isLambdaCallOperator(FD) ||
        (Set && Set != Trains && Set != (Trains | FunctionSummary::Forward)))
      return std::nullopt;
    LoopCall::Query Query = !Set ? LoopCall::AnyLoop : Set == Trains ? LoopCall::TrainingLoop : LoopCall::ModelLoop;
    std::string USR = usrOf(FD->getCanonicalDecl());
    std::optional<LoopCall> Call = USR.empty() ? std::nullopt : Index->loopCalling(USR, Query, Depth - 1);
    if (!Call || !llvm::all_of(Path, [&](const Stmt *On) { return runsOnEveryCall(On, Ctx); }))
      return std::nullopt;
    const auto *Via = Path.size() > 1 ? dyn_cast<CallExpr>(Path.back()) : nullptr;
    unsigned Calls = Call->Calls + Opts.CallDepth - Depth + 1;
    PerIteration Across{{nullptr, Via}, Calls, {}, FD, std::move(Call)};
    for (const Stmt *On : Path.drop_front())
      Across.Path.push_back(cast<CallExpr>(On));
    return Across;
  };
  return loopAround(S, Judge, ThroughLambdaCalls | NotThroughRecursion, InOtherTU);
}

bool AutogradModel::freesGraphsEachIteration(const Stmt *Loop) {
  // Tensor::backward(gradient, retain_graph, create_graph); torch::autograd::backward(tensors,
  // grad_tensors, retain_graph, create_graph): a flag passed and not a constant false keeps it.
  auto Frees = [&](const LoopEvent &E) {
    const auto *Call = dyn_cast<CallExpr>(E.Call);
    if (E.Every != 1 || !Call || match(matchers::backwardCall(), *Call, Ctx).empty())
      return false;
    unsigned Flags = isa<CXXMemberCallExpr>(Call) ? 1 : 2;
    for (unsigned I = Flags; I < Flags + 2 && I < Call->getNumArgs(); ++I)
      if (!isa<CXXDefaultArgExpr>(Call->getArg(I)) && boolArgument(Call, I, Ctx) != false)
        return false;
    return true;
  };
  return Loop && ownLevelEvent(Loop, {LoopEventKind::Backward}, Frees);
}

bool AutogradModel::iteratesSteps(const Stmt *Loop) {
  // Without backward() or step() at its own level, a loop that trains at all trains in a nested
  // loop or a helper's loop: its forwards feed those steps.
  return ownLevelEvent(Loop, {LoopEventKind::Backward, LoopEventKind::Step}) ||
         (loop(Loop).Kind != LoopKind::Training && ownLevelEvent(Loop, {LoopEventKind::Forward}));
}

} // namespace torchtidy
