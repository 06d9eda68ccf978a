#include "HostDeviceCopyInLoopCheck.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang::ast_matchers;

namespace torchtidy {

void HostDeviceCopyInLoopCheck::registerMatchers(MatchFinder *Finder) {}

void HostDeviceCopyInLoopCheck::check(const MatchFinder::MatchResult &Result) {}

} // namespace torchtidy
