#include "FromBlobDanglingCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// The storage a from_blob pointer points into: a local (or by-value parameter) that owns
/// it, or a temporary that dies at the end of the full expression.
struct Buffer {
  const VarDecl *Owner = nullptr;
  const Expr *Temporary = nullptr;
  /// The pointer is an image matrix's `data` field (`mat.data`): such matrices (cv::Mat) share
  /// one reference-counted buffer between copies.
  bool ImageData = false;
};

/// Whether a variable of type \p T owns the memory it hands out: an array or a class held by
/// value that is no view (std::span, std::string_view, c10::ArrayRef) and no tensor.
bool ownsStorage(QualType T) {
  if (T->isReferenceType() || T->isPointerType())
    return false;
  if (T->isConstantArrayType())
    return true;
  const CXXRecordDecl *RD = recordOf(T);
  return RD && !isTensorType(T) && !(RD->getIdentifier() && llvm::is_contained(names::NonOwningViews, RD->getName()));
}

std::optional<Buffer> bufferOf(const Expr *Ptr) {
  // Through casts and offsets: `reinterpret_cast<float *>(bytes.data() + header)`.
  const Expr *E = Ptr->IgnoreParenImpCasts();
  for (unsigned Steps = 0; Steps < 8; ++Steps) {
    if (const auto *Cast = dyn_cast<ExplicitCastExpr>(E))
      E = Cast->getSubExpr()->IgnoreParenImpCasts();
    else if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->isAdditiveOp())
      E = (BO->getLHS()->getType()->isPointerType() ? BO->getLHS() : BO->getRHS())->IgnoreParenImpCasts();
    else
      break;
  }
  const Expr *Object = nullptr;
  bool ImageData = false;
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) { // v.data(), mat.ptr<float>(), p.get()
    const CXXMethodDecl *MD = Call->getMethodDecl();
    if (MD && MD->getIdentifier() && llvm::is_contained(names::BufferAccessors, MD->getName()))
      Object = Call->getImplicitObjectArgument();
  } else if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow()) { // mat.data
    Object = ME->getBase();
    ImageData = true;
  } else if (const auto *Addr = dyn_cast<UnaryOperator>(E); Addr && Addr->getOpcode() == UO_AddrOf) { // &v[0]
    const Expr *Sub = Addr->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Sub); Op && Op->getOperator() == OO_Subscript)
      Object = Op->getArg(0);
    else if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Sub))
      Object = AS->getBase();
  } else if (isa<DeclRefExpr>(E) && E->getType()->isConstantArrayType()) { // float buf[N] decays
    Object = E;
  }
  if (!Object)
    return std::nullopt;
  Object = Object->IgnoreParenImpCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Object)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (VD && VD->hasLocalStorage() && ownsStorage(VD->getType()))
      return Buffer{VD, nullptr, ImageData};
    return std::nullopt;
  }
  if (Object->isPRValue() || isa<MaterializeTemporaryExpr, CXXBindTemporaryExpr>(Object))
    return ownsStorage(Object->getType()) ? std::optional<Buffer>(Buffer{nullptr, Object}) : std::nullopt;
  return std::nullopt;
}

class Escapes {
public:
  Escapes(AutogradModel &M, const Buffer &B) : M(M), Ctx(M.context()), B(B) {
    if (B.Owner)
      Scope = lifetimeScope(B.Owner, Ctx);
  }

