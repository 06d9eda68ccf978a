#include "utils/TorchMatchers.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Regex.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

bool hasQualifiedName(const NamedDecl *D, StringRef Qualified) {
  Qualified.consume_front("::");
  SmallVector<StringRef, 4> Parts;
  Qualified.split(Parts, "::");
  const DeclContext *DC = nullptr;
  for (auto It = Parts.rbegin(); It != Parts.rend(); ++It) {
    if (!D || !D->getIdentifier() || D->getName() != *It)
      return false;
    DC = D->getDeclContext();
    while (DC && (DC->isInlineNamespace() || isa<LinkageSpecDecl>(DC)))
      DC = DC->getParent();
    D = dyn_cast_or_null<NamedDecl>(DC);
  }
  return DC && DC->isTranslationUnit();
}

bool isTensorClass(const CXXRecordDecl *RD) {
  return hasQualifiedName(RD, names::Tensor) || hasQualifiedName(RD, names::TensorBase);
}

namespace {
/// For std::shared_ptr<T> / std::unique_ptr<T> / T*: T; otherwise the type itself.
QualType pointeeOrSelf(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *PT = T->getAs<PointerType>())
    return PT->getPointeeType().getCanonicalType();
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (Spec && (hasQualifiedName(Spec, "::std::shared_ptr") || hasQualifiedName(Spec, "::std::unique_ptr")) &&
      Spec->getTemplateArgs().size() >= 1 && Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
    return Spec->getTemplateArgs()[0].getAsType().getCanonicalType();
  return T;
}

bool isModuleRecord(const CXXRecordDecl *RD) {
  return isSameOrDerivedFrom(RD, names::Module) || isSameOrDerivedFrom(RD, names::ModuleHolder) ||
         isSameOrDerivedFrom(RD, names::AnyModule) || isSameOrDerivedFrom(RD, names::JitModule);
}

AST_MATCHER(CXXRecordDecl, isModuleRecordMatcher) { return isModuleRecord(&Node); }
AST_MATCHER(CXXRecordDecl, isOptimizerRecordMatcher) { return isSameOrDerivedFrom(&Node, names::Optimizer); }
AST_MATCHER(CXXRecordDecl, isTensorRecordMatcher) { return isTensorClass(&Node); }

/// The module a call left unresolved by its dependent arguments runs on: the base of
/// `m->forward(x)` or the module of `m(x)`, when its own type is a module (not dependent).
const Expr *dependentCallModule(const CallExpr *Call) {
  if (isa<CXXMemberCallExpr, CXXOperatorCallExpr>(Call))
    return nullptr;
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  const Expr *Obj = Callee;
  if (const auto *M = dyn_cast<MemberExpr>(Callee))
    Obj = M->getBase();
  else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    Obj = M->isImplicitAccess() ? nullptr : M->getBase();
  else if (isa<CXXDependentScopeMemberExpr>(Callee))
    return nullptr;
  return Obj && !Obj->isTypeDependent() && isModuleType(Obj->getType()) ? Obj : nullptr;
}

/// `model->forward(batch.data)` / `model(batch.data)` left unresolved by their arguments.
AST_MATCHER(CallExpr, dependentModuleForward) {
  const Expr *Obj = dependentCallModule(&Node);
  StringRef Name;
  return Obj && (Obj == Node.getCallee()->IgnoreParenImpCasts() ||
                 (dependentMemberBase(&Node, Name, /*AllowArrow=*/true) && Name == "forward"));
}

/// T for a ModuleHolder<T> (or a class derived from one, like torch::nn::Linear), else null.
const CXXRecordDecl *heldModule(const CXXRecordDecl *RD, unsigned Depth = 3) {
  if (!RD)
    return nullptr;
  if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
      Spec && Spec->getName() == "ModuleHolder" && Spec->getTemplateArgs().size() == 1 &&
      Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
    return Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  RD = RD->getDefinition();
  if (!RD || Depth == 0)
    return nullptr;
  for (const CXXBaseSpecifier &Base : RD->bases())
    if (const CXXRecordDecl *Held = heldModule(recordOf(Base.getType()), Depth - 1))
      return Held;
  return nullptr;
}

/// `p.grad()` / `p.mutable_grad()`, possibly seen through `.data()` / `.detach()` (which
/// share the gradient's storage).
clang::ast_matchers::internal::Matcher<Expr> gradAccess() {
  auto Grad = matchers::tensorMethodCall({"grad", "mutable_grad"});
  // `.data()` returns a temporary: look through its materialization too.
  return ignoringImplicit(expr(anyOf(
      Grad, cxxMemberCallExpr(matchers::tensorMethodCall({"data", "detach"}), on(ignoringImplicit(Grad))))));
}

bool callsDependentMember(const Expr *E, ArrayRef<StringRef> Names) {
  const auto *Call = dyn_cast_or_null<CallExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return Call && llvm::is_contained(Names, dependentMemberName(Call->getCallee()));
}

/// `p.grad().zero_()` and friends where `p` has a dependent type.
AST_MATCHER(CallExpr, isDependentGradClearing) {
  if (!callsDependentMember(&Node, {"zero_", "fill_", "copy_", "reset"}))
    return false;
  StringRef Name;
  const Expr *Grad = dependentMemberBase(&Node, Name, /*AllowArrow=*/true);
  if (callsDependentMember(Grad, {"data", "detach"}))
    Grad = dependentMemberBase(cast<CallExpr>(Grad->IgnoreParenImpCasts()), Name, /*AllowArrow=*/true);
  return callsDependentMember(Grad, {"grad", "mutable_grad"});
}

/// `p.mutable_grad() = ...` where `p` has a dependent type.
AST_MATCHER(BinaryOperator, isDependentGradAssignment) {
  return Node.getOpcode() == BO_Assign && callsDependentMember(Node.getLHS(), {"grad", "mutable_grad"});
}

class UnparsedCodeFinder : public RecursiveASTVisitor<UnparsedCodeFinder> {
public:
  bool Found = false;
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return true; }
  bool VisitRecoveryExpr(RecoveryExpr *) { return !(Found = true); }
  bool VisitTypoExpr(TypoExpr *) { return !(Found = true); }
  bool VisitDecl(Decl *D) { return !(Found = D->isInvalidDecl()); }
};
} // namespace

