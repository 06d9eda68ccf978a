#include "HostDeviceCopyInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

enum class Target { None, Host, Device };

const Expr *strip(const Expr *E) { return E ? E->IgnoreUnlessSpelledInSource() : nullptr; }

/// Where a device argument points: the CPU is the host, any other device (or one not known
/// here) the accelerator.
Target deviceTarget(const Expr *Arg, ASTContext &Ctx) {
  return deviceKind(Arg, Ctx) == DeviceKind::Host ? Target::Host : Target::Device;
}

/// What a `.to(...)` / `.cuda()` / `.cpu()` call does: a device move (and where), or
/// nothing this check cares about (dtype-only conversions, `to(other_tensor)`).
Target moveTarget(const CXXMemberCallExpr *Call, ASTContext &Ctx) {
  StringRef Name = Call->getMethodDecl()->getName();
  if (Name == "cuda")
    return Target::Device;
  if (Name == "cpu")
    return Target::Host;
  if (Name != "to" || Call->getNumArgs() == 0)
    return Target::None;
  const Expr *Arg = Call->getArg(0)->IgnoreImplicit();
  // x.to(device) converts the Device / DeviceType implicitly to TensorOptions.
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Arg);
      Construct && !isa<CXXTemporaryObjectExpr>(Construct) && Construct->getNumArgs() == 1 &&
      isSameOrDerivedFrom(recordOf(Construct->getType()), names::TensorOptions))
    Arg = Construct->getArg(0)->IgnoreImplicit();
  const CXXRecordDecl *RD = recordOf(Arg->getType());
  if (RD && isSameOrDerivedFrom(RD, names::Device))
    return deviceTarget(Arg, Ctx);
  if (const auto *Enum = Arg->getType()->getAs<EnumType>();
      Enum && Enum->getDecl()->getName() == "DeviceType")
    return deviceTarget(Arg, Ctx);
  if (RD && isSameOrDerivedFrom(RD, names::TensorOptions)) {
    // Explicit options move only when they name a device: TensorOptions().device(d).
    auto Dev = match(findAll(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("device")))).bind("d")),
                     *Arg, Ctx);
    if (Dev.empty())
      return Target::None;
    const auto *DevCall = Dev.front().getNodeAs<CXXMemberCallExpr>("d");
    return DevCall->getNumArgs() ? deviceTarget(DevCall->getArg(0), Ctx) : Target::Device;
  }
  return Target::None;
}

bool declaredInside(const Decl *D, const Stmt *Loop, const SourceManager &SM) {
  return isWithin(D->getLocation(), Loop->getSourceRange(), SM);
}

/// The host factory whose tensor \p E is in this iteration: `torch::ones(...)` itself, or
/// through arithmetic with other such tensors and scalars, `.detach()`, dtype conversions and
/// the locals of the loop body. torch::tensor(values) only when `values` is invariant (it wraps
/// host data). Null otherwise.
const CallExpr *hostFactoryOf(const Expr *E, const Stmt *Loop, AutogradModel &Model, unsigned Depth = 0) {
  E = strip(E);
  if (!E || Depth > 6)
    return nullptr;
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
    // Ops that keep a tensor where it is: detaching, dtype conversions, arithmetic, reshaping.
    static const StringRef SameDevice[] = {"detach", "clone", "to", "contiguous", "float", "double", "half",
                                           "long", "mul", "add", "sub", "div", "neg", "abs", "sqrt", "exp",
                                           "log", "pow", "view", "reshape", "expand", "unsqueeze", "squeeze", "t"};
    const CXXMethodDecl *MD = Call->getMethodDecl();
    bool Keeps = MD && MD->getIdentifier() && isTensorMethod(MD, SameDevice) &&
                 moveTarget(Call, Model.context()) == Target::None;
    return Keeps ? hostFactoryOf(Call->getImplicitObjectArgument(), Loop, Model, Depth + 1) : nullptr;
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    // Arithmetic: on the host as long as every tensor operand is (mixed devices would throw).
    const CallExpr *Factory = nullptr;
    for (const Expr *Arg : Op->arguments()) {
      if (!isTensorType(Arg->getType()))
        continue;
      const CallExpr *F = hostFactoryOf(Arg, Loop, Model, Depth + 1);
      if (!F)
        return nullptr;
      Factory = Factory ? Factory : F;
    }
    return Factory;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    bool LoopLocal = VD && VD->getInit() && VD->isLocalVarDecl() &&
                     declaredInside(VD, loopBody(Loop), Model.context().getSourceManager());
    return LoopLocal ? hostFactoryOf(VD->getInit(), Loop, Model, Depth + 1) : nullptr;
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || !isInSystemHeader(FD) || !llvm::is_contained(names::HostFactories, FD->getName()))
    return nullptr;
  return FD->getName() != "tensor" || Model.readsOnlyInvariants(Call, Loop) ? Call : nullptr;
}

/// The host copy `x.cpu()` / `x.to(kCPU)` somewhere in the chain of tensor calls that
/// produced \p E in this iteration (following locals declared in the loop body).
const CXXMemberCallExpr *hostCopyInChain(const Expr *E, const Stmt *Loop, ASTContext &Ctx,
                                          unsigned Depth = 0) {
  E = strip(E);
  if (!E || Depth > 6)
    return nullptr;
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
    if (isTensorMethod(Call->getMethodDecl(), {"cpu", "to"}) && moveTarget(Call, Ctx) == Target::Host)
      return Call;
    if (isTensorMethod(Call->getMethodDecl(), {Call->getMethodDecl()->getName()}))
      return hostCopyInChain(Call->getImplicitObjectArgument(), Loop, Ctx, Depth + 1);
    return nullptr;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (VD && VD->getInit() && VD->isLocalVarDecl() &&
        declaredInside(VD, loopBody(Loop), Ctx.getSourceManager()))
      return hostCopyInChain(VD->getInit(), Loop, Ctx, Depth + 1);
  }
  return nullptr;
}

std::string nameOf(const ValueDecl *D) { return D ? D->getNameAsString() : std::string(); }

} // namespace

void HostDeviceCopyInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Move = cxxMemberCallExpr(
      unless(isExpansionInSystemHeader()),
      callee(cxxMethodDecl(hasAnyName("to", "cuda", "cpu"))),
      hasAncestor(matchers::loopStmt()));
  Finder->addMatcher(
      stmt(anyOf(cxxMemberCallExpr(Move, matchers::tensorMethodCall({"to", "cuda", "cpu"})),
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
  // A copy under `if (i % k == 0)` (a snapshot every k steps) is not per-iteration.
  if (!Loop || T == Target::None || Model.everyNth(Call, Loop) > 1)
    return;
  const Expr *Object = strip(Call->getImplicitObjectArgument());
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

  if (hostFactoryOf(Object, Loop, Model)) {
    diag(Loc, "tensor created on the host and copied to the device on every iteration; "
              "consider creating it on the device with 'torch::TensorOptions().device(...)'");
    noteLoop();
    return;
  }

  if (const CXXMemberCallExpr *HostCopy = hostCopyInChain(Object, Loop, Ctx)) {
    diag(Loc, "tensor makes a device -> host -> device round trip on every iteration; "
              "consider keeping it on the device");
    diag(HostCopy->getExprLoc(), "copied to the host here", DiagnosticIDs::Note);
    noteLoop();
  }
}

} // namespace torchtidy
