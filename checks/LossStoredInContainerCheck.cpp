#include "LossStoredInContainerCheck.h"

#include "utils/TensorOrigin.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <tuple>

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

bool oneOf(StringRef Name, std::initializer_list<StringRef> Names) {
  return llvm::is_contained(Names, Name);
}

/// Whether \p D has a simple name among \p Names.
bool nameIn(const NamedDecl *D, std::initializer_list<StringRef> Names) {
  return D && D->getIdentifier() && llvm::is_contained(Names, D->getName());
}

/// A standard container class (vector, deque, list, map, queue, array, ...), through aliases
/// and the library's inline namespaces.
const ClassTemplateSpecializationDecl *stdContainer(QualType T) {
  T = T.getNonReferenceType();
  if (const auto *PT = T->getAs<PointerType>())
    T = PT->getPointeeType();
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(recordOf(T));
  if (!Spec || !Spec->isInStdNamespace() || !Spec->getIdentifier())
    return nullptr;
  static const llvm::StringSet<> Names = {
      "vector", "deque", "list", "forward_list", "array", "map", "multimap", "unordered_map",
      "unordered_multimap", "queue", "stack"};
  return Names.contains(Spec->getName()) ? Spec : nullptr;
}

bool isMapLike(const ClassTemplateSpecializationDecl *Spec) {
  return Spec && Spec->getName().contains("map");
}

/// The name a call uses, resolved or not: `f` in `torch::f(x)`, `m` in `x.m()` (also when
/// the call cannot be resolved in a template).
StringRef calleeName(const CallExpr *Call) {
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  DeclarationName Name;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Callee))
    Name = DRE->getDecl()->getDeclName();
  else if (const auto *ME = dyn_cast<MemberExpr>(Callee))
    Name = ME->getMemberDecl()->getDeclName();
  else if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee))
    Name = M->getMember();
  else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    Name = M->getMemberName();
  else if (const auto *L = dyn_cast<UnresolvedLookupExpr>(Callee))
    Name = L->getName();
  const IdentifierInfo *II = Name.getAsIdentifierInfo();
  return II ? II->getName() : StringRef();
}

/// The object of a member call, resolved or not; null for a call on `this` left implicit.
const Expr *calleeBase(const CallExpr *Call) {
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  if (const auto *ME = dyn_cast<MemberExpr>(Callee))
    return ME->getBase();
  if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee))
    return M->isImplicitAccess() ? nullptr : M->getBase();
  if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    return M->isImplicitAccess() ? nullptr : M->getBase();
  return nullptr;
}

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

/// Whether a value of type \p T can hold a tensor: a tensor, or a class template instance
/// (container, pair, tuple, optional, ArrayRef, iterator) with one among its arguments.
bool holdsTensor(QualType T, unsigned Depth = 0) {
  if (T.isNull() || Depth > 4)
    return false;
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *PT = T->getAs<PointerType>())
    return holdsTensor(PT->getPointeeType(), Depth + 1);
  if (isTensorType(T))
    return true;
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Spec)
    return false;
  for (const TemplateArgument &Arg : Spec->getTemplateArgs().asArray()) {
    if (Arg.getKind() == TemplateArgument::Type && holdsTensor(Arg.getAsType(), Depth + 1))
      return true;
    if (Arg.getKind() == TemplateArgument::Pack)
      for (const TemplateArgument &P : Arg.pack_elements())
        if (P.getKind() == TemplateArgument::Type && holdsTensor(P.getAsType(), Depth + 1))
          return true;
  }
  return false;
}

/// The variable or field whose lifetime bounds the container \p E: `v` in `v`, `v[k]`,
/// `v.at(k)`, `*p`, `p->...`, `s.losses` (the object `s`), `this->losses_` (the field).
const ValueDecl *rootDecl(const Expr *E) {
  for (unsigned Steps = 0; E && Steps < 16; ++Steps) {
    E = E->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return isa<VarDecl, BindingDecl>(DRE->getDecl()) ? DRE->getDecl() : nullptr;
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
        return dyn_cast<FieldDecl>(ME->getMemberDecl());
      E = ME->getBase();
      continue;
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E)) {
      if (OCE->getOperator() != OO_Subscript && OCE->getOperator() != OO_Arrow &&
          OCE->getOperator() != OO_Star)
        return nullptr;
      E = OCE->getArg(0);
      continue;
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref) {
      E = UO->getSubExpr();
      continue;
    }
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
      const CXXMethodDecl *MD = MCE->getMethodDecl();
      if (!MD || !MD->getParent()->isInStdNamespace() || !nameIn(MD, {"at", "back", "front", "get", "top"}))
        return nullptr;
      E = MCE->getImplicitObjectArgument();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

