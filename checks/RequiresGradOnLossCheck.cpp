#include "RequiresGradOnLossCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <string>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy::matchers;

namespace torchtidy {
namespace {

/// The local the marked tensor lives in: `loss` in `loss.requires_grad_()`, or \p Initialized
/// (`auto loss = (...).requires_grad_();`).
const VarDecl *markedVariable(const CXXMemberCallExpr *Mark, const VarDecl *Initialized) {
  const auto *VD = dyn_cast_or_null<VarDecl>(namedDecl(Mark->getImplicitObjectArgument()));
  VD = VD ? VD : Initialized;
  return VD && VD->isLocalVarDecl() ? VD : nullptr;
}

/// How the cut reads in the message.
std::string describeCut(const Stmt *Cut, const OutputCut &C) {
  if (Cut == C.Output)
    return "it is computed from values that do not require grad";
  if (isa<DeclStmt>(Cut))
    return "it is computed under a no-grad scope";
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(Cut))
    if (const CXXMethodDecl *MD = MCE->getMethodDecl(); MD && MD->getIdentifier())
      return "'." + MD->getName().str() + "()' cut it from the model's graph";
  if (const auto *Call = dyn_cast<CallExpr>(Cut))
    if (const FunctionDecl *FD = Call->getDirectCallee(); FD && FD->getIdentifier())
      return isInSystemHeader(FD) ? "'" + FD->getName().str() + "(...)' made a new tensor from plain numbers"
                                  : "'" + FD->getName().str() + "(...)' is called under a no-grad scope";
  return "its graph to the model was cut";
}
} // namespace

void RequiresGradOnLossCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  Finder->addMatcher(
      stmt(unless(matchers::isExpansionInSystemHeader()), tensorMethodCall({"requires_grad_", "set_requires_grad"})).bind("mark"),
      this);
}

void RequiresGradOnLossCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Mark = Result.Nodes.getNodeAs<CXXMemberCallExpr>("mark");
  ASTContext &Ctx = *Result.Context;
  if (!Mark || Mark->getBeginLoc().isMacroID())
    return;
  bool On = true;
  if (Mark->getNumArgs() > 0 && !isa<CXXDefaultArgExpr>(Mark->getArg(0)) &&
      (!Mark->getArg(0)->EvaluateAsBooleanCondition(On, Ctx) || !On))
    return;
  const FunctionDecl *Fn = enclosingFunction(Mark, Ctx);
  if (!Fn || !Fn->getBody() || (Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  AutogradModel &M = model(Ctx);
  std::optional<OutputCut> C = M.outputCut(Mark->getImplicitObjectArgument());
  // A loss computed from the model's output through an op autograd does not record (`argmax`,
  // a comparison): no path was cut on the way, but it holds no graph all the same. Only a loss:
  // a value made so and marked on purpose is a leaf to optimize.
  bool Untracked = false;
  if (C && !C->Cut) {
    // The value before the mark (a local's own mark is one of its definitions): a loss call
    // whose inputs computed from the model hold no graph.
    const Expr *Marked = Mark->getImplicitObjectArgument();
    if (const VarDecl *VD = markedVariable(Mark, nullptr); VD && VD->getInit())
      Marked = VD->getInit();
    const auto *Made = dyn_cast<CallExpr>(asSpelled(Marked));
    if (Made && isLossName(M.callShape(Made).Name))
      for (const Expr *In : Made->arguments()) {
        std::optional<OutputCut> FromModel = M.outputCut(In);
        if (!FromModel || !FromModel->Output)
          continue;
        OriginResult Origin = M.origin(In);
        if (Origin.Kind != TensorOrigin::Data && Origin.Kind != TensorOrigin::Detached) {
          C->Cut = nullptr;
          break;
        }
        C->Cut = Origin.Source;
      }
    Untracked = C->Cut != nullptr;
  }
  if (!C || !C->Cut)
    return;
  // It must be used as a loss (backpropagated or returned), never as an input of a forward or
  // of torch::autograd::grad (gradient penalties, saliency, adversarial inputs).
  ValueDestination D = M.destinationOf(Mark, Through::Copies);
  const ValueDecl *Then = D.K == Destination::Object ? cast<MemberExpr>(D.Site)->getMemberDecl() : nullptr;
  bool Loss = Then && Then->getIdentifier() && Then->getName() == "backward"; // `.requires_grad_(true).backward()`
  if (const VarDecl *VD = markedVariable(Mark, D.Var)) {
    auto Ref = declRefExpr(to(varDecl(equalsNode(VD))));
    auto Input = callExpr(anyOf(moduleForwardCall(), callee(functionDecl(hasName("::torch::autograd::grad")))),
                          hasAnyArgument(anyOf(ignoringImplicit(Ref), hasDescendant(Ref))));
    if (!match(findAll(Input), *Fn->getBody(), Ctx).empty())
      return;
    FateQuery Later;
    Later.After = Mark;
    Loss = Loss || M.fateOf(VD, Later) == ValueFate::Backpropagated ||
           !match(findAll(returnStmt(hasReturnValue(anyOf(ignoringImplicit(Ref), hasDescendant(Ref))))),
                  *Fn->getBody(), Ctx)
                .empty();
  }
  if (!Loss)
    return;
  diag(Mark->getExprLoc(),
       "%0() on a loss that does not require grad: %1, so backward() stops at this tensor and the "
       "model gets no gradient; consider computing the loss from the model's output with autograd on "
       "and removing this call")
      << Mark->getMethodDecl()->getName()
      << (Untracked ? "it is computed from the model's output only through ops autograd does not record "
                      "(argmax, comparisons, rounding)"
                    : describeCut(C->Cut, *C));
  diag(C->Cut->getBeginLoc(), "the graph is cut here", DiagnosticIDs::Note);
  if (C->Output != C->Cut)
    diag(C->Output->getBeginLoc(), "the model output it comes from", DiagnosticIDs::Note);
}

} // namespace torchtidy