DynTypedNode parentOf(const DynTypedNode &N, ASTContext &Ctx) {
  auto Parents = Ctx.getParents(N);
  return Parents.empty() ? DynTypedNode() : Parents[0];
}

const CXXRecordDecl *recordOf(QualType T) {
  return T.isNull() ? nullptr : T.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl();
}

bool isSameOrDerivedFrom(const CXXRecordDecl *RD, StringRef QualifiedName) {
  if (!RD)
    return false;
  if (hasQualifiedName(RD, QualifiedName))
    return true;
  RD = RD->getDefinition();
  return RD && llvm::any_of(RD->bases(), [&](const CXXBaseSpecifier &B) {
           return isSameOrDerivedFrom(recordOf(B.getType()), QualifiedName);
         });
}

bool isTensorType(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  return RD && hasQualifiedName(RD, names::Tensor);
}

bool isModuleType(QualType T) { return !T.isNull() && isModuleRecord(pointeeOrSelf(T)->getAsCXXRecordDecl()); }

bool isOptimizerType(QualType T) {
  return !T.isNull() && isSameOrDerivedFrom(pointeeOrSelf(T)->getAsCXXRecordDecl(), names::Optimizer);
}

bool isTensorMethod(const FunctionDecl *FD, ArrayRef<StringRef> Names) {
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(FD);
  return MD && MD->getIdentifier() && isTensorClass(MD->getParent()) && llvm::is_contained(Names, MD->getName());
}

bool isLossName(StringRef Name) {
  return Name.ends_with_insensitive("loss") || llvm::is_contained(names::LossFunctions, Name);
}