/// The tensor-typed expressions a stored value is built from: `loss` in `loss`,
/// `{epoch, loss}`, `std::make_pair(epoch, loss)`, `std::make_tuple(a, b)`.
void tensorLeaves(const Expr *E, SmallVectorImpl<const Expr *> &Out) {
  E = E->IgnoreUnlessSpelledInSource();
  if (isTensorType(E->getType())) {
    Out.push_back(E);
    return;
  }
  if (!holdsTensor(E->getType()))
    return;
  if (const auto *IL = dyn_cast<InitListExpr>(E)) {
    for (const Expr *Init : IL->inits())
      tensorLeaves(Init, Out);
  } else if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    for (const Expr *Arg : CE->arguments())
      tensorLeaves(Arg, Out);
  } else if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && FD->isInStdNamespace() && nameIn(FD, {"make_pair", "make_tuple", "forward_as_tuple", "tie"}))
      for (const Expr *Arg : Call->arguments())
        tensorLeaves(Arg, Out);
  }
}

/// One write of values into a standard container.
struct Store {
  const Expr *Container = nullptr; ///< the container expression written to
  const Expr *Key = nullptr;       ///< map key or subscript index; null for sequence appends
  SmallVector<const Expr *, 2> Values;
};

/// Recognises `c.push_back(v)` (and the other insertions) and `c[k] = v` / `c.at(k) = v`.
std::optional<Store> asStore(const Expr *E) {
  Store S;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    const Expr *Obj = MCE->getImplicitObjectArgument();
    const auto *Spec = Obj ? stdContainer(Obj->getType()) : nullptr;
    if (!MD || !MD->getIdentifier() || !Spec || !holdsTensor(QualType(Spec->getTypeForDecl(), 0)) ||
        !llvm::is_contained(names::ContainerStoreMethods, MD->getName()))
      return std::nullopt;
    S.Container = Obj;
    unsigned First = 0;
    if (isMapLike(Spec))
      std::tie(S.Key, First) = mapInsertionKey(MD->getName(), {MCE->getArgs(), MCE->getNumArgs()});
    for (unsigned I = First; I < MCE->getNumArgs(); ++I)
      tensorLeaves(MCE->getArg(I), S.Values);
    return S;
  }
  const auto *Assign = dyn_cast<CXXOperatorCallExpr>(E);
  if (!Assign || Assign->getOperator() != OO_Equal || Assign->getNumArgs() != 2)
    return std::nullopt;
  const Expr *Lhs = Assign->getArg(0)->IgnoreParenImpCasts();
  if (const auto *Sub = dyn_cast<CXXOperatorCallExpr>(Lhs); Sub && Sub->getOperator() == OO_Subscript) {
    S.Container = Sub->getArg(0);
    S.Key = Sub->getArg(1);
  } else if (const auto *At = dyn_cast<CXXMemberCallExpr>(Lhs)) {
    const CXXMethodDecl *MD = At->getMethodDecl();
    if (!MD || !MD->getIdentifier() || MD->getName() != "at" || At->getNumArgs() != 1)
      return std::nullopt;
    S.Container = At->getImplicitObjectArgument();
    S.Key = At->getArg(0);
  } else {
    return std::nullopt;
  }
  const auto *Spec = stdContainer(S.Container->getType());
  if (!Spec || !holdsTensor(QualType(Spec->getTypeForDecl(), 0)))
    return std::nullopt;
  tensorLeaves(Assign->getArg(1), S.Values);
  return S;
}

/// The values a store with dependent arguments writes: the braced or `make_pair` parts
/// of \p E, each left whole when its type depends on a template parameter.
void dependentLeaves(const Expr *E, SmallVectorImpl<const Expr *> &Out) {
  E = E->IgnoreParenImpCasts();
  if (!E->isTypeDependent()) {
    tensorLeaves(E, Out);
    return;
  }
  if (const auto *IL = dyn_cast<InitListExpr>(E)) {
    for (const Expr *Init : IL->inits())
      dependentLeaves(Init, Out);
  } else if (const auto *PL = dyn_cast<ParenListExpr>(E)) {
    for (unsigned I = 0; I < PL->getNumExprs(); ++I)
      dependentLeaves(PL->getExpr(I), Out);
  } else if (const auto *Call = dyn_cast<CallExpr>(E);
             Call && oneOf(calleeName(Call), {"make_pair", "make_tuple", "forward_as_tuple"})) {
    for (const Expr *Arg : Call->arguments())
      dependentLeaves(Arg, Out);
  } else {
    Out.push_back(E);
  }
}

