// AutogradModel::fateOf: what becomes of the values a variable, field or container holds,
// followed through variables, containers, tensor ops, user functions and their callers. The one
// forward walk: "is it backpropagated (later in this function)", "is it meant to carry gradients".
#include "utils/AutogradModel.h"
#include "utils/Provenance.h"
#include "utils/Summaries.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ParentMapContext.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

bool isBackward(const FunctionDecl *FD) {
  const auto *NS = FD && FD->getIdentifier() ? dyn_cast<NamespaceDecl>(FD->getDeclContext()) : nullptr;
  return isTensorMethod(FD, {"backward"}) ||
         (NS && NS->getName() == "autograd" && (FD->getName() == "backward" || FD->getName() == "grad"));
}

class FateTracer {
public:
  /// With \p Passed, the parameter \p Root of Q.Scope's function: what is handed back to its
  /// caller is no keeping, and the calls it goes to out of sight are added to Passed.
  FateTracer(AutogradModel &M, const FateQuery &Q, std::vector<PassedParam> *Passed = nullptr, unsigned Root = 0)
      : M(M), Ctx(M.context()), Q(Q), Within(Q.After ? enclosingFunction(Q.After, Ctx) : nullptr),
        ScopeFn(Q.Scope ? enclosingFunction(Q.Scope, Ctx) : nullptr), Passed(Passed), RootParam(Root) {}

  ValueFate of(const ValueDecl *Root) {
    if (Passed && Seen.insert(Root).second)
      Work.push_back(Root);
    else
      follow(Root);
    // A summary asks only whether the parameter is kept: the first place keeping it answers.
    while (!Work.empty() && !Found && !(Passed && Escaped) && Seen.size() < 64) {
      const ValueDecl *D = Work.pop_back_val();
      for (const Expr *Ref : refsTo(D))
        if (stillHeldAt(Ref))
          flowUp(Ref);
    }
    return Found && !(Passed && Escaped) ? ValueFate::Backpropagated
           : Escaped                     ? ValueFate::Escapes
                                         : ValueFate::Contained;
  }

private:
  /// Whether what \p Ref names may still hold the value followed there: outside Q.After's
  /// function, yes; in it, some path runs Q.After and then \p Ref, and no assignment gives the
  /// variable a value made of nothing followed on every such path (`loss = loss / 3` keeps it).
  bool stillHeldAt(const Expr *Ref, unsigned Depth = 4) {
    if (!Within || enclosingFunction(Ref, Ctx) != Within)
      return true;
    if (!M.mayRunBefore(Q.After, Ref) ||
        (isa<ForStmt, CXXForRangeStmt, WhileStmt, DoStmt>(Q.After) &&
         isWithin(Ref->getBeginLoc(), Q.After->getSourceRange(), Ctx.getSourceManager())))
      return false;
    const Expr *New = overwriteBefore(namedDecl(Ref), Ref);
    if (!New)
      return true;
    for (const BoundNodes &B : match(findAll(declRefExpr().bind("ref")), *New, Ctx)) {
      const auto *Read = B.getNodeAs<DeclRefExpr>("ref");
      if (Depth > 0 && Seen.count(Read->getDecl()) && stillHeldAt(Read, Depth - 1))
        return true;
    }
    return false;
  }

  /// The value an assignment after (not in) Q.After gives \p V on every path from Q.After to
  /// \p At; null when some path keeps the older value.
  const Expr *overwriteBefore(const ValueDecl *V, const Stmt *At) {
    const SourceManager &SM = Ctx.getSourceManager();
    for (const Definition &D : definitionsIn(Within->getBody(), declRefExpr(to(valueDecl(equalsNode(V)))), Ctx))
      if (D.K == Definition::Assign && !isWithin(D.Site->getBeginLoc(), Q.After->getSourceRange(), SM) &&
          M.runsBeforeOnEveryPath(Q.After, D.Site) && M.runsBeforeOnEveryPath(D.Site, At))
        return D.Value;
    return nullptr;
  }

