// The order layer: in which order a function's statements may run, on its CFG (built once).

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {
/// The CFG of \p FD and its statements' positions, cached in \p Cache.
FunctionOrder *orderOf(const FunctionDecl *FD, ASTContext &Ctx,
                       llvm::DenseMap<const FunctionDecl *, std::unique_ptr<FunctionOrder>> &Cache) {
  if (!FD || !FD->hasBody())
    return nullptr;
  auto [It, Inserted] = Cache.try_emplace(FD);
  if (!Inserted)
    return It->second.get();
  auto Order = std::make_unique<FunctionOrder>();
  CFG::BuildOptions Opts;
  Opts.setAllAlwaysAdd();
  Order->Graph = CFG::buildCFG(FD, FD->getBody(), &Ctx, Opts);
  if (!Order->Graph)
    return nullptr;
  for (const CFGBlock *B : *Order->Graph) {
    unsigned Index = 0;
    for (const CFGElement &E : *B) {
      if (std::optional<CFGStmt> CS = E.getAs<CFGStmt>())
        Order->Position.try_emplace(CS->getStmt(), B, Index);
      ++Index;
    }
    if (const Stmt *T = B->getTerminatorStmt())
      Order->Position.try_emplace(T, B, Index);
  }
  It->second = std::move(Order);
  return It->second.get();
}

using Position = std::pair<const CFGBlock *, unsigned>;

/// Where \p S runs in \p O: its own position or that of the nearest enclosing statement.
std::optional<Position> positionOf(const Stmt *S, const FunctionOrder &O, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*S);
  for (unsigned Steps = 0; Steps < 64 && N.get<Stmt>(); ++Steps, N = parentOf(N, Ctx))
    if (auto It = O.Position.find(N.get<Stmt>()); It != O.Position.end())
      return It->second;
  return std::nullopt;
}

/// The CFG of the one function holding \p A and \p B, and their positions in it; else none.
struct PairInOrder {
  FunctionOrder *O;
  Position A, B;
};
std::optional<PairInOrder> inOneOrder(const Stmt *A, const Stmt *B, ASTContext &Ctx,
                                      llvm::DenseMap<const FunctionDecl *, std::unique_ptr<FunctionOrder>> &Orders) {
  const FunctionDecl *FD = enclosingFunction(A, Ctx);
  FunctionOrder *O = FD == enclosingFunction(B, Ctx) ? orderOf(FD, Ctx, Orders) : nullptr;
  std::optional<Position> PA = O ? positionOf(A, *O, Ctx) : std::nullopt;
  std::optional<Position> PB = PA ? positionOf(B, *O, Ctx) : std::nullopt;
  return PB ? std::optional(PairInOrder{O, *PA, *PB}) : std::nullopt;
}

/// Whether every path from the function's entry to \p B runs \p A before it (A dominates B),
/// or, with \p After, every path from A to the exit runs B after it (B post-dominates A).
bool onEveryPath(const Stmt *A, const Stmt *B, bool After, ASTContext &Ctx,
                 llvm::DenseMap<const FunctionDecl *, std::unique_ptr<FunctionOrder>> &Orders) {
  std::optional<PairInOrder> In = inOneOrder(A, B, Ctx, Orders);
  if (!In)
    return false;
  if (In->A.first == In->B.first)
    return In->A.second < In->B.second;
  FunctionOrder &O = *In->O;
  if (After) {
    if (!O.PostDominators)
      O.PostDominators = std::make_unique<CFGPostDomTree>(O.Graph.get());
    return O.PostDominators->dominates(In->B.first, In->A.first);
  }
  if (!O.Dominators)
    O.Dominators = std::make_unique<CFGDomTree>(O.Graph.get());
  return O.Dominators->dominates(In->A.first, In->B.first);
}

/// Whether some path of \p In's CFG runs A, then B, with none of \p Avoid between.
bool pathAvoiding(const PairInOrder &In, ArrayRef<const Stmt *> Avoid, ASTContext &Ctx) {
  llvm::DenseMap<const CFGBlock *, SmallVector<unsigned, 2>> Avoided;
  for (const Stmt *S : Avoid)
    if (auto PS = positionOf(S, *In.O, Ctx))
      Avoided[PS->first].push_back(PS->second);
  // No avoided statement in [From, To) of the block.
  auto Clear = [&](const CFGBlock *Block, unsigned From, unsigned To) {
    auto It = Avoided.find(Block);
    return It == Avoided.end() || llvm::none_of(It->second, [&](unsigned I) { return I >= From && I < To; });
  };
  const unsigned End = std::numeric_limits<unsigned>::max();
  auto [BlockA, IndexA] = In.A;
  auto [BlockB, IndexB] = In.B;
  if (BlockA == BlockB && IndexA < IndexB)
    return Clear(BlockA, IndexA + 1, IndexB);
  if (!Clear(BlockA, IndexA + 1, End))
    return false;
  llvm::BitVector Seen(In.O->Graph->getNumBlockIDs());
  SmallVector<const CFGBlock *, 16> Work{BlockA};
  while (!Work.empty())
    for (const CFGBlock::AdjacentBlock &Succ : Work.pop_back_val()->succs()) {
      const CFGBlock *Next = Succ.getReachableBlock();
      if (!Next || Seen.test(Next->getBlockID()))
        continue;
      Seen.set(Next->getBlockID());
      if (Next == BlockB && Clear(Next, 0, IndexB))
        return true;
      // A block holding an avoided statement is entered but never passed through.
      if (Clear(Next, 0, End))
        Work.push_back(Next);
    }
  return false;
}