/// A standard container of tensors, named by a non-dependent expression.
const ClassTemplateSpecializationDecl *tensorContainer(const Expr *Obj) {
  const auto *Spec = Obj && !Obj->isTypeDependent() ? stdContainer(Obj->getType()) : nullptr;
  return Spec && holdsTensor(QualType(Spec->getTypeForDecl(), 0)) ? Spec : nullptr;
}

/// In a template nobody instantiates, a store of values whose types are dependent, so that
/// the call or the assignment stays unresolved: `c.push_back(loss)`, `c[k] = loss`.
std::optional<Store> asDependentStore(const Expr *E) {
  Store S;
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    StringRef Method = calleeName(Call);
    const Expr *Obj = calleeBase(Call);
    const auto *Spec = tensorContainer(Obj);
    if (!Spec || !llvm::is_contained(names::ContainerStoreMethods, Method))
      return std::nullopt;
    S.Container = Obj;
    unsigned First = 0;
    if (isMapLike(Spec))
      std::tie(S.Key, First) = mapInsertionKey(Method, {Call->getArgs(), Call->getNumArgs()});
    for (unsigned I = First; I < Call->getNumArgs(); ++I)
      dependentLeaves(Call->getArg(I), S.Values);
    return S;
  }
  const auto *Assign = dyn_cast<BinaryOperator>(E);
  if (!Assign || Assign->getOpcode() != BO_Assign)
    return std::nullopt;
  const Expr *Lhs = Assign->getLHS()->IgnoreParenImpCasts();
  if (const auto *Sub = dyn_cast<CXXOperatorCallExpr>(Lhs); Sub && Sub->getOperator() == OO_Subscript) {
    S.Container = Sub->getArg(0);
    S.Key = Sub->getArg(1);
  } else if (const auto *At = dyn_cast<CXXMemberCallExpr>(Lhs);
             At && At->getNumArgs() == 1 && nameIn(At->getMethodDecl(), {"at"})) {
    S.Container = At->getImplicitObjectArgument();
    S.Key = At->getArg(0);
  } else {
    return std::nullopt;
  }
  if (!tensorContainer(S.Container))
    return std::nullopt;
  dependentLeaves(Assign->getRHS(), S.Values);
  return S;
}

/// In a template nobody instantiates, the graph origin of a value of dependent type, by
/// name: a module forward (on an object whose type is known) or a loss call among what it
/// is computed from, through the initializers of local variables; nothing when a
/// detach/item/data call is on the way or the computation runs under a no-grad scope.
class DependentOrigin {
public:
  explicit DependentOrigin(ASTContext &Ctx) : Ctx(Ctx) {}

  OriginResult of(const Expr *E) {
    visit(E, 0);
    if (Blocked || !Source || inNoGradScope(Source, Ctx))
      return {};
    return {TensorOrigin::GraphAttached, Source};
  }

private:
  bool attaches(const CallExpr *Call) const {
    StringRef Name = calleeName(Call);
    if (Name == "forward") {
      const Expr *Obj = calleeBase(Call);
      return Obj && !Obj->isTypeDependent() && isModuleType(Obj->getType());
    }
    // `model(x)` / `criterion(out, y)` on a module holder of known type.
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Call); OCE && OCE->getOperator() == OO_Call)
      return !OCE->getArg(0)->isTypeDependent() && isModuleType(OCE->getArg(0)->getType());
    // With dependent arguments the call stays a plain call on the holder object.
    const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
    if (!Callee->isTypeDependent() && isModuleType(Callee->getType()))
      return true;
    return isLossName(Name);
  }

  void visit(const Stmt *S, unsigned Depth) {
    if (!S || Blocked || Depth > 6)
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      if (oneOf(calleeName(Call), {"detach", "detach_", "item", "data", "variable_data"})) {
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
          OriginResult O = classifyTensor(DRE, Ctx);
          if (O.Kind == TensorOrigin::GraphAttached && !Source)
            Source = O.Source;
        }
      }
    for (const Stmt *Child : S->children())
      visit(Child, Depth);
  }

  ASTContext &Ctx;
  llvm::SmallPtrSet<const VarDecl *, 8> Seen;
  const Expr *Source = nullptr;
  bool Blocked = false;
};

/// Whether \p Inner lies under \p Outer in the AST (\p Inner a statement or a declaration).
bool isDescendant(DynTypedNode Inner, const Stmt *Outer, ASTContext &Ctx) {
  for (unsigned Steps = 0; !Inner.getNodeKind().isNone() && Steps < 256; ++Steps) {
    if (Inner.get<Stmt>() == Outer)
      return true;
    if (const auto *D = Inner.get<Decl>(); D && isa<FunctionDecl>(D))
      return false;
    Inner = parentOf(Inner, Ctx);
  }
  return false;
}

