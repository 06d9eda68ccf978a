// The grad-mode layer: whether autograd records where a statement runs (guards, GradMode
// switches, guarded callers, functions handed over), and on which thread it runs.

#include "utils/AutogradModel.h"
#include "utils/AutogradModelImpl.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/SourceManager.h"

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
  const CXXRecordDecl *RD = recordOf(T);
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

/// The call running \p Callable (a lambda, or a reference to a function or closure variable) on
/// another thread, where grad mode starts on whatever the creating thread's guards say:
/// `std::thread`/`jthread` (also emplaced or made by make_unique), `std::async`, a pool's submit
/// (names::ThreadPoolSubmitMethods), a cpp-httplib handler. (at::launch copies grad mode.)
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
  DynTypedNode N = CallOperator->getBody() ? DynTypedNode::create(*CallOperator->getBody()) : DynTypedNode();
  while (!N.getNodeKind().isNone() && !N.get<LambdaExpr>())
    N = parentOf(N, Ctx);
  return N.get<LambdaExpr>() ? valueUser(N.get<LambdaExpr>(), Ctx).get<VarDecl>() : nullptr;
}

} // namespace

/// The nearest guard in an enclosing block decides; then, at each function's boundary (a lambda
/// continues into its definition), an earlier GradMode switch, a guarded caller, or a guarded
/// place that hands the function over.
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
      FD = LE->getCallOperator();
      if (const Expr *Launch = handedToThread(FD, LE))
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
      if (!LE && calledGradOffElsewhere(FD))
        return {GradMode::Off, nullptr};
    }
    // A lambda's body also runs where it is defined: guards around the definition count.
    if (LE)
      continue;
    return {GradMode::On, nullptr};
  }
  return {GradMode::On, nullptr};
}

bool AutogradModel::calledGradOffElsewhere(const FunctionDecl *FD) {
  if (!Index || isLambdaCallOperator(FD))
    return false;
  // A virtual call through a base method may run FD: its calls count too. A method of a
  // library's class may be called by the library, in any grad mode.
  llvm::SmallVector<const FunctionDecl *, 4> Called{FD};
  for (size_t I = 0; I < Called.size(); ++I) {
    if (!callersOf(Called[I]).empty() || !handedOver(Called[I]).empty() || isInSystemHeader(Called[I]))
      return false;
    if (const auto *MD = dyn_cast<CXXMethodDecl>(Called[I]))
      for (const CXXMethodDecl *Base : MD->overridden_methods())
        if (!llvm::is_contained(Called, Base))
          Called.push_back(Base);
  }
  // Asked last, so that only an answer that decides is recorded.
  bool Off = false;
  for (const FunctionDecl *F : Called) {
    std::string USR = usrOf(F);
    std::optional<bool> AllOff = USR.empty() ? std::nullopt : Index->gradOffAtCalls(USR);
    if (AllOff && !*AllOff)
      return false;
    Off |= AllOff.value_or(false);
  }
  return Off;
}

/// The references handing \p FD over rather than calling it (`model->apply(init_weights)`,
/// `std::thread(worker)`): to the function, or to the variable holding a lambda's closure.
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
      // Direct calls are judged through callersOf.
      const auto *Cast = parentOf(Use, Ctx).get<ImplicitCastExpr>();
      const auto *Call = Cast && Cast->getCastKind() == CK_FunctionToPointerDecay ? parentOf(Cast, Ctx).get<CallExpr>()
                                                                                  : nullptr;
      if (!Call || Call->getCallee()->IgnoreParenImpCasts() != Use)
        Uses.push_back(Use);
    }
  });
  // The map may have grown meanwhile: look the slot up again.
  return P->HandedOver[FD] = std::move(Uses);
}

const Expr *AutogradModel::handedToThread(const FunctionDecl *FD, const LambdaExpr *LE) {
  if (const Expr *Launch = LE ? threadLaunching(LE, Ctx) : nullptr)
    return Launch;
  for (const DeclRefExpr *Use : handedOver(FD))
    if (const Expr *Launch = threadLaunching(Use, Ctx))
      return Launch;
  return nullptr;
}

/// A function handed over runs where it is handed over: the first such use under no-grad
/// (unless handed to another thread).
const Stmt *AutogradModel::handedOverUnderNoGrad(const FunctionDecl *FD, unsigned Depth) {
  // Null while it is computed: a recursive question answers "none".
  if (auto [It, Inserted] = P->HandedOverUnderNoGrad.try_emplace(FD, nullptr); !Inserted)
    return It->second;
  for (const DeclRefExpr *Use : handedOver(FD))
    if (!threadLaunching(Use, Ctx) && gradModeIn(Use, Depth).Mode == GradMode::Off)
      return P->HandedOverUnderNoGrad[FD] = Use;
  return nullptr;
}

const Expr *AutogradModel::threadLaunchOf(const Stmt *S) {
  const Expr *Launch = nullptr;
  climbCallers(S, Opts.CallDepth, [&](ArrayRef<const Stmt *> Path, unsigned, const FunctionDecl *&Up) {
    for (DynTypedNode N = parentOf(DynTypedNode::create(*Path.back()), Ctx); !N.getNodeKind().isNone();
         N = parentOf(N, Ctx)) {
      const auto *LE = N.get<LambdaExpr>();
      const FunctionDecl *FD = LE ? LE->getCallOperator() : N.get<FunctionDecl>();
      if (FD && (Launch = handedToThread(FD, LE)))
        return true;
      // A lambda runs on the thread of the code around it.
      if (FD && !isLambdaCallOperator(FD)) {
        Up = FD;
        return false;
      }
    }
    return false;
  });
  return Launch;
}

GradModeFact AutogradModel::gradModeAt(const Stmt *S) {
  if (auto It = P->GradModes.find(S); S && It != P->GradModes.end())
    return It->second;
  return S ? P->GradModes[S] = gradModeIn(S, Opts.CallDepth) : GradModeFact();
}

} // namespace torchtidy
