#include "HostDeviceCopyInLoopCheck.h"

#include "utils/TorchMatchers.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

enum class Target { None, Host, Device };

/// Host factories whose result is the same every iteration (up to randomness): creating
/// them on the device directly avoids the copy. from_blob and *_like are excluded: the first
/// wraps per-iteration host data, the second already inherits the source's device.
bool isHostFactory(StringRef Name) {
  static const llvm::StringSet<> Names = {
      "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
      "range", "linspace", "logspace", "eye", "tensor", "normal", "scalar_tensor"};
  return Names.contains(Name);
}

const Expr *strip(const Expr *E) { return E ? E->IgnoreUnlessSpelledInSource() : nullptr; }

/// `model->` on a std::shared_ptr or ModuleHolder, and `(*model).`, name `model` itself.
const Expr *throughSmartPointer(const Expr *E) {
  E = strip(E);
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E);
      Op && (Op->getOperator() == OO_Arrow || Op->getOperator() == OO_Star) && Op->getNumArgs() == 1)
    return strip(Op->getArg(0));
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref)
    return strip(UO->getSubExpr());
  return E;
}

/// Where a device argument points: kCPU is the host, any other device the accelerator.
Target deviceTarget(const Expr *Arg, ASTContext &Ctx) {
  const Expr *E = Arg->IgnoreImplicit();
  // Device(kCPU) / Device(torch::kCUDA, 0): look at the DeviceType inside.
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() >= 1 &&
      recordOf(Construct->getType()) && isSameOrDerivedFrom(recordOf(Construct->getType()), names::Device))
    E = Construct->getArg(0)->IgnoreImplicit();
  const auto *Enum = E->getType()->getAs<EnumType>();
  if (Enum && Enum->getDecl()->getName() == "DeviceType") {
    Expr::EvalResult R;
    if (!E->isValueDependent() && E->EvaluateAsInt(R, Ctx))
      return R.Val.getInt() == 0 /* DeviceType::CPU */ ? Target::Host : Target::Device;
  }
  return Target::Device;
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
  SourceRange R = Loop->getSourceRange();
  SourceLocation L = D->getLocation();
  return !SM.isBeforeInTranslationUnit(L, R.getBegin()) && !SM.isBeforeInTranslationUnit(R.getEnd(), L);
}

class Invariance {
public:
  Invariance(const Stmt *Loop, ASTContext &Ctx)
      : Loop(Loop), Body(loopBody(Loop)), Ctx(Ctx) {}

  /// The variable or field \p E names when it holds the same value on every iteration:
  /// declared outside the loop and never written in it.
  const ValueDecl *invariantEntity(const Expr *E) {
    E = throughSmartPointer(E);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (!VD || declaredInside(VD, Loop, Ctx.getSourceManager()))
        return nullptr;
      // Not ExprMutationAnalyzer: it counts a module's non-const operator-> and a lambda's
      // by-reference capture as writes, while only a new value makes the copy necessary.
      return written(VD) ? nullptr : VD;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      const auto *FD = dyn_cast<FieldDecl>(ME->getMemberDecl());
      if (!FD || fieldAssigned(FD))
        return nullptr;
      const Expr *Base = strip(ME->getBase());
      if (isa<CXXThisExpr>(Base) || invariantEntity(Base))
        return FD;
    }
    return nullptr;
  }

  /// Every variable the expression reads is invariant (literals and constants are).
  bool allInputsInvariant(const Expr *E) {
    auto Refs = match(findAll(expr(anyOf(declRefExpr(to(varDecl())), memberExpr())).bind("r")), *E, Ctx);
    for (const BoundNodes &B : Refs) {
      const auto *R = B.getNodeAs<Expr>("r");
      if (isa<MemberExpr>(R) && !isa<FieldDecl>(cast<MemberExpr>(R)->getMemberDecl()))
        continue;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(R);
          DRE && cast<VarDecl>(DRE->getDecl())->getType().isConstQualified())
        continue;
      if (!invariantEntity(R))
        return false;
    }
    return true;
  }