/// Whether the container rooted at \p Root dies with each iteration of \p Loop.
bool isLocalToIteration(const ValueDecl *Root, const Stmt *Loop, ASTContext &Ctx) {
  const auto *VD = dyn_cast<VarDecl>(Root);
  if (!VD || !VD->hasLocalStorage() || isa<ParmVarDecl>(VD))
    return false;
  return isDescendant(DynTypedNode::create(*VD), loopBody(Loop), Ctx);
}

/// `c.clear()` as a statement of \p Loop's body itself (not under a condition): the
/// container is emptied every iteration, so nothing accumulates.
bool clearedEachIteration(const ValueDecl *Root, const Stmt *Loop) {
  const auto *Body = dyn_cast<CompoundStmt>(loopBody(Loop));
  if (!Body)
    return false;
  for (const Stmt *S : Body->body()) {
    const auto *MCE = dyn_cast<CXXMemberCallExpr>(S);
    if (const auto *E = dyn_cast<Expr>(S))
      MCE = dyn_cast<CXXMemberCallExpr>(E->IgnoreImplicit());
    const CXXMethodDecl *MD = MCE ? MCE->getMethodDecl() : nullptr;
    if (MD && MD->getIdentifier() && MD->getName() == "clear" &&
        rootDecl(MCE->getImplicitObjectArgument()) == Root)
      return true;
  }
  return false;
}

/// Whether the key of a map write or the index of a subscript write can differ between
/// iterations of \p Loop (a constant key overwrites one slot: nothing accumulates).
bool keyVaries(const Expr *Key, const Stmt *Loop, ASTContext &Ctx) {
  if (!Key || Key->isValueDependent())
    return true;
  auto Refs = match(findAll(expr(anyOf(declRefExpr(to(varDecl().bind("var"))), callExpr()))
                                .bind("e")),
                    *Key, Ctx);
  ExprMutationAnalyzer Mutations(*Loop, Ctx);
  for (const BoundNodes &B : Refs) {
    const auto *VD = B.getNodeAs<VarDecl>("var");
    if (!VD)
      return true; // a call: assume it yields different keys
    if (isDescendant(DynTypedNode::create(*VD), Loop, Ctx) || Mutations.isMutated(VD))
      return true;
  }
  return false;
}

/// A key fixed for the loop overwrites one slot, so nothing accumulates, when it is a true
/// constant (`latest["loss"]`) or the container dies with the function. A container that
/// outlives the call keyed by, say, the epoch parameter gains one graph per call.
bool keepsOneSlot(const Expr *Key, const ValueDecl *Container, const Stmt *Loop, ASTContext &Ctx) {
  // The key must also stay fixed across every enclosing loop the container outlives:
  // `epoch_loss[epoch] = loss` in a batch loop adds one slot per epoch.
  for (const Stmt *L = Loop; L && !isLocalToIteration(Container, L, Ctx); L = enclosingLoop(L, Ctx))
    if (keyVaries(Key, L, Ctx))
      return false;
  auto Variables = match(
      findAll(declRefExpr(to(varDecl(anyOf(parmVarDecl(), unless(hasType(isConstQualified()))))))
                  .bind("v")),
      *Key, Ctx);
  if (Variables.empty())
    return true;
  const auto *VD = dyn_cast<VarDecl>(Container);
  return VD && VD->isLocalVarDecl() && !VD->isStaticLocal();
}

/// `for (auto &p : model->parameters())`: copies of parameters pin no iteration graph.
bool overParameters(const Stmt *Loop) {
  const auto *For = dyn_cast<CXXForRangeStmt>(Loop);
  if (!For)
    return false;
  const auto *MCE = dyn_cast<CXXMemberCallExpr>(For->getRangeInit()->IgnoreUnlessSpelledInSource());
  const CXXMethodDecl *MD = MCE ? MCE->getMethodDecl() : nullptr;
  return nameIn(MD, {"parameters", "named_parameters", "buffers"});
}

/// Whether \p S belongs to a template instantiation (a rewrite there would hit the pattern).
bool inTemplateInstantiation(const Stmt *S, ASTContext &Ctx) {
  for (const DeclContext *DC = enclosingFunction(S, Ctx); DC; DC = DC->getParent()) {
    if (const auto *FD = dyn_cast<FunctionDecl>(DC); FD && FD->getTemplateInstantiationPattern())
      return true;
    if (isa<ClassTemplateSpecializationDecl>(DC))
      return true;
  }
  return false;
}

