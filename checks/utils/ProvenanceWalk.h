#ifndef TORCHTIDY_CHECKS_UTILS_PROVENANCEWALK_H
#define TORCHTIDY_CHECKS_UTILS_PROVENANCEWALK_H

// What the questions of the provenance walk share (Provenance.cpp, ProvenanceWalk.cpp); not
// for checks.

#include "utils/AutogradModel.h"
#include "utils/Provenance.h"

#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace torchtidy {

/// One question asked of the walk: the model it asks, the one depth budget every question
/// follows expressions and definitions under, and the definitions (variables, fields,
/// functions) it is inside of, which it does not enter again.
class ProvenanceWalk {
public:
  explicit ProvenanceWalk(AutogradModel &M) : M(M), Ctx(M.context()) {}

protected:
  static constexpr unsigned MaxDepth = 12;
  bool enter(const void *Definition) { return Active.insert(Definition).second; }
  void leave(const void *Definition) { Active.erase(Definition); }

  /// Hands \p Visit the values the user function \p FD returns to \p Call, until it answers
  /// true; meanwhile FD's parameters read Call's arguments (see arguments). Nothing for a
  /// library function, one with no definition here, or one being walked already.
  void returns(const clang::FunctionDecl *FD, const clang::CallExpr *Call,
               llvm::function_ref<bool(const clang::Expr *)> Visit);
  /// Hands \p Visit the values the user function \p FD, defined here, assigns in its own body to
  /// what it writes for \p Call's caller through its parameter \p Parm (writtenThrough, with
  /// \p Field), until it answers true; meanwhile FD's parameters read Call's arguments.
  void writes(const clang::FunctionDecl *FD, const clang::CallExpr *Call, unsigned Parm,
              const clang::FieldDecl *Field, llvm::function_ref<bool(const clang::Expr *)> Visit);
  /// Hands \p Visit the arguments passed for \p Parm, until it answers true: in the returns of
  /// a call being followed, that call's; else those of every visible call.
  void arguments(const clang::ParmVarDecl *Parm,
                 llvm::function_ref<bool(const clang::Expr *Arg, const clang::CallExpr *Call)> Visit);
  /// The argument \p Parm reads in the returns of a call being followed (see returns); null
  /// elsewhere.
  const clang::Expr *followedArgument(const clang::ParmVarDecl *Parm) const;

  /// The definitions of a variable that reach a point: the assignments and requires_grad marks
  /// that no later one hides on the way (AutogradModel::reachingAt), the latest in source order
  /// first, then the insertions and compound assignments that may run before it. Incoming:
  /// whether the value it holds before them all (its initializer, a parameter's argument, a loop
  /// variable's element) reaches the point too. The point written by an assignment (`x` in
  /// `x = v`): that definition alone; by a mark: the mark too.
  struct Reaching { llvm::SmallVector<Definition, 2> Defs; bool Incoming = true; };
  /// Those of the local or parameter \p VD at \p At.
  Reaching reaching(const clang::VarDecl *VD, const clang::Stmt *At);
  /// Those of the member expression \p ME at \p At, in At's function: the writes of the same
  /// member spelled the same way (`fc->weight.set_requires_grad(false)`); Incoming: the value on entry.
  Reaching reaching(const clang::MemberExpr *ME, const clang::Stmt *At);
  /// Those of the field \p Field of the local or parameter \p VD at \p At (`o.loss = v`), in VD's
  /// function; Incoming: the value the whole of VD gives it.
  Reaching reaching(const clang::VarDecl *VD, const clang::FieldDecl *Field, const clang::Stmt *At);
  /// Whether \p A and \p B are spelled the same way, up to parentheses, casts and copies.
  bool sameExpr(const clang::Expr *A, const clang::Expr *B) const;

  AutogradModel &M;
  clang::ASTContext &Ctx;

private:
  /// Runs \p Walk on the definition of the user function \p FD, with its parameters reading
  /// \p Call's arguments; not for a library function, one with no body here, one being walked.
  void into(const clang::FunctionDecl *FD, const clang::CallExpr *Call,
            llvm::function_ref<void(const clang::FunctionDecl *Def)> Walk);
  Reaching reaching(const clang::ast_matchers::internal::Matcher<clang::Expr> &Target,
                    llvm::function_ref<bool(const clang::Expr *)> Same, const clang::Stmt *Body, const clang::Stmt *At,
                    const clang::Stmt *Start);

