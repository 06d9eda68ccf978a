#include "HiddenStateNotDetachedCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// The variable that carries state in \p E: `h`, `this->h_`, and the struct `state` of
/// `state.h` (a struct of (h, c) carries them together).
const ValueDecl *carrierOf(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  // std::get<0>(state) is part of the tuple `state`.
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    return FD && FD->isInStdNamespace() && FD->getIdentifier() && FD->getName() == "get" && Call->getNumArgs() == 1
               ? carrierOf(Call->getArg(0))
               : nullptr;
  }
  while (const auto *ME = dyn_cast<MemberExpr>(E)) {
    if (isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
      return ME->getMemberDecl();
    E = ME->getBase()->IgnoreParenImpCasts();
  }
  return containerRoot(E);
}

/// A state an assignment writes: its carrier, and the part written (the field of `state.h`,
/// else the carrier itself).
struct Written {
  const ValueDecl *Carrier;
  const ValueDecl *Part;
};

/// The variables an assignment writes: `h = ...`, `state.h = ...`, `std::tie(h, c) = ...`,
/// `std::forward_as_tuple(out, std::tie(h, c)) = ...`.
void writtenBy(const Expr *LHS, llvm::SmallVectorImpl<Written> &Out) {
  LHS = LHS->IgnoreUnlessSpelledInSource();
  if (const auto *Call = dyn_cast<CallExpr>(LHS)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && FD->isInStdNamespace() && FD->getIdentifier() &&
        (FD->getName() == "tie" || FD->getName() == "forward_as_tuple"))
      for (const Expr *Arg : Call->arguments())
        writtenBy(Arg, Out);
    return;
  }
  if (const ValueDecl *D = carrierOf(LHS)) {
    const auto *ME = dyn_cast<MemberExpr>(LHS);
    Out.push_back({D, ME ? ME->getMemberDecl() : D});
  }
}

/// The module forward \p E computes from: one it calls, or one initialising a local (or
/// structured binding) it reads, a few levels deep; else null.
const Expr *producingForward(const Expr *E, ASTContext &Ctx, unsigned Depth = 3) {
  if (!E || Depth == 0)
    return nullptr;
  if (const auto *Found = selectFirst<Expr>("f", match(findAll(matchers::moduleForwardCall().bind("f")), *E, Ctx)))
    return Found;
  for (const BoundNodes &B : match(findAll(declRefExpr().bind("ref")), *E, Ctx)) {
    const ValueDecl *D = B.getNodeAs<DeclRefExpr>("ref")->getDecl();
    if (const auto *Binding = dyn_cast<BindingDecl>(D))
      D = Binding->getDecomposedDecl();
    const auto *VD = dyn_cast_or_null<VarDecl>(D);
    if (const Expr *Found = VD && VD->isLocalVarDecl() ? producingForward(VD->getInit(), Ctx, Depth - 1) : nullptr)
      return Found;
  }
  return nullptr;
}

/// The state variables \p E reads, except through a value whose graph is cut (`h.detach()`, a
/// helper returning detached copies): the forward it is handed reads no graph of theirs.
void fedBy(const Expr *E, AutogradModel &Model, llvm::SmallPtrSetImpl<const ValueDecl *> &Fed) {
  if (isa<CallExpr>(E) && Model.isDetached(E))
    return;
  if (isa<DeclRefExpr, MemberExpr>(E) && canHoldGraph(E->getType()))
    if (const ValueDecl *D = carrierOf(E))
      Fed.insert(D);
  for (const Stmt *Child : E->children())
    if (const auto *CE = dyn_cast_or_null<Expr>(Child))
      fedBy(CE, Model, Fed);
}

bool callsDetach(const Expr *E, ASTContext &Ctx) {
  return !match(expr(anyOf(matchers::tensorMethodCall({"detach", "detach_"}),
                           hasDescendant(matchers::tensorMethodCall({"detach", "detach_"})))),
                *E, Ctx)
              .empty();
}