/// How the stored tensors are used afterwards, following them through variables,
/// containers, tensor ops and user functions of this translation unit.
class ContainerUses {
public:
  enum Verdict {
    Contained, ///< every use is visible and none backpropagates
    Escapes,   ///< some use is out of sight (another TU, an opaque call): may backpropagate
    Backprop,  ///< the elements feed backward(): the graphs are kept on purpose
  };

  explicit ContainerUses(ASTContext &Ctx) : Ctx(Ctx) {}

  Verdict of(const ValueDecl *Root) {
    follow(Root);
    while (!Work.empty() && !Found && Seen.size() < 64) {
      const ValueDecl *D = Work.pop_back_val();
      for (const Expr *Ref : refsTo(D))
        flowUp(Ref);
    }
    return Found ? Backprop : Escaped ? Escapes : Contained;
  }

private:
  void follow(const ValueDecl *D) {
    if (!D || !Seen.insert(D).second)
      return;
    if (const auto *DD = dyn_cast<DecompositionDecl>(D)) {
      for (const BindingDecl *B : DD->bindings())
        follow(B);
      return;
    }
    const auto *VD = dyn_cast<VarDecl>(D);
    if (isa<FieldDecl>(D) || (VD && !VD->isLocalVarDeclOrParm()))
      Escaped = true; // other translation units may use it
    if (const auto *P = dyn_cast_or_null<ParmVarDecl>(VD)) {
      // The container came from the caller, who may use it further.
      const auto *FD = dyn_cast<FunctionDecl>(P->getDeclContext());
      auto Callers = callersOf(FD, Ctx);
      if (P->getType()->isReferenceType() || P->getType()->isPointerType()) {
        if (Callers.empty())
          Escaped = true;
        for (const CallExpr *Call : Callers)
          if (const Expr *Arg = argumentFor(Call, FD, P->getFunctionScopeIndex()))
            follow(rootDecl(Arg));
      }
    }
    Work.push_back(D);
  }

  /// Every expression naming \p D where it can be used: its function's body for locals,
  /// every user declaration for members and globals.
  std::vector<const Expr *> refsTo(const ValueDecl *D) {
    auto Ref = expr(anyOf(declRefExpr(to(equalsNode(D))), memberExpr(member(equalsNode(D))))).bind("ref");
    std::vector<const Expr *> Refs;
    auto Collect = [&](const SmallVector<BoundNodes, 1> &Found) {
      for (const BoundNodes &B : Found)
        Refs.push_back(B.getNodeAs<Expr>("ref"));
    };
    const auto *VD = dyn_cast<VarDecl>(D);
    const DeclContext *DC = (VD && VD->isLocalVarDeclOrParm()) || isa<BindingDecl>(D)
                                ? D->getParentFunctionOrMethod()
                                : nullptr;
    if (const auto *FD = dyn_cast_or_null<FunctionDecl>(DC)) {
      if (FD->hasBody())
        Collect(match(findAll(Ref), *FD->getBody(), Ctx));
      return Refs;
    }
    // A stmt matcher run on a Decl root matches nothing: descend explicitly.
    forEachUserDecl(Ctx, [&](Decl *TopLevel) { Collect(match(decl(forEachDescendant(Ref)), *TopLevel, Ctx)); });
    return Refs;
  }

