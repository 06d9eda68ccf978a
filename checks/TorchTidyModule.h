#ifndef TORCHTIDY_CHECKS_TORCHTIDYMODULE_H
#define TORCHTIDY_CHECKS_TORCHTIDYMODULE_H

#include <string>
#include <vector>

namespace torchtidy {

/// Metadata of one registered check, from Checks.def.
struct CheckInfo {
  std::string Id;
  std::string ClassName;
  /// "default" or "performance" (opt-in).
  std::string Set;
  std::string Level;
  std::string Precision;
  std::string Tags;
  std::string ShortDescription;
};

/// Every check in registry order.
const std::vector<CheckInfo> &registeredChecks();

/// Whether \p C is on when the configuration names no torch check: the default set.
inline bool enabledByDefault(const CheckInfo &C) { return C.Set == "default"; }

/// The clang-tidy check glob that enables exactly the default set: `-*,torch-*` minus the
/// opt-in checks, so that `torch-*` (or naming a check) still enables every check.
std::string defaultChecksGlob();

} // namespace torchtidy

extern volatile int TorchTidyModuleAnchorSource;

#endif
