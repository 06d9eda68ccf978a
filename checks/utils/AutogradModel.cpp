// The per-TU index the model's other layers (ExecutionOrder, GradMode, Provenance, Loop*,
// ValueFate) stand on: the model registry, callers, callees, and accelerator evidence.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"
#include "utils/ProvenanceWalk.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <mutex>
#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

namespace {
std::mutex RegistryMutex;
/// The models of each live ASTContext, one per distinct ModelOptions.
llvm::DenseMap<const ASTContext *, llvm::SmallVector<AutogradModel *, 1>> &registry() {
  static llvm::DenseMap<const ASTContext *, llvm::SmallVector<AutogradModel *, 1>> Models;
  return Models;
}

/// The parameter holding a std::function (or another callable whose call operator is library
/// code) that \p Call calls: `callback` in `callback(loss)`.
const ParmVarDecl *calledParameter(const CallExpr *Call) {
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Op || Op->getOperator() != OO_Call || !Callee || !isInSystemHeader(Callee))
    return nullptr;
  const auto *Ref = dyn_cast<DeclRefExpr>(Op->getArg(0)->IgnoreParenImpCasts());
  return Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
}

/// The one function the callable \p E is (a lambda, a local holding one, a function or its
/// address), through conversions and std::function; null for parameters, members, computed ones.
const FunctionDecl *callableValue(const Expr *E, unsigned Steps = 8) {
  while (E && Steps--) {
    E = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *Lambda = dyn_cast<LambdaExpr>(E))
      return Lambda->getCallOperator();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      E = Construct->getNumArgs() == 1 ? Construct->getArg(0) : nullptr;
    } else if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = Cast->getSubExpr();
    } else if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_AddrOf) {
      E = UO->getSubExpr();
    } else if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *FD = dyn_cast<FunctionDecl>(Ref->getDecl()))
        return FD;
      const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
      if (!VD || !VD->isLocalVarDecl() || isa<ParmVarDecl>(VD))
        return nullptr;
      if (const CXXRecordDecl *RD = VD->getType()->getAsCXXRecordDecl(); RD && RD->isLambda())
        return RD->getLambdaCallOperator();
      E = VD->getInit();
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

/// How many arguments \p Call passes before the parameters of \p Callee: the object of a
/// member operator call.
unsigned implicitObjectArguments(const CallExpr *Call, const FunctionDecl *Callee) {
  const auto *MD = dyn_cast<CXXMethodDecl>(Callee);
  return isa<CXXOperatorCallExpr>(Call) && MD && !MD->isStatic() ? 1 : 0;
}

/// The variable or field \p E is part of: through members (objectRoot), and with \p Elements
/// also through elements, pointers and smart pointers (containerRoot).
const ValueDecl *rootOf(const Expr *E, bool Elements) {
  static constexpr llvm::StringLiteral ElementAccess[] = {"at", "back", "front", "get", "top"};
  for (unsigned Steps = 0; E && Steps < 16; ++Steps) {
    E = Elements ? E->IgnoreParenImpCasts() : asSpelled(E);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return isa<VarDecl>(DRE->getDecl()) || (Elements && isa<BindingDecl>(DRE->getDecl())) ? DRE->getDecl()
                                                                                         : nullptr;
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
        return dyn_cast<FieldDecl>(ME->getMemberDecl());
      E = ME->getBase();
    } else if (!Elements) {
      return nullptr;
    } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
      if (Op->getOperator() != OO_Subscript && Op->getOperator() != OO_Arrow && Op->getOperator() != OO_Star)
        return nullptr;
      E = Op->getArg(0);
    } else if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref) {
      E = UO->getSubExpr();
    } else if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      if (!MD || !MD->getParent()->isInStdNamespace() || !MD->getIdentifier() ||
          !llvm::is_contained(ElementAccess, MD->getName()))
        return nullptr;
      E = MCE->getImplicitObjectArgument();
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

