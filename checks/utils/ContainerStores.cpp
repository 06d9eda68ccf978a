#include "utils/AutogradModel.h"

#include <optional>
#include <tuple>

using namespace clang;

namespace torchtidy {
namespace {

/// Standard functions that build a pair or tuple from their arguments.
constexpr llvm::StringLiteral TupleMakers[] = {"make_pair", "make_tuple", "forward_as_tuple", "tie"};

/// A standard container class (vector, deque, list, map, queue, array, ...) that can hold
/// a graph, through aliases and the library's inline namespaces.
const ClassTemplateSpecializationDecl *tensorContainer(const Expr *Obj) {
  if (!Obj || Obj->isTypeDependent())
    return nullptr;
  QualType T = Obj->getType().getNonReferenceType();
  if (const auto *PT = T->getAs<PointerType>())
    T = PT->getPointeeType();
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(recordOf(T));
  if (!Spec || !Spec->isInStdNamespace() || !Spec->getIdentifier() ||
      !llvm::is_contained(names::StdContainers, Spec->getName()))
    return nullptr;
  return canHoldGraph(QualType(Spec->getTypeForDecl(), 0)) ? Spec : nullptr;
}

bool isMapLike(const ClassTemplateSpecializationDecl *Spec) { return Spec->getName().contains("map"); }

/// The key of a map insertion `c.<Method>(Args...)`, and the index of the first argument
/// that is stored: a constant key keeps at most one element.
std::pair<const Expr *, unsigned> mapInsertionKey(StringRef Method, ArrayRef<const Expr *> Args) {
  if (Args.empty())
    return {nullptr, 0};
  const Expr *Arg0 = Args[0]->IgnoreUnlessSpelledInSource();
  if (Method != "emplace_hint" && Method != "insert")
    return {Arg0, 1}; // emplace(k, v) / try_emplace(k, v) / insert_or_assign(k, v)
  if (Args.size() == 1) { // insert({k, v})
    if (const auto *IL = dyn_cast<InitListExpr>(Arg0); IL && IL->getNumInits() == 2)
      return {IL->getInit(0), 0};
    if (const auto *CE = dyn_cast<CXXConstructExpr>(Arg0); CE && CE->getNumArgs() == 2)
      return {CE->getArg(0), 0};
  }
  return {nullptr, 0};
}

/// The parts a stored value is built from: `loss` in `loss`, `{epoch, loss}`,
/// `std::make_pair(epoch, loss)`; a named aggregate (`record`) stays whole. Parts of
/// dependent type stay whole too.
void storedParts(const Expr *E, SmallVectorImpl<const Expr *> &Out, AutogradModel &M) {
  E = E->IgnoreUnlessSpelledInSource();
  if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E); Cast && isa<InitListExpr>(Cast->getSubExpr()->IgnoreImplicit()))
    E = Cast->getSubExpr()->IgnoreImplicit(); // `Record{loss, step}`
  if (!E->isTypeDependent() && (isTensorType(E->getType()) || !canHoldGraph(E->getType()))) {
    if (isTensorType(E->getType()))
      Out.push_back(E);
    return;
  }
  SmallVector<const Expr *, 4> Parts;
  if (const auto *IL = dyn_cast<InitListExpr>(E))
    Parts.append(IL->inits().begin(), IL->inits().end());
  else if (const auto *PL = dyn_cast<ParenListExpr>(E))
    for (unsigned I = 0; I < PL->getNumExprs(); ++I)
      Parts.push_back(PL->getExpr(I));
  else if (const auto *CE = dyn_cast<CXXConstructExpr>(E))
    Parts.append(CE->arg_begin(), CE->arg_end());
  else if (const auto *Call = dyn_cast<CallExpr>(E); Call && llvm::is_contained(TupleMakers, M.callShape(Call).Name))
    Parts.append(Call->arg_begin(), Call->arg_end());
  else
    Out.push_back(E);
  for (const Expr *Part : Parts)
    storedParts(Part, Out, M);
}

/// `c[k]` / `c.at(k)` as the left side of an assignment: the container and the key.
std::optional<std::pair<const Expr *, const Expr *>> slot(const Expr *Lhs, AutogradModel &M) {
  Lhs = Lhs->IgnoreParenImpCasts();
  if (const auto *Sub = dyn_cast<CXXOperatorCallExpr>(Lhs); Sub && Sub->getOperator() == OO_Subscript)
    return std::make_pair(Sub->getArg(0), Sub->getArg(1));
  if (const auto *At = dyn_cast<CXXMemberCallExpr>(Lhs); At && At->getNumArgs() == 1 && M.callShape(At).Name == "at")
    return std::make_pair(At->getImplicitObjectArgument(), At->getArg(0));
  return std::nullopt;
}
} // namespace

std::optional<ContainerStore> AutogradModel::containerStore(const Expr *E) {
  AutogradModel &M = *this;
  ContainerStore S;
  // `c[k] = v`; a BinaryOperator when the value's type is dependent.
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
  const auto *Assign = dyn_cast<BinaryOperator>(E);
  if (Op || Assign) {
    auto Slot = (Op ? Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 : Assign->getOpcode() == BO_Assign)
                    ? slot(Op ? Op->getArg(0) : Assign->getLHS(), M)
                    : std::nullopt;
    if (!Slot || !tensorContainer(Slot->first))
      return std::nullopt;
    std::tie(S.Container, S.Key) = *Slot;
    storedParts(Op ? Op->getArg(1) : Assign->getRHS(), S.Values, M);
    return S;
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  CallShape Shape = Call ? M.callShape(Call) : CallShape();
  const auto *Spec = tensorContainer(Shape.Object);
  if (!Spec || !llvm::is_contained(names::ContainerStoreMethods, Shape.Name))
    return std::nullopt;
  S.Container = Shape.Object;
  unsigned First = 0;
  if (isMapLike(Spec))
    std::tie(S.Key, First) = mapInsertionKey(Shape.Name, {Call->getArgs(), Call->getNumArgs()});
  for (unsigned I = First; I < Call->getNumArgs(); ++I)
    storedParts(Call->getArg(I), S.Values, M);
  return S;
}

} // namespace torchtidy