/// `h = h.detach();` for a tensor state, `s = {std::get<0>(s).detach(), ...};` for a tuple (or
/// pair) of tensors; empty for any other state.
std::string detachStatement(const ValueDecl *State) {
  std::string Name = State->getNameAsString();
  QualType T = State->getType().getNonReferenceType();
  if (T.isConstQualified())
    return {};
  if (isTensorType(T))
    return Name + " = " + Name + ".detach();";
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Spec || !Spec->isInStdNamespace() || (Spec->getName() != "tuple" && Spec->getName() != "pair"))
    return {};
  bool Pair = Spec->getName() == "pair";
  const TemplateArgumentList &Args = Spec->getTemplateArgs();
  llvm::SmallVector<const TemplateArgument *, 4> Types;
  for (const TemplateArgument &A : Args.asArray()) {
    if (A.getKind() == TemplateArgument::Pack)
      for (const TemplateArgument &P : A.pack_elements())
        Types.push_back(&P);
    else
      Types.push_back(&A);
  }
  std::string Parts;
  for (size_t I = 0; I < Types.size(); ++I) {
    if (Types[I]->getKind() != TemplateArgument::Type || !isTensorType(Types[I]->getAsType()))
      return {};
    Parts += (I ? ", " : "") +
             (Pair ? Name + (I ? ".second" : ".first") : "std::get<" + std::to_string(I) + ">(" + Name + ")") +
             ".detach()";
  }
  return Types.empty() ? std::string() : Name + " = {" + Parts + "};";
}

/// The states \p Write carries, each detached right after the statement of \p Last (the
/// backward(), or the write when it runs after it): where the state crosses into the next
/// iteration, after this iteration's graph has been used. Only for locals declared before
/// \p Loop, and members (named as written).
fixits::Fixes detachAfter(const Stmt *Last, llvm::ArrayRef<const ValueDecl *> States, const Stmt *Loop,
                          ASTContext &Ctx) {
  const Stmt *At = fixits::blockStatement(Last, Ctx);
  const SourceManager &SM = Ctx.getSourceManager();
  if (!At || !isWithin(At->getBeginLoc(), Loop->getSourceRange(), SM))
    return {};
  std::string Code;
  for (const ValueDecl *State : States) {
    std::string Statement = detachStatement(State);
    bool Visible = isa<FieldDecl>(State) || (isa<VarDecl>(State) && SM.isBeforeInTranslationUnit(
                                                                        State->getLocation(), Loop->getBeginLoc()));
    if (Statement.empty() || !Visible)
      return {};
    Code += (Code.empty() ? "" : "\n") + Statement;
  }
  return fixits::insertAfter(At, Code, Ctx);
}

} // namespace

void HiddenStateNotDetachedCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  // The forward a carried state is fed to; the check then looks for the write that carries
  // graph-attached state into it across a backward().
  Finder->addMatcher(stmt(unless(matchers::isExpansionInSystemHeader()), matchers::moduleForwardCall()).bind("forward"), this);
}

void HiddenStateNotDetachedCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Forward = Result.Nodes.getNodeAs<CallExpr>("forward");
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const FunctionDecl *Fn = enclosingFunction(Forward, Ctx);
  const Stmt *Loop = Model.enclosingLoop(Forward);
  if (Forward->getBeginLoc().isMacroID() || !Fn || !Fn->hasBody() || !Loop || Model.gradDisabledAt(Forward) ||
      (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  // The state variables the forward reads: `lstm->forward(x, hx)`, `cell(x, {h, c})`.
  llvm::SmallPtrSet<const ValueDecl *, 4> Fed;
  for (unsigned I = isa<CXXOperatorCallExpr>(Forward) ? 1 : 0; I < Forward->getNumArgs(); ++I)
    fedBy(Forward->getArg(I), Model, Fed);
  if (Fed.empty())
    return;

  // Where the state is written (from a forward: carries a graph; otherwise: a reset) and
  // detached in place, in the function that runs the loop.
  auto Assign = stmt(anyOf(binaryOperator(isAssignmentOperator()).bind("bin"),
                           cxxOperatorCallExpr(hasOverloadedOperatorName("=")).bind("op")));
  struct Carry {
    const Stmt *Write;
    Written State;
    const Expr *Producer; ///< the forward whose result it writes
  };
  std::vector<Carry> Carries;
  llvm::DenseMap<const ValueDecl *, std::vector<const Stmt *>> Ends;
  for (const BoundNodes &B : match(findAll(Assign), *Fn->getBody(), Ctx)) {
    const Expr *LHS, *RHS;
    if (const auto *Bin = B.getNodeAs<BinaryOperator>("bin"))
      LHS = Bin->getLHS(), RHS = Bin->getRHS();
    else
      LHS = B.getNodeAs<CXXOperatorCallExpr>("op")->getArg(0), RHS = B.getNodeAs<CXXOperatorCallExpr>("op")->getArg(1);
    const auto *S = B.getNodeAs<Stmt>(B.getNodeAs<Stmt>("bin") ? "bin" : "op");
    const Expr *Producer = producingForward(RHS, Ctx);
    bool IsCarry = Producer && !callsDetach(RHS, Ctx) && !Model.gradDisabledAt(S);
    llvm::SmallVector<Written, 2> States;
    writtenBy(LHS, States);
    for (const Written &W : States)
      if (Fed.contains(W.Carrier)) {
        if (IsCarry)
          Carries.push_back({S, W, Producer});
        else
          Ends[W.Carrier].push_back(S);
      }
  }
  for (const BoundNodes &B : match(findAll(stmt(anyOf(matchers::tensorMethodCall({"detach_"}), declStmt())).bind("end")),
                                   *Fn->getBody(), Ctx)) {
    const auto *End = B.getNodeAs<Stmt>("end");
    if (const auto *DS = dyn_cast<DeclStmt>(End)) {
      // A state declared in the loop starts fresh every iteration.
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<ValueDecl>(D); VD && Fed.contains(VD))
          Ends[VD].push_back(End);
    } else if (const ValueDecl *D = carrierOf(cast<CXXMemberCallExpr>(End)->getImplicitObjectArgument());
               D && Fed.contains(D)) {
      Ends[D].push_back(End);
    }
  }
  if (Carries.empty() || holdsUnparsedCode(Loop, Ctx))
    return;

  // A forward's result crosses a backward() on its way to the next iteration's forward, written
  // before the backward() or after it: the next iteration's graph hangs on to every earlier one.
  std::vector<const Stmt *> Backwards;
  for (const Stmt *L = Loop; L; L = Model.enclosingLoop(L))
    for (const LoopEvent &E : Model.loop(L).Events)
      if (E.Kind == LoopEventKind::Backward && enclosingFunction(E.Site, Ctx) == Fn)
        Backwards.push_back(E.Site);
  // Every state one write carries (`std::tie(h, c) = ...`), each once.
  auto CarriedBy = [&](const Stmt *Write) {
    llvm::SmallVector<const ValueDecl *, 2> States;
    for (const Carry &C : Carries)
      if (C.Write == Write && !llvm::is_contained(States, C.State.Carrier))
        States.push_back(C.State.Carrier);
    return States;
  };
  for (const auto &[Write, W, Producer] : Carries) {
    const ValueDecl *State = W.Carrier;
    // Another forward's result written to the same state in between replaces it too (a GAN's
    // `fake = G->forward(z)` before each discriminator pass); `carry.c = ...` does not replace
    // `carry.h`.
    std::vector<const Stmt *> Replaced = Ends[State];
    for (const Carry &Other : Carries)
      if (Other.State.Carrier == State && Other.State.Part == W.Part && Other.Write != Write)
        Replaced.push_back(Other.Write);
    // A state carries over only when the value of one iteration reaches the next one's
    // forward: `fake = G->forward(z)` at the top of every iteration, before `D->forward(fake)`,
    // carries nothing, even when a discriminator's backward() runs between the two in the
    // same iteration (`h = rnn(x, h)` does: its forward runs before its assignment).
    std::vector<const Stmt *> ReplacedOrRewritten = Replaced;
    ReplacedOrRewritten.push_back(Write);
    if (!Model.mayRunInLaterIteration(Write, Forward, ReplacedOrRewritten))
      continue;
    for (const Stmt *Backward : Backwards) {
      if (Reported.contains(Write))
        break;
      // The backward() runs between the write and the next forward; or between the forward
      // that made the value and its write (`h = h_new;` last in the iteration).
      bool WrittenBefore = Model.mayRunBeforeAvoiding(Write, Backward, Replaced) &&
                           Model.mayRunBeforeAvoiding(Backward, Forward, ReplacedOrRewritten);
      bool WrittenAfter = !WrittenBefore && Model.mayRunBeforeAvoiding(Producer, Backward, {}) &&
                          Model.mayRunBeforeAvoiding(Backward, Write, {Producer});
      if (WrittenBefore || WrittenAfter) {
        diag(Write->getBeginLoc(), "recurrent state '%0' keeps the autograd graph of the previous iteration "
                                   "and is fed to the next forward: every backward() reaches back through all "
                                   "earlier iterations (or fails on their freed graphs); consider detaching it "
                                   "after backward()")
            << State->getName() << detachAfter(WrittenBefore ? Backward : Write, CarriedBy(Write), Loop, Ctx);
        Reported.insert(Write);
        diag(Backward->getBeginLoc(), "backward() here", DiagnosticIDs::Note);
        diag(Forward->getBeginLoc(), "fed to the forward here", DiagnosticIDs::Note);
        return;
      }
    }
  }
}

} // namespace torchtidy
