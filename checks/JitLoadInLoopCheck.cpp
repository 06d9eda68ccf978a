#include "JitLoadInLoopCheck.h"

#include "utils/AutogradModel.h"
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// What \p Source (the file name or stream handed to load()) is in the function that runs the
/// loop: itself, or, when it is a parameter of a helper, the argument each call of \p Path (from
/// the helper's caller up to the loop's function) passes for it. Null when it comes from further
/// away. (For a loop of another TU, the function "running the loop" is the one it calls, Entry.)
const Expr *sourceInLoopFunction(const Expr *Source, llvm::ArrayRef<const CallExpr *> Path, AutogradModel &Model) {
  for (const CallExpr *Via : Path) {
    const auto *Ref = dyn_cast<DeclRefExpr>(Source->IgnoreParenImpCasts());
    const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
    if (!Param) {
      // A name fixed inside the helper (a literal, a constant, a member) is the same on every
      // call; one built from its locals or parameters is not followed.
      auto Local = declRefExpr(to(varDecl(hasLocalStorage())));
      return match(findAll(Local.bind("local")), *Source, Model.context()).empty() ? Source : nullptr;
    }
    const FunctionDecl *Helper = Model.calledFunction(Via);
    if (!Helper || Param->getDeclContext() != Helper || !(Source = argumentFor(Via, Param)))
      return nullptr;
  }
  return Source;
}

/// Whether \p Source is a parameter of \p Hot's Entry (called by another TU's loop) to which
/// the loop's call passes the same value on every iteration (LoopCall::SameArgs).
bool sameAcross(const Expr *Source, const PerIteration &Hot) {
  const auto *Ref = dyn_cast<DeclRefExpr>(Source->IgnoreParenImpCasts());
  const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  const auto *Owner = Param ? dyn_cast<FunctionDecl>(Param->getDeclContext()) : nullptr;
  if (!Owner || !Hot.Entry || Owner->getCanonicalDecl() != Hot.Entry->getCanonicalDecl())
    return false;
  unsigned I = Param->getFunctionScopeIndex();
  return Hot.Across->Calls == 0 && I < 32 && (Hot.Across->SameArgs >> I & 1u);
}

} // namespace

void JitLoadInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(
      callExpr(unless(matchers::isExpansionInSystemHeader()), callee(functionDecl(hasName("::torch::jit::load"))))
          .bind("load"),
      this);
}

void JitLoadInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Load = Result.Nodes.getNodeAs<CallExpr>("load");
  ASTContext &Ctx = *Result.Context;
  AutogradModel &Model = model(Ctx);
  const FunctionDecl *Fn = enclosingFunction(Load, Ctx);
  if (Load->getBeginLoc().isMacroID() || !Fn || Load->getNumArgs() == 0 ||
      (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  std::optional<PerIteration> Hot = Model.perIterationLoop(Load, {}, /*AcrossTUs=*/true);
  if (!Hot)
    return;
  // Loading a different file each time (a list of models, each epoch's checkpoint) is the
  // point of such a loop.
  const Expr *Source = sourceInLoopFunction(Load->getArg(0), Hot->Path, Model);
  if (!Source)
    return;
  // Across TUs: a parameter the loop passes the same value, or a name that reads no local.
  if (Hot->Across ? !sameAcross(Source, *Hot) &&
                        !match(findAll(declRefExpr(to(varDecl(hasLocalStorage()))).bind("local")), *Source, Ctx).empty()
                  : !Model.sameEveryIteration(Source, Hot->Loop))
    return;
  diag(Load->getBeginLoc(), "torch::jit::load() of the same module on every iteration: the file is "
                            "parsed and every tensor allocated again each time; consider loading it "
                            "once before the loop and reusing the module");
  noteLoop(*Hot, "iteration");
  // `torch::jit::Module m = torch::jit::load(path);` in the loop's body: load it before the loop.
  const DeclStmt *Declaration = fixits::declarationOf(Load, Ctx);
  if (Hot->Loop && !Hot->Via && Declaration)
    if (fixits::Fixes Fix = fixits::hoistBefore(Declaration, Hot->Loop, Ctx); !Fix.empty())
      diag(Declaration->getBeginLoc(), "load it once, before the loop", DiagnosticIDs::Note) << Fix;
}

} // namespace torchtidy
