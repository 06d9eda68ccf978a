#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/CFG.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/SourceManager.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <limits>

#include <mutex>
#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// A call of `::c10::GradMode::set_enabled(<arg>)`.
const Expr *gradModeSwitchArg(const Stmt *S) {
  const auto *Call = dyn_cast<CallExpr>(S);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || Call->getNumArgs() != 1 || !FD->getIdentifier() || FD->getName() != "set_enabled")
    return nullptr;
  const auto *MD = dyn_cast<CXXMethodDecl>(FD);
  return MD && isSameOrDerivedFrom(MD->getParent(), names::GradMode) ? Call->getArg(0) : nullptr;
}

/// std::thread or std::jthread.
bool isStdThread(QualType T) {
  const CXXRecordDecl *RD = T.isNull() ? nullptr : recordOf(T);
  return RD && RD->isInStdNamespace() && RD->getIdentifier() && (RD->getName() == "thread" || RD->getName() == "jthread");
}

/// Whether the first of \p Args is std::thread or std::jthread.
bool firstIsThread(const TemplateArgumentList *Args) {
  return Args && Args->size() > 0 && Args->get(0).getKind() == TemplateArgument::Type &&
         isStdThread(Args->get(0).getAsType());
}

/// A standard-library call that constructs a thread from its arguments:
/// `threads.emplace_back(f)` on a container of threads, `std::make_unique<std::thread>(f)`.
bool constructsThread(const FunctionDecl *FD) {
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD)) {
    const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(MD->getParent());
    return Spec && llvm::is_contained(names::ContainerStoreMethods, MD->getName()) &&
           firstIsThread(&Spec->getTemplateArgs());
  }
  return (FD->getName() == "make_unique" || FD->getName() == "make_shared") &&
         firstIsThread(FD->getTemplateSpecializationArgs());
}

/// The call that runs \p Callable (a lambda, or a reference to a function or to a variable
/// holding a closure) on another thread, whose grad mode starts on whatever the creating
/// thread's guards say: `std::thread` / `std::jthread`, `std::async`, a thread pool's submit
/// (names::ThreadPoolSubmitMethods), a thread emplaced into a container or made by
/// std::make_unique, a cpp-httplib server's handler. (at::launch copies the
/// caller's thread-local state, grad mode included, so it is no boundary.)
const Expr *threadLaunching(const Expr *Callable, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*Callable);
  for (unsigned Steps = 0; Steps < 6; ++Steps) {
    const Expr *Child = N.get<Expr>();
    N = parentOf(N, Ctx);
    // `std::thread t(f)` in a template, with an initializer left dependent.
    if (const auto *VD = N.get<VarDecl>())
      return isStdThread(VD->getType()) ? Child : nullptr;
    const auto *E = N.get<Expr>();
    if (!E)
      return nullptr;
    if (isa<CXXConstructExpr, CXXUnresolvedConstructExpr>(E) && isStdThread(E->getType()))
      return E;
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (!FD || !FD->getIdentifier())
        return nullptr;
      const auto *MD = dyn_cast<CXXMethodDecl>(FD);
      if (FD->isInStdNamespace() || (MD && MD->getParent()->isInStdNamespace()))
        return FD->getName() == "async" || constructsThread(FD) ? Call : nullptr;
      if (llvm::is_contained(names::ThreadPoolSubmitMethods, FD->getName()))
        return Call;
      const auto *NS = MD ? dyn_cast<NamespaceDecl>(MD->getParent()->getEnclosingNamespaceContext()) : nullptr;
      bool HttpServer = NS && NS->getIdentifier() && NS->getName() == "httplib";
      return HttpServer && llvm::is_contained(names::HttpServerHandlerMethods, FD->getName()) ? Call : nullptr;
    }
  }
  return nullptr;
}

/// `X % k` with k a constant > 1 (~0u when k is not a constant); 0 when \p E is no modulo.
unsigned moduloInterval(const Expr *E, ASTContext &Ctx) {
  const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!BO || BO->getOpcode() != BO_Rem)
    return 0;
  const Expr *K = BO->getRHS();
  if (K->isValueDependent())
    return ~0u;
  Expr::EvalResult R;
  if (!K->EvaluateAsInt(R, Ctx))
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

/// Whether \p S names one of \p Decls (a variable or a field).
bool refersTo(const Stmt *S, const llvm::SmallPtrSetImpl<const ValueDecl *> &Decls) {
  if (!S)
    return false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S); DRE && Decls.contains(DRE->getDecl()))
    return true;
  if (const auto *ME = dyn_cast<MemberExpr>(S); ME && Decls.contains(ME->getMemberDecl()))
    return true;
  return llvm::any_of(S->children(), [&](const Stmt *C) { return refersTo(C, Decls); });
}

constexpr LoopEventKind AllEvents[] = {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step,
                                       LoopEventKind::ZeroGrad, LoopEventKind::Eval, LoopEventKind::Train};

/// The parts of a loop that run on every iteration, body first: the range initializer of a
/// range-for runs once and is left out.
llvm::SmallVector<const Stmt *, 3> perIterationParts(const Stmt *Loop) {
  llvm::SmallVector<const Stmt *, 3> Parts{loopBody(Loop) ? loopBody(Loop) : Loop};
  if (const auto *F = dyn_cast<ForStmt>(Loop)) {
    Parts.push_back(F->getCond());
    Parts.push_back(F->getInc());
  } else if (const auto *W = dyn_cast<WhileStmt>(Loop)) {
    Parts.push_back(W->getCond());
  } else if (const auto *D = dyn_cast<DoStmt>(Loop)) {
    Parts.push_back(D->getCond());
  }
  return Parts;
}

/// The user functions a call may run: its callee (or the lambda held in the local it calls);
/// for a call left unresolved in a template nobody instantiates, every candidate.
llvm::SmallVector<const FunctionDecl *, 2> possibleCallees(AutogradModel &M, const CallExpr *Call) {
  llvm::SmallVector<const FunctionDecl *, 2> Callees;
  if (const FunctionDecl *FD = M.calledFunction(Call))
    Callees.push_back(FD);
  else if (const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Call->getCallee()->IgnoreParenImpCasts()))
    for (const NamedDecl *D : Lookup->decls())
      if (const FunctionDecl *FD = D->getAsFunction())
        Callees.push_back(FD);
  return Callees;
}

} // namespace

const LoopEvent *LoopFacts::first(LoopEventKind K) const {
  for (const LoopEvent &E : Events)
    if (E.Kind == K)
      return &E;
  return nullptr;
}

namespace {
std::mutex RegistryMutex;
/// The models of each live ASTContext, one per distinct ModelOptions.
llvm::DenseMap<const ASTContext *, llvm::SmallVector<AutogradModel *, 1>> &registry() {
  static llvm::DenseMap<const ASTContext *, llvm::SmallVector<AutogradModel *, 1>> Models;
  return Models;
}
} // namespace

AutogradModel &AutogradModel::get(ASTContext &Ctx, const ModelOptions &Options) {
  std::lock_guard<std::mutex> Lock(RegistryMutex);
  llvm::SmallVector<AutogradModel *, 1> &Models = registry()[&Ctx];
  for (AutogradModel *M : Models)
    if (M->options() == Options)
      return *M;
  auto *M = new AutogradModel(Ctx, Options);
  Models.push_back(M);
  // Freed by ~ASTContext, before its address can be reused by a later translation unit.
  Ctx.AddDeallocation(
      [](void *P) {
        auto *M = static_cast<AutogradModel *>(P);
        {
          std::lock_guard<std::mutex> Lock(RegistryMutex);
          auto It = registry().find(&M->context());
          if (It != registry().end()) {
            llvm::erase_if(It->second, [M](const AutogradModel *E) { return E == M; });
            if (It->second.empty())
              registry().erase(It);
          }
        }
        delete M;
      },
      M);
  return *M;
}

AutogradModel::AutogradModel(ASTContext &Ctx, ModelOptions Options)
    : Ctx(Ctx), Opts(std::move(Options)),
      Index(Opts.UseProjectIndex ? ProjectIndex::forContext(Ctx, Opts.ProjectIndexPath) : nullptr),
      P(std::make_unique<Impl>()) {}

std::optional<uint32_t> AutogradModel::indexedFacts(const FunctionDecl *Callee) const {
  if (!Index || !Callee || Callee->getDefinition() || isInSystemHeader(Callee))
    return std::nullopt;
  return Index->factsOf(Callee);
}
AutogradModel::~AutogradModel() = default;

// ---- calls and functions -------------------------------------------------------------------