  llvm::SmallPtrSet<const void *, 16> Active;
  /// The call whose returns are being followed, for each function entered that way.
  llvm::DenseMap<const clang::FunctionDecl *, const clang::CallExpr *> Calls;
};

/// \p E without parentheses, implicit casts, copies and functional casts.
const clang::Expr *strip(const clang::Expr *E);

/// The boolean argument \p Index of \p CE: true when defaulted, nothing when not a constant
/// (a runtime flag may well be false; precision first).
std::optional<bool> boolArgument(const clang::CallExpr *CE, unsigned Index, clang::ASTContext &Ctx);

/// requires_grad_, set_requires_grad, detach_: what marks a tensor as requiring grad or not.
inline bool isMarkName(llvm::StringRef Name) {
  return Name == "requires_grad_" || Name == "set_requires_grad" || Name == "detach_";
}
/// What the mark \p Mark (resolved, or on an object of dependent type) sets requires_grad to:
/// off for detach_, on when defaulted, the flag when it is a constant; nothing when it is not (a
/// runtime flag) or Mark is no mark. Every question reads "nothing" as "not on" (precision
/// first): the origin reads the mark as requires_grad_(false), plain data; it makes no leaf;
/// a loop that marks a range with it freezes that range.
std::optional<bool> markFlag(const clang::CallExpr *Mark, clang::ASTContext &Ctx);

/// Whether a module's tensor field called \p Name is one of its parameters: weight, bias and
/// their variants, an RNN cell's w_ih / w_hh / b_ih / b_hh.
bool isParameterFieldName(llvm::StringRef Name);

// ---- what the origin walk asks of calls and types ----------------------------------------------

/// The range-for loop whose loop variable \p VD is, if any.
const clang::CXXForRangeStmt *rangeForOf(const clang::VarDecl *VD, clang::ASTContext &Ctx);

/// Whether the factory call \p CE asks for grad: requires_grad(true) among its options, written
/// in the call or in the initializer of a TensorOptions local it passes; make_variable(t, true).
bool requestsGrad(const clang::CallExpr *CE, clang::ASTContext &Ctx);

/// Whether \p Call lists a module's or an optimizer's parameters: module->parameters(),
/// module->named_parameters(), optimizer.parameters(), param_group.params().
bool listsParameters(const clang::CXXMemberCallExpr *Call);

/// Methods and functions whose result never carries a grad_fn: detaching, integer and
/// boolean results, shape queries.
bool isNonDifferentiable(llvm::StringRef Name);

/// Factory functions: their result is a fresh leaf, requiring grad only when asked to.
bool isFactory(llvm::StringRef Name);

/// std::tuple / std::pair: module forwards (LSTM, GRU) return their tensors in one.
bool isTupleLike(clang::QualType T);

/// Tensor-typed arguments, including those inside braced lists (torch::cat({a, b})).
void tensorArgs(const clang::Expr *E, llvm::SmallVectorImpl<const clang::Expr *> &Out);

/// Whether \p T is the class \p QualifiedName (`::std::vector`); torch::OrderedDict
/// (named_parameters()) and its items.
bool isRecord(clang::QualType T, llvm::StringRef QualifiedName);
bool isOrderedDict(clang::QualType T);
bool isOrderedDictItem(clang::QualType T);

/// torch::nn's loss modules (MSELoss, CrossEntropyLoss, ...): no parameters of their own.
/// \p Module is the holder (`criterion(out, y)`) or the pointer to the Impl (`criterion->`).
bool isLossModule(const clang::Expr *Module);

/// \p E as spelled past a functional cast (`Record{loss, step}`), and the parts of the
/// aggregate, pair or tuple it makes: a braced list's, a construction's arguments,
/// std::make_pair's, std::make_tuple's, std::forward_as_tuple's; false when it makes none.
bool aggregateParts(const clang::Expr *&E, llvm::SmallVectorImpl<const clang::Expr *> &Parts);

} // namespace torchtidy

#endif
