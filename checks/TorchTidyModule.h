#ifndef TORCHTIDY_CHECKS_TORCHTIDYMODULE_H
#define TORCHTIDY_CHECKS_TORCHTIDYMODULE_H

#include <string>
#include <vector>

namespace torchtidy {

/// Metadata of one registered check, from Checks.def.
struct CheckInfo {
  std::string Id;
  std::string ClassName;
  std::string Level;
  std::string Precision;
  std::string Tags;
  std::string ShortDescription;
};

/// Every check in registry order.
const std::vector<CheckInfo> &registeredChecks();

} // namespace torchtidy

extern volatile int TorchTidyModuleAnchorSource;

#endif
