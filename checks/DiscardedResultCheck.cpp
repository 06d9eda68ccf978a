#include "DiscardedResultCheck.h"

#include "utils/AutogradModel.h"

#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

bool declaredOnTensor(const Decl *D) {
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(D);
  if (!MD)
    return false;
  std::string Class = MD->getParent()->getQualifiedNameAsString();
  return Class == "at::Tensor" || Class == "at::TensorBase";
}

/// A tensor method whose only effect is its result: it returns a new tensor by value (an
/// in-place method returns a reference to its object and ends in '_'; names starting with
/// '_' are LibTorch internals).
bool isOutOfPlaceTensorMethod(const Decl *D) {
  if (!declaredOnTensor(D))
    return false;
  const auto *MD = cast<CXXMethodDecl>(D);
  StringRef Name = MD->getIdentifier() ? MD->getName() : "";
  QualType Result = MD->getReturnType();
  return !Name.empty() && !Name.starts_with("_") && !Name.ends_with("_") &&
         !Result->isReferenceType() && recordOf(Result) &&
         isSameOrDerivedFrom(recordOf(Result), names::TensorBase);
}

/// The out-of-place tensor method \p Shape calls: the callee, or for a call a template
/// leaves unresolved (`x.to(device)` with a dependent device on a tensor `x`), the first of
/// the tensor's methods of that name if every one of them is out of place.
const CXXMethodDecl *outOfPlaceMethod(const CallShape &Shape) {
  if (!Shape.Object || Shape.Name.empty())
    return nullptr;
  if (Shape.Resolved)
    return isOutOfPlaceTensorMethod(Shape.Callee) ? cast<CXXMethodDecl>(Shape.Callee) : nullptr;
  const CXXRecordDecl *Tensor = recordOf(Shape.Object->getType());
  if (Shape.Object->isTypeDependent() || !isTensorType(Shape.Object->getType()))
    return nullptr;
  auto Candidates = Tensor->lookup(&Tensor->getASTContext().Idents.get(Shape.Name));
  if (Candidates.empty() || !llvm::all_of(Candidates, [](const NamedDecl *D) {
        return isOutOfPlaceTensorMethod(D->getAsFunction());
      }))
    return nullptr;
  return cast<CXXMethodDecl>(Candidates.front()->getAsFunction());
}

/// Whether \p Object denotes a tensor that exists apart from the statement (a variable, a
/// member, an element or a view of one), so the call was meant to change it. A temporary
/// made for the statement (`torch::zeros({1}).cuda();` to initialise a device) is not.
bool namesExistingTensor(const Expr *Object) {
  Object = Object->IgnoreImplicit()->IgnoreParens();
  if (Object->isGLValue())
    return true;
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Object); MC && declaredOnTensor(MC->getMethodDecl()))
    return namesExistingTensor(MC->getImplicitObjectArgument());
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Object);
      Op && Op->getOperator() == OO_Subscript && isTensorType(Op->getArg(0)->getType()))
    return namesExistingTensor(Op->getArg(0));
  return false;
}

/// A local tensor handle (variable or by-value parameter) that `x = x.op(...)` can rebind
/// without touching any other handle of the same tensor, or a parameter `Tensor &x` through
/// which the caller's handle is rebound (what a caller that hands it over expects changed).
const VarDecl *rebindableLocal(const Expr *Object) {
  const auto *Ref = dyn_cast<DeclRefExpr>(Object->IgnoreParenImpCasts());
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || !VD->hasLocalStorage() || Ref->getType().isConstQualified() ||
      !isTensorType(VD->getType().getNonReferenceType()))
    return nullptr;
  if (VD->getType()->isReferenceType() && !(isa<ParmVarDecl>(VD) && VD->getType()->isLValueReferenceType()))
    return nullptr;
  return VD;
}

/// Whether calling the in-place twin of \p Method on \p Object certainly gives the tensor the
/// value the discarded call computed: the op keeps shape and dtype, and the object is plain
/// data or autograd is off (in place on a leaf that requires grad throws).
bool inPlaceTwinIsSafe(const CXXMethodDecl *Method, const Expr *Object, const Stmt *Site,
                       AutogradModel &Model) {
  if (!llvm::is_contained(names::ShapeAndDtypePreservingOps, Method->getName()))
    return false;
  TensorOrigin Origin = Model.originAt(Object->IgnoreImplicit()).Kind;
  return Origin == TensorOrigin::Data || Origin == TensorOrigin::Detached ||
         Model.gradDisabledAt(Site);
}

} // namespace

void DiscardedResultCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(
      callExpr(unless(matchers::isExpansionInSystemHeader()),
               anyOf(cxxMemberCallExpr(callee(cxxMethodDecl(ofClass(hasAnyName("::at::Tensor", "::at::TensorBase"))))),
                     callExpr(callee(unresolvedMemberExpr()))))
          .bind("call"),
      this);
}

void DiscardedResultCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  if (Call->getBeginLoc().isMacroID())
    return;
  AutogradModel &Model = model(Ctx);
  CallShape Shape = Model.callShape(Call);
  const CXXMethodDecl *Method = outOfPlaceMethod(Shape);
  const Expr *Object = Shape.Object;
  // `(void)` casts say the result is dropped on purpose.
  if (!Method || !namesExistingTensor(Object) ||
      Model.destinationOf(Call, Through::Copies).K != Destination::Discarded)
    return;
  const FunctionDecl *Fn = enclosingFunction(Call, Ctx);
  if (Fn && Fn->isDependentContext() && !isUninstantiatedPattern(Fn))
    return; // its instantiations are analysed instead

  StringRef Name = Method->getName();
  std::string Twin = (Name + "_").str();
  bool HasTwin = !Method->getParent()->lookup(&Ctx.Idents.get(Twin)).empty();
  const VarDecl *Local = rebindableLocal(Object);
  bool InPlaceFix = !Local && HasTwin && inPlaceTwinIsSafe(Method, Object, Call, Model);
  SourceLocation NameLoc = Call->getCallee()->getExprLoc();
  auto Diag = diag(NameLoc,
                   "result of '%0' is discarded: the call returns a new tensor and leaves its "
                   "object unchanged; consider %select{assigning the result|assigning the result "
                   "or calling '%1' in place}2")
              << Name << Twin << HasTwin;
  if (Local)
    Diag << FixItHint::CreateInsertion(Call->getBeginLoc(), (Local->getName() + " = ").str());
  else if (InPlaceFix)
    Diag << FixItHint::CreateReplacement(NameLoc, Twin);
}

} // namespace torchtidy
