#include "TorchTidyModule.h"

#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"
#include "clang/Basic/Version.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

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

namespace {

/// The major version of the clang the running process is built from: the plugin links nothing,
/// so this call binds to the host clang-tidy's own library ("... clang version 19.1.7 ...").
unsigned hostClangMajor() {
  std::string Version = clang::getClangFullVersion();
  size_t At = Version.find("clang version ");
  return At == std::string::npos ? 0 : std::atoi(Version.c_str() + At + 14);
}

/// A plugin loaded into the clang-tidy of another LLVM resolves its symbols by name without a
/// complaint and then misbehaves, so the checks are registered only into the clang-tidy they
/// were built for; the other one is told which plugin to load instead.
const bool TorchTidyModuleRegistered = [] {
  unsigned Host = hostClangMajor();
  if (Host && Host != CLANG_VERSION_MAJOR) {
    llvm::errs() << "torchtidy: this plugin is built for clang-tidy-" << CLANG_VERSION_MAJOR
                 << ", not clang-tidy-" << Host << ": load the torchtidy plugin built against LLVM "
                 << Host << " (TORCHTIDY_LLVM_VERSION=" << Host << "); no torch-* check is registered\n";
    return false;
  }
  static clang::tidy::ClangTidyModuleRegistry::Add<torchtidy::TorchTidyModule> Registration(
      "torchtidy-module", "LibTorch training-code anti-pattern checks.");
  return true;
}();

} // namespace

// Referenced by the driver so a static link keeps the registration above.
volatile int TorchTidyModuleAnchorSource = 0;