llvm::ArrayRef<const CallExpr *> AutogradModel::callersOf(const FunctionDecl *FD) {
  if (!FD)
    return {};
  if (!P->CallIndexBuilt) {
    P->CallIndexBuilt = true;
    forEachUserDecl(Ctx, [&](Decl *D) {
      // One pass over user code; instantiations are visited, so a call of a template's
      // specialization is filed under the pattern too.
      for (const BoundNodes &B : match(decl(forEachDescendant(callExpr().bind("call"))), *D, Ctx)) {
        const auto *Call = B.getNodeAs<CallExpr>("call");
        // Through a std::function local too: a per-step callback is a lambda called that way.
        const FunctionDecl *Callee = calledFunction(Call);
        if (!Callee)
          continue;
        P->Callers[Callee->getCanonicalDecl()].push_back(Call);
        if (const FunctionDecl *Pattern = Callee->getTemplateInstantiationPattern())
          if (Pattern->getCanonicalDecl() != Callee->getCanonicalDecl())
            P->Callers[Pattern->getCanonicalDecl()].push_back(Call);
      }
    });
  }
  const FunctionDecl *Key = FD->getCanonicalDecl();
  if (const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern())
    Key = Pattern->getCanonicalDecl();
  auto It = P->Callers.find(Key);
  if (It == P->Callers.end())
    return {};
  return It->second;
}

const FunctionDecl *AutogradModel::calledFunction(const CallExpr *Call) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
  if (!Op || Op->getOperator() != OO_Call || (Callee && !isInSystemHeader(Callee)))
    return Callee;
  const auto *Ref = dyn_cast<DeclRefExpr>(Op->getArg(0)->IgnoreParenImpCasts());
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || !VD->getInit())
    return Callee;
  const auto *Lambda =
      selectFirst<LambdaExpr>("lambda", match(findAll(lambdaExpr().bind("lambda")), *VD->getInit(), Ctx));
  return Lambda ? Lambda->getCallOperator() : Callee;
}

CallShape AutogradModel::callShape(const CallExpr *Call) {
  CallShape Shape;
  Shape.Callee = calledFunction(Call);
  Shape.Resolved = Shape.Callee != nullptr;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(Call)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    Shape.Object = Obj && !isa<CXXThisExpr>(Obj->IgnoreParenImpCasts()) ? Obj : nullptr;
  } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call); Op && Op->getOperator() == OO_Call) {
    Shape.Object = Op->getArg(0);
  } else if (const auto *ME = dyn_cast<MemberExpr>(Call->getCallee()->IgnoreParenImpCasts())) {
    // A member found by name whose call stays dependent (its arguments are).
    Shape.Object = isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()) ? nullptr : ME->getBase();
  }
  if (Shape.Callee && Shape.Callee->getIdentifier()) {
    Shape.Name = Shape.Callee->getName();
    if (isa<CXXOperatorCallExpr>(Call) || isLambdaCallOperator(Shape.Callee))
      Shape.Name = "";
    return Shape;
  }
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee)) {
    Shape.Object = M->isImplicitAccess() ? nullptr : M->getBase();
    if (const IdentifierInfo *II = M->getMember().getAsIdentifierInfo())
      Shape.Name = II->getName();
  } else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee)) {
    Shape.Object = M->isImplicitAccess() ? nullptr : M->getBase();
    if (const IdentifierInfo *II = M->getMemberName().getAsIdentifierInfo())
      Shape.Name = II->getName();
  } else if (const auto *M = dyn_cast<MemberExpr>(Callee)) {
    Shape.Object = isa<CXXThisExpr>(M->getBase()->IgnoreParenImpCasts()) ? nullptr : M->getBase();
    if (const IdentifierInfo *II = M->getMemberDecl()->getIdentifier())
      Shape.Name = II->getName();
  } else if (const auto *L = dyn_cast<UnresolvedLookupExpr>(Callee)) {
    if (const IdentifierInfo *II = L->getName().getAsIdentifierInfo())
      Shape.Name = II->getName();
  } else if (const auto *DRE = dyn_cast<DeclRefExpr>(Callee)) {
    if (const IdentifierInfo *II = DRE->getDecl()->getIdentifier())
      Shape.Name = II->getName();
  }
  // A module called like a function (`model(x)`), left unresolved by its arguments.
  if (!Shape.Object && !Callee->isTypeDependent() && isModuleType(Callee->getType()) &&
      isa<DeclRefExpr, MemberExpr>(Callee)) {
    Shape.Object = Callee;
    Shape.Name = "";
  }
  return Shape;
}

const Stmt *AutogradModel::findReachable(const Stmt *Root, const StmtMatcher &M) {
  return torchtidy::findReachable(Root, M, Ctx, Opts.CallDepth);
}

// ---- order ---------------------------------------------------------------------------------

namespace {
/// The CFG of the function whose body holds \p S (the lambda's, inside a lambda).
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

/// Where \p S runs in \p O: its own position or that of the nearest enclosing statement.
std::optional<std::pair<const CFGBlock *, unsigned>> positionOf(const Stmt *S, const FunctionOrder &O, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*S);
  for (unsigned Steps = 0; Steps < 64 && !N.getNodeKind().isNone(); ++Steps, N = parentOf(N, Ctx)) {
    const Stmt *Cur = N.get<Stmt>();
    if (!Cur)
      return std::nullopt;
    auto It = O.Position.find(Cur);
    if (It != O.Position.end())
      return It->second;
  }
  return std::nullopt;
}

/// Blocks reachable from \p From's successors, never passing through \p Avoid.
llvm::BitVector reachable(const CFG &G, const CFGBlock *From, const CFGBlock *Avoid) {
  llvm::BitVector Seen(G.getNumBlockIDs());
  SmallVector<const CFGBlock *, 16> Work;
  auto Push = [&](const CFGBlock *B) {
    for (const CFGBlock::AdjacentBlock &Succ : B->succs())
      if (const CFGBlock *S = Succ.getReachableBlock(); S && S != Avoid && !Seen.test(S->getBlockID())) {
        Seen.set(S->getBlockID());
        Work.push_back(S);
      }
  };
  if (From != Avoid)
    Push(From);
  while (!Work.empty())
    Push(Work.pop_back_val());
  return Seen;
}
} // namespace

bool AutogradModel::mayRunBefore(const Stmt *A, const Stmt *B) {
  const FunctionDecl *FD = enclosingFunction(A, Ctx);
  const SourceManager &SM = Ctx.getSourceManager();
  FunctionOrder *O = FD == enclosingFunction(B, Ctx) ? orderOf(FD, Ctx, P->Orders) : nullptr;
  auto PA = O ? positionOf(A, *O, Ctx) : std::nullopt;
  auto PB = O ? positionOf(B, *O, Ctx) : std::nullopt;
  if (!PA || !PB)
    return SM.isBeforeInTranslationUnit(A->getEndLoc(), B->getBeginLoc());
  if (PA->first == PB->first && PA->second < PB->second)
    return true;
  return reachable(*O->Graph, PA->first, nullptr).test(PB->first->getBlockID());
}

