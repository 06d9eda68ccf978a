#ifndef TORCHTIDY_CHECKS_UTILS_AUTOGRADMODELIMPL_H
#define TORCHTIDY_CHECKS_UTILS_AUTOGRADMODELIMPL_H

// The caches of AutogradModel, shared by its implementation files; not for checks.

#include "utils/AutogradModel.h"
#include "utils/Provenance.h"

#include "clang/Analysis/Analyses/Dominators.h"
#include "clang/Analysis/CFG.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <vector>

namespace torchtidy {

/// The CFG of one function, and where each of its statements sits in it.
struct FunctionOrder {
  std::unique_ptr<clang::CFG> Graph;
  /// Block and element index (terminators: the block's size).
  llvm::DenseMap<const clang::Stmt *, std::pair<const clang::CFGBlock *, unsigned>> Position;
  /// Its dominator and post-dominator trees (Clang's), built on first use.
  std::unique_ptr<clang::CFGDomTree> Dominators;
  std::unique_ptr<clang::CFGPostDomTree> PostDominators;
};

struct AutogradModel::Impl {
  bool CallIndexBuilt = false;
  llvm::DenseMap<const clang::FunctionDecl *, std::vector<const clang::CallExpr *>> Callers;
  /// What a call of a std::function parameter runs: the lambdas and functions passed for it.
  llvm::DenseMap<const clang::CallExpr *, llvm::SmallVector<const clang::FunctionDecl *, 2>> ParameterCallees;
  llvm::DenseMap<const clang::FunctionDecl *, std::unique_ptr<FunctionOrder>> Orders;
  llvm::DenseMap<const clang::Stmt *, GradModeFact> GradModes;
  llvm::DenseMap<const clang::FunctionDecl *, const clang::Stmt *> HandedOverUnderNoGrad;
  llvm::DenseMap<const clang::FunctionDecl *, std::vector<const clang::DeclRefExpr *>> HandedOver;
  llvm::DenseMap<const clang::Stmt *, std::unique_ptr<LoopFacts>> Loops;
  llvm::DenseMap<const clang::Stmt *, std::vector<LoopEvent>> Events;
  /// Scanning the whole unit for a field's assignments is costly: once per field.
  llvm::DenseMap<const clang::FieldDecl *, std::vector<Definition>> Fields;
  /// Whether a function's own code shows tensors on an accelerator (see mayUseAccelerator).
  llvm::DenseMap<const clang::FunctionDecl *, bool> ShowsAccelerator;
  /// ModelOptions::TrainingCallNames, compiled on first use.
  std::optional<llvm::Regex> TrainingCallNames;
};

} // namespace torchtidy

#endif
