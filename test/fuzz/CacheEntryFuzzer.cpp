// libFuzzer target for the CBOR torchtidy reads back from disk: result cache entries (shared
// by every run and CI job using the cache), preamble manifests, workers' results. Any input
// must be a value or a miss, never a crash, a stack overflow or a sanitizer report.
#include "Report.h"
#include "ReportReader.h"

#include <cstdint>

using namespace llvm;
using namespace torchtidy::driver;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  json E = cborOrDiscarded(StringRef(reinterpret_cast<const char *>(Data), Size));
  if (E.is_discarded())
    return 0;
  try {
    // What ResultCache::replay reads: a result, or an entry holding one.
    const json &R = E.is_object() && E.contains("result") ? E.at("result") : E;
    JobResult Result = R.get<JobResult>();
    (void)json(Result).dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const json::exception &) {
  }
  (void)E.dump(-1, ' ', false, json::error_handler_t::replace);
  return 0;
}
