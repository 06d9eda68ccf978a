#include "GradModeNotInheritedByThreadCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// The guard of the starting thread's kind (c10::InferenceMode or torch::NoGradGuard) as the
/// first statement of the lambda \p Fn that the thread runs (defined in \p Launch).
fixits::Fixes guardFirst(const FunctionDecl *Fn, const Expr *Launch, const GradModeFact &Outside, ASTContext &Ctx) {
  const auto *Method = dyn_cast<CXXMethodDecl>(Fn);
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Fn->getBody());
  if (!Method || !Method->getParent()->isLambda() || !Body ||
      !isWithin(Method->getParent()->getLocation(), Launch->getSourceRange(), Ctx.getSourceManager()) ||
      fixits::sourceText(Body, Ctx).contains("no_grad") || fixits::sourceText(Body, Ctx).contains("guard"))
    return {};
  const auto *Guard = dyn_cast_or_null<DeclStmt>(Outside.DecidedBy);
  const auto *GuardVar = Guard && Guard->isSingleDecl() ? dyn_cast<VarDecl>(Guard->getSingleDecl()) : nullptr;
  const CXXRecordDecl *Kind = GuardVar ? GuardVar->getType()->getAsCXXRecordDecl() : nullptr;
  if (Kind && Kind->getQualifiedNameAsString() == "c10::InferenceMode")
    return fixits::insertFirst(Body, "c10::InferenceMode guard;", Ctx);
  if (!fixits::declaresTorch("NoGradGuard", Ctx))
    return {};
  return fixits::insertFirst(Body, "torch::NoGradGuard no_grad;", Ctx);
}

} // namespace

void GradModeNotInheritedByThreadCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  // The model's forward event (in a template nobody instantiates, also by name).
  Finder->addMatcher(
      stmt(unless(matchers::isExpansionInSystemHeader()), AutogradModel::event(LoopEventKind::Forward)).bind("forward"),
      this);
}

void GradModeNotInheritedByThreadCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Forward = Result.Nodes.getNodeAs<Stmt>("forward");
  if (Forward->getBeginLoc().isMacroID())
    return;
  AutogradModel &M = model(*Result.Context);
  const FunctionDecl *Fn = enclosingFunction(Forward, *Result.Context);
  if (!Fn || (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  // A submodule's forward inside a module's own methods runs wherever the module's forward
  // does: the finding belongs to that call, in the code that starts the thread.
  if (const auto *Method = dyn_cast_or_null<CXXMethodDecl>(M.outermostFunction(Forward));
      Method && isModuleType(QualType(Method->getParent()->getTypeForDecl(), 0)))
    return;
  // Records on its thread, although the code that starts the thread has autograd off.
  const Expr *Launch = M.threadLaunchOf(Forward);
  if (!Launch || M.gradModeAt(Forward).Mode != GradMode::On)
    return;
  GradModeFact Outside = M.gradModeAt(Launch);
  if (Outside.Mode != GradMode::Off || holdsUnparsedCode(Forward, *Result.Context) ||
      !Reported.insert(Launch).second)
    return;
  diag(Forward->getBeginLoc(),
       "model forward runs on another thread, where the no-grad scope around the thread's creation "
       "does not apply (grad mode is thread-local): autograd records a graph on every call; consider "
       "a torch::NoGradGuard or c10::InferenceMode inside the thread's function")
      << guardFirst(Fn, Launch, Outside, *Result.Context);
  diag(Launch->getBeginLoc(), "the thread starts here", DiagnosticIDs::Note);
  if (Outside.DecidedBy)
    diag(Outside.DecidedBy->getBeginLoc(), "autograd is disabled here, on the starting thread only",
         DiagnosticIDs::Note);
}

} // namespace torchtidy
