#include "CallOrder.h"

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
  static const StringSet<> Keywords = {"if",       "for",         "while",         "switch", "catch",
                                       "return",   "sizeof",      "alignof",       "alignas", "decltype",
                                       "noexcept", "static_assert", "constexpr",   "typeid", "throw",
                                       "operator", "requires",    "co_await",      "defined", "__attribute__"};
  return Keywords.contains(W);
}

NamesOfFile scan(StringRef Text) {
  clang::LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus14 = LO.CPlusPlus17 = true;
  clang::Lexer L(clang::SourceLocation(), LO, Text.begin(), Text.begin(), Text.end());
  std::vector<clang::Token> Toks;
  clang::Token T;
  do {
    L.LexFromRawLexer(T);
    Toks.push_back(T);
  } while (T.isNot(clang::tok::eof));

  NamesOfFile Names;
  for (size_t I = 0; I + 1 < Toks.size(); ++I) {
    if (Toks[I].isNot(clang::tok::raw_identifier) || Toks[I + 1].isNot(clang::tok::l_paren))
      continue;
    StringRef Name = Toks[I].getRawIdentifier();
    if (isKeyword(Name))
      continue;
    size_t J = I + 1;
    for (int Depth = 0; J < Toks.size() && Toks[J].isNot(clang::tok::eof); ++J) {
      Depth += Toks[J].is(clang::tok::l_paren) - Toks[J].is(clang::tok::r_paren);
      if (Depth == 0)
        break;
    }
    // After the parameters, qualifiers and a trailing return type, a body (or the member
    // initializers before one) makes a definition.
    size_t K = J + 1;
    while (K < Toks.size() && Toks[K].isOneOf(clang::tok::raw_identifier, clang::tok::arrow, clang::tok::coloncolon,
                                              clang::tok::less, clang::tok::greater, clang::tok::amp,
                                              clang::tok::ampamp, clang::tok::star))
      ++K;
    bool Body = K < Toks.size() && Toks[K].isOneOf(clang::tok::l_brace, clang::tok::colon);
    (Body ? Names.Defined : Names.Called).insert(Name);
  }
  return Names;
}

} // namespace

std::vector<size_t> calleesFirst(const std::vector<Job> &Jobs) {
  // The same file is scanned once however many jobs analyze it (headers through a TU).
  StringMap<NamesOfFile> Scanned;
  std::vector<const NamesOfFile *> Of;
  for (const Job &J : Jobs) {
    StringRef Path = J.Overlay.empty() ? StringRef(J.File) : StringRef(J.Overlay);
    auto [It, New] = Scanned.try_emplace(Path);
    if (New)
      if (ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path))
        It->second = scan((*Buffer)->getBuffer());
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