  /// Where the tensor \p E (or a view of it) leaves the buffer's lifetime, or null.
  const Stmt *from(const Expr *E, unsigned Depth = 0) {
    // Views keep pointing into the buffer, every other method copies.
    ValueDestination D = M.destinationOf(E, Through::Aggregates, [](const CXXMemberCallExpr *Call) {
      const CXXMethodDecl *Method = Call->getMethodDecl();
      return Method && Method->getIdentifier() && llvm::is_contained(names::ViewOps, Method->getName());
    });
    if (D.K == Destination::Returned)
      return D.Site;
    if (D.K == Destination::Variable)
      return Depth < 2 ? throughVariable(D.Var, Depth) : nullptr;
    // Stored only into a container of tensors (the model's containerStore): a user method of the
    // same name may copy the tensor (a rollout storage's `insert(t)` doing `buf.copy_(t)`).
    bool Keeps = D.K == Destination::Assigned || (D.K == Destination::Stored && isa<CXXMemberCallExpr>(D.Site) &&
                                                  M.containerStore(cast<Expr>(D.Site)));
    return Keeps && outlives(D.Target, D.Site) ? D.Site : nullptr;
  }

private:
  /// `auto t = torch::from_blob(...)`: where `t` goes.
  const Stmt *throughVariable(const VarDecl *VD, unsigned Depth) {
    if (!VD->hasLocalStorage())
      return VD->getInit();
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (!FD || !FD->hasBody())
      return nullptr;
    // Reassigned (t = t.clone()): what it holds later is not known here.
    auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
    if (!match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, ignoringImplicit(Ref)))),
               *FD->getBody(), Ctx)
             .empty())
      return nullptr;
    for (const BoundNodes &Use : match(findAll(Ref.bind("use")), *FD->getBody(), Ctx)) {
      const auto *UseExpr = Use.getNodeAs<Expr>("use");
      // A temporary buffer is gone once the declaration's full expression ends.
      if (B.Temporary && M.mayRunBefore(VD->getInit(), UseExpr))
        return UseExpr;
      if (const Stmt *Site = from(UseExpr, Depth + 1))
        return Site;
    }
    return nullptr;
  }

  /// Whether the tensor stored in \p Dest at \p Site is still there when the buffer is gone.
  bool outlives(const Expr *Dest, const Stmt *Site) {
    if (B.Temporary)
      return true;
    Dest = Dest->IgnoreParenImpCasts();
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Dest); Op && Op->getOperator() == OO_Subscript)
      Dest = Op->getArg(0)->IgnoreParenImpCasts();
    const ValueDecl *D = namedDecl(Dest);
    if (isa_and_nonnull<FieldDecl>(D))
      return true;
    const auto *VD = dyn_cast_or_null<VarDecl>(D);
    if (!VD || !Scope)
      return false;
    if (!VD->hasLocalStorage() || VD->getType()->isReferenceType())
      return true;
    const SourceManager &SM = Ctx.getSourceManager();
    if (isWithin(VD->getLocation(), Scope->getSourceRange(), SM)) // dies with the buffer, or before it
      return false;
    // Read after the buffer's scope is left: after it, or earlier in a loop around it (the
    // next iteration).
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (!FD || !FD->hasBody())
      return false;
    bool InLoop = M.enclosingLoop(Scope) != nullptr;
    for (const BoundNodes &Use : match(findAll(declRefExpr(to(varDecl(equalsNode(VD)))).bind("use")), *FD->getBody(), Ctx)) {
      const auto *UseExpr = Use.getNodeAs<Expr>("use");
      if (M.mayRunBefore(Site, UseExpr) &&
          (!isWithin(UseExpr->getBeginLoc(), Scope->getSourceRange(), SM) ||
           (InLoop && SM.isBeforeInTranslationUnit(UseExpr->getBeginLoc(), Site->getBeginLoc()))))
        return true;
    }
    return false;
  }

  AutogradModel &M;
  ASTContext &Ctx;
  Buffer B;
  const Stmt *Scope = nullptr;
};
/// `.clone()` on the from_blob call when \p Site keeps its result, no view between (a push_back's
/// argument, an assignment's value, a returned value, in a pair): nothing else sees the shared memory,
/// so a copy changes nothing but its lifetime.
fixits::Fixes cloneFix(const CallExpr *Blob, const Stmt *Site, AutogradModel &M) {
  return M.destinationOf(Blob).Site == Site ? fixits::appendCall(Blob, ".clone()", M.context()) : fixits::Fixes();
}
} // namespace

void FromBlobDanglingCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()), callee(functionDecl(hasName("from_blob"))),
                              hasArgument(0, expr().bind("ptr")))
                         .bind("blob"),
                     this);
}

void FromBlobDanglingCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Blob = Result.Nodes.getNodeAs<CallExpr>("blob");
  if (Blob->getBeginLoc().isMacroID() || !isInSystemHeader(Blob->getDirectCallee()))
    return;
  std::optional<Buffer> B = bufferOf(Result.Nodes.getNodeAs<Expr>("ptr"));
  if (!B)
    return;
  // `out.img = mat;` shares mat's buffer with something that outlives mat.
  const FunctionDecl *Fn = enclosingFunction(Blob, *Result.Context);
  if (B->ImageData && Fn && Fn->hasBody() &&
      !match(findAll(cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, ignoringParenImpCasts(memberExpr())),
                                         hasArgument(1, ignoringParenImpCasts(declRefExpr(to(equalsNode(B->Owner))))))),
             *Fn->getBody(), *Result.Context)
           .empty())
    return;
  AutogradModel &M = model(*Result.Context);
  const Stmt *Site = Escapes(M, *B).from(Blob);
  if (!Site)
    return;
  std::string Name = B->Owner ? "'" + B->Owner->getName().str() + "'" : std::string("a temporary");
  diag(Blob->getBeginLoc(),
       "tensor from torch::from_blob over %0 outlives it: the tensor does not own that memory and reads "
       "it after it is freed; consider '.clone()' to give the tensor its own copy")
      << Name << cloneFix(Blob, Site, M);
  diag(Site->getBeginLoc(), "the tensor is kept here", DiagnosticIDs::Note);
  if (B->Owner)
    diag(B->Owner->getLocation(), "%0 is destroyed at the end of its scope", DiagnosticIDs::Note) << Name;
}

} // namespace torchtidy
