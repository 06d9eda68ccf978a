#include "ModuleCloneInLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// `m->clone()` left unresolved in a template nobody instantiates: through `->` it is a module
/// (a tensor's clone() is called with `.`).
AST_MATCHER(CallExpr, dependentArrowClone) {
  const auto *Member = dyn_cast<CXXDependentScopeMemberExpr>(Node.getCallee());
  return Member && Member->isArrow() && Member->getMember().getAsString() == "clone";
}

} // namespace

void ModuleCloneInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()),
                              anyOf(matchers::moduleMethodCall({"clone", "deepcopy"}), dependentArrowClone()))
                         .bind("clone"),
                     this);
}

void ModuleCloneInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Clone = Result.Nodes.getNodeAs<CallExpr>("clone");
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const FunctionDecl *Fn = enclosingFunction(Clone, Ctx);
  if (Clone->getBeginLoc().isMacroID() || !Fn ||
      (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  // A snapshot under a condition (a new best validation loss, every N steps) and a clone per
  // fold, sweep or epoch (a loop around the step loop) are what clone() is for.
  std::optional<PerIteration> Hot = Model.perIterationLoop(Clone);
  if (!Hot || !Model.iteratesSteps(Hot->Loop))
    return;
  diag(Clone->getBeginLoc(), "module cloned on every step: clone() deep-copies every parameter and "
                             "buffer each time; consider cloning once before the loop, or every N steps")
      << Clone->getSourceRange();
  if (Hot->Via)
    diag(Hot->Via->getBeginLoc(), "called on every step here", DiagnosticIDs::Note);
  diag(Hot->Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
