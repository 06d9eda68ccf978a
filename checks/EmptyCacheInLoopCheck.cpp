#include "EmptyCacheInLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"
#include "utils/TorchNames.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {

void EmptyCacheInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  std::vector<StringRef> Names(std::begin(names::EmptyCacheFunctions), std::end(names::EmptyCacheFunctions));
  Finder->addMatcher(
      callExpr(unless(matchers::isExpansionInSystemHeader()), callee(functionDecl(hasAnyName(Names)))).bind("call"),
      this);
}

void EmptyCacheInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  const FunctionDecl *Fn = enclosingFunction(Call, Ctx);
  // An instantiated template is judged in its instantiations, not twice.
  if (Call->getBeginLoc().isMacroID() || !Fn || (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  // Under `step % k == 0`, in a catch handler (out-of-memory recovery) or on another
  // condition it is not a per-step cost.
  std::optional<PerIteration> Hot = model(Ctx).perIterationLoop(Call, {}, /*AcrossTUs=*/true);
  if (!Hot)
    return;
  diag(Call->getBeginLoc(),
       "'%0()' runs on every iteration: it returns the caching allocator's free blocks to the "
       "driver, so the next iteration allocates them again with cudaMalloc, which synchronizes "
       "the device; consider removing it (it frees no memory a tensor holds) or calling it once "
       "outside the loop")
      << Call->getDirectCallee()->getName();
  noteLoop(*Hot, "iteration");
  // The call as a statement of its own: removing it changes no tensor.
  if (const Stmt *Statement = fixits::statementOf(Call, Ctx))
    if (fixits::Fixes Fix = fixits::remove(Statement, Ctx); !Fix.empty())
      diag(Call->getBeginLoc(), "remove the call", DiagnosticIDs::Note) << Fix;
}

} // namespace torchtidy