  static const Expr *argumentFor(const CallExpr *Call, const FunctionDecl *FD, unsigned Index) {
    // A member operator call (a lambda's operator()) passes the object as argument 0.
    if (isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD))
      ++Index;
    return Index < Call->getNumArgs() ? Call->getArg(Index) : nullptr;
  }

  void intoFunction(const CallExpr *Call, const Expr *Arg) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (!FD) {
      Escaped = true;
      return;
    }
    const FunctionDecl *Def = FD->getDefinition();
    if (!Def || !Def->hasBody()) {
      Escaped = true;
      return;
    }
    unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) ? 1 : 0;
    for (unsigned I = Offset; I < Call->getNumArgs(); ++I)
      if (Call->getArg(I) == Arg && I - Offset < Def->getNumParams())
        follow(Def->getParamDecl(I - Offset));
  }

  static bool isBackward(const FunctionDecl *FD) {
    if (!FD || !FD->getIdentifier())
      return false;
    if (isTensorMethod(FD, {"backward"}))
      return true;
    const auto *NS = dyn_cast<NamespaceDecl>(FD->getDeclContext());
    return NS && NS->getName() == "autograd" && nameIn(FD, {"backward", "grad"});
  }

  /// Follows the value of \p E upwards through the expressions that carry its tensors.
  void flowUp(const Expr *E) {
    const Stmt *Cur = E;
    for (unsigned Steps = 0; Steps < 48 && !Found; ++Steps) {
      DynTypedNode P = parentOf(Cur, Ctx);
      if (const auto *VD = P.get<VarDecl>()) {
        varInitialized(VD);
        return;
      }
      const auto *PS = P.get<Stmt>();
      if (!PS)
        return;
      if (isa<ReturnStmt>(PS)) {
        returned(PS);
        return;
      }
      const auto *PE = dyn_cast<Expr>(PS);
      if (!PE)
        return;
      if (const auto *ME = dyn_cast<MemberExpr>(PE)) {
        const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(parentOf(ME, Ctx).get<Stmt>());
        if (Call && Call->getCallee() == ME) {
          if (isBackward(Call->getMethodDecl())) {
            Found = true;
            return;
          }
          Cur = Call;
        } else {
          Cur = ME;
        }
        if (!holdsTensor(cast<Expr>(Cur)->getType()))
          return;
        continue;
      }
      if (const auto *Call = dyn_cast<CallExpr>(PE)) {
        if (!callArgument(Call, cast<Expr>(Cur)))
          return;
        Cur = Call;
        continue;
      }
      if (!holdsTensor(PE->getType()))
        return;
      Cur = PE;
    }
  }

  /// \p Arg is an argument of \p Call (or the object of an operator). Returns whether the
  /// call's result carries it further.
  bool callArgument(const CallExpr *Call, const Expr *Arg) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (isBackward(FD)) {
      Found = true;
      return false;
    }
    if (auto S = asStore(Call)) {
      // Stored into another container (or this one again): follow that container.
      if (!isa<CXXOperatorCallExpr>(Call) || Call->getArg(1) == Arg)
        follow(rootDecl(S->Container));
      return false;
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Call)) {
      OverloadedOperatorKind Op = OCE->getOperator();
      if ((Op == OO_Equal || Op == OO_PlusEqual || Op == OO_MinusEqual || Op == OO_StarEqual ||
           Op == OO_SlashEqual) &&
          OCE->getArg(1) == Arg) {
        follow(rootDecl(OCE->getArg(0)));
        return false;
      }
    }
    if (FD && !isInSystemHeader(FD) && !(isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) &&
                                         Call->getArg(0) == Arg))
      intoFunction(Call, Arg);
    else if (!FD && !isa<CXXOperatorCallExpr>(Call))
      Escaped = true;
    return holdsTensor(Call->getType());
  }

  void varInitialized(const VarDecl *VD) {
    // `for (auto &t : c)`: the hidden __range variable holds the container.
    if (VD->isImplicit())
      if (const auto *DS = parentOf(VD, Ctx).get<DeclStmt>())
        if (const auto *For = parentOf(DS, Ctx).get<CXXForRangeStmt>(); For && For->getRangeStmt() == DS) {
          const VarDecl *LoopVar = For->getLoopVariable();
          if (const auto *DD = dyn_cast<DecompositionDecl>(LoopVar))
            follow(DD);
          else
            follow(LoopVar);
          return;
        }
    if (const auto *DD = dyn_cast<DecompositionDecl>(VD))
      follow(DD);
    else if (holdsTensor(VD->getType()))
      follow(VD);
  }

  void returned(const Stmt *Ret) {
    const FunctionDecl *FD = enclosingFunction(Ret, Ctx);
    if (!FD)
      return;
    // A module method returning the collected tensors: they are the model's output.
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD);
        MD && isModuleType(QualType(MD->getParent()->getTypeForDecl(), 0))) {
      Found = true;
      return;
    }
    auto Callers = callersOf(FD, Ctx);
    if (Callers.empty())
      Escaped = true;
    for (const CallExpr *Call : Callers)
      if (!Found)
        flowUp(Call);
  }

  ASTContext &Ctx;
  llvm::SmallVector<const ValueDecl *, 8> Work;
  llvm::SmallPtrSet<const ValueDecl *, 16> Seen;
  bool Found = false;
  bool Escaped = false;
};

/// Whether \p E probably holds a scalar loss, so that `.item<float>()` is a fitting remedy.
bool looksLikeLoss(const Expr *E, unsigned Depth = 0) {
  E = E->IgnoreUnlessSpelledInSource();
  auto NamedLoss = [](StringRef Name) { return Name.contains_insensitive("loss"); };
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (NamedLoss(DRE->getDecl()->getName()))
      return true;
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    return VD && VD->getInit() && Depth == 0 && looksLikeLoss(VD->getInit(), Depth + 1);
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (MD && isTensorMethod(MD, {"sum", "mean", "norm"}) &&
        llvm::all_of(MCE->arguments(), [](const Expr *A) { return isa<CXXDefaultArgExpr>(A); }))
      return true;
    if (MD && isTensorMethod(MD, {"clone", "cpu", "to"}))
      return looksLikeLoss(MCE->getImplicitObjectArgument(), Depth);
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E); OCE && OCE->getOperator() == OO_Call) {
    const CXXRecordDecl *RD = recordOf(OCE->getArg(0)->getType());
    return RD && RD->getIdentifier() && NamedLoss(RD->getName());
  }
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (FD && FD->getIdentifier() && FD->getName() == "move" && CE->getNumArgs() == 1)
      return looksLikeLoss(CE->getArg(0), Depth);
    return FD && FD->getIdentifier() && NamedLoss(FD->getName());
  }
  return false;
}