bool AutogradModel::mayRunBeforeAvoiding(const Stmt *A, const Stmt *B, ArrayRef<const Stmt *> Avoid) {
  const FunctionDecl *FD = enclosingFunction(A, Ctx);
  FunctionOrder *O = FD == enclosingFunction(B, Ctx) ? orderOf(FD, Ctx, P->Orders) : nullptr;
  auto PA = O ? positionOf(A, *O, Ctx) : std::nullopt;
  auto PB = O ? positionOf(B, *O, Ctx) : std::nullopt;
  if (!PA || !PB)
    return false;
  llvm::DenseMap<const CFGBlock *, SmallVector<unsigned, 2>> Avoided;
  for (const Stmt *S : Avoid)
    if (auto PS = positionOf(S, *O, Ctx))
      Avoided[PS->first].push_back(PS->second);
  // No avoided statement in [From, To) of the block.
  auto Clear = [&](const CFGBlock *Block, unsigned From, unsigned To) {
    auto It = Avoided.find(Block);
    return It == Avoided.end() ||
           llvm::none_of(It->second, [&](unsigned I) { return I >= From && I < To; });
  };
  const unsigned End = std::numeric_limits<unsigned>::max();
  if (PA->first == PB->first && PA->second < PB->second)
    return Clear(PA->first, PA->second + 1, PB->second);
  if (!Clear(PA->first, PA->second + 1, End))
    return false;
  llvm::BitVector Seen(O->Graph->getNumBlockIDs());
  SmallVector<const CFGBlock *, 16> Work{PA->first};
  while (!Work.empty()) {
    const CFGBlock *Block = Work.pop_back_val();
    for (const CFGBlock::AdjacentBlock &Succ : Block->succs()) {
      const CFGBlock *Next = Succ.getReachableBlock();
      if (!Next || Seen.test(Next->getBlockID()))
        continue;
      Seen.set(Next->getBlockID());
      if (Next == PB->first && Clear(Next, 0, PB->second))
        return true;
      // A block holding an avoided statement is entered but never passed through.
      if (Clear(Next, 0, End))
        Work.push_back(Next);
    }
  }
  return false;
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

bool AutogradModel::runsBeforeOnEveryPath(const Stmt *A, const Stmt *B) {
  const FunctionDecl *FD = enclosingFunction(A, Ctx);
  FunctionOrder *O = FD == enclosingFunction(B, Ctx) ? orderOf(FD, Ctx, P->Orders) : nullptr;
  auto PA = O ? positionOf(A, *O, Ctx) : std::nullopt;
  auto PB = O ? positionOf(B, *O, Ctx) : std::nullopt;
  if (!PA || !PB)
    return false;
  if (PA->first == PB->first)
    return PA->second < PB->second;
  const CFG &G = *O->Graph;
  if (&G.getEntry() == PA->first || &G.getEntry() == PB->first)
    return &G.getEntry() == PA->first;
  // A dominates B when B cannot be reached from the entry once A's block is removed.
  return !reachable(G, &G.getEntry(), PA->first).test(PB->first->getBlockID());
}

// ---- grad mode -----------------------------------------------------------------------------

namespace {
/// The last `GradMode::set_enabled(...)` in \p Body before \p S, in source order.
const CallExpr *lastSwitchBefore(const Stmt *Body, const Stmt *S, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  const CallExpr *Last = nullptr;
  for (const BoundNodes &B : match(findAll(callExpr(argumentCountIs(1)).bind("set")), *Body, Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("set");
    if (gradModeSwitchArg(Call) && SM.isBeforeInTranslationUnit(Call->getEndLoc(), S->getBeginLoc()) &&
        (!Last || SM.isBeforeInTranslationUnit(Last->getEndLoc(), Call->getBeginLoc())))
      Last = Call;
  }
  return Last;
}

/// The variable a lambda is stored in (`auto init = [](torch::nn::Module &m) {...};`).
const VarDecl *variableHolding(const CXXMethodDecl *CallOperator, ASTContext &Ctx) {
  if (!CallOperator->getBody())
    return nullptr;
  DynTypedNode N = DynTypedNode::create(*CallOperator->getBody());
  bool SeenLambda = false;
  for (auto Parents = Ctx.getParents(N); !Parents.empty(); Parents = Ctx.getParents(N)) {
    N = Parents[0];
    if (const auto *VD = N.get<VarDecl>())
      return SeenLambda ? VD : nullptr;
    if (N.get<LambdaExpr>()) {
      SeenLambda = true;
      continue;
    }
    const auto *E = N.get<Expr>();
    // Past the lambda, only the implicit wrappers of an initializer may come before the variable.
    if (SeenLambda && (!E || (!isa<ImplicitCastExpr>(E) && !isa<FullExpr>(E) &&
                              !isa<MaterializeTemporaryExpr>(E) && !isa<CXXBindTemporaryExpr>(E) &&
                              !isa<CXXConstructExpr>(E))))
      return nullptr;
  }
  return nullptr;
}

} // namespace

/// The nearest guard in an enclosing block decides; then, at the boundary of each function
/// (a lambda's body is walked on into its definition), a GradMode switch earlier in it, a
/// guarded caller, or a guarded place that hands the function over.
GradModeFact AutogradModel::gradModeIn(const Stmt *S, unsigned Depth) {
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode Parent = parentOf(Child, Ctx); !Parent.getNodeKind().isNone();
       Child = Parent, Parent = parentOf(Parent, Ctx)) {
    if (const auto *CS = Parent.get<CompoundStmt>()) {
      GradModeFact Fact;
      for (const Stmt *Sibling : CS->body()) {
        if (Sibling == Child.get<Stmt>())
          break;
        if (const auto *DS = dyn_cast<DeclStmt>(Sibling))
          for (const Decl *D : DS->decls())
            if (int E = gradModeEffect(dyn_cast<VarDecl>(D)))
              Fact = {E > 0 ? GradMode::Off : GradMode::On, DS};
      }
      if (Fact.DecidedBy)
        return Fact;
      continue;
    }
    const FunctionDecl *FD = Parent.get<FunctionDecl>();
    const auto *LE = Parent.get<LambdaExpr>();
    // A lambda's call operator is judged at its LambdaExpr, reached next, where a thread
    // launch is seen before its callers (a pool's submit calls it, on another thread).
    if (FD && isLambdaCallOperator(FD))
      continue;
    if (LE) {
      // Another thread starts with autograd on, whatever guards surround its creation.
      if (const Expr *Launch = threadLaunching(LE, Ctx))
        return {GradMode::On, Launch};
      FD = LE->getCallOperator();
      if (const Expr *Launch = handedToThread(FD))
        return {GradMode::On, Launch};
    }
    if (!FD)
      continue;
    if (FD->hasBody())
      if (const CallExpr *Switch = lastSwitchBefore(FD->getBody(), S, Ctx)) {
        bool Enabled = true;
        const Expr *Arg = gradModeSwitchArg(Switch);
        if (!Arg->isValueDependent() && Arg->EvaluateAsBooleanCondition(Enabled, Ctx))
          return {Enabled ? GradMode::On : GradMode::Off, Switch};
      }
    if (Depth > 0) {
      for (const CallExpr *Call : callersOf(FD))
        if (Call != S && gradModeIn(Call, Depth - 1).Mode == GradMode::Off)
          return {GradMode::Off, Call};
      if (!LE)
        if (const Expr *Launch = handedToThread(FD))
          return {GradMode::On, Launch};
      if (const Stmt *Use = handedOverUnderNoGrad(FD, Depth - 1))
        return {GradMode::Off, Use};
    }
    // A lambda's body also runs where it is defined: guards around the definition count.
    if (LE)
      continue;
    return {GradMode::On, nullptr};
  }
  return {GradMode::On, nullptr};
}

/// The references that hand \p FD over rather than call it (`model->apply(init_weights)`,
/// `std::thread(worker)`): to the function, or to the variable holding the closure or
/// std::function of a lambda.
llvm::ArrayRef<const DeclRefExpr *> AutogradModel::handedOver(const FunctionDecl *FD) {
  auto [It, Inserted] = P->HandedOver.try_emplace(FD);
  if (!Inserted)
    return It->second;
  const ValueDecl *Passed = FD->getCanonicalDecl();
  if (isLambdaCallOperator(FD)) {
    // Only a variable that holds the function itself (the closure, a std::function), not one
    // built from it (a std::thread running it).
    const VarDecl *Holder = variableHolding(cast<CXXMethodDecl>(FD), Ctx);
    const CXXRecordDecl *RD = Holder ? recordOf(Holder->getType()) : nullptr;
    if (!RD || !(RD->isLambda() || (RD->isInStdNamespace() && RD->getIdentifier() && RD->getName() == "function")))
      return {};
    Passed = Holder;
  }
  std::vector<const DeclRefExpr *> Uses;
  forEachUserDecl(Ctx, [&](Decl *D) {
    for (const BoundNodes &B :
         match(decl(forEachDescendant(declRefExpr(to(valueDecl(equalsNode(Passed)))).bind("use"))), *D, Ctx)) {
      const auto *Use = B.getNodeAs<DeclRefExpr>("use");
      auto Parents = Ctx.getParents(*Use);
      const Expr *Parent = Parents.empty() ? nullptr : Parents[0].get<Expr>();
      // Direct calls are judged through callersOf.
      if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent);
          Cast && Cast->getCastKind() == CK_FunctionToPointerDecay) {
        auto Grand = Ctx.getParents(*Cast);
        const auto *Call = Grand.empty() ? nullptr : Grand[0].get<CallExpr>();
        if (Call && Call->getCallee()->IgnoreParenImpCasts() == Use)
          continue;
      }
      Uses.push_back(Use);
    }
  });
  // The map may have grown meanwhile: look the slot up again.
  return P->HandedOver[FD] = std::move(Uses);
}

const Expr *AutogradModel::handedToThread(const FunctionDecl *FD) {
  for (const DeclRefExpr *Use : handedOver(FD))
    if (const Expr *Launch = threadLaunching(Use, Ctx))
      return Launch;
  return nullptr;
}

