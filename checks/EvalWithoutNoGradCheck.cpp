#include "EvalWithoutNoGradCheck.h"

#include "utils/AutogradModel.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Regex.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

bool isParameterFreeBuiltin(const Stmt *Forward);
AST_MATCHER(Stmt, parameterFreeBuiltin) { return isParameterFreeBuiltin(&Node); }

/// A forward the loop runs: \p Site is the statement of the loop body that leads to it
/// (the forward itself, or the call of a helper whose body runs it).
struct ForwardSite {
  const Stmt *Site = nullptr;
  const Stmt *Forward = nullptr;
};

const Stmt *parentStmt(const Stmt *S, ASTContext &Ctx) { return parentOf(S, Ctx).get<Stmt>(); }

/// Whether \p S lies inside a loop body that is itself inside \p Root.
bool inLoopBelow(const Stmt *S, const Stmt *Root, ASTContext &Ctx) {
  const Stmt *Child = S;
  for (const Stmt *P = parentStmt(S, Ctx); P && Child != Root; Child = P, P = parentStmt(P, Ctx))
    if (loopBody(P) == Child)
      return true;
  return false;
}

/// The object a call with dependent arguments runs on: the base of `m->forward(x)` or the
/// module of `m(x)`. Null for calls on objects of dependent type, which stay unknown.
const Expr *dependentCallObject(const CallExpr *Call) {
  if (isa<CXXMemberCallExpr, CXXOperatorCallExpr>(Call))
    return nullptr;
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  const Expr *Obj = Callee;
  if (const auto *M = dyn_cast<MemberExpr>(Callee))
    Obj = M->getBase();
  else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    Obj = M->isImplicitAccess() ? nullptr : M->getBase();
  else if (isa<CXXDependentScopeMemberExpr>(Callee))
    return nullptr;
  return Obj && !Obj->isTypeDependent() && isModuleType(Obj->getType()) ? Obj : nullptr;
}

/// A module forward left unresolved because its arguments depend on a template parameter,
/// run on an object whose (non-dependent) type is a module: `model->forward(batch.data)`,
/// `model(batch.data)`.
AST_MATCHER(CallExpr, dependentModuleForward) {
  const Expr *Obj = dependentCallObject(&Node);
  if (!Obj)
    return false;
  const Expr *Callee = Node.getCallee()->IgnoreParenImpCasts();
  if (Callee == Obj)
    return true;
  if (const auto *M = dyn_cast<MemberExpr>(Callee)) {
    const auto *MD = dyn_cast<CXXMethodDecl>(M->getMemberDecl());
    return MD && MD->getIdentifier() && MD->getName() == "forward";
  }
  return dependentMemberName(Callee) == "forward";
}

/// T for a ModuleHolder<T> (or a class derived from one, like torch::nn::Linear), else null.
const CXXRecordDecl *heldModule(const CXXRecordDecl *RD, unsigned Depth = 3) {
  if (!RD)
    return nullptr;
  if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
      Spec && Spec->getName() == "ModuleHolder" && Spec->getTemplateArgs().size() == 1 &&
      Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
    return Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  RD = RD->getDefinition();
  if (!RD || Depth == 0)
    return nullptr;
  for (const CXXBaseSpecifier &Base : RD->bases())
    if (const CXXRecordDecl *Held = heldModule(recordOf(Base.getType()), Depth - 1))
      return Held;
  return nullptr;
}

/// The class a forward runs: the callee's class, or T for `holder(x)` on a ModuleHolder<T>.
const CXXRecordDecl *forwardedClass(const Stmt *Forward) {
  const auto *Call = dyn_cast<CallExpr>(Forward);
  if (!Call)
    return nullptr;
  const CXXRecordDecl *RD = nullptr;
  if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Call->getDirectCallee()))
    RD = MD->getParent();
  else if (const Expr *Obj = dependentCallObject(Call))
    RD = Obj->getType()->isPointerType() ? Obj->getType()->getPointeeType()->getAsCXXRecordDecl()
                                         : recordOf(Obj->getType());
  if (const CXXRecordDecl *Held = heldModule(RD))
    return Held;
  return RD;
}

