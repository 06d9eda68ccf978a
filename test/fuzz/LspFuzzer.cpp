// libFuzzer target for the language server's reader: the framing (LspReader) and the JSON
// of each message, read as `torchtidy lsp` reads them, in chunks of varying size. Any byte
// stream must end in messages, framing errors and the end of input: never a crash, a hang
// or a sanitizer report.
#include "LspReader.h"
#include "ReportReader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

using namespace llvm;
using namespace torchtidy::driver;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  size_t Pos = 0;
  LspReader Reader([&](char *Into, size_t N) {
    // Short reads, as from a pipe: headers and bodies split anywhere.
    size_t K = std::min({N, Size - Pos, size_t(1 + Pos % 61)});
    std::memcpy(Into, Data + Pos, K);
    Pos += K;
    return K;
  });
  for (int I = 0; I < 10000; ++I) {
    LspReader::Frame F = Reader.next();
    if (F.K == LspReader::Kind::End)
      break;
    if (F.K != LspReader::Kind::Message)
      continue;
    if (Expected<nlohmann::json> J = parseJson(F.Body, "fuzz")) {
      (void)J->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      consumeError(J.takeError());
      Reader.resync(F.Body);
    }
  }
  return 0;
}