  /// A use this unit cannot see: an escape, unless only what leaves Q.After's function counts.
  void outOfSight() { Escaped |= !Within; }
  /// A call this unit cannot see into. A scope query takes it to use its arguments, not to keep
  /// them: another TU's autograd Function or kernel launcher given a per-iteration tensor is
  /// the common shape (OpenSplat's Model::forward), a callee keeping it the rare one.
  void opaqueCall() {
    if (!Q.Scope)
      outOfSight();
  }
  /// The visible calls of \p FD; where there are none, its callers are out of sight.
  llvm::ArrayRef<const CallExpr *> callers(const FunctionDecl *FD) {
    llvm::ArrayRef<const CallExpr *> Calls = M.callersOf(FD);
    if (Calls.empty())
      outOfSight();
    return Calls;
  }

  /// \p Entered: \p D is a parameter the value was passed to at a call being followed; through
  /// a const reference the callee hands nothing back, so its other callers' arguments are not
  /// this value.
  void follow(const ValueDecl *D, bool Entered = false) {
    if (!D || !Seen.insert(D).second)
      return;
    if (const auto *DD = dyn_cast<DecompositionDecl>(D)) {
      for (const BindingDecl *B : DD->bindings())
        follow(B);
      return;
    }
    const auto *VD = dyn_cast<VarDecl>(D);
    if (Q.Scope && (!VD || !VD->hasLocalStorage() ||
                    (VD->getParentFunctionOrMethod() == ScopeFn &&
                     !isWithin(VD->getLocation(), Q.Scope->getSourceRange(), Ctx.getSourceManager()))))
      Escaped = true; // kept beyond Q.Scope
    if (Q.FieldsEscape && (isa<FieldDecl>(D) || (VD && !VD->isLocalVarDeclOrParm())))
      outOfSight(); // other translation units may use it
    if (const auto *P = dyn_cast_or_null<ParmVarDecl>(VD);
        P && (P->getType()->isReferenceType() || P->getType()->isPointerType()) &&
        !(Entered && P->getType()->isReferenceType() && P->getType().getNonReferenceType().isConstQualified())) {
      const auto *FD = dyn_cast<FunctionDecl>(P->getDeclContext());
      if (FD == Within) {
        Escaped = true; // written through a parameter of Q.After's function: handed to its caller
      } else {
        // The container came from the caller, who may use it further.
        for (const CallExpr *Call : callers(FD))
          if (const Expr *Arg = argumentFor(Call, P))
            follow(containerRoot(Arg));
      }
    }
    Work.push_back(D);
  }

  /// Every expression naming \p D where it can be used: its function's body for locals,
  /// every user declaration for members and globals (after Q.After: its function's body).
  std::vector<const Expr *> refsTo(const ValueDecl *D) {
    auto Ref = expr(refTo(D)).bind("ref");
    SmallVector<BoundNodes, 1> Found;
    const auto *VD = dyn_cast<VarDecl>(D);
    const auto *Local = dyn_cast_or_null<FunctionDecl>(
        (VD && VD->isLocalVarDeclOrParm()) || isa<BindingDecl>(D) ? D->getParentFunctionOrMethod() : nullptr);
    if (const FunctionDecl *FD = Local ? Local : Within) {
      if (FD->hasBody())
        Found = match(findAll(Ref), *FD->getBody(), Ctx);
    } else {
      // A stmt matcher run on a Decl root matches nothing: descend explicitly.
      forEachUserDecl(Ctx, [&](Decl *TopLevel) {
        llvm::append_range(Found, match(decl(forEachDescendant(Ref)), *TopLevel, Ctx));
      });
    }
    std::vector<const Expr *> Refs;
    for (const BoundNodes &B : Found)
      Refs.push_back(B.getNodeAs<Expr>("ref"));
    return Refs;
  }

