#ifndef TORCHTIDY_CHECKS_UTILS_SUMMARIES_H
#define TORCHTIDY_CHECKS_UTILS_SUMMARIES_H

// The summaries a translation unit contributes to the project index: one per function its
// main file defines, computed by the shared model from this TU alone (ProjectIndex.h).

#include "utils/AutogradModel.h"
#include "utils/ProjectIndex.h"

namespace torchtidy {

/// The summaries of the functions defined in the main file of \p Ctx that other TUs can call
/// (not in a template nobody instantiates, not a lambda), keyed by USR.
ProjectIndex summarizeTranslationUnit(clang::ASTContext &Ctx, ModelOptions Options = ModelOptions());
/// Sets \p S's KeptParams and PassedParams from what fateOf's walk sees \p FD's body do with each
/// parameter (ValueFate.cpp).
void summarizeKeptParams(AutogradModel &M, const clang::FunctionDecl *FD, FunctionSummary &S);

} // namespace torchtidy

#endif