SourceLocation ownLocation(const Stmt *S) {
  if (const auto *E = dyn_cast<Expr>(S)) {
    // Implicit wrappers (temporaries, casts, cleanups) start where what they wrap starts.
    E = E->IgnoreImplicit();
    if (const auto *Call = dyn_cast<CallExpr>(E); Call && Call->getRParenLoc().isValid())
      return Call->getRParenLoc(); // an overloaded operator's is the operator
    if (const auto *Sub = dyn_cast<ArraySubscriptExpr>(E))
      return Sub->getRBracketLoc();
    if (SourceLocation Loc = E->getExprLoc(); Loc.isValid())
      return Loc;
  }
  return S->getBeginLoc();
}

bool isInSystemHeader(const Decl *D) {
  return D && D->getASTContext().getSourceManager().isInSystemHeader(D->getLocation());
}

int gradModeEffect(const VarDecl *VD) {
  if (!VD || !VD->hasLocalStorage())
    return 0;
  const CXXRecordDecl *RD = recordOf(VD->getType());
  if (!RD)
    return 0;
  if (isSameOrDerivedFrom(RD, names::NoGradGuard))
    return 1;
  bool IsInference = hasQualifiedName(RD, names::InferenceMode);
  bool IsAutoGrad = hasQualifiedName(RD, names::AutoGradMode);
  if (!IsInference && !IsAutoGrad)
    return 0;
  // The constructor argument decides: InferenceMode(true) (the default) and
  // AutoGradMode(false) turn recording off; the opposite values turn it back on.
  const Expr *Init = VD->getInit();
  const auto *Construct = Init ? dyn_cast<CXXConstructExpr>(Init->IgnoreImplicit()) : nullptr;
  if (!Construct)
    return 0;
  bool Enabled = true;
  if (Construct->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(Construct->getArg(0))) {
    if (Construct->getArg(0)->isValueDependent() ||
        !Construct->getArg(0)->EvaluateAsBooleanCondition(Enabled, VD->getASTContext()))
      return 0;
  }
  return Enabled == IsInference ? 1 : -1;
}

const Expr *viewedTensor(const Expr *E) {
  E = E->IgnoreUnlessSpelledInSource();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Op->getOperator() == OO_Subscript && isTensorType(Op->getArg(0)->getType()))
    return Op->getArg(0);
  const auto *Call = dyn_cast<CXXMemberCallExpr>(E);
  const CXXMethodDecl *MD = Call ? Call->getMethodDecl() : nullptr;
  if (!MD || !MD->getIdentifier() || !isTensorMethod(MD, {MD->getName()}))
    return nullptr;
  if (MD->getName() == "index") {
    for (const Expr *Arg : Call->arguments())
      if (!match(findAll(expr(matchers::isTensorExpr(), unless(cxxConstructExpr()), unless(materializeTemporaryExpr()))),
                 *Arg, MD->getASTContext())
               .empty())
        return nullptr;
    return Call->getImplicitObjectArgument();
  }
  return llvm::is_contained(names::ViewOps, MD->getName()) ? Call->getImplicitObjectArgument() : nullptr;
}

DeviceKind deviceKind(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreImplicit();
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() >= 1 &&
      isSameOrDerivedFrom(recordOf(Construct->getType()), names::Device)) {
    // Device(kCPU), Device(kCUDA, 0), Device("cuda:0").
    E = Construct->getArg(0)->IgnoreImplicit();
    if (const auto *Str = dyn_cast<StringLiteral>(E->IgnoreUnlessSpelledInSource()))
      return Str->getString().starts_with("cpu") ? DeviceKind::Host : DeviceKind::Accelerator;
  }
  const auto *Enum = E->getType()->getAs<EnumType>();
  Expr::EvalResult R;
  if (Enum && Enum->getDecl()->getName() == "DeviceType" && !E->isValueDependent() && E->EvaluateAsInt(R, Ctx))
    return R.Val.getInt() == 0 /* DeviceType::CPU */ ? DeviceKind::Host : DeviceKind::Accelerator;
  return DeviceKind::Unknown;
}