  void intoFunction(const CallExpr *Call, const FunctionDecl *FD, const Expr *Arg) {
    const FunctionDecl *Def = FD->getDefinition();
    if (!Def || !Def->hasBody()) {
      const ParmVarDecl *P = parameterFor(Call, FD, Arg);
      PassedParam To{RootParam, usrOf(FD), P ? P->getFunctionScopeIndex() : 0};
      if (P && Passed && !To.Callee.empty() && !llvm::is_contained(*Passed, To))
        Passed->push_back(std::move(To));
      else if (P && M.index() && M.index()->keepsParam(FD, To.CalleeParam))
        Escaped |= Q.Scope || !Within; // kept there, as its body would show
      else
        opaqueCall();
      return;
    }
    if (const ParmVarDecl *Param = parameterFor(Call, Def, Arg)) {
      EnteredBy[Def].push_back(Call);
      follow(Param, /*Entered=*/true);
    }
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
          // A detached copy backpropagates into nothing the holder keeps.
          if (!Q.Derived || isTensorMethod(Call->getMethodDecl(), {"detach", "data"}))
            return;
          Cur = Call;
        } else {
          Cur = ME;
        }
        if (!canHoldGraph(cast<Expr>(Cur)->getType()))
          return;
        continue;
      }
      if (const auto *Call = dyn_cast<CallExpr>(PE)) {
        if (!callArgument(Call, cast<Expr>(Cur)))
          return;
        Cur = Call;
        continue;
      }
      if (!canHoldGraph(PE->getType()) ||
          !(Q.Derived || isa<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, FullExpr,
                             CXXConstructExpr, InitListExpr, CXXFunctionalCastExpr>(PE)))
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
    if (auto S = M.containerStore(Call)) {
      // Stored into another container (or this one again): follow that container.
      if (!isa<CXXOperatorCallExpr>(Call) || Call->getArg(1) == Arg)
        follow(containerRoot(S->Container));
      return false;
    }
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Call); OCE && OCE->isAssignmentOp() && OCE->getArg(1) == Arg) {
      follow(containerRoot(OCE->getArg(0)));
      return false;
    }
    // The object of an operator is no argument; a call of a std::function parameter runs the
    // lambdas passed for it.
    if (!(isa<CXXOperatorCallExpr>(Call) && isa_and_nonnull<CXXMethodDecl>(FD) && Call->getArg(0) == Arg))
      for (const FunctionDecl *Callee : M.calledFunctions(Call))
        if (!isInSystemHeader(Callee))
          intoFunction(Call, Callee, Arg);
    if (!FD && !isa<CXXOperatorCallExpr>(Call))
      opaqueCall();
    static constexpr llvm::StringLiteral Carriers[] = {"move", "forward", "make_pair", "make_tuple"};
    bool Carries = FD && FD->isInStdNamespace() && FD->getIdentifier() && llvm::is_contained(Carriers, FD->getName());
    return canHoldGraph(Call->getType()) && (Q.Derived || Carries);
  }

  void varInitialized(const VarDecl *VD) {
    // `for (auto &t : c)`: the hidden __range variable holds the container.
    if (VD->isImplicit())
      if (const auto *DS = parentOf(VD, Ctx).get<DeclStmt>())
        if (const auto *For = parentOf(DS, Ctx).get<CXXForRangeStmt>(); For && For->getRangeStmt() == DS) {
          follow(For->getLoopVariable());
          return;
        }
    if (isa<DecompositionDecl>(VD) || canHoldGraph(VD->getType()))
      follow(VD);
  }

  void returned(const Stmt *Ret) {
    const FunctionDecl *FD = enclosingFunction(Ret, Ctx);
    if (!FD)
      return;
    if (FD == Within || (Q.Scope && FD == ScopeFn)) {
      Escaped |= !Passed; // handed to the caller (who follows it further when it asks of a summary)
      return;
    }
    // What a followed call passed in comes back out of that call, not out of every call.
    if (auto It = EnteredBy.find(FD); It != EnteredBy.end()) {
      auto Calls = It->second; // flowUp may enter more functions
      for (const CallExpr *Call : Calls)
        if (!Found)
          flowUp(Call);
      return;
    }
    // A module method returning the collected tensors: they are the model's output.
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD);
        MD && isModuleType(QualType(MD->getParent()->getTypeForDecl(), 0))) {
      Found = true;
      return;
    }
    for (const CallExpr *Call : callers(FD))
      if (!Found)
        flowUp(Call);
  }

  AutogradModel &M;
  ASTContext &Ctx;
  const FateQuery &Q;
  const FunctionDecl *Within; ///< Q.After's function
  const FunctionDecl *ScopeFn; ///< Q.Scope's function
  std::vector<PassedParam> *Passed;
  unsigned RootParam;
  llvm::SmallVector<const ValueDecl *, 8> Work;
  llvm::SmallPtrSet<const ValueDecl *, 16> Seen;
  /// The calls the walk followed a value into, by the function they run.
  llvm::DenseMap<const FunctionDecl *, llvm::SmallVector<const CallExpr *, 2>> EnteredBy;
  bool Found = false;
  bool Escaped = false;
};
} // namespace