/// \p S, or the statement of \p FD that holds it when \p S is in a lambda defined in \p FD
/// (the lambda expression: where the lambda is made); null when \p S is not in \p FD.
const Stmt *liftInto(const Stmt *S, const FunctionDecl *FD, ASTContext &Ctx) {
  for (unsigned Steps = 0; S && Steps < 16; ++Steps) {
    const FunctionDecl *In = enclosingFunction(S, Ctx);
    if (In == FD)
      return S;
    if (!isLambdaCallOperator(In))
      return nullptr;
    DynTypedNode N = DynTypedNode::create(*S);
    while (!N.getNodeKind().isNone() &&
           !(N.get<LambdaExpr>() && N.get<LambdaExpr>()->getLambdaClass() == cast<CXXMethodDecl>(In)->getParent()))
      N = parentOf(N, Ctx);
    S = N.get<LambdaExpr>();
  }
  return nullptr;
}
} // namespace

bool AutogradModel::mayRunBefore(const Stmt *A, const Stmt *B, ArrayRef<const Stmt *> Others) {
  if (std::optional<PairInOrder> In = inOneOrder(A, B, Ctx, P->Orders))
    return pathAvoiding(*In, Others, Ctx);
  // No CFG (an uninstantiated template): A is the last of A and Others before B in source order.
  const SourceManager &SM = Ctx.getSourceManager();
  auto Before = [&](const Stmt *X, const Stmt *Y) {
    return SM.isBeforeInTranslationUnit(X->getEndLoc(), Y->getBeginLoc());
  };
  return Before(A, B) && llvm::none_of(Others, [&](const Stmt *O) { return Before(A, O) && Before(O, B); });
}

bool AutogradModel::mayRunBeforeAvoiding(const Stmt *A, const Stmt *B, ArrayRef<const Stmt *> Avoid) {
  std::optional<PairInOrder> In = inOneOrder(A, B, Ctx, P->Orders);
  return In && pathAvoiding(*In, Avoid, Ctx);
}

bool AutogradModel::mayRunInLaterIteration(const Stmt *A, const Stmt *B, ArrayRef<const Stmt *> Avoid) {
  const FunctionDecl *FD = enclosingFunction(B, Ctx);
  // The loop statement stands for its head: the terminator of the block that decides whether
  // another iteration runs.
  for (const Stmt *Loop = enclosingLoop(B); Loop && enclosingFunction(Loop, Ctx) == FD; Loop = enclosingLoop(Loop))
    if (mayRunBeforeAvoiding(A, Loop, Avoid) && mayRunBeforeAvoiding(Loop, B, Avoid))
      return true;
  return false;
}

llvm::SmallVector<const Stmt *, 2> AutogradModel::reachingAt(ArrayRef<const Stmt *> Sites, const Stmt *At) {
  llvm::SmallVector<const Stmt *, 2> Reaching;
  const FunctionDecl *AtFn = enclosingFunction(At, Ctx);
  for (const Stmt *Site : Sites) {
    // A lambda defined in the other's function runs where it is made.
    const FunctionDecl *SiteFn = enclosingFunction(Site, Ctx);
    const Stmt *A = liftInto(Site, AtFn, Ctx), *B = At;
    if (!A && (B = liftInto(At, SiteFn, Ctx)))
      A = Site;
    if (!A || !B)
      continue;
    llvm::SmallVector<const Stmt *, 4> Others;
    for (const Stmt *Other : Sites)
      if (Other != Site)
        if (const Stmt *O = B == At ? liftInto(Other, AtFn, Ctx) : liftInto(Other, SiteFn, Ctx); O && O != A)
          Others.push_back(O);
    if (mayRunBefore(A, B, Others))
      Reaching.push_back(Site);
  }
  return Reaching;
}

bool AutogradModel::runsBeforeOnEveryPath(const Stmt *A, const Stmt *B) {
  return onEveryPath(A, B, /*After=*/false, Ctx, P->Orders);
}

bool AutogradModel::runsAfterOnEveryPath(const Stmt *A, const Stmt *B) {
  return onEveryPath(A, B, /*After=*/true, Ctx, P->Orders);
}

} // namespace torchtidy
