#include "InplaceOnLeafCheck.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang::ast_matchers;

namespace torchtidy {

void InplaceOnLeafCheck::registerMatchers(MatchFinder *Finder) {}

void InplaceOnLeafCheck::check(const MatchFinder::MatchResult &Result) {}

} // namespace torchtidy
