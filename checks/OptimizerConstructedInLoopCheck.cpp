#include "OptimizerConstructedInLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

const CXXRecordDecl *optimizerClass(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  return RD && isSameOrDerivedFrom(RD, names::Optimizer) ? RD : nullptr;
}

/// `torch::optim::Adam opt(...)`, `Adam(...)`, `new Adam(...)`, `std::make_unique<Adam>(...)`.
AST_MATCHER(Expr, createsOptimizer) {
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(&Node))
    return optimizerClass(Node.getType()) && !Construct->getConstructor()->isCopyOrMoveConstructor();
  if (isa<CXXNewExpr>(Node))
    return isOptimizerType(Node.getType());
  const auto *Call = dyn_cast<CallExpr>(&Node);
  const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
  return Callee && Callee->isInStdNamespace() && Callee->getIdentifier() &&
         (Callee->getName() == "make_unique" || Callee->getName() == "make_shared") &&
         isOptimizerType(Node.getType());
}

/// The optimizer class \p Create makes (for std::make_unique<Adam>, Adam).
const CXXRecordDecl *createdClass(const Expr *Create) {
  if (const auto *New = dyn_cast<CXXNewExpr>(Create))
    return optimizerClass(New->getAllocatedType());
  if (const CXXRecordDecl *RD = optimizerClass(Create->getType()))
    return RD;
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(recordOf(Create->getType()));
  if (!Spec || Spec->getTemplateArgs().size() == 0 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return nullptr;
  return optimizerClass(Spec->getTemplateArgs()[0].getAsType());
}

/// SGD without momentum keeps no state, so rebuilding it loses nothing. Momentum is seen in
/// the constructor's arguments or in the initializer of an options variable they name.
bool isStatelessSGD(const Expr *Create, ASTContext &Ctx) {
  const CXXRecordDecl *RD = createdClass(Create);
  if (!RD || RD->getName() != "SGD")
    return false;
  auto Momentum = cxxMemberCallExpr(callee(cxxMethodDecl(hasName("momentum"))));
  auto OptionsVar = declRefExpr(to(varDecl(hasInitializer(hasDescendant(Momentum)))));
  return match(expr(hasDescendant(expr(anyOf(Momentum, OptionsVar)))), *Create, Ctx).empty();
}

/// The model behind the optimizer's parameters is built anew in \p Loop (a hyper-parameter
/// sweep, a cross-validation fold): then so must the optimizer be.
bool modelRebuiltIn(const Expr *Create, const Stmt *Loop, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  auto Inside = [&](SourceLocation L) { return isWithin(L, Loop->getSourceRange(), SM); };
  auto ModuleRef = declRefExpr(to(varDecl(hasType(matchers::moduleType())).bind("module")));
  auto Refs = match(findAll(expr(anyOf(ModuleRef, declRefExpr(to(varDecl(hasInitializer(
                                                     hasDescendant(ModuleRef)))))))),
                    *Create, Ctx);
  for (const auto &Ref : Refs) {
    const auto *Module = Ref.getNodeAs<VarDecl>("module");
    if (!Module)
      continue;
    if (Inside(Module->getLocation()))
      return true;
    auto IsModule = ignoringParenImpCasts(declRefExpr(to(equalsNode(Module))));
    auto Assigned = match(findAll(expr(anyOf(binaryOperator(isAssignmentOperator(), hasLHS(IsModule)),
                                             cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, IsModule))))
                                      .bind("assign")),
                          *Loop, Ctx);
    if (!Assigned.empty())
      return true;
  }
  return false;
}

} // namespace

void OptimizerConstructedInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(expr(unless(matchers::isExpansionInSystemHeader()), createsOptimizer()).bind("create"), this);
}

void OptimizerConstructedInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Create = Result.Nodes.getNodeAs<Expr>("create");
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const FunctionDecl *Fn = enclosingFunction(Create, Ctx);
  if (Create->getBeginLoc().isMacroID() || !Fn ||
      (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  const VarDecl *Holder = receivingVariable(Create, Ctx);
  if (!Holder || isStatelessSGD(Create, Ctx))
    return;

  // The loop that constructs the optimizer every iteration: around it in this function, or
  // around a call of this function when it builds its own optimizer for one step.
  const Stmt *Loop = Model.enclosingLoop(Create);
  const CallExpr *ViaCall = nullptr;
  if (!Loop) {
    for (const LoopSite &Site : Model.callsInLoops(Fn)) {
      if (Model.everyNth(Site.Via, Site.Loop) == 1) {
        Loop = Site.Loop;
        ViaCall = Site.Via;
        break;
      }
    }
  } else if (Model.everyNth(Create, Loop) != 1) {
    return; // rebuilt every k steps or on a condition: a schedule, not every step
  }
  if (!Loop || modelRebuiltIn(Create, ViaCall ? Fn->getBody() : Loop, Ctx))
    return;

  // It must be stepped in that same iteration, not in a loop nested inside it (an optimizer
  // rebuilt per epoch and stepped per batch keeps its state for a whole epoch).
  const Stmt *Scope = ViaCall ? Fn->getBody() : loopBody(Loop);
  const Stmt *SameLevel = ViaCall ? nullptr : Loop;
  auto UsesHolder = expr(ignoringParenImpCasts(anyOf(
      declRefExpr(to(equalsNode(Holder))),
      cxxOperatorCallExpr(hasArgument(0, ignoringParenImpCasts(declRefExpr(to(equalsNode(Holder)))))),
      unaryOperator(hasUnaryOperand(ignoringParenImpCasts(declRefExpr(to(equalsNode(Holder)))))))));
  auto Steppers = match(
      findAll(callExpr(anyOf(cxxMemberCallExpr(matchers::optimizerStepCall(), on(UsesHolder)),
                             callExpr(hasAnyArgument(UsesHolder), unless(cxxMemberCallExpr()))))
                  .bind("step")),
      *Scope, Ctx);
  bool Stepped = llvm::any_of(Steppers, [&](const BoundNodes &N) {
    const auto *Call = N.getNodeAs<CallExpr>("step");
    if (Model.enclosingLoop(Call) != SameLevel)
      return false;
    if (isa<CXXMemberCallExpr>(Call))
      return true;
    const Stmt *Inner = Model.findReachable(Call, matchers::optimizerStepCall());
    return Inner && Inner != Call && !Model.enclosingLoop(Inner);
  });
  if (!Stepped)
    return;

  diag(Create->getBeginLoc(),
       "optimizer '%0' is constructed in every iteration of a loop that steps it: its state "
       "(moment estimates, momentum buffers, step count) starts over at every step; consider "
       "constructing it once before the loop")
      << Holder->getName();
  if (ViaCall)
    diag(ViaCall->getBeginLoc(), "the function that constructs it is called in every iteration of this loop",
         DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
  // `torch::optim::Adam opt(...);` in the loop's body: construct it before the loop.
  const DeclStmt *Declaration = fixits::declarationOf(Create, Ctx);
  if (!ViaCall && Declaration)
    if (fixits::Fixes Fix = fixits::hoistBefore(Declaration, Loop, Ctx); !Fix.empty())
      diag(Declaration->getBeginLoc(), "construct it once, before the loop", DiagnosticIDs::Note) << Fix;
}

} // namespace torchtidy
