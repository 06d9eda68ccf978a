// What the values a loop leaves behind can still feed: the model's loopOutputs, for loops
// whose results may be backpropagated later (BPTT, accumulated losses, REINFORCE).
#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ASTLambda.h"
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

/// A user function whose body reaches \p Inner (see AutogradModel::findReachable).
AST_MATCHER_P2(FunctionDecl, bodyReaches, AutogradModel *, M, StmtMatcher, Inner) {
  return Node.hasBody() && !isInSystemHeader(&Node) && M->findReachable(Node.getBody(), Inner, /*Depth=*/2);
}
AST_MATCHER_P(CallExpr, opaqueTrainingCallOf, AutogradModel *, M) { return M->isOpaqueTrainingCall(&Node); }

/// `f(x)` with dependent arguments (a template nobody instantiates): a call one of whose
/// candidate functions \p Inner matches.
AST_MATCHER_P(CallExpr, unresolvedCallOf, clang::ast_matchers::internal::Matcher<FunctionDecl>, Inner) {
  for (const FunctionDecl *FD : unresolvedCandidates(&Node)) {
    clang::ast_matchers::internal::BoundNodesTreeBuilder Result(*Builder);
    if (Inner.matches(*FD, Finder, &Result)) {
      *Builder = std::move(Result);
      return true;
    }
  }
  return false;
}

/// \p VD, or a view of it (`v[i]`, `v.select(0, i)`: viewedTensor).
AST_MATCHER_P(Expr, viewOf, const VarDecl *, VD) {
  for (const Expr *E = &Node; E; E = viewedTensor(E))
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()); Ref && Ref->getDecl() == VD)
      return true;
  return false;
}

/// Adds to \p Written the graph-holding variables declared outside \p Local (and, for a
/// helper's body, not its own locals or parameters) that \p Scope writes; returns whether it
/// writes a graph-holding member.
bool collectWrittenState(const Stmt *Scope, SourceRange Local, const FunctionDecl *Callee, VarSet &Written,
                         ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  ExprMutationAnalyzer Mutations(*Scope, Ctx);
  for (const BoundNodes &B : match(findAll(declRefExpr().bind("ref")), *Scope, Ctx)) {
    const auto *VD = dyn_cast<VarDecl>(B.getNodeAs<DeclRefExpr>("ref")->getDecl());
    if (!VD || Written.count(VD) || !canHoldGraph(VD->getType()) ||
        isWithin(VD->getLocation(), Local, SM) || (Callee && VD->getDeclContext() == Callee))
      continue;
    // In-place tensor methods are const members of at::Tensor: the analyzer misses them,
    // also on a view of the variable (`outputs.select(0, i).copy_(y)`), not on a tensor only
    // computed with it (`torch::ones(...).toType(v.scalar_type()).fill_(k)`).
    auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
    auto InPlace = stmt(anyOf(
        cxxMemberCallExpr(callee(cxxMethodDecl(matchesName("_$"))), on(viewOf(VD))),
        callExpr(dependentInPlaceCall(), callee(expr(hasDescendant(Ref))))));
    if (Mutations.isMutated(VD) || !match(findAll(InPlace), *Scope, Ctx).empty())
      Written.insert(VD);
  }
  // A graph-holding member written in the loop outlives the call; in-place tensor methods are
  // const members.
  auto WritingMethod = callee(cxxMethodDecl(anyOf(unless(isConst()), matchesName("_$"))));
  auto MemberWrite = memberExpr(hasObjectExpression(ignoringParenImpCasts(cxxThisExpr()))).bind("m");
  auto MemberWrites = match(
      findAll(stmt(anyOf(binaryOperator(isAssignmentOperator(), hasLHS(ignoringParenImpCasts(MemberWrite))),
                         cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, ignoringParenImpCasts(MemberWrite))),
                         cxxMemberCallExpr(on(ignoringParenImpCasts(MemberWrite)), WritingMethod)))),
      *Scope, Ctx);
  return llvm::any_of(MemberWrites,
                      [](const BoundNodes &B) { return canHoldGraph(B.getNodeAs<MemberExpr>("m")->getType()); });
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