/// A function handed over rather than called runs where it is handed over: the first such
/// use inside a no-grad scope (one handed to another thread runs there instead).
const Stmt *AutogradModel::handedOverUnderNoGrad(const FunctionDecl *FD, unsigned Depth) {
  auto [It, Inserted] = P->HandedOverUnderNoGrad.try_emplace(FD, nullptr);
  if (!Inserted)
    return It->second;
  const Stmt *Found = nullptr;
  for (const DeclRefExpr *Use : handedOver(FD))
    if (!threadLaunching(Use, Ctx) && gradModeIn(Use, Depth).Mode == GradMode::Off) {
      Found = Use;
      break;
    }
  P->HandedOverUnderNoGrad[FD] = Found;
  return Found;
}

const Expr *AutogradModel::threadLaunchOf(const Stmt *S) {
  std::function<const Expr *(const Stmt *, unsigned)> In = [&](const Stmt *From, unsigned Depth) -> const Expr * {
    DynTypedNode Child = DynTypedNode::create(*From);
    for (DynTypedNode Parent = parentOf(Child, Ctx); !Parent.getNodeKind().isNone();
         Child = Parent, Parent = parentOf(Parent, Ctx)) {
      const FunctionDecl *FD = Parent.get<FunctionDecl>();
      if (const auto *LE = Parent.get<LambdaExpr>()) {
        if (const Expr *Launch = threadLaunching(LE, Ctx))
          return Launch;
        FD = LE->getCallOperator();
      }
      if (!FD)
        continue;
      if (const Expr *Launch = handedToThread(FD))
        return Launch;
      // A lambda runs on the thread of the code around it.
      if (isLambdaCallOperator(FD))
        continue;
      if (Depth == 0)
        return nullptr;
      for (const CallExpr *Call : callersOf(FD))
        if (const Expr *Launch = In(Call, Depth - 1))
          return Launch;
      return nullptr;
    }
    return nullptr;
  };
  return S ? In(S, Opts.CallDepth) : nullptr;
}

GradModeFact AutogradModel::gradModeAt(const Stmt *S) {
  if (!S)
    return {};
  auto It = P->GradModes.find(S);
  if (It != P->GradModes.end())
    return It->second;
  GradModeFact Fact = gradModeIn(S, Opts.CallDepth);
  P->GradModes[S] = Fact;
  return Fact;
}

// ---- tensor origin -------------------------------------------------------------------------

OriginResult AutogradModel::originAt(const Expr *E) {
  if (!E)
    return {};
  if (E->isTypeDependent())
    return originByName(E);
  const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreUnlessSpelledInSource());
  if (const Expr *Value = Ref ? lastAssignedValue(Ref) : nullptr)
    return originAt(Value);
  return classifyTensor(E, Ctx, Index);
}

/// The value of the assignment to a local tensor that runs last before \p Ref on every path:
/// it runs before \p Ref on every path, and no other write of the variable can run between.
const Expr *AutogradModel::lastAssignedValue(const DeclRefExpr *Ref) {
  auto [It, Inserted] = P->LastAssigned.try_emplace(Ref, nullptr);
  if (!Inserted)
    return It->second;
  const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
  const auto *FD = VD && VD->isLocalVarDecl() && isTensorType(VD->getType())
                       ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod())
                       : nullptr;
  if (!FD || !FD->hasBody())
    return nullptr;
  auto Var = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
  auto Write = stmt(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Var)).bind("assign"),
                          cxxMemberCallExpr(on(Var), callee(cxxMethodDecl(matchesName("_$"))))));
  llvm::SmallVector<const Stmt *, 4> Writes;
  for (const BoundNodes &B : match(findAll(stmt(Write).bind("w")), *FD->getBody(), Ctx))
    Writes.push_back(B.getNodeAs<Stmt>("w"));
  for (const Stmt *W : Writes) {
    const auto *Assign = dyn_cast<CXXOperatorCallExpr>(W);
    if (!Assign || Assign->getOperator() != OO_Equal || !runsBeforeOnEveryPath(Assign, Ref))
      continue;
    if (llvm::none_of(Writes, [&](const Stmt *Other) {
          return Other != W && mayRunBeforeAvoiding(Other, Ref, {W});
        }))
      return P->LastAssigned[Ref] = Assign->getArg(1);
  }
  return nullptr;
}

bool AutogradModel::isGraphAttached(const Expr *E) {
  if (!E)
    return false;
  if (isTensorType(E->getType()))
    return originAt(E).Kind == TensorOrigin::GraphAttached;
  // An aggregate, pair or tuple is as attached as its most attached part.
  E = E->IgnoreParenImpCasts();
  if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
    E = Temp->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *Bind = dyn_cast<CXXBindTemporaryExpr>(E))
    E = Bind->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E)) // `Record{loss, step}`
    E = Cast->getSubExpr()->IgnoreImplicit();
  auto AnyAttached = [&](auto Range) {
    return llvm::any_of(Range, [&](const Expr *Part) { return Part && isGraphAttached(Part); });
  };
  if (const auto *IL = dyn_cast<InitListExpr>(E))
    return AnyAttached(IL->inits());
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E))
    return AnyAttached(Construct->arguments());
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && FD->isInStdNamespace() && FD->getIdentifier() &&
        (FD->getName() == "make_pair" || FD->getName() == "make_tuple" || FD->getName() == "forward_as_tuple"))
      return AnyAttached(Call->arguments());
    return false;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && VD->hasLocalStorage() && VD->getInit() && VD->getInit() != E && isGraphAttached(VD->getInit());
  }
  return false;
}

bool AutogradModel::isRequiresGradLeaf(const Expr *E) {
  return E && originAt(E).Kind == TensorOrigin::RequiresGradLeaf;
}

// ---- loops ---------------------------------------------------------------------------------

const Stmt *AutogradModel::enclosingLoop(const Stmt *S) { return S ? torchtidy::enclosingLoop(S, Ctx) : nullptr; }

namespace {
AST_MATCHER(Stmt, parameterFreeForward) { return isParameterFreeModule(forwardedModule(&Node)); }
} // namespace