DynTypedNode valueUser(const Expr *E, ASTContext &Ctx, const Stmt **Carried) {
  const Stmt *Child = E;
  DynTypedNode P;
  for (unsigned Steps = 0; Steps < 16; ++Steps) {
    // One parent only: a node shared by a template and its instantiation has several.
    DynTypedNodeList Parents = Ctx.getParents(*Child);
    P = Parents.size() == 1 ? Parents[0] : DynTypedNode();
    const auto *PE = P.get<Expr>();
    const auto *Copy = dyn_cast_or_null<CXXConstructExpr>(PE);
    bool Carries = PE && (isa<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
                                 FullExpr>(PE) ||
                          (Copy && Copy->getNumArgs() == 1 && Copy->getConstructor()->isCopyOrMoveConstructor()));
    if (!Carries)
      break;
    Child = PE;
  }
  if (Carried)
    *Carried = Child;
  return P;
}

ValueDestination AutogradModel::destinationOf(const Expr *E, Through Carry,
                                              llvm::function_ref<bool(const CXXMemberCallExpr *)> PassesOn) {
  using D = Destination;
  const Stmt *Child = E;
  for (unsigned Steps = 0; Steps < 32; ++Steps) {
    DynTypedNode User = valueUser(cast<Expr>(Child), Ctx, &Child);
    const auto *Value = cast<Expr>(Child);
    if (const auto *VD = User.get<VarDecl>())
      return {D::Variable, nullptr, Value, VD};
    const auto *S = User.get<Stmt>();
    const auto *PE = dyn_cast_or_null<Expr>(S);
    const auto *Comma = dyn_cast_or_null<BinaryOperator>(S);
    if (isa_and_nonnull<CompoundStmt, IfStmt, ForStmt, CXXForRangeStmt, WhileStmt, DoStmt, SwitchCase, LabelStmt,
                        AttributedStmt>(S) ||
        (Comma && Comma->isCommaOp() && Comma->getLHS() == Value))
      return {D::Discarded, S, Value};
    if (!PE)
      return {!S ? D::Unknown : isa<ReturnStmt>(S) ? D::Returned : D::Used, S, Value};
    if (const auto *ME = dyn_cast<MemberExpr>(PE)) {
      const Stmt *Callee = nullptr;
      const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(valueUser(ME, Ctx, &Callee).get<Stmt>());
      if (!Call || Call->getCallee() != Callee || !PassesOn || !PassesOn(Call))
        return {D::Object, ME, Value};
      Child = Call;
      continue;
    }
    const auto *Call = dyn_cast<CallExpr>(PE);
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(PE);
        Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 && Op->getArg(1) == Value)
      return {D::Assigned, Op, Value, nullptr, Op->getArg(0)};
    CallShape Shape = Call ? callShape(Call) : CallShape();
    if (Shape.Object && llvm::is_contained(names::ContainerStoreMethods, Shape.Name))
      return {D::Stored, Call, Value, nullptr, Shape.Object};
    const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
    bool Converts = isa<CXXFunctionalCastExpr>(PE) || (isa<CXXConstructExpr>(PE) && isTensorType(PE->getType()));
    bool Aggregates = isa<CXXConstructExpr, InitListExpr, ParenListExpr>(PE) ||
                      (FD && FD->isInStdNamespace() && FD->getIdentifier() &&
                       (FD->getName() == "make_pair" || FD->getName() == "make_tuple"));
    if (!(Converts && Carry >= Through::Conversions) && !(Aggregates && Carry == Through::Aggregates))
      return {Call ? D::Argument : D::Used, PE, Value};
    Child = PE;
  }
  return {};
}

