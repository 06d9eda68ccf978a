#ifndef TORCHTIDY_CHECKS_UTILS_TENSORORIGIN_H
#define TORCHTIDY_CHECKS_UTILS_TENSORORIGIN_H

// Where a tensor value comes from, as far as autograd is concerned. Follows local
// variables (initializers and later assignments), user functions' return values, module
// forwards, tensor ops and no-grad scopes, within one translation unit.

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

namespace torchtidy {
class ProjectIndex;

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
};

/// Classifies the tensor value of \p E (a tensor-typed expression).
/// Calls into functions of other translation units are answered from \p Index when given.
OriginResult classifyTensor(const clang::Expr *E, clang::ASTContext &Ctx,
                            const ProjectIndex *Index = nullptr);

/// \p E is graph-attached: storing it keeps its autograd graph alive.
inline bool isGraphAttached(const clang::Expr *E, clang::ASTContext &Ctx) {
  return classifyTensor(E, Ctx).Kind == TensorOrigin::GraphAttached;
}

/// \p E is a leaf tensor that requires grad (in-place ops on it throw outside no-grad).
inline bool isRequiresGradLeaf(const clang::Expr *E, clang::ASTContext &Ctx) {
  return classifyTensor(E, Ctx).Kind == TensorOrigin::RequiresGradLeaf;
}

} // namespace torchtidy

#endif
