// libFuzzer target for everything torchtidy reads from users: reports (as baselines and
// as merge inputs) and compile databases. Any input must yield a value or an llvm::Error,
// never a crash, a hang or a sanitizer report.
#include "ReportReader.h"

#include <cstdint>

using namespace llvm;
using namespace torchtidy::driver;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);

  if (Expected<StringSet<>> Known = readBaseline(Text, "fuzz"))
    (void)Known->size();
  else
    consumeError(Known.takeError());

  // Merged with itself: the second copy exercises rule renumbering and summary sums.
  if (Expected<nlohmann::json> Merged = mergeReports({{"a", Text}, {"b", Text}}))
    (void)dumpReport(*Merged);
  else
    consumeError(Merged.takeError());

  if (auto DB = readCompileDatabase(Text, "fuzz"))
    for (const clang::tooling::CompileCommand &C : (*DB)->getAllCompileCommands())
      (void)C.CommandLine.size();
  else
    consumeError(DB.takeError());
  return 0;
}
