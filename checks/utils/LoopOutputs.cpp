// What the values a loop leaves behind can still feed: the model's loopOutputs, for loops
// whose results may be backpropagated later (BPTT, accumulated losses, REINFORCE).
#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

using VarSet = llvm::SmallPtrSet<const ValueDecl *, 8>;

/// `f(x)` with dependent arguments: a call of one of the named free functions.
AST_MATCHER_P(CallExpr, unresolvedCallOf, std::vector<StringRef>, QualifiedNames) {
  const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Node.getCallee()->IgnoreParenImpCasts());
  if (!Lookup)
    return false;
  for (const NamedDecl *D : Lookup->decls())
    if (llvm::is_contained(QualifiedNames, D->getUnderlyingDecl()->getQualifiedNameAsString()))
      return true;
  return false;
}

/// A call of a non-const method, or of an in-place tensor method (those are const members).
clang::ast_matchers::internal::Matcher<CXXMemberCallExpr> writingMethod() {
  return callee(cxxMethodDecl(anyOf(unless(isConst()), matchesName("_$"))));
}

/// The definition of a function of user code with a body, or null.
const FunctionDecl *userDefinition(const FunctionDecl *FD) {
  const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
  return Def && Def->hasBody() && !isInSystemHeader(Def) ? Def : nullptr;
}

/// Adds to \p Written the graph-holding variables declared outside \p Local (and, for a
/// callee body, not its own locals or parameters) that \p Scope writes; notes member writes.
void collectWrittenState(const Stmt *Scope, SourceRange Local, const FunctionDecl *Callee,
                         VarSet &Written, LoopOutputs &Result, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  ExprMutationAnalyzer Mutations(*Scope, Ctx);
  for (const BoundNodes &B : match(findAll(declRefExpr().bind("ref")), *Scope, Ctx)) {
    const auto *VD = dyn_cast<VarDecl>(B.getNodeAs<DeclRefExpr>("ref")->getDecl());
    if (!VD || Written.count(VD) || !canHoldGraph(VD->getType()) ||
        isWithin(VD->getLocation(), Local, SM) || (Callee && VD->getDeclContext() == Callee))
      continue;
    // In-place tensor methods are const members of at::Tensor: the analyzer misses them,
    // also on a view of the variable (`outputs.select(0, i).copy_(y)`).
    auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
    bool IsWritten =
        Mutations.isMutated(VD) ||
        !match(findAll(stmt(anyOf(cxxMemberCallExpr(callee(cxxMethodDecl(matchesName("_$"))),
                                                     on(expr(anyOf(Ref, hasDescendant(Ref))))),
                                  callExpr(dependentInPlaceCall(), callee(expr(hasDescendant(Ref))))))),
               *Scope, Ctx)
             .empty();
    if (IsWritten)
      Written.insert(VD);
  }
  // A graph-holding member written in the loop outlives the call.
  auto MemberWrite = memberExpr(hasObjectExpression(ignoringParenImpCasts(cxxThisExpr()))).bind("m");
  for (const BoundNodes &B : match(
           findAll(stmt(anyOf(
               binaryOperator(isAssignmentOperator(), hasLHS(ignoringParenImpCasts(MemberWrite))),
               cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, ignoringParenImpCasts(MemberWrite))),
               cxxMemberCallExpr(on(ignoringParenImpCasts(MemberWrite)), writingMethod())))),
           *Scope, Ctx))
    if (canHoldGraph(B.getNodeAs<MemberExpr>("m")->getType()))
      Result.Escapes = Result.EscapesToMember = true;
}

/// Graph-holding variables declared outside \p Loop that its body writes, followed through
/// the function after the loop to gradient consumers, returns, out-parameters and members.
LoopOutputs analyzeFlow(const Stmt *Loop, AutogradModel &Model) {
  ASTContext &Ctx = Model.context();
  LoopOutputs Result;
  VarSet Written;
  collectWrittenState(loopBody(Loop), Loop->getSourceRange(), nullptr, Written, Result, Ctx);
  // Helpers and lambdas the loop calls may stash outputs in captured or member state
  // (REINFORCE: log-probs saved per step, backpropagated at the episode's end).
  llvm::SmallPtrSet<const FunctionDecl *, 8> Visited;
  llvm::SmallVector<std::pair<const Stmt *, unsigned>, 8> Work{{loopBody(Loop), 2}};
  while (!Work.empty()) {
    auto [Scope, Depth] = Work.pop_back_val();
    for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Scope, Ctx)) {
      const FunctionDecl *Def = userDefinition(B.getNodeAs<CallExpr>("call")->getDirectCallee());
      if (!Def || !Visited.insert(Def).second)
        continue;
      collectWrittenState(Def->getBody(), Def->getBody()->getSourceRange(), Def, Written, Result, Ctx);
      if (Depth > 1)
        Work.push_back({Def->getBody(), Depth - 1});
    }
  }
  FateQuery Later;
  Later.After = Loop;
  Later.FieldsEscape = false;
  for (const ValueDecl *V : Written) {
    ValueFate Fate = Model.fateOf(V, Later);
    Result.ReachesGradient |= Fate == ValueFate::Backpropagated;
    Result.Escapes |= Fate == ValueFate::Escapes;
  }
  return Result;
}

} // namespace