std::optional<DeviceKind> deviceMoveOf(const CXXMemberCallExpr *Call, ASTContext &Ctx) {
  const CXXMethodDecl *MD = Call->getMethodDecl();
  static const StringRef Moves[] = {"cuda", "cpu", "to"};
  if (!MD || !MD->getIdentifier() || !llvm::is_contained(Moves, MD->getName()) ||
      !(isTensorMethod(MD, Moves) || isModuleType(QualType(MD->getParent()->getTypeForDecl(), 0))))
    return std::nullopt;
  if (MD->getName() == "cuda")
    return DeviceKind::Accelerator;
  if (MD->getName() == "cpu")
    return DeviceKind::Host;
  if (Call->getNumArgs() == 0)
    return std::nullopt;
  const Expr *Arg = Call->getArg(0)->IgnoreImplicit();
  // x.to(device) converts the Device / DeviceType implicitly to TensorOptions.
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Arg);
      Construct && !isa<CXXTemporaryObjectExpr>(Construct) && Construct->getNumArgs() == 1 &&
      isSameOrDerivedFrom(recordOf(Construct->getType()), names::TensorOptions))
    Arg = Construct->getArg(0)->IgnoreImplicit();
  const CXXRecordDecl *RD = recordOf(Arg->getType());
  const auto *Enum = Arg->getType()->getAs<EnumType>();
  if (isSameOrDerivedFrom(RD, names::Device) || (Enum && Enum->getDecl()->getName() == "DeviceType"))
    return deviceKind(Arg, Ctx);
  if (isSameOrDerivedFrom(RD, names::TensorOptions)) {
    // Explicit options move only when they name a device: TensorOptions().device(d).
    auto Dev = match(findAll(cxxMemberCallExpr(callee(cxxMethodDecl(hasName("device")))).bind("d")), *Arg, Ctx);
    if (Dev.empty())
      return std::nullopt;
    const auto *DevCall = Dev.front().getNodeAs<CXXMemberCallExpr>("d");
    return DevCall->getNumArgs() ? deviceKind(DevCall->getArg(0), Ctx) : DeviceKind::Unknown;
  }
  return std::nullopt;
}

bool mayNameDevice(const Expr *E, ASTContext &Ctx) {
  auto DeviceOrOptions = expr(anyOf(hasType(cxxRecordDecl(hasName(names::Device))),
                                    hasType(enumDecl(hasName(names::DeviceType))),
                                    declRefExpr(hasType(cxxRecordDecl(hasName(names::TensorOptions))))));
  return E && !match(findAll(DeviceOrOptions.bind("d")), *E, Ctx).empty();
}

const CallExpr *hostFactoryCall(const Expr *E, ASTContext &Ctx) {
  const auto *Call = dyn_cast_or_null<CallExpr>(E ? E->IgnoreUnlessSpelledInSource() : nullptr);
  const FunctionDecl *FD = Call && !isa<CXXMemberCallExpr>(Call) ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || !isInSystemHeader(FD) || !isTensorType(Call->getType()) ||
      !(llvm::is_contained(names::HostFactories, FD->getName()) ||
        llvm::is_contained(names::HostMemoryWrappers, FD->getName())))
    return nullptr;
  return llvm::none_of(Call->arguments(), [&](const Expr *Arg) { return mayNameDevice(Arg, Ctx); }) ? Call
                                                                                                    : nullptr;
}

