#include "BackwardWithoutZeroGradCheck.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang::ast_matchers;

namespace torchtidy {

void BackwardWithoutZeroGradCheck::registerMatchers(MatchFinder *Finder) {}

void BackwardWithoutZeroGradCheck::check(const MatchFinder::MatchResult &Result) {}

} // namespace torchtidy
