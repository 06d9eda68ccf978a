#ifndef TORCHTIDY_CHECKS_UTILS_PROVENANCEWALK_H
#define TORCHTIDY_CHECKS_UTILS_PROVENANCEWALK_H

// What the questions of the provenance walk share (Provenance.cpp, ProvenanceLeaf.cpp); not
// for checks.

#include "utils/AutogradModel.h"

#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include "llvm/ADT/SmallPtrSet.h"

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

  AutogradModel &M;
  clang::ASTContext &Ctx;

private:
  llvm::SmallPtrSet<const void *, 16> Active;
};

/// The range-for loop whose loop variable \p VD is, if any.
const clang::CXXForRangeStmt *rangeForOf(const clang::VarDecl *VD, clang::ASTContext &Ctx);

/// requires_grad_, set_requires_grad, detach_: what marks a tensor as requiring grad or not.
inline bool isMarkName(llvm::StringRef Name) {
  return Name == "requires_grad_" || Name == "set_requires_grad" || Name == "detach_";
}

} // namespace torchtidy

#endif
