#ifndef TORCHTIDY_CHECKS_UTILS_TORCHMATCHERS_H
#define TORCHTIDY_CHECKS_UTILS_TORCHMATCHERS_H

// The LibTorch vocabulary of all checks: type predicates, call matchers, scopes. Types are
// compared canonically against utils/TorchNames.h, so aliases resolve.

#include "utils/TorchNames.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <vector>

namespace torchtidy {

// ---- Type predicates ---------------------------------------------------------------------

/// Whether \p D is named exactly \p Qualified ("::a::b::C"), skipping inline namespaces.
bool hasQualifiedName(const clang::NamedDecl *D, llvm::StringRef Qualified);
/// at::Tensor or at::TensorBase, which declares some of its methods.
bool isTensorClass(const clang::CXXRecordDecl *RD);
/// The class a type names, looking through aliases, cv-qualifiers and references.
const clang::CXXRecordDecl *recordOf(clang::QualType T);
/// Whether \p RD is the class \p QualifiedName ("::ns::Name") or derives from it.
bool isSameOrDerivedFrom(const clang::CXXRecordDecl *RD, llvm::StringRef QualifiedName);
/// at::Tensor (torch::Tensor, torch::autograd::Variable), by value or reference.
bool isTensorType(clang::QualType T);
/// A torch::nn::Module subclass, a ModuleHolder (TORCH_MODULE type), AnyModule, a TorchScript
/// torch::jit::Module, or a pointer / std::shared_ptr / std::unique_ptr to one of those.
bool isModuleType(clang::QualType T);
/// torch::optim::Optimizer or a subclass, or a pointer / smart pointer to one.
bool isOptimizerType(clang::QualType T);
/// A method declared on at::Tensor or at::TensorBase named one of \p Names.
bool isTensorMethod(const clang::FunctionDecl *FD, llvm::ArrayRef<llvm::StringRef> Names);
/// Whether a call named \p Name computes a loss: `nll_loss`, `mse_loss`, `cross_entropy`, ...
bool isLossName(llvm::StringRef Name);
/// Declared in a system header (LibTorch, the standard library): never user code.
bool isInSystemHeader(const clang::Decl *D);
/// A location of \p S in constant time (a call's `)`, an operator, a member name); getBeginLoc()
/// walks down `x.f().g()...` chains, quadratic over every node.
clang::SourceLocation ownLocation(const clang::Stmt *S);
/// 1 if \p VD disables autograd (NoGradGuard, InferenceMode(true), AutoGradMode(false)),
/// -1 if it re-enables it (AutoGradMode(true), InferenceMode(false)), 0 otherwise.
int gradModeEffect(const clang::VarDecl *VD);

/// The tensor \p E views (sharing storage and autograd identity): `t` of `t[i]`, names::ViewOps,
/// `t.index(...)` without tensor indices (those gather); else null.
const clang::Expr *viewedTensor(const clang::Expr *E);

/// Where a device value points.
enum class DeviceKind { Host, Accelerator, Unknown };
/// The device a torch::Device or DeviceType expression names (`kCPU`, `Device("cuda:1")`);
/// unknown for a variable, parameter or call.
DeviceKind deviceKind(const clang::Expr *E, clang::ASTContext &Ctx);
/// Where a tensor's or module's `.cuda()`, `.cpu()`, `.to(d)`, `.to(options.device(d))` moves it;
/// none when it moves nothing (`.to(torch::kFloat)`, `.to(other_tensor)`, another method).
std::optional<DeviceKind> deviceMoveOf(const clang::CXXMemberCallExpr *Call, clang::ASTContext &Ctx);

/// Whether \p E names a device (torch::Device, DeviceType) or passes TensorOptions held in a
/// variable or parameter, which may carry one.
bool mayNameDevice(const clang::Expr *E, clang::ASTContext &Ctx);
/// \p E as a names::HostFactories or HostMemoryWrappers call whose arguments do not
/// mayNameDevice, making a host tensor (`torch::full({}, 0.1)`); else null.
const clang::CallExpr *hostFactoryCall(const clang::Expr *E, clang::ASTContext &Ctx);
/// The member an unresolved call `x.name(...)` names; empty when \p Callee is no such member.
llvm::StringRef dependentMemberName(const clang::Expr *Callee);

// ---- AST matchers ------------------------------------------------------------------------

namespace matchers {
using namespace clang::ast_matchers;

/// A type that is at::Tensor through any alias, by value or reference.
AST_MATCHER(clang::QualType, tensorType) { return isTensorType(Node); }
/// An expression of tensor type.
AST_MATCHER(clang::Expr, isTensorExpr) { return isTensorType(Node.getType()); }
/// A module-like type (see isModuleType).
AST_MATCHER(clang::QualType, moduleType) { return isModuleType(Node); }
/// An optimizer-like type (see isOptimizerType).
AST_MATCHER(clang::QualType, optimizerType) { return isOptimizerType(Node); }
/// clang's isExpansionInSystemHeader at ownLocation(): linear where clang's is quadratic.
AST_MATCHER(clang::Stmt, isExpansionInSystemHeader) {
  clang::SourceLocation Loc = ownLocation(&Node);
  const clang::SourceManager &SM = Finder->getASTContext().getSourceManager();
  return Loc.isValid() && SM.isInSystemHeader(SM.getExpansionLoc(Loc));
}
/// A call left unresolved in a template that names a member among \p Names (`x.step()`).
AST_MATCHER_P(clang::CallExpr, dependentMemberCall, std::vector<llvm::StringRef>, Names) {
  return llvm::is_contained(Names, dependentMemberName(Node.getCallee()));
}
/// `x.add_(y)` and other in-place tensor methods left unresolved in a template.
AST_MATCHER(clang::CallExpr, dependentInPlaceCall) { return dependentMemberName(Node.getCallee()).ends_with("_"); }

/// `t.name(...)` on a tensor, for any of \p Names (methods of at::Tensor / at::TensorBase).
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> tensorMethodCall(std::vector<llvm::StringRef> Names);
/// `m->name()` / `m.name()` on a module (nn or TorchScript), for any of \p Names.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> moduleMethodCall(std::vector<llvm::StringRef> Names);
/// `opt.name()` / `opt->name()` on an optimizer, for any of \p Names.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> optimizerMethodCall(std::vector<llvm::StringRef> Names);
/// A module forward: `m->forward(x)`, `m(x)` on a TORCH_MODULE holder, `module.forward(inputs)`,
/// also unresolved by dependent arguments on an object of module type.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> moduleForwardCall();
/// `t.backward()` or `torch::autograd::backward(...)`.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> backwardCall();
/// `optimizer.step()`.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> optimizerStepCall();
/// `optimizer.zero_grad()` or `module->zero_grad()`.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> zeroGradCall();
/// What clears gradients: zeroGradCall(), a user function named like zero_grad, `p.grad()`
/// (also `.data()`) `.zero_()`/`fill_`/`copy_`, `p.mutable_grad().reset()` or `= ...`; by name
/// in an uninstantiated template.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> gradClearing();
/// Any `for`, range-`for`, `while` or `do` statement.
clang::ast_matchers::internal::BindableMatcher<clang::Stmt> loopStmt();
} // namespace matchers

// ---- Scopes and control flow -------------------------------------------------------------

/// The innermost loop of S's function whose body contains \p S (through lambdas), or null.
const clang::Stmt *enclosingLoop(const clang::Stmt *S, clang::ASTContext &Ctx);
/// The first parent of \p N (C++ code has one outside of templates), or an empty node.
clang::DynTypedNode parentOf(const clang::DynTypedNode &N, clang::ASTContext &Ctx);
template <typename T> clang::DynTypedNode parentOf(const T *N, clang::ASTContext &Ctx) {
  return parentOf(clang::DynTypedNode::create(*N), Ctx);
}
/// Whether \p Loc lies inside \p Range (both ends included), in translation-unit order.
bool isWithin(clang::SourceLocation Loc, clang::SourceRange Range, const clang::SourceManager &SM);
/// The body of a for / range-for / while / do loop.
const clang::Stmt *loopBody(const clang::Stmt *Loop);
/// The function (or lambda call operator) whose body contains \p S.
const clang::FunctionDecl *enclosingFunction(const clang::Stmt *S, clang::ASTContext &Ctx);
/// Whether S's function (or \p S outside functions) holds code the parser lost: a check
/// reporting an absence stays silent there.
bool holdsUnparsedCode(const clang::Stmt *S, clang::ASTContext &Ctx);

/// Calls \p Fn for each top-level declaration of user code (not from system headers).
void forEachUserDecl(clang::ASTContext &Ctx, const std::function<void(clang::Decl *)> &Fn);

/// Whether \p Fn is, or is nested in, a template pattern with no instantiation in this TU.
bool isUninstantiatedPattern(const clang::FunctionDecl *Fn);
/// Whether the forward \p Forward (matchers::moduleForwardCall) runs a LibTorch loss, activation,
/// pooling, dropout or reshaping module: no parameters, so a graph only if its inputs carry one.
bool isParameterFreeForward(const clang::Stmt *Forward);
/// The object of an unresolved member call (`w.mul_(scale)`), the member in \p Name; null when
/// resolved, implicit, or (unless \p AllowArrow) through `->`.
const clang::Expr *dependentMemberBase(const clang::CallExpr *Call, llvm::StringRef &Name,
                                       bool AllowArrow = false);

} // namespace torchtidy

#endif
