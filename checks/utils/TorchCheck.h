#ifndef TORCHTIDY_CHECKS_UTILS_TORCHCHECK_H
#define TORCHTIDY_CHECKS_UTILS_TORCHCHECK_H

// The base of every torchtidy check: C++ only, the shared model's settings (ModelOptions)
// read from clang-tidy's CheckOptions and stored back, and the model for those settings.

#include "utils/AutogradModel.h"

#include "clang-tidy/ClangTidyCheck.h"

namespace torchtidy {

class TorchCheck : public clang::tidy::ClangTidyCheck {
public:
  TorchCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context);
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  /// Stores CallDepth and UninstantiatedTemplates; a check with options of its own (such as
  /// TrainingCallNames) stores them after calling this.
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;
  /// Limits the traversal to user code; every check's registerMatchers calls this first.
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  /// Refuses an --export-fixes file that is the file being analyzed; a check with PP callbacks
  /// of its own calls this first.
  void registerPPCallbacks(const clang::SourceManager &SM, clang::Preprocessor *PP,
                           clang::Preprocessor *ModuleExpanderPP) override;

protected:
  /// The notes of a perIterationLoop finding: the call reaching it on every \p Every
  /// ("iteration", "training step"), and the loop (or, in another TU, the function it calls).
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

/// The boolean option \p Name of a check ("true"/"false"/"1"/"0", any case), or \p Default.
/// (Not OptionsView::get<bool>: GCC and Clang mangle that specialization differently, so
/// checks built with GCC could not link against clang-tidy-16's.)
bool getBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options, llvm::StringRef Name,
                   bool Default);
/// Stores a boolean option as clang-tidy spells it.
void storeBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options,
                     clang::tidy::ClangTidyOptions::OptionMap &Opts, llvm::StringRef Name, bool Value);

} // namespace torchtidy

#endif