/// LibTorch's losses, activations, pooling, dropout and reshaping modules own no parameters:
/// they record a graph only when their inputs already carry one.
bool isParameterFreeBuiltin(const Stmt *Forward) {
  static const llvm::Regex Names(
      "^(.*Loss|ReLU6?|LeakyReLU|R?ReLU|P?ReLU|C?ELU|SELU|GELU|GLU|SiLU|Mish|Sigmoid|Tanh|"
      "Softmax2?d?|Softmin|LogSoftmax|LogSigmoid|Softplus|Softshrink|Softsign|Hardshrink|"
      "Hardtanh|Tanhshrink|Threshold|(Feature)?(Alpha)?Dropout[23]?d?|Flatten|Unflatten|"
      "Identity|(Adaptive)?(Max|Avg)Pool[123]d|LPPool[12]d|MaxUnpool[123]d|Upsample|"
      "Pixel(Un)?[Ss]huffle|(Zero|Reflection|Replication|Constant)Pad[123]d|CosineSimilarity|"
      "PairwiseDistance|Fold|Unfold|ChannelShuffle)Impl$");
  const CXXRecordDecl *RD = forwardedClass(Forward);
  if (!RD || !RD->getIdentifier() || !isInSystemHeader(RD))
    return false;
  return Names.match(RD->getName());
}

/// A module forward of user code or of a LibTorch layer with parameters.
clang::ast_matchers::internal::BindableMatcher<Stmt> modelForward() {
  return stmt(anyOf(moduleForwardCall(), callExpr(dependentModuleForward())),
              unless(parameterFreeBuiltin()));
}

/// The first forward of a user helper body that does not sit in a loop of its own (such a
/// loop is judged by itself), following further helpers up to \p Depth levels.
const Stmt *forwardInHelper(const FunctionDecl *Callee, ASTContext &Ctx, unsigned Depth,
                            llvm::SmallPtrSetImpl<const FunctionDecl *> &Visited) {
  const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
  if (!Def || !Def->hasBody() || isInSystemHeader(Def) || !Visited.insert(Def).second)
    return nullptr;
  const Stmt *Body = Def->getBody();
  for (const BoundNodes &B : match(findAll(modelForward().bind("fwd")), *Body, Ctx))
    if (!inLoopBelow(B.getNodeAs<Stmt>("fwd"), Body, Ctx))
      return B.getNodeAs<Stmt>("fwd");
  if (Depth == 0)
    return nullptr;
  for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Body, Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    if (inLoopBelow(Call, Body, Ctx))
      continue;
    if (const Stmt *F = forwardInHelper(Call->getDirectCallee(), Ctx, Depth - 1, Visited))
      return F;
  }
  return nullptr;
}

/// The first forward the loop body runs on every iteration, directly or through a helper.
ForwardSite firstForward(const Stmt *Loop, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  const Stmt *Body = loopBody(Loop);
  for (const BoundNodes &B : match(findAll(modelForward().bind("fwd")), *Body, Ctx)) {
    const auto *F = B.getNodeAs<Stmt>("fwd");
    if (enclosingLoop(F, Ctx) == Loop)
      return {F, F};
  }
  for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Body, Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    if (enclosingLoop(Call, Ctx) != Loop)
      continue;
    llvm::SmallPtrSet<const FunctionDecl *, 8> Visited;
    if (const Stmt *F = Model.depth() ? forwardInHelper(Call->getDirectCallee(), Ctx, Model.depth() - 1, Visited) : nullptr)
      return {Call, F};
  }
  return {};
}

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
const ValueDecl *moduleObject(const Stmt *Call) {
  const Expr *Obj = nullptr;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
    Obj = MC->getImplicitObjectArgument();
  else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(Call))
    Obj = OC->getNumArgs() ? OC->getArg(0) : nullptr;
  else if (const auto *C = dyn_cast<CallExpr>(Call))
    Obj = dependentCallObject(C);
  while (Obj) {
    Obj = Obj->IgnoreParenImpCasts();
    if (const auto *Arrow = dyn_cast<CXXOperatorCallExpr>(Obj);
        Arrow && Arrow->getOperator() == OO_Arrow) {
      Obj = Arrow->getArg(0);
      continue;
    }
    if (const auto *Deref = dyn_cast<UnaryOperator>(Obj); Deref && Deref->getOpcode() == UO_Deref) {
      Obj = Deref->getSubExpr();
      continue;
    }
    break;
  }
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(Obj))
    return DRE->getDecl();
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(Obj))
    return ME->getMemberDecl();
  return nullptr;
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
const Stmt *evalCallBefore(const Stmt *Loop, const ForwardSite &Fwd, const FunctionDecl *FD,
                           AutogradModel &Model) {
  if (!FD || !FD->hasBody())
    return nullptr;
  const ValueDecl *Module = Fwd.Site == Fwd.Forward ? moduleObject(Fwd.Forward) : moduleArgument(Fwd.Site);
  const Stmt *Last = nullptr;
  auto Evals = stmt(moduleMethodCall({"eval"}), unless(hasAncestor(stmt(equalsNode(Loop))))).bind("eval");
  for (const BoundNodes &B : match(findAll(Evals), *FD->getBody(), Model.context())) {
    const auto *Eval = B.getNodeAs<Stmt>("eval");
    if (Model.mayRunBefore(Eval, Loop) && (!Module || moduleObject(Eval) == Module))
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
                           callExpr(callee(functionDecl(unless(isExpansionInSystemHeader()))))));
  return match(findAll(Touchy), *S, Ctx).empty() &&
         llvm::none_of(match(findAll(expr().bind("e")), *S, Ctx), [](const BoundNodes &B) {
           QualType T = B.getNodeAs<Expr>("e")->getType();
           return canHoldGraph(T) || isModuleType(T) || isOptimizerType(T);
         });
}

