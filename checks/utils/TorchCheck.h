#ifndef TORCHTIDY_CHECKS_UTILS_TORCHCHECK_H
#define TORCHTIDY_CHECKS_UTILS_TORCHCHECK_H

// The base of every torchtidy check: C++ only, ModelOptions read from and stored to CheckOptions,
// and the model for them.

#include "utils/AutogradModel.h"

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

class TorchCheck : public clang::tidy::ClangTidyCheck {
public:
  TorchCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context);
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  /// Stores CallDepth and UninstantiatedTemplates; a check stores its own options after this.
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;
  /// Limits the traversal to user code; every check's registerMatchers calls this first.
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  /// Refuses an --export-fixes file that is the file analyzed; an override calls this first.
  void registerPPCallbacks(const clang::SourceManager &SM, clang::Preprocessor *PP,
                           clang::Preprocessor *ModuleExpanderPP) override;

protected:
  /// The notes of a perIterationLoop finding: the call on every \p Every ("iteration") and the
  /// loop (in another TU: the function it calls).
  void noteLoop(const PerIteration &Hot, llvm::StringRef Every);
  /// The model of \p Ctx for this check's settings.
  AutogradModel &model(clang::ASTContext &Ctx) const { return AutogradModel::get(Ctx, ModelOpts); }

  const ModelOptions ModelOpts;

private:
  /// clang-tidy's --system-headers: findings in system headers are wanted, so they are matched.
  const bool SystemHeaders;
  /// The run may enable checks other than torch-*, whose traversal must stay whole.
  const bool OtherChecks;
  /// With UninstantiatedTemplates off, drops matches in templates nobody instantiates.
  void run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

/// The boolean option \p Name ("true"/"false"/"1"/"0", any case), or \p Default. Not
/// OptionsView::get<bool>: GCC and Clang mangle it differently, so a GCC build could not link.
bool getBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options, llvm::StringRef Name,
                   bool Default);
/// Stores a boolean option as clang-tidy spells it.
void storeBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options,
                     clang::tidy::ClangTidyOptions::OptionMap &Opts, llvm::StringRef Name, bool Value);

} // namespace torchtidy

#endif