bool canHoldGraph(QualType T, unsigned Depth) {
  if (T.isNull())
    return false;
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *PT = T->getAs<PointerType>())
    T = PT->getPointeeType().getCanonicalType();
  // The array behind a braced list (`return {out, h};`).
  if (const ArrayType *AT = T->getAsArrayTypeUnsafe())
    T = AT->getElementType().getCanonicalType();
  if (isTensorType(T))
    return true;
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD)
    return false;
  if (RD->getQualifiedNameAsString() == "c10::IValue")
    return true;
  if (Depth == 0)
    return false;
  // std::tuple<Tensor, Tensor> holds its element types in one pack argument.
  std::function<bool(const TemplateArgument &)> Holds = [&](const TemplateArgument &Arg) {
    if (Arg.getKind() == TemplateArgument::Pack)
      return llvm::any_of(Arg.pack_elements(), Holds);
    return Arg.getKind() == TemplateArgument::Type && canHoldGraph(Arg.getAsType(), Depth - 1);
  };
  if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD))
    if (llvm::any_of(Spec->getTemplateArgs().asArray(), Holds))
      return true;
  // A struct of the program (a step record, a trajectory) holding a tensor.
  if (isInSystemHeader(RD) || !RD->hasDefinition())
    return false;
  return llvm::any_of(RD->fields(), [&](const FieldDecl *F) { return canHoldGraph(F->getType(), Depth - 1); });
}

namespace {
/// A call not resolved yet (dependent arguments, in a template never instantiated) one of
/// whose candidate user functions reaches \p Inner (see AutogradModel::findReachable).
AST_MATCHER_P2(CallExpr, unresolvedCalleeReaches, AutogradModel *, M, StmtMatcher, Inner) {
  const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Node.getCallee()->IgnoreParenImpCasts());
  if (!Lookup)
    return false;
  for (const NamedDecl *D : Lookup->decls()) {
    const FunctionDecl *FD = D->getAsFunction();
    if (FD && FD->hasBody() && !isInSystemHeader(FD) && M->findReachable(FD->getBody(), Inner, /*Depth=*/2))
      return true;
  }
  return false;
}
} // namespace

/// backward(), optimizer step() or torch::autograd::grad(): what needs a recorded graph. In a
/// template nobody instantiates, calls with dependent parts count by name.
StmtMatcher AutogradModel::gradientConsumer() {
  auto Resolved = stmt(anyOf(backwardCall(), optimizerStepCall(),
                             callExpr(callee(functionDecl(hasName("::torch::autograd::grad"))))));
  auto ByName = stmt(anyOf(
      Resolved, callExpr(dependentMemberCall({"backward", "step"})),
      callExpr(unresolvedCallOf({"torch::autograd::grad", "torch::autograd::backward"}))));
  return stmt(anyOf(ByName, callExpr(unresolvedCalleeReaches(this, ByName))));
}

namespace {
AST_MATCHER_P(CallExpr, opaqueTrainingCallOf, AutogradModel *, M) { return M->isOpaqueTrainingCall(&Node); }
} // namespace

bool AutogradModel::isOpaqueTrainingCall(const CallExpr *Call) {
  if (!P->TrainingCallNames)
    P->TrainingCallNames.emplace(Opts.TrainingCallNames, llvm::Regex::IgnoreCase);
  const llvm::Regex &Names = *P->TrainingCallNames;
  if (const FunctionDecl *FD = Call->getDirectCallee()) {
    // The project index knows what a function of another TU runs; the name is a guess.
    if (std::optional<uint32_t> Facts = indexedFacts(FD))
      return *Facts & (FunctionSummary::Backward | FunctionSummary::Step | FunctionSummary::Grad);
    return FD->getIdentifier() && !FD->getDefinition() && !isInSystemHeader(FD) && Names.match(FD->getName());
  }
  // On an object of dependent type (`trainer.update(loss)` in a template) nothing is known.
  StringRef Name = dependentMemberName(Call->getCallee());
  return !Name.empty() && Names.match(Name);
}

StmtMatcher AutogradModel::trainingCall() {
  return stmt(anyOf(gradientConsumer(), callExpr(opaqueTrainingCallOf(this))));
}

const FunctionDecl *AutogradModel::outermostFunction(const Stmt *S) {
  for (auto Parents = Ctx.getParents(*S); !Parents.empty(); Parents = Ctx.getParents(Parents[0])) {
    const auto *FD = Parents[0].get<FunctionDecl>();
    const auto *MD = dyn_cast_or_null<CXXMethodDecl>(FD);
    if (FD && !(MD && MD->getParent()->isLambda()))
      return FD;
  }
  return enclosingFunction(S, Ctx);
}

LoopOutputs AutogradModel::loopOutputs(const Stmt *Loop) {
  return analyzeFlow(Loop, *this);
}

/// Whether any caller of \p FD (or, for a member write, any method of its class) runs a
/// backward pass: then the values the loop hands out may feed it.
bool AutogradModel::escapeFeedsGradient(const FunctionDecl *FD, bool ToMember, bool &AnyUserSeen) {
  AnyUserSeen = false;
  if (ToMember)
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD))
      for (const CXXMethodDecl *Other : MD->getParent()->methods())
        if (const FunctionDecl *Def = Other->getDefinition(); Def && Def->hasBody() && Def != FD) {
          AnyUserSeen = true;
          if (findReachable(Def->getBody(), gradientConsumer(), 2))
            return true;
        }
  for (const CallExpr *Call : callersOf(FD)) {
    AnyUserSeen = true;
    const FunctionDecl *Caller = outermostFunction(Call);
    if (Caller && Caller->hasBody() && findReachable(Caller->getBody(), gradientConsumer(), 2))
      return true;
  }
  return false;
}

} // namespace torchtidy