StmtMatcher AutogradModel::event(LoopEventKind K) {
  using namespace matchers;
  switch (K) {
  case LoopEventKind::Forward:
    return stmt(anyOf(moduleForwardCall(), callExpr(dependentMemberCall({"forward"}))),
                unless(parameterFreeForward()));
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

uint32_t indexFact(LoopEventKind K) {
  switch (K) {
  case LoopEventKind::Forward: return FunctionSummary::Forward;
  case LoopEventKind::Backward: return FunctionSummary::Backward;
  case LoopEventKind::Step: return FunctionSummary::Step;
  case LoopEventKind::ZeroGrad: return FunctionSummary::ZeroGrad;
  case LoopEventKind::Eval: return FunctionSummary::Eval;
  case LoopEventKind::Train: return FunctionSummary::Train;
  }
  llvm_unreachable("unknown loop event");
}

llvm::ArrayRef<LoopEvent> AutogradModel::eventsIn(const Stmt *Root) {
  auto [It, Inserted] = P->Events.try_emplace(Root);
  if (!Inserted || !Root)
    return It->second;
  std::vector<LoopEvent> Events;
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
    for (const FunctionDecl *Callee : possibleCallees(*this, Call)) {
      // A function of another translation unit: what the project index says it runs.
      if (std::optional<uint32_t> Facts = indexedFacts(Callee)) {
        for (LoopEventKind K : AllEvents)
          if (*Facts & indexFact(K))
            Events.push_back({K, Call, Call, 1});
        continue;
      }
      const FunctionDecl *Def = Callee->getDefinition();
      if (!Def || !Def->hasBody() || isInSystemHeader(Def))
        continue;
      for (LoopEventKind K : AllEvents)
        if (const Stmt *Inner = torchtidy::findReachable(Def->getBody(), event(K), Ctx, Opts.CallDepth - 1))
          Events.push_back({K, Call, Inner, 1});
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
  for (const Stmt *Part : Parts) {
    if (!Part)
      continue;
    for (LoopEvent E : eventsIn(Part)) {
      // A loop's condition and increment run on every iteration.
      E.Every = Part == Parts.front() ? everyNth(E.Site, Loop) : 1;
      Facts.Events.push_back(E);
    }
  }
  if (Facts.has(LoopEventKind::Backward) || Facts.has(LoopEventKind::Step))
    Facts.Kind = LoopKind::Training;
  else if (Facts.has(LoopEventKind::Forward))
    Facts.Kind = LoopKind::Eval;
  return Facts;
}

const Stmt *AutogradModel::trainingLoopOf(const Stmt *S) {
  std::function<const Stmt *(const Stmt *, unsigned)> Find = [&](const Stmt *From, unsigned Depth) -> const Stmt * {
    for (const Stmt *L = enclosingLoop(From); L; L = enclosingLoop(L))
      if (loop(L).Kind == LoopKind::Training)
        return L;
    if (Depth == 0)
      return nullptr;
    const FunctionDecl *FD = enclosingFunction(From, Ctx);
    if (!FD || isLambdaCallOperator(FD))
      return nullptr;
    for (const CallExpr *Call : callersOf(FD))
      if (const Stmt *L = Find(Call, Depth - 1))
        return L;
    return nullptr;
  };
  return S ? Find(S, Opts.CallDepth) : nullptr;
}

bool AutogradModel::almostEveryIteration(const Expr *Cond, const Stmt *Loop) {
  // `i % k` without a comparison is true on k - 1 of every k iterations; a switch that is the
  // same on every iteration (`cfg.enabled && i % k`) does not change that.
  llvm::SmallVector<const Expr *, 4> Conjuncts{Cond};
  bool Modulo = false;
  while (!Conjuncts.empty()) {
    const Expr *E = Conjuncts.pop_back_val()->IgnoreParenImpCasts();
    if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->getOpcode() == BO_LAnd) {
      Conjuncts.append({BO->getLHS(), BO->getRHS()});
    } else if (moduloInterval(E, Ctx)) {
      Modulo = true;
    } else if (!sameEveryIteration(E, Loop)) {
      return false;
    }
  }
  return Modulo;
}

const LoopEvent *AutogradModel::ownLevelEvent(const Stmt *Loop, ArrayRef<LoopEventKind> Kinds) {
  for (const LoopEvent &E : loop(Loop).Events)
    if (llvm::is_contained(Kinds, E.Kind) && enclosingLoop(E.Site) == Loop &&
        (E.Call == E.Site || !enclosingLoop(E.Call)))
      return &E;
  return nullptr;
}

bool AutogradModel::runsEachIteration(const Stmt *Loop, ArrayRef<LoopEventKind> Kinds) {
  return ownLevelEvent(Loop, Kinds) != nullptr;
}

LoopSite AutogradModel::loopRunning(const Stmt *S, ArrayRef<LoopEventKind> Kinds) {
  std::function<LoopSite(const Stmt *, unsigned)> Find = [&](const Stmt *From, unsigned Depth) -> LoopSite {
    for (const Stmt *L = enclosingLoop(From); L; L = enclosingLoop(L))
      if (runsEachIteration(L, Kinds))
        return {L, nullptr};
    // A lambda defined before the loop and called in it is found through its calls.
    const FunctionDecl *FD = enclosingFunction(From, Ctx);
    if (Depth == 0 || !FD)
      return {};
    for (const CallExpr *Call : callersOf(FD))
      if (LoopSite Found = Find(Call, Depth - 1); Found.Loop)
        return {Found.Loop, Found.Via ? Found.Via : Call};
    return {};
  };
  return S ? Find(S, Opts.CallDepth) : LoopSite{};
}

unsigned AutogradModel::everyNth(const Stmt *S, const Stmt *Loop) {
  const Stmt *Body = loopBody(Loop);
  unsigned Every = 1;
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode Parent = parentOf(Child, Ctx); !Parent.getNodeKind().isNone() && Child.get<Stmt>() != Body;
       Child = Parent, Parent = parentOf(Parent, Ctx)) {
    const Stmt *PS = Parent.get<Stmt>();
    if (!PS)
      continue; // a lambda's call operator or closure class
    const Stmt *C = Child.get<Stmt>();
    if (const auto *If = dyn_cast<IfStmt>(PS)) {
      if (C == If->getCond() || C == If->getInit() || (If->getConditionVariableDeclStmt() == C))
        continue;
      // A switch the same on every iteration (`if (cfg.verbose)`): all of them or none.
      if ((C == If->getThen() && almostEveryIteration(If->getCond(), Loop)) ||
          (!If->getInit() && !If->getConditionVariable() && sameEveryIteration(If->getCond(), Loop)))
        continue;
      unsigned K = C == If->getThen() ? intervalOf(If->getCond(), Ctx) : 0;
      if (K == 0)
        return 0;
      Every = std::max(Every, K);
    } else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(PS)) {
      if (C != CO->getCond() && !sameEveryIteration(CO->getCond(), Loop))
        return 0;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(PS)) {
      if (BO->isLogicalOp() && C == BO->getRHS() && !sameEveryIteration(BO->getLHS(), Loop))
        return 0;
    } else if (const auto *Sw = dyn_cast<SwitchStmt>(PS)) {
      if (C == Sw->getBody() && (Sw->getInit() || !sameEveryIteration(Sw->getCond(), Loop)))
        return 0;
    } else if (isa<CXXCatchStmt>(PS)) {
      return 0;
    } else if (const auto *CS = dyn_cast<CompoundStmt>(PS)) {
      // `if (i % k != 0) continue;` before the statement selects every k-th iteration.
      for (const Stmt *Sibling : CS->body()) {
        if (Sibling == C)
          break;
        const auto *If = dyn_cast<IfStmt>(Sibling);
        if (!If || If->getElse())
          continue;
        const Stmt *Then = If->getThen();
        if (const auto *Block = dyn_cast<CompoundStmt>(Then); Block && Block->size() == 1)
          Then = Block->body_front();
        const auto *Cond = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
        if (isa<ContinueStmt>(Then) && Cond && Cond->getOpcode() == BO_NE)
          if (unsigned K = std::max(moduloInterval(Cond->getLHS(), Ctx), moduloInterval(Cond->getRHS(), Ctx)))
            Every = std::max(Every, K);
      }
    }
  }
  return Every;
}

namespace {
/// Whether \p D is declared inside \p Loop.
bool declaredIn(const ValueDecl *D, const Stmt *Loop, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*D);
  for (unsigned Steps = 0; Steps < 256 && !N.getNodeKind().isNone(); ++Steps, N = parentOf(N, Ctx)) {
    if (N.get<Stmt>() == Loop)
      return true;
    if (const auto *FD = N.get<FunctionDecl>(); FD && !isLambdaCallOperator(FD))
      return false;
  }
  return false;
}

/// Whether the local \p VD belongs to the function \p S is in, or to a function enclosing the
/// lambda \p S is in, rather than to a helper called from there.
bool declaredAround(const VarDecl *VD, const Stmt *S, ASTContext &Ctx) {
  const DeclContext *Owner = VD->getParentFunctionOrMethod();
  for (const FunctionDecl *FD = enclosingFunction(S, Ctx); FD;) {
    if (FD == Owner)
      return true;
    // A lambda's locals and captures belong to the function it is defined in.
    const auto *MD = dyn_cast<CXXMethodDecl>(FD);
    if (!MD || !MD->getParent()->isLambda())
      return false;
    FD = dyn_cast_or_null<FunctionDecl>(MD->getParent()->getParentFunctionOrMethod());
  }
  return false;
}

/// `model->` on a std::shared_ptr or ModuleHolder, and `(*model).`: `model` itself.
const Expr *throughSmartPointer(const Expr *E) {
  E = E->IgnoreUnlessSpelledInSource();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && (Op->getOperator() == OO_Arrow || Op->getOperator() == OO_Star) && Op->getNumArgs() == 1)
    return Op->getArg(0)->IgnoreUnlessSpelledInSource();
  if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref)
    return UO->getSubExpr()->IgnoreUnlessSpelledInSource();
  return E;
}

/// A parameter declared as a forwarding reference (`Args&&... args`): binding an lvalue to
/// it makes its type a non-const reference, but it only passes the argument on.
AST_MATCHER(ParmVarDecl, isForwardingReference) {
  const auto *FD = dyn_cast<FunctionDecl>(Node.getDeclContext());
  const FunctionDecl *Pattern = FD ? FD->getTemplateInstantiationPattern() : nullptr;
  if (!Pattern)
    return false;
  const ParmVarDecl *Written = nullptr;
  unsigned Index = Node.getFunctionScopeIndex();
  for (const ParmVarDecl *P : Pattern->parameters()) {
    if (P->isParameterPack() || Index-- == 0) {
      Written = P;
      break;
    }
  }
  QualType T = Written ? Written->getType() : QualType();
  if (const auto *Pack = T.isNull() ? nullptr : T->getAs<PackExpansionType>())
    T = Pack->getPattern();
  const auto *RRef = T.isNull() ? nullptr : T->getAs<RValueReferenceType>();
  return RRef && RRef->getPointeeType().getUnqualifiedType()->getAs<TemplateTypeParmType>() &&
         !RRef->getPointeeType().hasQualifiers();
}