/// Whether a postfix `.detach()` needs parentheses around \p E.
bool needsParens(const Expr *E) {
  E = E->IgnoreImplicit();
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
    return OCE->getOperator() != OO_Subscript && OCE->getOperator() != OO_Call &&
           OCE->getOperator() != OO_Arrow;
  return !isa<DeclRefExpr, MemberExpr, CallExpr, ParenExpr, ArraySubscriptExpr>(E);
}

} // namespace

void LossStoredInContainerCheck::registerMatchers(MatchFinder *Finder) {
  auto StdContainer = hasAnyName("::std::vector", "::std::deque", "::std::list", "::std::forward_list",
                                 "::std::array", "::std::map", "::std::multimap", "::std::unordered_map",
                                 "::std::unordered_multimap", "::std::queue", "::std::stack");
  Finder->addMatcher(
      traverse(TK_AsIs,
               expr(unless(isExpansionInSystemHeader()),
                    anyOf(cxxMemberCallExpr(callee(cxxMethodDecl(
                              hasAnyName(std::vector<StringRef>(std::begin(names::ContainerStoreMethods),
                                                                std::end(names::ContainerStoreMethods))),
                              ofClass(classTemplateSpecializationDecl(StdContainer))))),
                          cxxOperatorCallExpr(hasOverloadedOperatorName("="), argumentCountIs(2))))
                   .bind("store")),
      this);
  // Stores whose values have dependent types stay unresolved in a template pattern.
  Finder->addMatcher(
      traverse(TK_AsIs, expr(unless(isExpansionInSystemHeader()),
                             anyOf(callExpr(callee(expr(anyOf(unresolvedMemberExpr(), cxxDependentScopeMemberExpr())))),
                                   binaryOperator(hasOperatorName("="), isTypeDependent())))
                            .bind("dependentStore")),
      this);
}

void LossStoredInContainerCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const auto *Site = Result.Nodes.getNodeAs<Expr>("store");
  const auto *DependentSite = Result.Nodes.getNodeAs<Expr>("dependentStore");
  if (DependentSite)
    Site = DependentSite;
  if (Site->getBeginLoc().isMacroID())
    return;
  const FunctionDecl *Fn = enclosingFunction(Site, Ctx);
  if (!Fn)
    return;
  // Template patterns are analysed through their instantiations, where calls resolve; a
  // template nobody instantiates is analysed here, by name where types are dependent.
  bool InPattern = Fn->isDependentContext();
  if ((InPattern && !isUninstantiatedPattern(Fn)) || (DependentSite && !InPattern))
    return;
  std::optional<Store> S = DependentSite ? asDependentStore(Site) : asStore(Site);
  if (!S || S->Values.empty())
    return;
  const ValueDecl *Root = rootDecl(S->Container);
  if (!Root)
    return;

  if (const Stmt *Loop = enclosingLoop(Site, Ctx)) {
    if (isLocalToIteration(Root, Loop, Ctx) || clearedEachIteration(Root, Loop) ||
        overParameters(Loop) || keepsOneSlot(S->Key, Root, Loop, Ctx))
      return;
    for (const Expr *Value : S->Values) {
      OriginResult Origin = Value->isTypeDependent() ? DependentOrigin(Ctx).of(Value) : classifyTensor(Value, Ctx);
      if (Origin.Kind != TensorOrigin::GraphAttached)
        continue;
      ContainerUses::Verdict V = ContainerUses(Ctx).of(Root);
      if (V == ContainerUses::Backprop)
        return;
      // Uses of the container in dependent code are only partly visible: no rewrite there.
      bool Fix = V == ContainerUses::Contained && !InPattern && !inTemplateInstantiation(Site, Ctx);
      report(Site, Value, Origin.Source, Loop, nullptr, Fix, Ctx);
      return;
    }
    return;
  }
  if (!InPattern)
    reportThroughCallers(Site, S->Values, Root, Fn, Ctx);
}

