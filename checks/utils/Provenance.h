#ifndef TORCHTIDY_CHECKS_UTILS_PROVENANCE_H
#define TORCHTIDY_CHECKS_UTILS_PROVENANCE_H

// Where a value comes from: one walk from an expression to the definitions that give it its
// value (a local's initializer, assignments, requires_grad marks and insertions; a function's
// returns; the arguments callers pass for a parameter; the writes of a field), under one
// depth budget. The model's questions about a tensor (its origin, whether it is a leaf that
// requires grad, where its path to a model output was cut) are asked of this walk
// (AutogradModel::originAt, ::leafAt, ::outputCut).

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace torchtidy {

/// How a tensor became a leaf that requires grad.
enum class LeafKind { Created, Marked, Parameter };

struct LeafFact {
  LeafKind Kind;
  /// The factory with requires_grad, the requires_grad_() mark, the parameters() call or field.
  const clang::Stmt *Source = nullptr;
  /// The tensor is a view of the leaf (it shares its storage and autograd identity).
  bool View = false;
};

enum class TensorOrigin {
  Unknown,          ///< a parameter, a field, a container element: nothing is assumed
  Data,             ///< plain data: factories, batches, results of non-differentiable ops
  Detached,         ///< passed through .detach() / .data() or produced under a no-grad scope
  RequiresGradLeaf, ///< a leaf that requires grad: requires_grad options, requires_grad_(), parameters
  GraphAttached,    ///< produced by recorded autograd computation: forward, loss, ops on the above
};

struct OriginResult {
  TensorOrigin Kind = TensorOrigin::Unknown;
  /// The expression that made it so (the forward call, the factory with requires_grad, ...).
  const clang::Expr *Source = nullptr;
  /// The definitions followed from the value asked about to Source, nearest first: the
  /// initializers, assigned values and returned values the walk went through.
  llvm::SmallVector<const clang::Expr *, 4> Chain = {};
  /// Asked for cuts (AutogradModel::outputCut): the model output or loss the value is
  /// computed from, and what cut every path from it to that graph (null while one survives).
  const clang::Expr *Output = nullptr;
  const clang::Stmt *Cut = nullptr;
  /// Asked for leaves (AutogradModel::leafAt): the leaf that requires grad the value is, or is
  /// a view of, on some path.
  std::optional<LeafFact> Leaf = std::nullopt;
};

/// One definition of a variable or field: a statement that gives it a value or marks it.
struct Definition {
  enum Kind {
    Init,     ///< the initializer
    Assign,   ///< `x = v`
    Compound, ///< `x += v` and the other compound assignments
    Mark,     ///< `x.requires_grad_(on)`, `x.set_requires_grad(on)`, `x.detach_()`
    Insert,   ///< `x.push_back(v)` and the other insertions into a container
    Mutate,   ///< another in-place member call (`x.add_(y)`)
  };
  Kind K;
  const clang::Stmt *Site = nullptr;  ///< the assignment or call (the initializer for Init)
  const clang::Expr *Target = nullptr; ///< what is defined, as written there (null for Init)
  const clang::Expr *Value = nullptr; ///< the value given: right-hand side, initializer, or the call
};

/// The definitions in \p Body of what \p Target matches (a reference to a variable, a member
/// expression), in source order.
std::vector<Definition> definitionsIn(const clang::Stmt *Body,
                                      const clang::ast_matchers::internal::Matcher<clang::Expr> &Target,
                                      clang::ASTContext &Ctx);
/// The definitions of the local variable or parameter \p VD in its function, its initializer first.
std::vector<Definition> definitionsOf(const clang::VarDecl *VD, clang::ASTContext &Ctx);
/// What a function writes for its caller through its parameter \p P: the tensor of `Tensor &out`,
/// `*out` of `Tensor *out`; the fields of a struct (`Prediction &p`: `p.logits`, `p->logits`), only
/// \p Field when given. None for a parameter passed by value or const, or a module.
std::optional<clang::ast_matchers::internal::Matcher<clang::Expr>>
writtenThrough(const clang::ParmVarDecl *P, const clang::FieldDecl *Field = nullptr);
/// The values the definition of \p FD returns from its own body (not from lambdas in it).
llvm::SmallVector<const clang::Expr *, 2> returnedValues(const clang::FunctionDecl *FD, clang::ASTContext &Ctx);

} // namespace torchtidy

#endif