/// Whether \p Target gets a new value in \p Loop: assigned, passed by non-const reference,
/// changed by an in-place tensor op or a container's mutator. Not ExprMutationAnalyzer: it
/// counts a module's non-const operator-> and a lambda's by-reference capture as writes.
bool writtenIn(const clang::ast_matchers::internal::Matcher<Expr> &Target, const Stmt *Loop, ASTContext &Ctx) {
  auto Ref = ignoringImplicit(Target);
  auto NonConstRefParam =
      parmVarDecl(hasType(referenceType(pointee(unless(isConstQualified())))), unless(isForwardingReference()));
  auto Mutator = cxxMethodDecl(anyOf(
      allOf(ofClass(cxxRecordDecl(hasAnyName("::at::Tensor", "::at::TensorBase"))), matchesName("_$")),
      hasAnyName("push_back", "emplace_back", "insert", "emplace", "clear", "erase", "resize", "assign",
                 "pop_back", "swap")));
  auto Writes = expr(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Ref)),
                           binaryOperator(isAssignmentOperator(), hasLHS(Ref)),
                           unaryOperator(hasAnyOperatorName("++", "--", "&"), hasUnaryOperand(Ref)),
                           cxxMemberCallExpr(on(Ref), callee(Mutator)),
                           callExpr(forEachArgumentWithParam(Ref, NonConstRefParam))));
  return !match(findAll(Writes.bind("w")), *Loop, Ctx).empty();
}

/// Whether \p VD is handed to an optimizer in the function that declares it (an optimizer
/// constructed from it, or given it with add_param_group).
bool ownedByOptimizer(const VarDecl *VD, ASTContext &Ctx) {
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->hasBody())
    return false;
  auto Ref = hasDescendant(declRefExpr(to(varDecl(equalsNode(VD)))));
  auto Owner = stmt(anyOf(cxxConstructExpr(hasType(matchers::optimizerType()), Ref),
                          stmt(matchers::optimizerMethodCall({"add_param_group"}), Ref)));
  return !match(findAll(Owner), *FD->getBody(), Ctx).empty();
}
} // namespace

std::optional<PerIteration> AutogradModel::perIterationLoop(const Stmt *S, ArrayRef<LoopEventKind> Kinds) {
  // The statements from S up to the call in the loop: each must run on every iteration.
  llvm::SmallVector<const Stmt *, 4> Path;
  std::function<std::optional<PerIteration>(const Stmt *, unsigned)> Find =
      [&](const Stmt *From, unsigned Depth) -> std::optional<PerIteration> {
    Path.push_back(From);
    for (const Stmt *L = enclosingLoop(From); L; L = enclosingLoop(L)) {
      if (!Kinds.empty() && !runsEachIteration(L, Kinds))
        continue;
      if (llvm::any_of(Path, [&](const Stmt *On) { return everyNth(On, L) != 1; }))
        return std::nullopt;
      return PerIteration{L, nullptr};
    }
    const FunctionDecl *FD = Depth ? enclosingFunction(From, Ctx) : nullptr;
    if (!FD)
      return std::nullopt;
    for (const CallExpr *Call : callersOf(FD))
      if (enclosingFunction(Call, Ctx) != FD)
        if (std::optional<PerIteration> Found = Find(Call, Depth - 1))
          return PerIteration{Found->Loop, Found->Via ? Found->Via : Call};
    Path.pop_back();
    return std::nullopt;
  };
  return S ? Find(S, Opts.CallDepth) : std::nullopt;
}

bool AutogradModel::iteratesSteps(const Stmt *Loop) {
  auto AtOwnLevel = [&](const LoopEvent &E) {
    return enclosingLoop(E.Site) == Loop && (E.Call == E.Site || !enclosingLoop(E.Call));
  };
  bool Forward = false, NestedTraining = false;
  for (const LoopEvent &E : loop(Loop).Events) {
    bool Trains = E.Kind == LoopEventKind::Backward || E.Kind == LoopEventKind::Step;
    if (!Trains && E.Kind != LoopEventKind::Forward)
      continue;
    if (!AtOwnLevel(E))
      NestedTraining |= Trains;
    else if (Trains)
      return true;
    else
      Forward = true;
  }
  return Forward && !NestedTraining;
}

bool AutogradModel::isLoopInvariant(const Expr *E, const Stmt *Loop) { return invariantEntity(E, Loop); }

bool AutogradModel::sameEveryIteration(const Expr *E, const Stmt *Loop) {
  std::function<bool(const Expr *, unsigned)> Same = [&](const Expr *X, unsigned Depth) {
    if (Depth == 0)
      return false;
    for (const BoundNodes &B : match(findAll(expr(anyOf(declRefExpr(to(varDecl())), memberExpr(), callExpr()))
                                                 .bind("e")),
                                     *X, Ctx)) {
      const auto *Node = B.getNodeAs<Expr>("e");
      if (const auto *Call = dyn_cast<CallExpr>(Node)) {
        const FunctionDecl *Callee = Call->getDirectCallee();
        if (!Callee || !isInSystemHeader(Callee))
          return false;
        continue;
      }
      if (const auto *ME = dyn_cast<MemberExpr>(Node)) {
        if (isa<FieldDecl>(ME->getMemberDecl()) && !invariantEntity(ME, Loop))
          return false;
        continue;
      }
      const auto *VD = cast<VarDecl>(cast<DeclRefExpr>(Node)->getDecl());
      if (VD->getType().isConstQualified() && VD->hasGlobalStorage())
        continue;
      // The locals and parameters of a helper the loop calls are computed per call.
      if (VD->hasLocalStorage() && !declaredAround(VD, Loop, Ctx))
        return false;
      if (declaredIn(VD, Loop, Ctx)) {
        // A local of the iteration: the same when its initializer is and nothing writes it.
        const auto *Range = dyn_cast<CXXForRangeStmt>(Loop);
        if ((Range && Range->getLoopVariable() == VD) || !VD->getInit() ||
            writtenIn(declRefExpr(to(varDecl(equalsNode(VD)))), Loop, Ctx) || !Same(VD->getInit(), Depth - 1))
          return false;
        continue;
      }
      if (!invariantEntity(cast<DeclRefExpr>(Node), Loop))
        return false;
    }
    return true;
  };
  return E && Loop && Same(E, 4);
}

bool AutogradModel::readsOnlyInvariants(const Expr *E, const Stmt *Loop) {
  auto Refs = match(findAll(expr(anyOf(declRefExpr(to(varDecl())), memberExpr())).bind("r")), *E, Ctx);
  for (const BoundNodes &B : Refs) {
    const auto *R = B.getNodeAs<Expr>("r");
    if (isa<MemberExpr>(R) && !isa<FieldDecl>(cast<MemberExpr>(R)->getMemberDecl()))
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(R)) {
      const auto *VD = cast<VarDecl>(DRE->getDecl());
      if (VD->isUsableInConstantExpressions(Ctx))
        continue;
      if (VD->hasLocalStorage() && !declaredAround(VD, Loop, Ctx))
        return false;
      if (VD->getType().isConstQualified() && !declaredIn(VD, Loop, Ctx))
        continue;
    }
    if (!invariantEntity(R, Loop))
      return false;
  }
  return true;
}