void LossStoredInContainerCheck::reportThroughCallers(const Expr *StoreSite, ArrayRef<const Expr *> Values,
                                                      const ValueDecl *Root, const FunctionDecl *Helper,
                                                      ASTContext &Ctx) {
  // A helper that stores into a container the caller owns (a reference parameter, a member,
  // a variable a lambda captured), called from a loop: the storing happens once per iteration.
  const auto *ContainerParam = dyn_cast<ParmVarDecl>(Root);
  if (ContainerParam && !ContainerParam->getType()->isReferenceType() &&
      !ContainerParam->getType()->isPointerType())
    return;
  if (const auto *VD = dyn_cast<VarDecl>(Root);
      VD && !ContainerParam && VD->isLocalVarDecl() && VD->getParentFunctionOrMethod() == Helper)
    return;
  for (const Expr *Value : Values) {
    OriginResult Origin = classifyTensor(Value, Ctx);
    const auto *ValueParam = dyn_cast_or_null<ParmVarDecl>(
        isa<DeclRefExpr>(Value) ? cast<DeclRefExpr>(Value)->getDecl() : nullptr);
    if (Origin.Kind != TensorOrigin::GraphAttached &&
        !(ValueParam && ValueParam->getDeclContext() == Helper))
      continue;
    for (const CallExpr *Call : callersOf(Helper, Ctx)) {
      const Stmt *Loop = enclosingLoop(Call, Ctx);
      if (!Loop || Call->getBeginLoc().isMacroID() || enclosingFunction(Call, Ctx)->isDependentContext())
        continue;
      const ValueDecl *CallerRoot = Root;
      unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Helper) ? 1 : 0;
      if (ContainerParam) {
        unsigned I = ContainerParam->getFunctionScopeIndex() + Offset;
        CallerRoot = I < Call->getNumArgs() ? rootDecl(Call->getArg(I)) : nullptr;
      }
      if (!CallerRoot || isLocalToIteration(CallerRoot, Loop, Ctx) ||
          clearedEachIteration(CallerRoot, Loop) || overParameters(Loop))
        continue;
      const Expr *Shown = Value;
      OriginResult CallerOrigin = Origin;
      if (Origin.Kind != TensorOrigin::GraphAttached) {
        unsigned I = ValueParam->getFunctionScopeIndex() + Offset;
        if (I >= Call->getNumArgs())
          continue;
        Shown = Call->getArg(I)->IgnoreUnlessSpelledInSource();
        CallerOrigin = classifyTensor(Shown, Ctx);
        if (CallerOrigin.Kind != TensorOrigin::GraphAttached)
          continue;
      }
      if (ContainerUses(Ctx).of(CallerRoot) == ContainerUses::Backprop)
        continue;
      report(Call, Shown, CallerOrigin.Source, Loop, StoreSite, false, Ctx);
    }
    return;
  }
}

void LossStoredInContainerCheck::report(const Expr *Site, const Expr *Value, const Expr *Source,
                                        const Stmt *Loop, const Expr *HelperStore, bool Fix,
                                        ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange Range = CharSourceRange::getTokenRange(Value->getSourceRange());
  StringRef Text = Lexer::getSourceText(Range, SM, Ctx.getLangOpts());
  bool Named = !Text.empty() && Text.size() <= 50 && !Text.contains('\n') &&
               !Value->getBeginLoc().isMacroID() && !Value->getEndLoc().isMacroID();
  bool Parens = needsParens(Value);
  std::string Shown = Named ? (Parens ? "(" + Text.str() + ")" : Text.str()) : "";
  std::string Remedy = looksLikeLoss(Value)
                           ? "'" + Shown + ".item<float>()' or '" + Shown + ".detach()'"
                           : "'" + Shown + ".detach()'";
  std::string Message = "graph-attached tensor" + (Named ? " '" + Text.str() + "'" : std::string()) +
                        " stored in a container inside a loop" +
                        (HelperStore ? std::string(" (by the called function)") : std::string()) +
                        " keeps its autograd graph alive; consider storing " +
                        (Named ? Remedy : std::string("its '.item<float>()' or '.detach()'"));
  {
    auto D = diag(Site->getBeginLoc(), Message);
    if (Fix && Named) {
      SourceLocation End = Lexer::getLocForEndOfToken(Value->getEndLoc(), 0, SM, Ctx.getLangOpts());
      if (Parens)
        D << FixItHint::CreateInsertion(Value->getBeginLoc(), "(");
      D << FixItHint::CreateInsertion(End, Parens ? ").detach()" : ".detach()");
    }
  }
  if (HelperStore)
    diag(HelperStore->getBeginLoc(), "the called function stores it here", DiagnosticIDs::Note);
  if (Source && Source->getBeginLoc().isValid())
    diag(Source->getBeginLoc(), "the tensor became graph-attached here", DiagnosticIDs::Note);
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
