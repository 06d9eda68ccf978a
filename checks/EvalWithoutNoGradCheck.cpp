#include "EvalWithoutNoGradCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"


using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// Gradients switched off another way before \p Loop in its function (grad mode itself is the
/// model's): parameters frozen with requires_grad_(false) / set_requires_grad(false), a frozen
/// TorchScript module (torch::jit::freeze / optimize_for_inference).
bool gradOffOtherwise(const Stmt *Loop, const FunctionDecl *FD, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  if (!FD || !FD->hasBody())
    return false;
  auto Switch = callExpr(callee(cxxMethodDecl(hasAnyName("requires_grad_", "set_requires_grad"))),
                         hasArgument(0, expr().bind("arg")));
  auto Frozen = callExpr(callee(functionDecl(hasAnyName("::torch::jit::freeze", "::torch::jit::optimize_for_inference"))));
  bool Off = false;
  for (const BoundNodes &B : match(findAll(stmt(anyOf(Switch, Frozen)).bind("call")), *FD->getBody(), Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    if (!Model.mayRunBefore(Call, Loop))
      continue;
    const auto *Arg = B.getNodeAs<Expr>("arg");
    const auto *Literal = Arg ? dyn_cast<CXXBoolLiteralExpr>(Arg->IgnoreParenImpCasts()) : nullptr;
    Off = !Arg || (Literal && !Literal->getValue());
  }
  return Off;
}

/// The module object a forward or eval() runs on, for matching the two.
const ValueDecl *moduleObject(const Stmt *Call, AutogradModel &Model) {
  const auto *C = dyn_cast<CallExpr>(Call);
  return C ? containerRoot(Model.callShape(C).Object) : nullptr;
}

/// The module a helper call hands over (`predict(model, x)`): the one the helper runs.
const ValueDecl *moduleArgument(const Stmt *Site) {
  if (const auto *Call = dyn_cast<CallExpr>(Site))
    for (const Expr *Arg : Call->arguments())
      if (const auto *Ref = dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts()); Ref && isModuleType(Arg->getType()))
        return Ref->getDecl();
  return nullptr;
}

/// The last `m.eval()` that may run before \p Loop (on the CFG) in \p FD, outside the loop, on
/// the module the forward runs on (the module handed to a helper that runs it; any module
/// when none is).
const Stmt *evalCallBefore(const Stmt *Loop, const LoopEvent &Fwd, const FunctionDecl *FD,
                           AutogradModel &Model) {
  if (!FD || !FD->hasBody())
    return nullptr;
  const ValueDecl *Module = Fwd.Site == Fwd.Call ? moduleObject(Fwd.Call, Model) : moduleArgument(Fwd.Site);
  const Stmt *Last = nullptr;
  auto Evals = stmt(moduleMethodCall({"eval"}), unless(hasAncestor(stmt(equalsNode(Loop))))).bind("eval");
  for (const BoundNodes &B : match(findAll(Evals), *FD->getBody(), Model.context())) {
    const auto *Eval = B.getNodeAs<Stmt>("eval");
    if (Model.mayRunBefore(Eval, Loop) && (!Module || moduleObject(Eval, Model) == Module))
      Last = Eval;
  }
  return Last;
}

/// Statements that autograd cannot affect: no tensor, module or optimizer values, no calls
/// into user code, no labels a jump could bypass a new declaration with.
bool gradNeutral(const Stmt *S, ASTContext &Ctx) {
  if (isa<LabelStmt, SwitchCase>(S))
    return false;
  // In a template, what a dependent expression touches is unknown.
  auto Touchy = stmt(anyOf(labelStmt(), switchCase(), lambdaExpr(), expr(isTypeDependent()),
                           callExpr(callee(functionDecl(unless(clang::ast_matchers::isExpansionInSystemHeader()))))));
  return match(findAll(Touchy), *S, Ctx).empty() &&
         llvm::none_of(match(findAll(expr().bind("e")), *S, Ctx), [](const BoundNodes &B) {
           QualType T = B.getNodeAs<Expr>("e")->getType();
           return canHoldGraph(T) || isModuleType(T) || isOptimizerType(T);
         });
}

/// A guard declared right before the loop scopes it to the rest of the block: safe only
/// when nothing after the loop in that block can depend on autograd. Otherwise a guard first
/// in the loop's body scopes it to exactly the iterations.
fixits::Fixes guardFix(const Stmt *Loop, const FunctionDecl *FD, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Begin = Loop->getBeginLoc();
  if (Begin.isMacroID() || Loop->getEndLoc().isMacroID() || !fixits::declaresTorch("NoGradGuard", Ctx))
    return {};
  const CompoundStmt *Block = fixits::enclosingBlock(Loop, Ctx);
  bool BeforeLoop = Block != nullptr;
  bool After = false;
  for (const Stmt *S : Block ? Block->body() : llvm::iterator_range<Stmt *const *>(nullptr, nullptr)) {
    BeforeLoop = BeforeLoop && (!After || gradNeutral(S, Ctx));
    After = After || S == Loop;
  }
  if (BeforeLoop && FD && FD->hasBody() &&
      match(stmt(hasDescendant(clang::ast_matchers::namedDecl(hasName("no_grad")))), *FD->getBody(), Ctx).empty()) {
    StringRef Line = Lexer::getIndentationForLine(Begin, SM);
    return {FixItHint::CreateInsertion(Begin, ("torch::NoGradGuard no_grad;\n" + Line).str())};
  }
  const auto *Body = dyn_cast_or_null<CompoundStmt>(loopBody(Loop));
  if (!Body || fixits::sourceText(Body, Ctx).contains("no_grad"))
    return {};
  return fixits::insertFirst(Body, "torch::NoGradGuard no_grad;", Ctx);
}

} // namespace

void EvalWithoutNoGradCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) {
  TorchCheck::storeOptions(Opts);
  Options.store(Opts, "TrainingCallNames", ModelOpts.TrainingCallNames);
}

void EvalWithoutNoGradCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(
      traverse(TK_AsIs, stmt(unless(matchers::isExpansionInSystemHeader()), loopStmt()).bind("loop")), this);
}

void EvalWithoutNoGradCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const auto *Loop = Result.Nodes.getNodeAs<Stmt>("loop");
  if (!Loop || Loop->getBeginLoc().isMacroID() || !loopBody(Loop))
    return;
  const FunctionDecl *Inner = enclosingFunction(Loop, Ctx);
  // Template patterns are analysed through their instantiations, where calls resolve; a
  // template nobody instantiates is analysed as written, its dependent calls by name.
  if (!Inner || (Inner->isDependentContext() && !isUninstantiatedPattern(Inner)))
    return;
  // A module's own forward (looping over its layers or time steps) runs in its caller's mode.
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Model.outermostFunction(Loop));
      MD && MD->getIdentifier() && MD->getName() == "forward" &&
      isSameOrDerivedFrom(MD->getParent(), names::Module))
    return;
  // The first model forward each iteration runs with autograd on, directly or through a helper
  // (a guarded prediction before it does not make the loop safe). A forward on a thread the
  // loop starts is not the loop's: no guard around the loop reaches it
  // (torch-grad-mode-not-inherited-by-thread). Asked at the site: a helper run on a thread
  // elsewhere too still runs on the loop's thread here.
  const Expr *LoopThread = Model.threadLaunchOf(Loop);
  const LoopEvent *Fwd = Model.ownLevelEvent(Loop, {LoopEventKind::Forward}, [&](const LoopEvent &E) {
    return !E.GradOff && !Model.gradDisabledAt(E.Call) && !(E.Site != E.Call && Model.gradDisabledAt(E.Site)) &&
           Model.threadLaunchOf(E.Site) == LoopThread;
  });
  if (!Fwd || Fwd->Site->getBeginLoc().isMacroID())
    return;
  // A loop that backpropagates (or steps, or takes autograd::grad) trains: a frozen sub-network in eval() inside it must still
  // let gradients flow.
  if (Model.findReachable(loopBody(Loop), Model.trainingCall()))
    return;
  // A loop that inspects or prepares the graph (tests of autograd, input gradients) wants it.
  static const std::vector<StringRef> GraphQueries{"requires_grad", "requires_grad_",
                                                   "set_requires_grad", "grad_fn", "retain_grad",
                                                   "register_hook", "is_leaf"};
  if (!match(findAll(stmt(anyOf(tensorMethodCall(GraphQueries),
                                callExpr(dependentMemberCall(GraphQueries))))),
             *loopBody(Loop), Ctx)
           .empty())
    return;
  const FunctionDecl *Outer = Model.outermostFunction(Loop);
  if (gradOffOtherwise(Loop, Inner, Model) || (Outer != Inner && gradOffOtherwise(Loop, Outer, Model)))
    return;
  const Stmt *Eval = evalCallBefore(Loop, *Fwd, Inner, Model);
  if (!Eval && Outer != Inner)
    Eval = evalCallBefore(Loop, *Fwd, Outer, Model);
  // A module's other methods (a GRU over chunks in `forward_gru`) are part of its forward too,
  // unless the method itself switches to eval().
  if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Outer);
      !Eval && MD && isSameOrDerivedFrom(MD->getParent(), names::Module))
    return;

  // Outputs accumulated into a loss that is backpropagated after the loop (BPTT, gradient
  // accumulation over a sequence) need the graph.
  // With no visible user, values handed out of the loop (an unrolled sequence, a summed loss)
  // may be backpropagated by the caller; after eval() they are predictions.
  LoopOutputs F = Model.loopOutputs(Loop);
  if (F.ReachesGradient || (F.UsersUnseen && !Eval))
    return;

  if (holdsUnparsedCode(Loop, Ctx) || holdsUnparsedCode(Fwd->Site, Ctx))
    return;
  {
    auto D = diag(Fwd->Site->getBeginLoc(),
                  "model forward runs with autograd enabled in an evaluation loop; consider "
                  "'torch::NoGradGuard no_grad;' (or c10::InferenceMode) before the loop");
    if (!F.Escapes)
      D << guardFix(Loop, Inner, Ctx);
  }
  if (Fwd->Site != Fwd->Call)
    diag(Fwd->Call->getBeginLoc(), "the model forward runs here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  if (Eval)
    diag(Eval->getBeginLoc(), "model put in eval mode here", DiagnosticIDs::Note);
}

} // namespace torchtidy
