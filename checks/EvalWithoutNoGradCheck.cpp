#include "EvalWithoutNoGradCheck.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang::ast_matchers;

namespace torchtidy {

void EvalWithoutNoGradCheck::registerMatchers(MatchFinder *Finder) {}

void EvalWithoutNoGradCheck::check(const MatchFinder::MatchResult &Result) {}

} // namespace torchtidy