/// Whether the tensor \p VD is filled in \p Scope: written in place, directly or through a view
/// (`t[j] = v`, `t.index_put_(...)`, `t.fill_(v)`), or through its data pointer or an accessor.
/// It then holds values computed on the host, like torch::tensor(values), not the factory's fill.
bool filledIn(const VarDecl *VD, const Stmt *Scope, AutogradModel &M) {
  static const StringRef RawAccess[] = {"data_ptr", "mutable_data_ptr", "accessor", "packed_accessor32",
                                        "packed_accessor64", "generic_packed_accessor"};
  auto Names = [VD](const Expr *E) {
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreUnlessSpelledInSource() : nullptr);
    return DRE && DRE->getDecl() == VD;
  };
  auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
  for (const BoundNodes &B : match(findAll(callExpr(hasDescendant(Ref)).bind("c")), *Scope, M.context())) {
    const auto *Call = B.getNodeAs<CallExpr>("c");
    if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call))
      if (isTensorMethod(Member->getMethodDecl(), RawAccess) && Names(Member->getImplicitObjectArgument()))
        return true;
    std::optional<InplaceOp> Op = M.inplaceOp(Call);
    for (const Expr *T = Op ? Op->Target : nullptr; T; T = viewedTensor(T->IgnoreUnlessSpelledInSource()))
      if (Names(T))
        return true;
  }
  return false;
}

/// One hostTensorSource question: the locals and functions being followed (a definition reading
/// its own variable, `t = t * 2`, adds nothing) and the first source found.
class HostWalk : public ProvenanceWalk {
public:
  HostWalk(AutogradModel &M, const HostTensorQuery &Q) : ProvenanceWalk(M), Q(Q) {}
  const Expr *Source = nullptr;

  /// Whether every path that gives \p E its value starts on the host (Source: the first such start).
  bool onHost(const Expr *E, unsigned Depth) {
    E = E ? E->IgnoreUnlessSpelledInSource() : nullptr;
    if (!E || Depth > MaxDepth)
      return false;
    if (Q.OnHost && Q.OnHost(E))
      return found(E);
    if (const CallExpr *Factory = hostFactoryCall(E, Ctx))
      return Q.Factories && deviceMakeable(Factory) && found(Factory);
    // `std::get<0>(x.max(1))`: an element of the tuple a tensor method returns.
    bool Element = false;
    if (const auto *Get = dyn_cast<CallExpr>(E); Get && Get->getNumArgs() == 1 && Get->getDirectCallee() &&
                                                 Get->getDirectCallee()->isInStdNamespace() &&
                                                 Get->getDirectCallee()->getName() == "get") {
      E = Get->getArg(0)->IgnoreUnlessSpelledInSource();
      Element = isa<CXXMemberCallExpr>(E);
    }
    if (const auto *Call = dyn_cast<CallExpr>(E); Call && isTensorType(Call->getType()))
      if (const FunctionDecl *FD = M.calledFunction(Call); FD && !isInSystemHeader(FD))
        return returnsHost(FD, Call, Depth);
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
      // A tensor method keeps its object where it is unless it moves it (`.cuda()`, `.to(device)`,
      // `.to(options)`); a tensor argument on another device would make it throw.
      const CXXMethodDecl *MD = Call->getMethodDecl();
      std::optional<DeviceKind> To = deviceMoveOf(Call, Ctx);
      bool Keeps = MD && MD->getIdentifier() && isTensorMethod(MD, {MD->getName()}) &&
                   (isTensorType(Call->getType()) || (Element && canHoldGraph(Call->getType(), 1))) &&
                   (To ? *To == DeviceKind::Host
                       : llvm::none_of(Call->arguments(), [&](const Expr *A) { return mayNameDevice(A, Ctx); }));
      return Keeps && allOnHost(Call->getImplicitObjectArgument(), Call->arguments(), Depth);
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E))
      return allOnHost(nullptr, Op->arguments(), Depth);
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
      return localOnHost(Ref, Depth);
    return false;
  }