private:
  /// Assigned, or passed by non-const reference (which may assign), in the loop body.
  bool written(const VarDecl *VD) {
    auto Ref = ignoringImplicit(declRefExpr(to(varDecl(equalsNode(VD)))));
    auto NonConstRefParam =
        parmVarDecl(hasType(referenceType(pointee(unless(isConstQualified())))));
    auto Writes = match(
        findAll(expr(anyOf(cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Ref)),
                           binaryOperator(isAssignmentOperator(), hasLHS(Ref)),
                           callExpr(forEachArgumentWithParam(Ref, NonConstRefParam))))
                    .bind("w")),
        *Body, Ctx);
    return !Writes.empty();
  }

  bool fieldAssigned(const FieldDecl *FD) {
    auto Writes = match(
        findAll(expr(anyOf(
            cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, ignoringImplicit(memberExpr(member(equalsNode(FD)))))),
            binaryOperator(isAssignmentOperator(), hasLHS(ignoringImplicit(memberExpr(member(equalsNode(FD)))))))).bind("w")),
        *Body, Ctx);
    return !Writes.empty();
  }

  const Stmt *Loop;
  const Stmt *Body;
  ASTContext &Ctx;
};

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
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("move");
  if (!Call || Call->getBeginLoc().isMacroID())
    return;
  const Stmt *Loop = enclosingLoop(Call, Ctx);
  if (!Loop)
    return;
  Target T = moveTarget(Call, Ctx);
  if (T == Target::None)
    return;
  const Expr *Object = strip(Call->getImplicitObjectArgument());
  Invariance Inv(Loop, Ctx);
  SourceLocation Loc = Call->getExprLoc();

  auto noteLoop = [&] { diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note); };
  auto noteDecl = [&](const ValueDecl *D) {
    diag(D->getLocation(), "'%0' is declared here", DiagnosticIDs::Note) << nameOf(D);
  };

  if (isModuleType(Call->getImplicitObjectArgument()->getType()) &&
      !isTensorType(Call->getImplicitObjectArgument()->getType())) {
    const ValueDecl *D = Inv.invariantEntity(Object);
    if (!D)
      return;
    diag(Loc, "module '%0' is moved to the %1 on every iteration; consider moving it once before the loop")
        << nameOf(D) << (T == Target::Host ? "host" : "device");
    noteLoop();
    noteDecl(D);
    return;
  }

  if (const ValueDecl *D = Inv.invariantEntity(Object)) {
    diag(Loc, "loop-invariant tensor '%0' is copied to the %1 on every iteration; consider moving it once before the loop")
        << nameOf(D) << (T == Target::Host ? "host" : "device");
    noteLoop();
    noteDecl(D);
    return;
  }
  if (T != Target::Device)
    return;

  if (const auto *Factory = dyn_cast<CallExpr>(Object);
      Factory && !isa<CXXMemberCallExpr>(Factory) && !isa<CXXOperatorCallExpr>(Factory)) {
    const FunctionDecl *FD = Factory->getDirectCallee();
    // Sizes and fill values may change per batch (torch::ones({n})): the tensor can still be
    // made on the device. torch::tensor(values) wraps host data, which only a copy moves.
    if (FD && FD->getIdentifier() && isInSystemHeader(FD) && isHostFactory(FD->getName()) &&
        (FD->getName() != "tensor" || Inv.allInputsInvariant(Factory))) {
      diag(Loc, "tensor created on the host and copied to the device on every iteration; "
                "consider creating it on the device with 'torch::TensorOptions().device(...)'");
      noteLoop();
      return;
    }
  }

  if (const CXXMemberCallExpr *HostCopy = hostCopyInChain(Object, Loop, Ctx)) {
    diag(Loc, "tensor makes a device -> host -> device round trip on every iteration; "
              "consider keeping it on the device");
    diag(HostCopy->getExprLoc(), "copied to the host here", DiagnosticIDs::Note);
    noteLoop();
  }
}

} // namespace torchtidy