StmtMatcher AutogradModel::gradientConsumer() {
  auto ByName = stmt(anyOf(event(LoopEventKind::Backward), event(LoopEventKind::Step),
                           callExpr(callee(functionDecl(hasName("::torch::autograd::grad")))),
                           callExpr(unresolvedCallOf(
                               hasAnyName("::torch::autograd::grad", "::torch::autograd::backward")))));
  return stmt(anyOf(ByName, callExpr(unresolvedCallOf(bodyReaches(this, ByName)))));
}

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
  for (auto Parents = Ctx.getParents(*S); !Parents.empty(); Parents = Ctx.getParents(Parents[0]))
    if (const auto *FD = Parents[0].get<FunctionDecl>(); FD && !isLambdaCallOperator(FD))
      return FD;
  return enclosingFunction(S, Ctx);
}

LoopOutputs AutogradModel::loopOutputs(const Stmt *Loop) {
  LoopOutputs Result;
  VarSet Written;
  bool ToMember = false;
  // The helpers and lambdas the loop calls may stash outputs in captured or member state
  // (REINFORCE: log-probs saved per step, backpropagated at the episode's end).
  forEachReachable(loopBody(Loop), 2, [&](const Stmt *Body, const FunctionDecl *Fn) {
    ToMember |= collectWrittenState(Body, (Fn ? Body : Loop)->getSourceRange(), Fn, Written, Ctx);
    return false;
  });
  // A variable the loop gives only values that hold no graph (argmax labels, decoded token ids,
  // detached copies) feeds no backward pass wherever it goes.
  auto HoldsNoGraph = [&](const Expr *E) {
    TensorOrigin K = originAt(E).Kind;
    return K == TensorOrigin::Data || K == TensorOrigin::Detached;
  };
  for (const ValueDecl *V : VarSet(Written)) {
    std::vector<Definition> Defs = definitionsIn(loopBody(Loop), refTo(V), Ctx);
    if (!Defs.empty() && llvm::all_of(Defs, [&](const Definition &D) {
          if (D.K == Definition::Insert)
            return llvm::all_of(cast<CallExpr>(D.Value)->arguments(),
                                [&](const Expr *A) { return !canHoldGraph(A->getType()) || HoldsNoGraph(A); });
          return (D.K == Definition::Assign || D.K == Definition::Compound) && HoldsNoGraph(D.Value);
        }))
      Written.erase(V);
  }
  // Followed through the function after the loop to gradient consumers, returns,
  // out-parameters and members.
  FateQuery Later;
  Later.After = Loop;
  Later.FieldsEscape = false;
  for (const ValueDecl *V : Written) {
    ValueFate Fate = fateOf(V, Later);
    Result.ReachesGradient |= Fate == ValueFate::Backpropagated;
    Result.Escapes |= Fate == ValueFate::Escapes;
  }
  Result.Escapes |= ToMember;
  if (!Result.Escapes || Result.ReachesGradient)
    return Result;
  // Handed out of the function: a caller (for a member, another method of its class) that
  // runs a backward pass may feed them to it.
  const FunctionDecl *FD = enclosingFunction(Loop, Ctx);
  Result.UsersUnseen = true;
  auto Consumes = [&](const FunctionDecl *User) {
    Result.UsersUnseen = false;
    return User && User->hasBody() && findReachable(User->getBody(), gradientConsumer(), 2);
  };
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(FD);
  Result.ReachesGradient =
      (MD && ToMember && llvm::any_of(MD->getParent()->methods(), [&](const CXXMethodDecl *Other) {
         const FunctionDecl *Def = Other->getDefinition();
         return Def && Def->hasBody() && Def != FD && Consumes(Def);
       })) ||
      llvm::any_of(callersOf(FD), [&](const CallExpr *Call) { return Consumes(outermostFunction(Call)); });
  return Result;
}

} // namespace torchtidy
