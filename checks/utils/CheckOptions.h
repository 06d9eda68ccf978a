#ifndef TORCHTIDY_CHECKS_UTILS_CHECKOPTIONS_H
#define TORCHTIDY_CHECKS_UTILS_CHECKOPTIONS_H

// Boolean check options without ClangTidyCheck::OptionsView::get<bool>/store<bool>: GCC and
// Clang mangle those template specializations differently, so checks built with GCC cannot
// link against the ones in Clang-built libclangTidy (driver) or clang-tidy-16 (plugin).

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/StringSwitch.h"

namespace torchtidy {

/// The boolean option \p Name ("true"/"false"/"1"/"0", any case), or \p Default.
inline bool getBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options, llvm::StringRef Name,
                          bool Default) {
  llvm::StringRef Value = Options.get(Name, Default ? "true" : "false");
  return llvm::StringSwitch<bool>(Value.lower())
      .Cases("true", "1", true)
      .Cases("false", "0", false)
      .Default(Default);
}

/// Stores a boolean option as clang-tidy spells it.
inline void storeBoolOption(const clang::tidy::ClangTidyCheck::OptionsView &Options,
                            clang::tidy::ClangTidyOptions::OptionMap &Opts, llvm::StringRef Name, bool Value) {
  Options.store(Opts, Name, Value ? "true" : "false");
}

} // namespace torchtidy

#endif
