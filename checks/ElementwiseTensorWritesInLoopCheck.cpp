#include "ElementwiseTensorWritesInLoopCheck.h"

#include "utils/AutogradModel.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

/// A parameter of type c10::Scalar, by value or reference: the overload that writes one number.
auto scalarParam(unsigned Index) {
  auto Scalar = recordType(hasDeclaration(cxxRecordDecl(hasName("::c10::Scalar"))));
  return hasParameter(Index, parmVarDecl(hasType(qualType(hasCanonicalType(
                                 anyOf(Scalar, referenceType(pointee(hasCanonicalType(Scalar)))))))));
}

/// The tensor a chain of indexing ops selects from (`t` in `t[i][j]`, `t.select(0, i)`,
/// `t.index({i})`), collecting the index expressions in \p Indices.
const Expr *indexedTensor(const Expr *E, std::vector<const Expr *> &Indices) {
  for (unsigned Steps = 0; E && Steps < 8; ++Steps) {
    E = E->IgnoreUnlessSpelledInSource()->IgnoreParens();
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E); Op && Op->getOperator() == OO_Subscript) {
      Indices.push_back(Op->getArg(1));
      E = Op->getArg(0);
      continue;
    }
    const auto *Call = dyn_cast<CXXMemberCallExpr>(E);
    if (Call && isTensorMethod(Call->getMethodDecl(), {"select", "index"})) {
      Indices.insert(Indices.end(), Call->arg_begin(), Call->arg_end());
      E = Call->getImplicitObjectArgument();
      continue;
    }
    return E;
  }
  return nullptr;
}

} // namespace

void ElementwiseTensorWritesInLoopCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Selected = ignoringImplicit(expr(anyOf(cxxOperatorCallExpr(hasOverloadedOperatorName("[]")),
                                              matchers::tensorMethodCall({"select", "index"})))
                                       .bind("selected"));
  Finder->addMatcher(
      expr(unless(matchers::isExpansionInSystemHeader()),
           anyOf(cxxOperatorCallExpr(hasOverloadedOperatorName("="), callee(cxxMethodDecl(scalarParam(0))),
                                     hasArgument(0, Selected)),
                 cxxMemberCallExpr(matchers::tensorMethodCall({"fill_"}), callee(cxxMethodDecl(scalarParam(0))),
                                   on(Selected)),
                 cxxMemberCallExpr(matchers::tensorMethodCall({"index_put_"}),
                                   callee(cxxMethodDecl(scalarParam(1))), on(expr().bind("selected")))),
           // Last: climbing to the root from every expression is quadratic in the nesting depth.
           hasAncestor(matchers::loopStmt()))
          .bind("write"),
      this);
}

void ElementwiseTensorWritesInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Write = Result.Nodes.getNodeAs<CallExpr>("write");
  const auto *Selected = Result.Nodes.getNodeAs<Expr>("selected");
  if (Write->getBeginLoc().isMacroID())
    return;
  std::vector<const Expr *> Indices;
  if (const auto *Put = dyn_cast<CXXMemberCallExpr>(Write);
      Put && Put->getMethodDecl()->getName() == "index_put_")
    Indices.push_back(Put->getArg(0));
  const Expr *Tensor = indexedTensor(Selected, Indices);
  const ValueDecl *Target = Tensor ? namedDecl(Tensor) : nullptr;
  AutogradModel &Model = model(*Result.Context);
  const Stmt *Loop = Model.enclosingLoop(Write);
  // The loop walks the elements: an index changes every iteration, and the tensor written
  // is the same across iterations.
  if (!Target || !Loop || !Model.outlivesIteration(Target, Loop) ||
      llvm::all_of(Indices, [&](const Expr *I) { return Model.readsOnlyInvariants(I, Loop); }))
    return;
  diag(Write->getBeginLoc(), "'%0' is written one element at a time in a loop, one indexing op per element; "
                             "consider writing through an accessor ('%0.accessor<T, N>()' on the CPU) or "
                             "collecting the values in a std::vector and creating the tensor once")
      << Target->getName();
  diag(Loop->getBeginLoc(), "loop starts here", DiagnosticIDs::Note);
}

} // namespace torchtidy
