#include "HostDeviceCopyInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

enum class Target { None, Host, Device };

const Expr *spelled(const Expr *E) { return E ? E->IgnoreUnlessSpelledInSource() : nullptr; }

/// What a `.to(...)` / `.cuda()` / `.cpu()` call does: a device move to the host or to the
/// accelerator (a device not known here counts as one), or nothing this check cares about.
Target moveTarget(const CXXMemberCallExpr *Call, ASTContext &Ctx) {
  std::optional<DeviceKind> To = deviceMoveOf(Call, Ctx);
  return !To ? Target::None : *To == DeviceKind::Host ? Target::Host : Target::Device;
}

/// The host factory whose tensor \p E is in this iteration (AutogradModel::hostTensorSource, a
/// fill the device could make): made in \p Scope (the loop's body, or the body of a function
/// called on every iteration) or in a function called there. Null otherwise.
const Expr *hostFactoryOf(const Expr *E, const Stmt *Scope, const Stmt *Loop, AutogradModel &Model) {
  HostTensorQuery Q;
  Q.DeviceMakeable = true;
  Q.Scope = Scope;
  Q.Loop = Loop;
  return Model.hostTensorSource(E, Q);
}

std::string nameOf(const ValueDecl *D) { return D ? D->getNameAsString() : std::string(); }

constexpr const char *HostFactoryMessage = "tensor created on the host and copied to the device on every iteration; "
                                           "consider creating it on the device with 'torch::TensorOptions().device(...)'";

} // namespace

void HostDeviceCopyInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Move = cxxMemberCallExpr(unless(matchers::isExpansionInSystemHeader()),
                                callee(cxxMethodDecl(hasAnyName("to", "cuda", "cpu"))));
  // Moves outside any loop too: a helper called on every iteration (checkCalled).
  Finder->addMatcher(stmt(anyOf(cxxMemberCallExpr(Move, matchers::tensorMethodCall({"to", "cuda", "cpu"})),
                                cxxMemberCallExpr(Move, matchers::moduleMethodCall({"to", "cuda", "cpu"}))))
                         .bind("move"),
                     this);
}

void HostDeviceCopyInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("move");
  if (!Call || Call->getBeginLoc().isMacroID())
    return;
  const Stmt *Loop = Model.enclosingLoop(Call);
  Target T = moveTarget(Call, Ctx);
  if (!Loop && T == Target::Device)
    return checkCalled(Call, Model);
  // A copy under `if (i % k == 0)` (a snapshot every k steps) is not per-iteration.
  if (!Loop || T == Target::None || Model.everyNth(Call, Loop) > 1)
    return;
  const Expr *Object = spelled(Call->getImplicitObjectArgument());
  SourceLocation Loc = Call->getExprLoc();
  const char *Where = T == Target::Host ? "host" : "device";

  auto noteLoop = [&] { diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note); };
  auto noteDecl = [&](const ValueDecl *D) {
    diag(D->getLocation(), "'%0' is declared here", DiagnosticIDs::Note) << nameOf(D);
  };

  if (isModuleType(Call->getImplicitObjectArgument()->getType()) &&
      !isTensorType(Call->getImplicitObjectArgument()->getType())) {
    const ValueDecl *D = Model.invariantEntity(Object, Loop);
    if (!D)
      return;
    diag(Loc, "module '%0' is moved to the %1 on every iteration; consider moving it once before the loop")
        << nameOf(D) << Where;
    noteLoop();
    noteDecl(D);
    return;
  }

  if (const ValueDecl *D = Model.invariantEntity(Object, Loop)) {
    diag(Loc, "loop-invariant tensor '%0' is copied to the %1 on every iteration; consider moving it once before the loop")
        << nameOf(D) << Where;
    noteLoop();
    noteDecl(D);
    return;
  }
  if (T != Target::Device)
    return;

  if (const Expr *Source = hostFactoryOf(Object, loopBody(Loop), Loop, Model)) {
    diag(Loc, HostFactoryMessage);
    noteLoop();
    // Made by a function the loop calls (its body here, or another TU's by the project index).
    if (!isWithin(Source->getBeginLoc(), Loop->getSourceRange(), Ctx.getSourceManager()) ||
        !hostFactoryCall(Source, Ctx))
      diag(Source->getBeginLoc(), "made on the host here", DiagnosticIDs::Note);
    return;
  }

  // A tensor computed in this iteration from a host copy `x.cpu()` / `x.to(kCPU)` on every path.
  auto HostCopy = [&](const Expr *E) {
    const auto *C = dyn_cast<CXXMemberCallExpr>(E);
    return C && isTensorMethod(C->getMethodDecl(), {"cpu", "to"}) && moveTarget(C, Ctx) == Target::Host;
  };
  HostTensorQuery Copied;
  Copied.Factories = false;
  Copied.OnHost = HostCopy;
  Copied.Scope = loopBody(Loop);
  if (const auto *Copy = dyn_cast_or_null<CXXMemberCallExpr>(Model.hostTensorSource(Object, Copied))) {
    diag(Loc, "tensor makes a device -> host -> device round trip on every iteration; "
              "consider keeping it on the device");
    diag(Copy->getExprLoc(), "copied to the host here", DiagnosticIDs::Note);
    noteLoop();
  }
}

void HostDeviceCopyInLoopCheck::checkCalled(const CXXMemberCallExpr *Call, AutogradModel &Model) {
  // A tensor the function makes on the host on each call and moves to the device, in a
  // function that a training loop (here or in another TU) calls on every iteration.
  const FunctionDecl *Fn = enclosingFunction(Call, Model.context());
  if (!Fn || !Fn->hasBody() || !hostFactoryOf(Call->getImplicitObjectArgument(), Fn->getBody(), nullptr, Model))
    return;
  std::optional<PerIteration> Hot = Model.perIterationLoop(
      Call, {LoopEventKind::Forward, LoopEventKind::Backward, LoopEventKind::Step}, /*AcrossTUs=*/true);
  if (!Hot)
    return;
  diag(Call->getExprLoc(), HostFactoryMessage);
  TorchCheck::noteLoop(*Hot, "iteration");
}

} // namespace torchtidy
