#include "CallOrder.h"
#include "OutputFile.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <queue>
#include <set>

using namespace llvm;

namespace torchtidy::driver {
namespace {

struct NamesOfFile {
  StringSet<> Defined, Called;
};

/// Words that a `(` follows without naming a function.
bool isKeyword(StringRef W) {
  static const StringSet<> Keywords = {
      "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "alignas", "decltype",
      "noexcept", "typeid", "throw", "operator", "requires", "co_await", "defined", "static_assert",
      "constexpr", "__attribute__"};
  return Keywords.contains(W);
}

/// The functions the file \p Text defines outside any function body (a name, its parameters,
/// qualifiers, member initializers, a body) and the names called in their bodies.
NamesOfFile scan(StringRef Text) {
  using namespace clang::tok;
  clang::LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus14 = LO.CPlusPlus17 = true;
  clang::Lexer L(clang::SourceLocation(), LO, Text.begin(), Text.begin(), Text.end());
  std::vector<clang::Token> Toks;
  clang::Token T;
  do {
    L.LexFromRawLexer(T);
    Toks.push_back(T);
  } while (T.isNot(eof));
  // The token at \p I, the final eof past the end.
  auto At = [&](size_t I) -> const clang::Token & { return Toks[std::min(I, Toks.size() - 1)]; };
  // The token that closes the bracket at \p Open (eof when none does).
  auto Closing = [&](size_t Open) {
    TokenKind Left = At(Open).getKind(), Right = Left == l_paren ? r_paren : r_brace;
    int Depth = 0;
    size_t I = Open;
    for (; At(I).isNot(eof); ++I) {
      Depth += At(I).is(Left) - At(I).is(Right);
      if (Depth == 0)
        break;
    }
    return I;
  };
  auto CallAt = [&](size_t I) {
    return At(I).is(raw_identifier) && At(I + 1).is(l_paren) && !isKeyword(At(I).getRawIdentifier());
  };

  NamesOfFile Names;
  for (size_t I = 0; At(I).isNot(eof); ++I) {
    if (!CallAt(I))
      continue;
    size_t Signature = Closing(I + 1) + 1, K = Signature;
    while (At(K).isOneOf(raw_identifier, arrow, coloncolon, less, greater, amp, ampamp, star))
      ++K;
    if (At(K).is(colon))
      do {
        ++K;
        while (At(K).isOneOf(raw_identifier, coloncolon, less, greater))
          ++K;
        if (At(K).isOneOf(l_paren, l_brace))
          K = Closing(K) + 1;
      } while (At(K).is(comma));
    // Without a body: a declaration, or a macro used at the top level.
    if (At(K).isNot(l_brace))
      continue;
    Names.Defined.insert(At(I).getRawIdentifier());
    size_t End = Closing(K);
    for (size_t J = Signature; J < End; ++J)
      if (CallAt(J))
        Names.Called.insert(At(J).getRawIdentifier());
    I = End;
  }
  return Names;
}

} // namespace

/// Sources larger than this are left unscanned (in the order of the database).
constexpr uint64_t MaxSourceScanBytes = uint64_t(8) << 20;

std::vector<size_t> calleesFirst(const std::vector<Job> &Jobs) {
  // The same file is scanned once however many jobs analyze it (headers through a TU).
  StringMap<NamesOfFile> Scanned;
  std::vector<const NamesOfFile *> Of;
  for (const Job &J : Jobs) {
    StringRef Path = J.Overlay.empty() ? StringRef(J.File) : StringRef(J.Overlay);
    auto [It, New] = Scanned.try_emplace(Path);
    if (New)
    {
      // Bounded and non-blocking like every read of the driver (a FIFO or device is skipped:
      // the worker reports it); the scan is only an order, so a file it cannot read is none.
      Expected<std::string> Text = readRegularFile(Path, Path, MaxSourceScanBytes);
      if (Text)
        It->second = scan(*Text);
      else
        consumeError(Text.takeError());
    }
    Of.push_back(&It->second);
  }
  StringMap<std::vector<size_t>> DefinedIn;
  for (size_t I = 0; I < Jobs.size(); ++I)
    for (const auto &Name : Of[I]->Defined)
      DefinedIn[Name.getKey()].push_back(I);

  // Kahn's algorithm over "calls a function defined in", the database's order among the ready.
  std::vector<std::vector<size_t>> Callers(Jobs.size());
  std::vector<unsigned> Waiting(Jobs.size(), 0);
  for (size_t I = 0; I < Jobs.size(); ++I) {
    std::set<size_t> Callees;
    for (const auto &Name : Of[I]->Called)
      if (auto It = DefinedIn.find(Name.getKey()); It != DefinedIn.end())
        for (size_t J : It->second)
          if (J != I && Of[J] != Of[I])
            Callees.insert(J);
    Waiting[I] = Callees.size();
    for (size_t J : Callees)
      Callers[J].push_back(I);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> Ready;
  for (size_t I = 0; I < Jobs.size(); ++I)
    if (!Waiting[I])
      Ready.push(I);
  std::vector<bool> Placed(Jobs.size(), false);
  std::vector<size_t> Order;
  while (Order.size() < Jobs.size()) {
    size_t Next;
    if (!Ready.empty()) {
      Next = Ready.top();
      Ready.pop();
    } else {
      Next = Jobs.size();
      for (size_t I = 0; I < Jobs.size(); ++I)
        if (!Placed[I] && (Next == Jobs.size() || Waiting[I] < Waiting[Next]))
          Next = I;
    }
    Placed[Next] = true;
    Order.push_back(Next);
    for (size_t C : Callers[Next])
      if (!Placed[C] && --Waiting[C] == 0)
        Ready.push(C);
  }
  return Order;
}

} // namespace torchtidy::driver