const VarDecl *receivingVariable(const Expr *E, ASTContext &Ctx) {
  auto PointerVariable = [](const Expr *P) { return dyn_cast_or_null<VarDecl>(namedDecl(throughPointer(P))); };
  const Stmt *Child = E;
  for (unsigned Wrappers = 0; Wrappers < 6; ++Wrappers) {
    DynTypedNode User = valueUser(cast<Expr>(Child), Ctx, &Child);
    if (const auto *VD = User.get<VarDecl>())
      return VD->hasLocalStorage() ? VD : nullptr;
    if (const auto *Assign = User.get<BinaryOperator>())
      return Assign->isAssignmentOp() ? PointerVariable(Assign->getLHS()) : nullptr;
    if (const auto *Op = User.get<CXXOperatorCallExpr>())
      return Op->isAssignmentOp() ? PointerVariable(Op->getArg(0)) : nullptr;
    if (const auto *Member = User.get<CXXMemberCallExpr>())
      return Member->getMethodDecl() && Member->getMethodDecl()->getName() == "reset"
                 ? PointerVariable(Member->getImplicitObjectArgument())
                 : nullptr;
    // A conversion of unique_ptr<Derived> to unique_ptr<Base>, `new`, `std::move(...)`.
    const auto *Wrapper = User.get<Expr>();
    if (!Wrapper)
      return nullptr;
    Child = Wrapper;
  }
  return nullptr;
}

bool decidesBranch(const Expr *E, ASTContext &Ctx, unsigned Depth) {
  const Stmt *Child = E;
  for (unsigned Steps = 0; Steps < 64; ++Steps) {
    DynTypedNode User = valueUser(cast<Expr>(Child), Ctx, &Child);
    if (const auto *S = User.get<Stmt>(); isa_and_nonnull<IfStmt, WhileStmt, DoStmt, ForStmt, SwitchStmt>(S))
      return Child == llvm::TypeSwitch<const Stmt *, const Stmt *>(S)
                          .Case<IfStmt, WhileStmt, DoStmt, ForStmt, SwitchStmt>([](auto *L) { return L->getCond(); });
    const auto *CO = User.get<ConditionalOperator>();
    const auto *BO = User.get<BinaryOperator>();
    const auto *UO = User.get<UnaryOperator>();
    const auto *Call = User.get<CallExpr>();
    const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
    if ((CO && Child == CO->getCond()) || (BO && (BO->isComparisonOp() || BO->isLogicalOp())) ||
        (UO && UO->getOpcode() == UO_LNot) ||
        (Callee && Callee->getIdentifier() &&
         llvm::is_contained({StringRef("isnan"), StringRef("isinf"), StringRef("isfinite")}, Callee->getName())))
      return true;
    // Into a local: whether a condition or comparison reads it.
    const auto *Target = User.get<VarDecl>();
    if (const auto *Assigned = BO && BO->isAssignmentOp() ? dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts())
                                                          : nullptr)
      Target = dyn_cast<VarDecl>(Assigned->getDecl());
    if (Target) {
      const FunctionDecl *Fn = enclosingFunction(E, Ctx);
      if (Depth == 0 || !Target->isLocalVarDecl() || !Fn || !Fn->getBody())
        return false;
      auto Uses = match(findAll(declRefExpr(to(varDecl(equalsNode(Target)))).bind("use")), *Fn->getBody(), Ctx);
      return llvm::any_of(
          Uses, [&](const BoundNodes &B) { return decidesBranch(B.getNodeAs<DeclRefExpr>("use"), Ctx, Depth - 1); });
    }
    if (!User.get<Expr>())
      return false;
    Child = User.get<Expr>();
  }
  return false;
}

ValueFate AutogradModel::fateOf(const ValueDecl *Holder, const FateQuery &Q) {
  return Holder ? FateTracer(*this, Q).of(Holder) : ValueFate::Escapes;
}

void summarizeKeptParams(AutogradModel &M, const FunctionDecl *FD, FunctionSummary &S) {
  FateQuery InBody;
  InBody.Scope = FD->getBody();
  InBody.Derived = false; // the object itself: torch-allocation-in-loop's question
  for (unsigned I = 0; I < FD->getNumParams() && I < 32; ++I)
    if (canHoldGraph(FD->getParamDecl(I)->getType()) &&
        FateTracer(M, InBody, &S.PassedParams, I).of(FD->getParamDecl(I)) == ValueFate::Escapes)
      S.KeptParams |= 1u << I;
}

} // namespace torchtidy
