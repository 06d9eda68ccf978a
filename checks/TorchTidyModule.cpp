#include "TorchTidyModule.h"

#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"

#include "CheckIncludes.inc"

namespace torchtidy {

const std::vector<CheckInfo> &registeredChecks() {
  static const std::vector<CheckInfo> Checks = {
#define TORCHTIDY_CHECK(Id, Class, Set, Level, Precision, Tags, Short)         \
  {Id, #Class, Set, Level, Precision, Tags, Short},
#include "Checks.def"
  };
  return Checks;
}

std::string defaultChecksGlob() {
  std::string Glob = "-*,torch-*";
  for (const CheckInfo &C : registeredChecks())
    if (!enabledByDefault(C))
      Glob += ",-" + C.Id;
  return Glob;
}

namespace {
class TorchTidyModule : public clang::tidy::ClangTidyModule {
public:
  void addCheckFactories(clang::tidy::ClangTidyCheckFactories &Factories) override {
#define TORCHTIDY_CHECK(Id, Class, Set, Level, Precision, Tags, Short)         \
  Factories.registerCheck<Class>(Id);
#include "Checks.def"
  }
};
} // namespace
} // namespace torchtidy

static clang::tidy::ClangTidyModuleRegistry::Add<torchtidy::TorchTidyModule>
    TorchTidyModuleRegistration("torchtidy-module",
                                "LibTorch training-code anti-pattern checks.");

// Referenced by the driver so a static link keeps the registration above.
volatile int TorchTidyModuleAnchorSource = 0;