private:
  bool found(const Expr *E) {
    Source = Source ? Source : E;
    return true;
  }

  /// torch::tensor(values) over constants (`torch::tensor({1.f, 1.f, 1.f})`) is a fill too; over
  /// values read from variables, only when they are the same every iteration of Q.Loop.
  bool deviceMakeable(const CallExpr *Factory) {
    StringRef Name = Factory->getDirectCallee()->getName();
    auto Constant = [&] {
      return Factory->getNumArgs() > 0 &&
             match(findAll(expr(anyOf(declRefExpr(to(varDecl())), callExpr()))), *Factory->getArg(0), Ctx).empty();
    };
    return !Q.DeviceMakeable ||
           (llvm::is_contained(names::HostFactories, Name) &&
            (Name != "tensor" || Constant() || (!InCallee && Q.Loop && M.readsOnlyInvariants(Factory, Q.Loop))));
  }

  /// A user function returning a tensor: every return of its body here, for the call \p Call;
  /// another TU's, by the project index.
  bool returnsHost(const FunctionDecl *FD, const CallExpr *Call, unsigned Depth) {
    if (!FD->getDefinition()) {
      std::optional<uint32_t> Facts = M.indexedFacts(FD);
      return Q.Factories && Facts && (*Facts & FunctionSummary::ReturnsHost) && found(Call);
    }
    bool Any = false, All = true;
    ++InCallee;
    returns(FD, Call, [&](const Expr *Ret) {
      Any = true;
      return !(All = onHost(Ret, Depth + 1));
    });
    --InCallee;
    return Any && All;
  }

  /// \p Object (optional) and the tensor arguments of \p Args, at least one, all on the host:
  /// a 0-dim host tensor combined with a device tensor gives a device tensor.
  bool allOnHost(const Expr *Object, llvm::iterator_range<CallExpr::const_arg_iterator> Args, unsigned Depth) {
    bool Any = Object != nullptr;
    if (Object && !onHost(Object, Depth + 1))
      return false;
    for (const Expr *Arg : Args) {
      if (!isTensorType(Arg->getType()))
        continue;
      Any = true;
      if (!onHost(Arg, Depth + 1))
        return false;
    }
    return Any;
  }

  /// A local tensor (or reference binding a temporary) is on the host when every definition
  /// reaching \p Ref (reachingAt) is; in-place writes keep it where it is. In a called function,
  /// all its definitions run within Q.Scope.
  bool localOnHost(const DeclRefExpr *Ref, unsigned Depth) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    const Expr *Init = VD ? VD->getInit() : nullptr;
    if (const auto *Cleanups = dyn_cast_or_null<ExprWithCleanups>(Init))
      Init = Cleanups->getSubExpr();
    const auto *Fn = VD ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod()) : nullptr;
    const Stmt *Within = Q.Scope && !InCallee ? Q.Scope : Fn ? Fn->getBody() : nullptr;
    if (!VD || !VD->isLocalVarDecl() || VD->isStaticLocal() || !isTensorType(VD->getType()) ||
        (VD->getType()->isReferenceType() && !isa_and_nonnull<MaterializeTemporaryExpr>(Init)) ||
        (Q.DeviceMakeable && (!Within || filledIn(VD, Within, M))))
      return false;
    if (!enter(VD))
      return true;
    const Stmt *Declaration = parentOf(VD, Ctx).get<DeclStmt>();
    llvm::SmallVector<const Stmt *, 4> Sites;
    llvm::SmallVector<const Expr *, 4> Values;
    for (const Definition &D : definitionsOf(VD, Ctx))
      if (D.K == Definition::Init || D.K == Definition::Assign) {
        Sites.push_back(D.K == Definition::Assign ? D.Site : Declaration ? Declaration : VD->getInit());
        Values.push_back(D.Value);
      }
    llvm::SmallVector<const Stmt *, 2> Reaching = M.reachingAt(Sites, Ref);
    bool All = !Reaching.empty();
    for (const Stmt *Site : Reaching)
      if (!(All = (!Q.Scope || InCallee ||
                   isWithin(Site->getBeginLoc(), Q.Scope->getSourceRange(), Ctx.getSourceManager())) &&
                  onHost(Values[llvm::find(Sites, Site) - Sites.begin()], Depth + 1)))
        break;
    leave(VD);
    return All;
  }

  const HostTensorQuery &Q;
  unsigned InCallee = 0; ///< how many user functions deep the walk is
};
} // namespace