/// Whether torch::NoGradGuard is declared in this translation unit.
bool hasTorchNoGradGuard(ASTContext &Ctx) {
  for (const NamedDecl *NS : Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get("torch")))
    if (const auto *DC = dyn_cast<NamespaceDecl>(NS))
      if (!DC->lookup(&Ctx.Idents.get("NoGradGuard")).empty())
        return true;
  return false;
}

/// A guard declared right before the loop scopes it to the rest of the block: safe only
/// when nothing after the loop in that block can depend on autograd.
std::optional<FixItHint> guardFix(const Stmt *Loop, const FunctionDecl *FD, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Begin = Loop->getBeginLoc();
  if (Begin.isMacroID() || Loop->getEndLoc().isMacroID() || !hasTorchNoGradGuard(Ctx))
    return std::nullopt;
  const auto *Block = dyn_cast_or_null<CompoundStmt>(parentStmt(Loop, Ctx));
  if (!Block || isa_and_nonnull<SwitchStmt>(parentStmt(Block, Ctx)))
    return std::nullopt;
  bool After = false;
  for (const Stmt *S : Block->body()) {
    if (After && !gradNeutral(S, Ctx))
      return std::nullopt;
    After = After || S == Loop;
  }
  if (FD && FD->hasBody() &&
      !match(stmt(hasDescendant(clang::ast_matchers::namedDecl(hasName("no_grad")))), *FD->getBody(), Ctx).empty())
    return std::nullopt;
  StringRef Line = Lexer::getIndentationForLine(Begin, SM);
  return FixItHint::CreateInsertion(Begin, ("torch::NoGradGuard no_grad;\n" + Line).str());
}

} // namespace

void EvalWithoutNoGradCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) {
  TorchCheck::storeOptions(Opts);
  Options.store(Opts, "TrainingCallNames", ModelOpts.TrainingCallNames);
}

void EvalWithoutNoGradCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(
      traverse(TK_AsIs, stmt(unless(isExpansionInSystemHeader()), loopStmt()).bind("loop")), this);
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
  ForwardSite Fwd = firstForward(Loop, Model);
  if (!Fwd.Site || Fwd.Site->getBeginLoc().isMacroID())
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
  if (Model.gradDisabledAt(Fwd.Forward) || (Fwd.Site != Fwd.Forward && Model.gradDisabledAt(Fwd.Site)))
    return;
  const FunctionDecl *Outer = Model.outermostFunction(Loop);
  if (gradOffOtherwise(Loop, Inner, Model) || (Outer != Inner && gradOffOtherwise(Loop, Outer, Model)))
    return;
  const Stmt *Eval = evalCallBefore(Loop, Fwd, Inner, Model);
  if (!Eval && Outer != Inner)
    Eval = evalCallBefore(Loop, Fwd, Outer, Model);
  // A module's other methods (a GRU over chunks in `forward_gru`) are part of its forward too,
  // unless the method itself switches to eval().
  if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Outer);
      !Eval && MD && isSameOrDerivedFrom(MD->getParent(), names::Module))
    return;

  // Outputs accumulated into a loss that is backpropagated after the loop (BPTT, gradient
  // accumulation over a sequence) need the graph.
  LoopOutputs F = Model.loopOutputs(Loop);
  if (F.ReachesGradient)
    return;
  if (F.Escapes) {
    bool AnyUserSeen = false;
    if (Model.escapeFeedsGradient(Inner, F.EscapesToMember, AnyUserSeen))
      return;
    // With no visible user, values handed out of the loop (an unrolled sequence, a summed
    // loss) may be backpropagated by the caller; after eval() they are predictions.
    if (!AnyUserSeen && !Eval)
      return;
  }

  {
    auto D = diag(Fwd.Site->getBeginLoc(),
                  "model forward runs with autograd enabled in an evaluation loop; consider "
                  "'torch::NoGradGuard no_grad;' (or c10::InferenceMode) before the loop");
    if (!F.Escapes)
      if (auto Fix = guardFix(Loop, Inner, Ctx))
        D << *Fix;
  }
  if (Fwd.Site != Fwd.Forward)
    diag(Fwd.Forward->getBeginLoc(), "the model forward runs here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  if (Eval)
    diag(Eval->getBeginLoc(), "model put in eval mode here", DiagnosticIDs::Note);
}

} // namespace torchtidy