namespace matchers {

clang::ast_matchers::internal::BindableMatcher<Stmt> tensorMethodCall(std::vector<StringRef> Names) {
  return cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName(Names), ofClass(isTensorRecordMatcher()))));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> moduleMethodCall(std::vector<StringRef> Names) {
  return cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName(Names), ofClass(isModuleRecordMatcher()))));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> optimizerMethodCall(std::vector<StringRef> Names) {
  return cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName(Names), ofClass(isOptimizerRecordMatcher()))));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> moduleForwardCall() {
  return stmt(anyOf(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("forward"), ofClass(isModuleRecordMatcher())))),
      cxxOperatorCallExpr(hasOverloadedOperatorName("()"),
                          callee(cxxMethodDecl(ofClass(isModuleRecordMatcher())))),
      callExpr(dependentModuleForward())));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> backwardCall() {
  return stmt(anyOf(tensorMethodCall({"backward"}),
                    callExpr(callee(functionDecl(hasName("::torch::autograd::backward"))))));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> optimizerStepCall() { return optimizerMethodCall({"step"}); }

clang::ast_matchers::internal::BindableMatcher<Stmt> zeroGradCall() {
  return stmt(anyOf(optimizerMethodCall({"zero_grad"}), moduleMethodCall({"zero_grad"})));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> gradClearing() {
  auto ZeroGradName = matchesName("[Zz]ero_?[Gg]rad");
  return stmt(anyOf(
      zeroGradCall(), callExpr(callee(functionDecl(ZeroGradName))),
      cxxMemberCallExpr(tensorMethodCall({"zero_", "fill_", "copy_", "reset"}), on(gradAccess())),
      cxxOperatorCallExpr(hasOverloadedOperatorName("="), hasArgument(0, gradAccess())),
      callExpr(callee(functionDecl(hasAnyName("::at::zero_", "::at::fill_"))), hasArgument(0, gradAccess())),
      callExpr(dependentMemberCall({"zero_grad"})), callExpr(isDependentGradClearing()),
      binaryOperator(isDependentGradAssignment()),
      callExpr(callee(unresolvedLookupExpr(hasAnyDeclaration(clang::ast_matchers::namedDecl(ZeroGradName)))))));
}

clang::ast_matchers::internal::BindableMatcher<Stmt> loopStmt() {
  return stmt(anyOf(forStmt(), cxxForRangeStmt(), whileStmt(), doStmt()));
}

} // namespace matchers

bool isWithin(SourceLocation Loc, SourceRange Range, const SourceManager &SM) {
  return !SM.isBeforeInTranslationUnit(Loc, Range.getBegin()) &&
         !SM.isBeforeInTranslationUnit(Range.getEnd(), Loc);
}

const Stmt *loopBody(const Stmt *Loop) {
  if (!Loop)
    return nullptr;
  return llvm::TypeSwitch<const Stmt *, const Stmt *>(Loop)
      .Case<ForStmt, CXXForRangeStmt, WhileStmt, DoStmt>([](auto *L) { return L->getBody(); })
      .Default(static_cast<const Stmt *>(nullptr));
}

const Stmt *enclosingLoop(const Stmt *S, ASTContext &Ctx) {
  DynTypedNode Child = DynTypedNode::create(*S);
  for (DynTypedNode P = parentOf(Child, Ctx); !P.getNodeKind().isNone();
       Child = P, P = parentOf(P, Ctx)) {
    if (const auto *PS = P.get<Stmt>(); PS && loopBody(PS) && loopBody(PS) == Child.get<Stmt>())
      return PS;
    const auto *D = P.get<Decl>();
    // A lambda's body hangs off its call operator and closure class: keep walking.
    if (const auto *FD = dyn_cast_or_null<FunctionDecl>(D); FD && !isLambdaCallOperator(FD))
      return nullptr;
    if (const auto *RD = dyn_cast_or_null<CXXRecordDecl>(D); RD && !RD->isLambda())
      return nullptr;
    if (isa_and_nonnull<NamespaceDecl, TranslationUnitDecl>(D))
      return nullptr;
  }
  return nullptr;
}

const FunctionDecl *enclosingFunction(const Stmt *S, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*S);
  for (DynTypedNode P = parentOf(N, Ctx); !P.getNodeKind().isNone(); P = parentOf(P, Ctx)) {
    if (const auto *LE = P.get<LambdaExpr>())
      return LE->getCallOperator();
    if (const auto *FD = P.get<FunctionDecl>())
      return FD;
  }
  return nullptr;
}

bool holdsUnparsedCode(const Stmt *S, ASTContext &Ctx) {
  if (!Ctx.getDiagnostics().hasErrorOccurred())
    return false;
  UnparsedCodeFinder Finder;
  if (const FunctionDecl *FD = enclosingFunction(S, Ctx))
    Finder.TraverseDecl(const_cast<FunctionDecl *>(FD));
  else
    Finder.TraverseStmt(const_cast<Stmt *>(S));
  return Finder.Found;
}

void forEachUserDecl(ASTContext &Ctx, const std::function<void(Decl *)> &Fn) {
  const SourceManager &SM = Ctx.getSourceManager();
  for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    if (D->isImplicit() || D->getLocation().isInvalid() || SM.isInSystemHeader(D->getLocation()))
      continue;
    Fn(D);
  }
}