AutogradModel &AutogradModel::get(ASTContext &Ctx, const ModelOptions &Options) {
  std::lock_guard<std::mutex> Lock(RegistryMutex);
  llvm::SmallVector<AutogradModel *, 1> &Models = registry()[&Ctx];
  for (AutogradModel *M : Models)
    if (M->Opts == Options)
      return *M;
  auto *M = new AutogradModel(Ctx, Options);
  Models.push_back(M);
  // Freed by ~ASTContext, before its address can be reused by a later translation unit.
  Ctx.AddDeallocation(
      [](void *P) {
        auto *M = static_cast<AutogradModel *>(P);
        std::lock_guard<std::mutex> Lock(RegistryMutex);
        if (auto It = registry().find(&M->context()); It != registry().end()) {
          llvm::erase_if(It->second, [M](const auto &Entry) { return Entry == M; });
          if (It->second.empty())
            registry().erase(It);
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

AutogradModel::~AutogradModel() = default;

std::optional<uint32_t> AutogradModel::indexedFacts(const FunctionDecl *Callee) const {
  if (!Index || !Callee || Callee->getDefinition() || isInSystemHeader(Callee))
    return std::nullopt;
  return Index->factsOf(Callee);
}

llvm::ArrayRef<const CallExpr *> AutogradModel::callersOf(const FunctionDecl *FD) {
  if (!FD)
    return {};
  if (!P->CallIndexBuilt) {
    P->CallIndexBuilt = true;
    std::vector<std::pair<const CallExpr *, const ParmVarDecl *>> ThroughParameters;
    forEachUserDecl(Ctx, [&](Decl *D) {
      // One pass over user code; instantiations are visited, so a call of a template's
      // specialization is filed under the pattern too.
      for (const BoundNodes &B : match(decl(forEachDescendant(callExpr().bind("call"))), *D, Ctx)) {
        const auto *Call = B.getNodeAs<CallExpr>("call");
        if (const ParmVarDecl *Param = calledParameter(Call))
          ThroughParameters.push_back({Call, Param});
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
    // A call of a std::function parameter runs what the visible calls of its function pass for
    // it, when that is one lambda or function (the training step handed to a batch loop).
    for (auto [Call, Param] : ThroughParameters) {
      const auto *Holder = dyn_cast<FunctionDecl>(Param->getDeclContext());
      auto [It, Inserted] = P->ParameterCallees.try_emplace(Call);
      if (!Inserted)
        continue;
      llvm::SmallVector<const FunctionDecl *, 2> &Runs = It->second;
      for (const CallExpr *Caller : Holder ? callersOf(Holder) : llvm::ArrayRef<const CallExpr *>())
        if (const FunctionDecl *Fn = callableValue(argumentFor(Caller, Param)); Fn && !llvm::is_contained(Runs, Fn))
          Runs.push_back(Fn);
      for (const FunctionDecl *Fn : Runs)
        P->Callers[Fn->getCanonicalDecl()].push_back(Call);
    }
  }
  const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern();
  auto It = P->Callers.find((Pattern ? Pattern : FD)->getCanonicalDecl());
  return It == P->Callers.end() ? llvm::ArrayRef<const CallExpr *>() : llvm::ArrayRef(It->second);
}

llvm::SmallVector<const FunctionDecl *, 2> AutogradModel::calledFunctions(const CallExpr *Call) {
  const FunctionDecl *FD = calledFunction(Call); // builds the call index, which resolves parameter calls
  if (auto It = P->ParameterCallees.find(Call); It != P->ParameterCallees.end() && It->second.size() > 1)
    return It->second;
  return FD ? llvm::SmallVector<const FunctionDecl *, 2>{FD} : unresolvedCandidates(Call);
}

llvm::SmallVector<const FunctionDecl *, 2> unresolvedCandidates(const CallExpr *Call) {
  llvm::SmallVector<const FunctionDecl *, 2> Candidates;
  if (const auto *Lookup = dyn_cast<UnresolvedLookupExpr>(Call->getCallee()->IgnoreParenImpCasts()))
    for (const NamedDecl *D : Lookup->decls())
      if (const FunctionDecl *FD = D->getUnderlyingDecl()->getAsFunction())
        Candidates.push_back(FD);
  return Candidates;
}

const FunctionDecl *AutogradModel::calledFunction(const CallExpr *Call) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
  if (!Op || Op->getOperator() != OO_Call || (Callee && !isInSystemHeader(Callee)))
    return Callee;
  if (calledParameter(Call)) {
    // The call index resolves it (while it is being built: unresolved); one function only.
    (void)callersOf(Callee);
    auto It = P->ParameterCallees.find(Call);
    return It != P->ParameterCallees.end() && It->second.size() == 1 ? It->second.front() : Callee;
  }
  const FunctionDecl *Held = callableValue(Op->getArg(0));
  return Held ? Held : Callee;
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
  if (const auto *M = dyn_cast<MemberExpr>(Callee)) {
    if (const IdentifierInfo *II = M->getMemberDecl()->getIdentifier())
      Shape.Name = II->getName();
  } else if (isa<CXXDependentScopeMemberExpr, UnresolvedMemberExpr>(Callee)) {
    StringRef Member;
    Shape.Object = dependentMemberBase(Call, Member, /*AllowArrow=*/true);
    Shape.Name = dependentMemberName(Callee);
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

const Expr *argumentFor(const CallExpr *Call, const ParmVarDecl *Param) {
  const auto *Callee = Call && Param ? dyn_cast<FunctionDecl>(Param->getDeclContext()) : nullptr;
  if (!Callee)
    return nullptr;
  unsigned Index = Param->getFunctionScopeIndex() + implicitObjectArguments(Call, Callee);
  return Index < Call->getNumArgs() ? Call->getArg(Index) : nullptr;
}

const ParmVarDecl *parameterFor(const CallExpr *Call, const FunctionDecl *Callee, const Expr *Arg) {
  if (!Call || !Callee)
    return nullptr;
  unsigned Offset = implicitObjectArguments(Call, Callee);
  for (unsigned I = Offset; I < Call->getNumArgs(); ++I)
    if (Call->getArg(I) == Arg)
      return I - Offset < Callee->getNumParams() ? Callee->getParamDecl(I - Offset) : nullptr;
  return nullptr;
}

void AutogradModel::forEachReachable(const Stmt *Root, unsigned Depth,
                                     llvm::function_ref<bool(const Stmt *, const FunctionDecl *)> Visit,
                                     bool OutsideLoops) {
  llvm::SmallPtrSet<const FunctionDecl *, 8> Visited;
  std::function<bool(const Stmt *, const FunctionDecl *, unsigned)> Walk = [&](const Stmt *Body,
                                                                              const FunctionDecl *Fn, unsigned Left) {
    if (!Body)
      return false;
    if (Visit(Body, Fn))
      return true;
    if (Left == 0)
      return false;
    for (const BoundNodes &B : match(findAll(callExpr().bind("call")), *Body, Ctx)) {
      const auto *Call = B.getNodeAs<CallExpr>("call");
      if (OutsideLoops && enclosingLoop(Call))
        continue;
      for (const FunctionDecl *Callee : calledFunctions(Call)) {
        const FunctionDecl *Def = Callee->getDefinition();
        if (Def && Def->hasBody() && !isInSystemHeader(Def) && Visited.insert(Def).second &&
            Walk(Def->getBody(), Def, Left - 1))
          return true;
      }
    }
    return false;
  };
  Walk(Root, nullptr, Depth);
}

const Stmt *AutogradModel::findReachable(const Stmt *Root, const StmtMatcher &M, std::optional<unsigned> Depth) {
  const Stmt *Found = nullptr;
  forEachReachable(Root, Depth.value_or(Opts.CallDepth), [&](const Stmt *Body, const FunctionDecl *) {
    return (Found = selectFirst<Stmt>("match", match(findAll(stmt(M).bind("match")), *Body, Ctx))) != nullptr;
  });
  return Found;
}

const Expr *throughPointer(const Expr *E) {
  E = E->IgnoreUnlessSpelledInSource();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && (Op->getOperator() == OO_Arrow || Op->getOperator() == OO_Star) && Op->getNumArgs() == 1)
    return Op->getArg(0)->IgnoreUnlessSpelledInSource();
  if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref)
    return UO->getSubExpr()->IgnoreUnlessSpelledInSource();
  return E;
}

const Expr *asSpelled(const Expr *E) {
  for (const Expr *Prev = nullptr; E && E != Prev;) {
    Prev = E;
    E = E->IgnoreUnlessSpelledInSource()->IgnoreParens();
  }
  return E;
}

const ValueDecl *objectRoot(const Expr *E) { return rootOf(E, /*Elements=*/false); }
const ValueDecl *containerRoot(const Expr *E) { return rootOf(E, /*Elements=*/true); }

clang::ast_matchers::internal::Matcher<Expr> refTo(const ValueDecl *D) {
  return expr(anyOf(declRefExpr(to(equalsNode(D))), memberExpr(member(equalsNode(D)))));
}

const ValueDecl *namedDecl(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return dyn_cast<VarDecl>(DRE->getDecl());
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return dyn_cast<FieldDecl>(ME->getMemberDecl());
  return nullptr;
}

const Stmt *lifetimeScope(const VarDecl *VD, ASTContext &Ctx) {
  if (const auto *Parm = dyn_cast<ParmVarDecl>(VD)) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(Parm->getParentFunctionOrMethod());
    return FD ? FD->getBody() : nullptr;
  }
  DynTypedNode N = parentOf(VD, Ctx);
  for (unsigned Steps = 0; Steps < 64 && !N.getNodeKind().isNone(); ++Steps, N = parentOf(N, Ctx))
    if (const auto *S = N.get<Stmt>(); isa_and_nonnull<CompoundStmt, ForStmt, CXXForRangeStmt, WhileStmt, IfStmt>(S))
      return S;
  return nullptr;
}

bool AutogradModel::showsAccelerator(const FunctionDecl *Fn) {
  auto [It, Inserted] = P->ShowsAccelerator.try_emplace(Fn, false);
  if (!Inserted)
    return It->second;
  auto IsDevice = [](const ValueDecl *D) { return isSameOrDerivedFrom(recordOf(D->getType()), names::Device); };
  const auto *MD = dyn_cast<CXXMethodDecl>(Fn);
  if ((MD && llvm::any_of(MD->getParent()->fields(), IsDevice)) || llvm::any_of(Fn->parameters(), IsDevice))
    return P->ShowsAccelerator[Fn] = true;
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
  bool Shows = llvm::any_of(Evidence, [&](const BoundNodes &B) {
    const Expr *E = B.getNodeAs<Expr>("e")->IgnoreImplicit();
    // A local's value, and a copy of it, are judged where the value is made.
    if (const auto *C = dyn_cast<CXXConstructExpr>(E);
        C && C->getNumArgs() == 1 && isSameOrDerivedFrom(recordOf(C->getArg(0)->getType()), names::Device))
      E = C->getArg(0)->IgnoreImplicit();
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E); Ref && isa<VarDecl>(Ref->getDecl()) &&
                                                  cast<VarDecl>(Ref->getDecl())->hasLocalStorage() &&
                                                  !isa<ParmVarDecl>(Ref->getDecl()))
      return false;
    // A tensor's own device says where it already is, not that anything is on an accelerator.
    if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E);
        Call && Call->getMethodDecl() && Call->getMethodDecl()->getName() == "device" &&
        isTensorClass(Call->getMethodDecl()->getParent()))
      return false;
    // A device built here, or a DeviceType: only one other than the CPU counts.
    if (E->getType()->isEnumeralType() || isa<CXXConstructExpr>(E))
      return deviceKind(E, Ctx) != DeviceKind::Host;
    return true;
  });
  // A loader of another TU that moves its batches to the GPU.
  if (!Shows && Index)
    Shows = llvm::any_of(match(findAll(callExpr().bind("call")), *Fn->getBody(), Ctx), [&](const BoundNodes &B) {
      std::optional<uint32_t> Facts = indexedFacts(B.getNodeAs<CallExpr>("call")->getDirectCallee());
      return Facts && (*Facts & FunctionSummary::Accelerator);
    });
  return P->ShowsAccelerator[Fn] = Shows;
}

bool AutogradModel::climbCallers(
    const Stmt *S, unsigned Depth,
    llvm::function_ref<bool(ArrayRef<const Stmt *>, unsigned, const FunctionDecl *&)> Visit,
    llvm::function_ref<bool(const FunctionDecl *, unsigned, ArrayRef<const Stmt *>)> Beyond) {
  llvm::SmallVector<const Stmt *, 4> Path;
  std::function<bool(const Stmt *, unsigned)> Climb = [&](const Stmt *From, unsigned Left) {
    Path.push_back(From);
    auto Leave = llvm::make_scope_exit([&] { Path.pop_back(); });
    const FunctionDecl *Up = nullptr;
    if (Visit(Path, Left, Up))
      return true;
    if (!Up || Left == 0)
      return false;
    for (const CallExpr *Call : callersOf(Up))
      if (Climb(Call, Left - 1))
        return true;
    return Beyond && Beyond(Up, Left, Path);
  };
  return S && Climb(S, Depth);
}

bool AutogradModel::mayUseAccelerator(const Stmt *S) {
  llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
  auto From = [&](const FunctionDecl *Start) {
    return Start && climbCallers(S, Opts.CallDepth + 1,
                                 [&](ArrayRef<const Stmt *> Path, unsigned, const FunctionDecl *&Up) {
                                   Up = Path.size() == 1 ? Start : outermostFunction(Path.back());
                                   if (!Up || !Seen.insert(Up).second)
                                     return Up = nullptr, false;
                                   return showsAccelerator(Up);
                                 });
  };
  // A lambda sees the devices of the function it is written in and of the code that calls it
  // (a training step handed to a batch loop).
  const FunctionDecl *Own = S ? enclosingFunction(S, Ctx) : nullptr;
  return S && (From(outermostFunction(S)) || (Own && isLambdaCallOperator(Own) && From(Own)));
}

const Expr *AutogradModel::hostTensorSource(const Expr *E, const HostTensorQuery &Q) {
  HostWalk W(*this, Q);
  return W.onHost(E, 0) ? W.Source : nullptr;
}

} // namespace torchtidy