bool AutogradModel::valueEscapes(const VarDecl *V, const Stmt *Scope) {
  auto Ref = declRefExpr(to(varDecl(equalsNode(V))));
  auto Named = ignoringParenImpCasts(
      expr(anyOf(Ref, callExpr(callee(functionDecl(hasAnyName("::std::move", "::std::forward"))),
                               hasArgument(0, ignoringParenImpCasts(Ref))))));
  // Through the copy or move a by-value return or argument makes.
  auto Value = ignoringImplicit(expr(anyOf(Named, cxxConstructExpr(argumentCountIs(1), hasArgument(0, Named)))));
  auto Insert = cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "push_front",
                                                                  "emplace_front", "insert", "emplace", "push",
                                                                  "assign", "insert_or_assign"))),
                                  hasAnyArgument(Value));
  auto Aggregate = expr(anyOf(initListExpr(hasType(recordDecl()), has(Value)),
                              callExpr(callee(functionDecl(hasAnyName("::std::make_pair", "::std::make_tuple"))),
                                       hasAnyArgument(Value))));
  auto Stores = stmt(anyOf(returnStmt(hasReturnValue(Value)), Insert, Aggregate,
                           cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(1, Value),
                                               hasArgument(0, expr().bind("to")))));
  for (const BoundNodes &B : match(findAll(Stores.bind("s")), *Scope, Ctx)) {
    const auto *To = B.getNodeAs<Expr>("to");
    if (!To)
      return true;
    // Assigned to a local of this scope: that local carries it no further than V does.
    const auto *Local = dyn_cast<DeclRefExpr>(To->IgnoreParenImpCasts());
    const auto *LocalVar = Local ? dyn_cast<VarDecl>(Local->getDecl()) : nullptr;
    if (!LocalVar || !LocalVar->hasLocalStorage() || !declaredIn(LocalVar, Scope, Ctx))
      return true;
  }
  return false;
}

const ValueDecl *AutogradModel::invariantEntity(const Expr *E, const Stmt *Loop) {
  if (!E || !Loop)
    return nullptr;
  E = throughSmartPointer(E);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (!VD || declaredIn(VD, Loop, Ctx) || writtenIn(declRefExpr(to(varDecl(equalsNode(VD)))), Loop, Ctx))
      return nullptr;
    // optimizer.step() writes every tensor the optimizer owns.
    if (isTensorType(VD->getType()) && loop(Loop).has(LoopEventKind::Step) &&
        (ownedByOptimizer(VD, Ctx) || isRequiresGradLeaf(DRE)))
      return nullptr;
    return VD;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!FD || writtenIn(memberExpr(member(equalsNode(FD))), Loop, Ctx))
      return nullptr;
    const Expr *Base = ME->getBase()->IgnoreUnlessSpelledInSource();
    if (isa<CXXThisExpr>(Base) || invariantEntity(Base, Loop))
      return FD;
  }
  return nullptr;
}

namespace {
/// The statements of \p Body that empty \p Container: `c.clear()`, or an assignment of a value
/// not computed from itself (`total = total + loss` keeps what it held).
llvm::SmallVector<const Stmt *, 2> emptyingsIn(const ValueDecl *Container, const Stmt *Body, ASTContext &Ctx) {
  auto Root = expr(ignoringParenImpCasts(
      anyOf(declRefExpr(to(valueDecl(equalsNode(Container)))), memberExpr(member(equalsNode(Container))))));
  auto Emptying = stmt(anyOf(cxxMemberCallExpr(on(Root), callee(cxxMethodDecl(hasName("clear")))),
                             cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, Root),
                                                 unless(hasArgument(1, anyOf(Root, hasDescendant(Root)))))));
  llvm::SmallVector<const Stmt *, 2> Found;
  for (const BoundNodes &B : match(findAll(Emptying.bind("clear")), *Body, Ctx))
    Found.push_back(B.getNodeAs<Stmt>("clear"));
  return Found;
}
} // namespace

bool AutogradModel::outlivesIteration(const ValueDecl *Container, const Stmt *Loop) {
  if (!Container || !Loop)
    return false;
  if (const auto *VD = dyn_cast<VarDecl>(Container); VD && declaredIn(VD, Loop, Ctx))
    return false;
  // Emptied by a statement of the loop body itself (not under a condition): nothing survives.
  const auto *Body = dyn_cast_or_null<CompoundStmt>(loopBody(Loop));
  if (!Body)
    return true;
  return llvm::none_of(emptyingsIn(Container, Body, Ctx), [&](const Stmt *S) {
    return llvm::any_of(Body->body(), [&](const Stmt *Top) {
      const auto *E = dyn_cast<Expr>(Top);
      return (E ? E->IgnoreImplicit() : Top) == S;
    });
  });
}

bool AutogradModel::outlivesIteration(const ValueDecl *Container, const Stmt *Loop, const Stmt *Write) {
  if (!Container || !Loop || !Write)
    return false;
  if (const auto *VD = dyn_cast<VarDecl>(Container); VD && declaredIn(VD, Loop, Ctx))
    return false;
  // A write in a lambda or helper of the loop body: the statement of the loop's function
  // that runs it.
  const FunctionDecl *FD = enclosingFunction(Loop, Ctx);
  DynTypedNode N = DynTypedNode::create(*Write);
  for (unsigned Steps = 0; Steps < 64 && N.get<Stmt>() && enclosingFunction(N.get<Stmt>(), Ctx) != FD; ++Steps)
    N = parentOf(N, Ctx);
  if (!N.get<Stmt>() || !loopBody(Loop))
    return true;
  Write = N.get<Stmt>();
  llvm::SmallVector<const Stmt *, 2> Clears = emptyingsIn(Container, loopBody(Loop), Ctx);
  llvm::erase_if(Clears, [Write](const Stmt *S) { return S == Write; });
  return Clears.empty() || mayRunBeforeAvoiding(Write, Write, Clears);
}

namespace {
/// A reference to a variable or to a field of `this`, and what it names.
auto variableOrFieldRef() {
  return expr(anyOf(declRefExpr(), memberExpr(hasObjectExpression(ignoringParenImpCasts(cxxThisExpr())))))
      .bind("ref");
}
const ValueDecl *referenced(const BoundNodes &B) {
  const auto *Ref = B.getNodeAs<Expr>("ref");
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Ref))
    return DRE->getDecl();
  return cast<MemberExpr>(Ref)->getMemberDecl();
}
} // namespace

bool AutogradModel::reachesBackward(const Expr *Value, const Stmt *From) {
  const ValueDecl *Root = Value ? containerRoot(Value) : nullptr;
  const FunctionDecl *FD = From ? enclosingFunction(From, Ctx) : nullptr;
  if (!Root || !FD || !FD->hasBody())
    return false;
  // The variables and fields computed from Root, through initializers and assignments, in FD.
  llvm::SmallPtrSet<const ValueDecl *, 8> Derived{Root};
  for (bool Grew = true; Grew;) {
    Grew = false;
    auto Uses = match(findAll(variableOrFieldRef()), *FD->getBody(), Ctx);
    for (const BoundNodes &B : Uses) {
      const auto *Ref = B.getNodeAs<Expr>("ref");
      if (!Derived.count(referenced(B)))
        continue;
      for (DynTypedNode N = parentOf(DynTypedNode::create(*Ref), Ctx); !N.getNodeKind().isNone();
           N = parentOf(N, Ctx)) {
        if (const auto *VD = N.get<VarDecl>()) {
          Grew |= Derived.insert(VD).second;
          break;
        }
        const auto *S = N.get<Stmt>();
        if (!S || isa<CompoundStmt>(S))
          break;
        if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S); Op && Op->isAssignmentOp()) {
          if (const ValueDecl *Lhs = containerRoot(Op->getArg(0)))
            Grew |= Derived.insert(Lhs).second;
          break;
        }
      }
    }
  }
  auto UsesDerived = [&](const Stmt *S) {
    for (const BoundNodes &B : match(findAll(variableOrFieldRef()), *S, Ctx))
      if (Derived.count(referenced(B)))
        return true;
    return false;
  };
  for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *FD->getBody(), Ctx)) {
    const auto *Call = B.getNodeAs<CallExpr>("call");
    if (!mayRunBefore(From, Call) || !UsesDerived(Call))
      continue;
    if (!match(matchers::backwardCall(), *Call, Ctx).empty())
      return true;
    const FunctionDecl *Callee = calledFunction(Call);
    const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
    if (Def && Def->hasBody() && !isInSystemHeader(Def) && Opts.CallDepth > 0 &&
        torchtidy::findReachable(Def->getBody(), matchers::backwardCall(), Ctx, Opts.CallDepth - 1))
      return true;
  }
  return false;
}

