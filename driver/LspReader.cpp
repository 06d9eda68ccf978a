#include "LspReader.h"

#include "llvm/ADT/Twine.h"

using namespace llvm;

namespace torchtidy::driver {

namespace {
constexpr StringLiteral ContentLength = "content-length:";
} // namespace

bool LspReader::fill() {
  if (Ended)
    return false;
  if (Pos == Buffer.size()) {
    Buffer.clear();
    Pos = 0;
  } else if (Pos > (1u << 16)) {
    Buffer.erase(0, Pos);
    Pos = 0;
  }
  char Chunk[1 << 16];
  size_t N = Read(Chunk, sizeof(Chunk));
  if (N == 0) {
    Ended = true;
    return false;
  }
  Buffer.append(Chunk, N);
  return true;
}

bool LspReader::line(std::string &Out, bool &Long) {
  Long = false;
  // Relative to Pos: fill() may move the unread bytes to the front of the buffer.
  for (size_t Scanned = 0;;) {
    size_t End = Buffer.find('\n', Pos + Scanned);
    if (End != std::string::npos && End - Pos <= MaxLspHeaderLine) {
      Out.assign(Buffer, Pos, End - Pos);
      Pos = End + 1;
      if (!Out.empty() && Out.back() == '\r')
        Out.pop_back();
      return true;
    }
    if (Buffer.size() - Pos > MaxLspHeaderLine) {
      // Not a header: the rest of a message whose Content-Length was too small, or
      // garbage. The next message's header may follow it on the same line.
      Long = true;
      size_t At = StringRef(Buffer).drop_front(Pos + 1).find_insensitive(ContentLength);
      if (At != StringRef::npos)
        Pos += 1 + At;
      else
        Pos = Buffer.size() - (ContentLength.size() - 1);
      Scanned = 0;
      continue;
    }
    Scanned = Buffer.size() - Pos;
    if (!fill())
      return false;
  }
}

LspReader::Frame LspReader::next() {
  Frame F;
  size_t Length = 0;
  bool HaveLength = false, InHeader = false;
  std::string Line;
  bool Long;
  while (true) {
    if (!line(Line, Long))
      return F; // Kind::End
    if (Line.empty()) {
      if (InHeader)
        break;
      continue; // stray blank lines between messages
    }
    InHeader = true;
    // Junk before the header (the tail of a short message) is skipped.
    StringRef L(Line);
    size_t At = L.rfind_insensitive(ContentLength);
    if (At == StringRef::npos)
      continue;
    unsigned long long N;
    HaveLength = !L.drop_front(At + ContentLength.size()).trim().getAsInteger(10, N);
    Length = HaveLength ? N : 0;
  }
  if (!HaveLength) {
    F.K = Kind::Bad;
    F.Problem = "a message without a valid Content-Length header";
    return F;
  }
  if (Length > MaxLspMessageBytes) {
    // Its body is read as header lines, which finds the next message.
    F.K = Kind::Bad;
    F.Problem = ("a message of " + Twine(Length) + " bytes (at most " +
                 Twine(MaxLspMessageBytes) + ")")
                    .str();
    return F;
  }
  while (Buffer.size() - Pos < Length)
    if (!fill())
      return F; // Kind::End
  F.K = Kind::Message;
  F.Body.assign(Buffer, Pos, Length);
  Pos += Length;
  return F;
}

void LspReader::resync(StringRef Body) {
  size_t At = Body.find_insensitive(ContentLength);
  if (At != StringRef::npos)
    Buffer.insert(Pos, Body.drop_front(At).str());
}

} // namespace torchtidy::driver
