#include "LossStoredInContainerCheck.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang::ast_matchers;

namespace torchtidy {

void LossStoredInContainerCheck::registerMatchers(MatchFinder *Finder) {}

void LossStoredInContainerCheck::check(const MatchFinder::MatchResult &Result) {}

} // namespace torchtidy
