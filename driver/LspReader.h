// The framing of the Language Server Protocol (header lines, a blank line, then a body of
// Content-Length bytes), read so that one bad message costs that message only: header
// lines are bounded, a Content-Length is searched for wherever a line holds one, and a body
// that turns out not to be JSON gives back the next message it swallowed (resync).
// The libFuzzer target in test/fuzz drives it.
#ifndef TORCHTIDY_DRIVER_LSPREADER_H
#define TORCHTIDY_DRIVER_LSPREADER_H

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace torchtidy::driver {

/// A message body larger than this is refused: no editor buffer comes near it.
inline constexpr size_t MaxLspMessageBytes = 256 << 20;
/// A header line longer than this is not a header.
inline constexpr size_t MaxLspHeaderLine = 4096;

class LspReader {
public:
  /// \p Read stores up to N bytes at the pointer and returns how many; 0 at the end.
  explicit LspReader(std::function<size_t(char *, size_t)> Read) : Read(std::move(Read)) {}

  enum class Kind { Message, Bad, End };
  struct Frame {
    Kind K = Kind::End;
    std::string Body;    // Kind::Message
    std::string Problem; // Kind::Bad
  };

  /// The next message, a framing error (reading goes on after it), or the end of input.
  Frame next();

  /// Call with a body that is not valid JSON: its bytes from the first "Content-Length:"
  /// on are read again, so that a too large Content-Length loses one message, not two.
  void resync(llvm::StringRef Body);

private:
  /// False at the end of input.
  bool fill();
  /// The next line without its "\r\n"; false at the end of input. A line longer than
  /// MaxLspHeaderLine is cut there (\p Long set) and the rest of it dropped.
  bool line(std::string &Out, bool &Long);

  std::function<size_t(char *, size_t)> Read;
  std::string Buffer; // bytes read and not consumed, from Pos
  size_t Pos = 0;
  bool Ended = false;
};

} // namespace torchtidy::driver

#endif