bool isUninstantiatedPattern(const FunctionDecl *Fn) {
  if (const FunctionTemplateDecl *FT = Fn->getDescribedFunctionTemplate())
    if (!FT->specializations().empty())
      return false;
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Fn)) {
    const CXXRecordDecl *Class = MD->getParent();
    if (const ClassTemplateDecl *CT = Class->getDescribedClassTemplate())
      return CT->specializations().empty();
    if (Class->isLambda() || Class->isLocalClass())
      if (const auto *Outer = dyn_cast<FunctionDecl>(Class->getDeclContext()))
        return Outer->isDependentContext() ? isUninstantiatedPattern(Outer) : true;
  }
  return Fn->getDescribedFunctionTemplate() != nullptr;
}

bool isParameterFreeForward(const Stmt *Forward) {
  const auto *Call = dyn_cast<CallExpr>(Forward);
  if (!Call)
    return false;
  // The callee's class, or T for `holder(x)` on a ModuleHolder<T>.
  const CXXRecordDecl *RD = nullptr;
  if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Call->getDirectCallee()))
    RD = MD->getParent();
  else if (const Expr *Obj = dependentCallModule(Call))
    RD = pointeeOrSelf(Obj->getType())->getAsCXXRecordDecl();
  if (const CXXRecordDecl *Held = heldModule(RD))
    RD = Held;
  static const llvm::Regex Names(
      "^(.*Loss|ReLU6?|LeakyReLU|R?ReLU|P?ReLU|C?ELU|SELU|GELU|GLU|SiLU|Mish|Sigmoid|Tanh|"
      "Softmax2?d?|Softmin|LogSoftmax|LogSigmoid|Softplus|Softshrink|Softsign|Hardshrink|"
      "Hardtanh|Tanhshrink|Threshold|(Feature)?(Alpha)?Dropout[23]?d?|Flatten|Unflatten|"
      "Identity|(Adaptive)?(Max|Avg)Pool[123]d|LPPool[12]d|MaxUnpool[123]d|Upsample|"
      "Pixel(Un)?[Ss]huffle|(Zero|Reflection|Replication|Constant)Pad[123]d|CosineSimilarity|"
      "PairwiseDistance|Fold|Unfold|ChannelShuffle)Impl$");
  return RD && RD->getIdentifier() && isInSystemHeader(RD) && Names.match(RD->getName());
}

StringRef dependentMemberName(const Expr *Callee) {
  Callee = Callee->IgnoreParenImpCasts();
  DeclarationName Name;
  if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee))
    Name = M->getMember();
  else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee))
    Name = M->getMemberName();
  const IdentifierInfo *II = Name.getAsIdentifierInfo();
  return II ? II->getName() : StringRef();
}

const Expr *dependentMemberBase(const CallExpr *Call, StringRef &Name, bool AllowArrow) {
  if (isa<CXXMemberCallExpr, CXXOperatorCallExpr>(Call))
    return nullptr;
  const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
  DeclarationName Member;
  const Expr *Base = nullptr;
  // A member with a single declaration is looked up, but the call still waits for the
  // arguments' types.
  if (const auto *M = dyn_cast<MemberExpr>(Callee); M && (AllowArrow || !M->isArrow()))
    std::tie(Member, Base) = std::make_pair(M->getMemberDecl()->getDeclName(), M->getBase());
  else if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(Callee);
           M && !M->isImplicitAccess() && (AllowArrow || !M->isArrow()))
    std::tie(Member, Base) = std::make_pair(M->getMember(), M->getBase());
  else if (const auto *M = dyn_cast<UnresolvedMemberExpr>(Callee);
           M && !M->isImplicitAccess() && (AllowArrow || !M->isArrow()))
    std::tie(Member, Base) = std::make_pair(M->getMemberName(), M->getBase());
  const IdentifierInfo *II = Member.getAsIdentifierInfo();
  if (!Base || !II)
    return nullptr;
  Name = II->getName();
  return Base;
}

} // namespace torchtidy
