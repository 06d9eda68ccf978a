#include "RawCudaMallocCheck.h"

#include "utils/TorchMatchers.h"
#include "utils/TorchNames.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torchtidy {
namespace {

std::vector<StringRef> namesOf(llvm::ArrayRef<llvm::StringLiteral> List) { return {List.begin(), List.end()}; }

/// Whether the translation unit includes LibTorch: every LibTorch header declares namespace c10.
bool usesLibTorch(ASTContext &Ctx) {
  auto Found = Ctx.getTranslationUnitDecl()->lookup(DeclarationName(&Ctx.Idents.get("c10")));
  return llvm::any_of(Found, [](const NamedDecl *D) { return isa<NamespaceDecl>(D); });
}

} // namespace

void RawCudaMallocCheck::registerMatchers(MatchFinder *Finder) {
  TorchCheck::registerMatchers(Finder);
  auto Calls = [](llvm::ArrayRef<llvm::StringLiteral> List) {
    return callee(functionDecl(hasAnyName(namesOf(List))));
  };
  Finder->addMatcher(callExpr(unless(matchers::isExpansionInSystemHeader()),
                              anyOf(callExpr(Calls(names::CudaDeviceAllocations)).bind("device"),
                                    callExpr(Calls(names::CudaHostAllocations)).bind("host"),
                                    callExpr(Calls(names::CudaFrees)).bind("free")))
                         .bind("call"),
                     this);
}

void RawCudaMallocCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  const FunctionDecl *Fn = enclosingFunction(Call, Ctx);
  SourceLocation Loc = Result.SourceManager->getFileLoc(Call->getBeginLoc());
  // A CUDA-only file has no caching allocator to bypass; an instantiated template is judged in
  // its instantiations.
  if (!usesLibTorch(Ctx) || (Fn && Fn->isDependentContext() && !isUninstantiatedPattern(Fn)))
    return;
  StringRef Name = Call->getDirectCallee()->getName();
  if (Result.Nodes.getNodeAs<CallExpr>("device"))
    diag(Loc, "'%0' allocates device memory outside LibTorch's CUDA caching allocator, which then "
              "cannot reuse it, count it or hand it to other tensors; consider a tensor "
              "(torch::empty(size, torch::TensorOptions().device(torch::kCUDA))) or "
              "c10::cuda::CUDACachingAllocator::raw_alloc()")
        << Name;
  else if (Result.Nodes.getNodeAs<CallExpr>("host"))
    diag(Loc, "'%0' allocates pinned host memory outside LibTorch's caching host allocator; consider "
              "a tensor (torch::empty(size, torch::TensorOptions().pinned_memory(true)))")
        << Name;
  else
    diag(Loc, "'%0' frees memory outside LibTorch's caching allocator and synchronizes the device; "
              "consider letting a tensor own the memory (or c10::cuda::CUDACachingAllocator::raw_delete() "
              "for raw_alloc())")
        << Name;
}

} // namespace torchtidy