const ValueDecl *containerRoot(const Expr *E) {
  static constexpr llvm::StringLiteral ElementAccess[] = {"at", "back", "front", "get", "top"};
  for (unsigned Steps = 0; E && Steps < 16; ++Steps) {
    E = E->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return isa<VarDecl, BindingDecl>(DRE->getDecl()) ? DRE->getDecl() : nullptr;
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
        return dyn_cast<FieldDecl>(ME->getMemberDecl());
      E = ME->getBase();
      continue;
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
      if (Op->getOperator() != OO_Subscript && Op->getOperator() != OO_Arrow && Op->getOperator() != OO_Star)
        return nullptr;
      E = Op->getArg(0);
      continue;
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref) {
      E = UO->getSubExpr();
      continue;
    }
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      if (!MD || !MD->getParent()->isInStdNamespace() || !MD->getIdentifier() ||
          !llvm::is_contained(ElementAccess, MD->getName()))
        return nullptr;
      E = MCE->getImplicitObjectArgument();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

const ValueDecl *namedDecl(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return dyn_cast<VarDecl>(DRE->getDecl());
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return dyn_cast<FieldDecl>(ME->getMemberDecl());
  return nullptr;
}

const ValueDecl *entityOf(const Expr *E) { return E ? containerRoot(E) : nullptr; }

namespace {
/// A statement from which backward() is reachable through user functions.
AST_MATCHER_P(Stmt, reachesBackwardCall, AutogradModel *, M) {
  return M->findReachable(&Node, matchers::backwardCall()) != nullptr;
}

/// The bodies a gradient use of \p D could be written in.
llvm::SmallVector<const Stmt *, 4> bodiesUsing(const ValueDecl *D, const FunctionDecl *Fn) {
  llvm::SmallVector<const FunctionDecl *, 4> Fns{Fn};
  if (const auto *Owner = dyn_cast_or_null<FunctionDecl>(D->getParentFunctionOrMethod()))
    Fns.push_back(Owner);
  if (const auto *FD = dyn_cast<FieldDecl>(D))
    if (const auto *RD = dyn_cast<CXXRecordDecl>(FD->getParent()))
      for (const CXXMethodDecl *M : RD->methods())
        Fns.push_back(M->getDefinition());
  llvm::SmallVector<const Stmt *, 4> Bodies;
  for (const FunctionDecl *F : Fns)
    if (F && F->getBody() && !llvm::is_contained(Bodies, F->getBody()))
      Bodies.push_back(F->getBody());
  return Bodies;
}

bool feedsGradientImpl(AutogradModel &M, const ValueDecl *D, const FunctionDecl *Fn,
                       const FunctionDecl *WrittenIn, unsigned Depth) {
  ASTContext &Ctx = M.context();
  if (const auto *Parm = dyn_cast<ParmVarDecl>(D); Parm && Depth > 0) {
    unsigned Index = Parm->getFunctionScopeIndex();
    for (const CallExpr *Call : M.callersOf(Fn)) {
      const ValueDecl *Passed = Index < Call->getNumArgs() ? namedDecl(Call->getArg(Index)) : nullptr;
      const FunctionDecl *Caller = enclosingFunction(Call, Ctx);
      if (!Passed || !Caller || feedsGradientImpl(M, Passed, Caller, WrittenIn, Depth - 1))
        return true;
    }
  }
  llvm::SmallPtrSet<const ValueDecl *, 4> Tainted{D};
  auto Bodies = bodiesUsing(D, Fn);
  auto TensorUse = expr(matchers::isTensorExpr());
  // Handing the value to the function that writes it is that write, not an escape; a
  // function that never runs backward() (logging, a probe) cannot backpropagate it.
  auto Escape = stmt(anyOf(
      matchers::backwardCall(), returnStmt(hasReturnValue(TensorUse)),
      callExpr(callee(functionDecl(unless(clang::ast_matchers::isExpansionInSystemHeader()),
                                   unless(equalsNode(WrittenIn->getCanonicalDecl())),
                                   anyOf(unless(hasBody(stmt())),
                                         hasBody(stmt(reachesBackwardCall(&M)))))),
               hasAnyArgument(TensorUse)),
      cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert", "emplace", "push"))))));
  auto Derived = stmt(anyOf(
      declStmt(has(varDecl(hasType(matchers::tensorType()), hasInitializer(expr().bind("from"))).bind("var"))),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, TensorUse.bind("to")),
                          hasArgument(1, expr().bind("from")))));
  for (unsigned Round = 0; Round < M.depth(); ++Round) {
    unsigned Before = Tainted.size();
    for (const Stmt *Body : Bodies) {
      for (const BoundNodes &B : match(findAll(Escape.bind("use")), *Body, Ctx))
        if (refersTo(B.getNodeAs<Stmt>("use"), Tainted))
          return true;
      // A tensor computed from it (`auto mean = total / n;`) carries the same graph.
      for (const BoundNodes &B : match(findAll(Derived), *Body, Ctx)) {
        if (!refersTo(B.getNodeAs<Expr>("from"), Tainted))
          continue;
        if (const auto *V = B.getNodeAs<VarDecl>("var"))
          Tainted.insert(V);
        else if (const ValueDecl *To = namedDecl(B.getNodeAs<Expr>("to")))
          Tainted.insert(To);
      }
    }
    if (Tainted.size() == Before)
      break;
  }
  return false;
}
} // namespace

bool AutogradModel::feedsGradient(const ValueDecl *D, const FunctionDecl *WrittenIn) {
  return D && WrittenIn && feedsGradientImpl(*this, D, WrittenIn, WrittenIn, Opts.CallDepth ? Opts.CallDepth - 1 : 0);
}

namespace {
/// Whether \p Fn's own code shows tensors on an accelerator (see mayUseAccelerator).
bool showsAcceleratorHere(const FunctionDecl *Fn, ASTContext &Ctx) {
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Fn))
    for (const FieldDecl *F : MD->getParent()->fields())
      if (isSameOrDerivedFrom(recordOf(F->getType()), names::Device))
        return true;
  for (const ParmVarDecl *P : Fn->parameters())
    if (isSameOrDerivedFrom(recordOf(P->getType()), names::Device))
      return true;
  if (!Fn->getBody())
    return false;
  auto DeviceValue = expr(anyOf(hasType(cxxRecordDecl(hasName(names::Device))), hasType(enumDecl(hasName(names::DeviceType)))));
  auto Evidence = match(
      findAll(expr(anyOf(matchers::tensorMethodCall({"cuda"}), matchers::moduleMethodCall({"cuda"}),
                         callExpr(callee(functionDecl(hasAnyName("::torch::cuda::is_available",
                                                                 "::torch::cuda::device_count",
                                                                 "::torch::cuda::synchronize")))),
                         DeviceValue))
                  .bind("e")),
      *Fn->getBody(), Ctx);
  return llvm::any_of(Evidence, [&](const BoundNodes &B) {
    const Expr *E = B.getNodeAs<Expr>("e")->IgnoreImplicit();
    // A local's value, and a copy of it, are judged where the value is made.
    if (const auto *C = dyn_cast<CXXConstructExpr>(E);
        C && C->getNumArgs() == 1 && isSameOrDerivedFrom(recordOf(C->getArg(0)->getType()), names::Device))
      E = C->getArg(0)->IgnoreImplicit();
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E); Ref && isa<VarDecl>(Ref->getDecl()) &&
                                                  cast<VarDecl>(Ref->getDecl())->hasLocalStorage() &&
                                                  !isa<ParmVarDecl>(Ref->getDecl()))
      return false;
    // A device built here, or a DeviceType: only one other than the CPU counts.
    if (E->getType()->isEnumeralType() || isa<CXXConstructExpr>(E))
      return deviceKind(E, Ctx) != DeviceKind::Host;
    return true;
  });
}
} // namespace

bool AutogradModel::showsAccelerator(const FunctionDecl *Fn) {
  auto [It, Inserted] = P->ShowsAccelerator.try_emplace(Fn, false);
  if (!Inserted)
    return It->second;
  bool Shows = showsAcceleratorHere(Fn, Ctx);
  // A loader of another TU that moves its batches to the GPU.
  if (!Shows && Index && Fn->getBody())
    for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Fn->getBody(), Ctx)) {
      std::optional<uint32_t> Facts = indexedFacts(B.getNodeAs<CallExpr>("call")->getDirectCallee());
      if (Facts && (*Facts & FunctionSummary::Accelerator)) {
        Shows = true;
        break;
      }
    }
  return P->ShowsAccelerator[Fn] = Shows;
}

bool AutogradModel::mayUseAccelerator(const Stmt *S) {
  auto Shows = [&](const FunctionDecl *Fn) { return showsAccelerator(Fn); };
  llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
  std::function<bool(const FunctionDecl *, unsigned)> Around = [&](const FunctionDecl *Fn, unsigned Depth) {
    if (!Fn || !Seen.insert(Fn).second)
      return false;
    if (Shows(Fn))
      return true;
    if (Depth == 0)
      return false;
    for (const CallExpr *Call : callersOf(Fn))
      if (Around(outermostFunction(Call), Depth - 1))
        return true;
    return false;
  };
  return S && Around(outermostFunction(S), Opts.CallDepth + 1);
}

} // namespace torchtidy
