// AutogradModel::originByName: where a value of dependent type comes from, in a template
// nobody instantiates, read by the names of the calls it is computed from.
#include "utils/AutogradModel.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;

namespace torchtidy {
namespace {

/// Whether a call named \p Name computes a loss: `nll_loss`, `mse_loss`, `cross_entropy`, ...
bool isLossName(StringRef Name) {
  static constexpr llvm::StringLiteral Others[] = {"cross_entropy", "binary_cross_entropy",
                                            "binary_cross_entropy_with_logits", "kl_div"};
  return Name.ends_with_insensitive("loss") || llvm::is_contained(Others, Name);
}

/// A module forward (on an object whose type is known) or a loss call among what a value is
/// computed from, through the initializers of local variables; nothing when a
/// detach/item/data call is on the way.
class NameOrigin {
public:
  explicit NameOrigin(AutogradModel &M) : M(M) {}

  const Expr *sourceOf(const Expr *E) {
    visit(E, 0);
    return Blocked ? nullptr : Source;
  }

private:
  bool attaches(const CallExpr *Call) const {
    CallShape Shape = M.callShape(Call);
    const Expr *Obj = Shape.Object;
    if (Shape.Name == "forward")
      return Obj && !Obj->isTypeDependent() && isModuleType(Obj->getType());
    // `model(x)` / `criterion(out, y)` on a module holder of known type.
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Call); OCE && OCE->getOperator() == OO_Call)
      return !OCE->getArg(0)->isTypeDependent() && isModuleType(OCE->getArg(0)->getType());
    // With dependent arguments the call stays a plain call on the holder object.
    const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
    if (!Callee->isTypeDependent() && isModuleType(Callee->getType()))
      return true;
    return isLossName(Shape.Name);
  }

  void visit(const Stmt *S, unsigned Depth) {
    static constexpr llvm::StringLiteral Detaching[] = {"detach", "detach_", "item", "data", "variable_data"};
    if (!S || Blocked || Depth > 6)
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (llvm::is_contained(Detaching, M.callShape(Call).Name)) {
        Blocked = true;
        return;
      }
      if (!Source && attaches(Call))
        Source = Call;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && VD->isLocalVarDecl() && VD->getInit() && Seen.insert(VD).second) {
        if (VD->getType()->isDependentType() || VD->getType()->isUndeducedType()) {
          visit(VD->getInit(), Depth + 1);
        } else if (isTensorType(VD->getType())) {
          OriginResult O = M.originAt(DRE);
          if (O.Kind == TensorOrigin::GraphAttached && !Source)
            Source = O.Source;
        }
      }
    for (const Stmt *Child : S->children())
      visit(Child, Depth);
  }

  AutogradModel &M;
  llvm::SmallPtrSet<const VarDecl *, 8> Seen;
  const Expr *Source = nullptr;
  bool Blocked = false;
};
} // namespace

OriginResult AutogradModel::originByName(const Expr *E) {
  const Expr *Source = NameOrigin(*this).sourceOf(E);
  if (!Source || gradDisabledAt(Source))
    return {};
  return {TensorOrigin::GraphAttached, Source};
}

} // namespace torchtidy
