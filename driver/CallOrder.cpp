#include "CallOrder.h"
#include "OutputFile.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <queue>
#include <set>

using namespace llvm;

namespace torchtidy::driver {
namespace {

struct NamesOfFile {
  StringSet<> Defined, Called;
  /// The names of its `#include "..."` directives, in order.
  std::vector<std::string> Includes;
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
  // A kernel launch, `name<<<grid, block>>>(...)`, lexed as C++: `<<` then `<`.
  auto LaunchAt = [&](size_t I) {
    return At(I).is(raw_identifier) && At(I + 1).is(lessless) && At(I + 2).is(less);
  };

  NamesOfFile Names;
  for (size_t I = 0; At(I).isNot(eof); ++I) {
    if (At(I).is(hash) && At(I).isAtStartOfLine() && At(I + 1).is(raw_identifier) &&
        At(I + 1).getRawIdentifier() == "include" && At(I + 2).is(string_literal)) {
      StringRef Quoted(At(I + 2).getLiteralData(), At(I + 2).getLength());
      Names.Includes.push_back(Quoted.drop_front().drop_back().str());
      continue;
    }
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
      if (CallAt(J) || LaunchAt(J))
        Names.Called.insert(At(J).getRawIdentifier());
    I = End;
  }
  return Names;
}

/// Sources larger than this are left unscanned (in the order of the database).
constexpr uint64_t MaxSourceScanBytes = uint64_t(8) << 20;
/// The most project headers scanned for one TU.
constexpr size_t MaxHeadersPerTU = 256;

/// The directories a quoted include is looked up in after the includer's own: the -iquote and
/// -I directories of the job's first command.
std::vector<std::string> quoteDirs(const Job &J) {
  std::vector<std::string> Dirs;
  if (J.Commands.empty())
    return Dirs;
  const clang::tooling::CompileCommand &C = J.Commands.front();
  for (size_t I = 0; I < C.CommandLine.size(); ++I) {
    StringRef Arg = C.CommandLine[I], Dir;
    for (StringRef Flag : {"-iquote", "-I"})
      if (Arg.consume_front(Flag)) {
        Dir = Arg.empty() && I + 1 < C.CommandLine.size() ? StringRef(C.CommandLine[++I]) : Arg;
        break;
      }
    if (Dir.empty())
      continue;
    SmallString<256> Abs(Dir);
    sys::fs::make_absolute(C.Directory, Abs);
    sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    Dirs.push_back(std::string(Abs));
  }
  return Dirs;
}

bool isUnder(StringRef Path, ArrayRef<std::string> Roots) {
  return llvm::any_of(Roots, [&](StringRef Root) {
    return Path.starts_with(Root) && Path.drop_front(Root.size()).starts_with("/");
  });
}

class Scanner {
public:
  /// The names of the file at \p Path (read from \p Contents when given: an editor's buffer).
  const NamesOfFile &of(StringRef Path, StringRef Contents = "") {
    StringRef Read = Contents.empty() ? Path : Contents;
    auto [It, New] = Scanned.try_emplace(Read);
    if (New) {
      // Bounded and non-blocking like every read of the driver (a FIFO or device is skipped:
      // the worker reports it); the scan is only an order, so a file it cannot read is none.
      Expected<std::string> Text = readRegularFile(Read, Read, MaxSourceScanBytes);
      if (Text)
        It->second = scan(*Text);
      else
        consumeError(Text.takeError());
    }
    return It->second;
  }

  /// The names \p J's TU calls: in its main file and in the project headers (under its
  /// header roots) it includes with quotes, to any depth.
  StringSet<> calledBy(const Job &J) {
    StringSet<> Called = of(J.File, J.Overlay).Called;
    std::vector<std::string> Dirs = quoteDirs(J);
    StringSet<> Seen{J.File};
    std::vector<std::pair<std::string, const NamesOfFile *>> Work{{J.File, &of(J.File, J.Overlay)}};
    while (!Work.empty() && Seen.size() <= MaxHeadersPerTU) {
      auto [Includer, Names] = Work.back();
      Work.pop_back();
      for (const std::string &Name : Names->Includes) {
        SmallString<256> Dir = sys::path::parent_path(Includer);
        for (size_t D = 0;; ++D) {
          SmallString<256> Candidate(Dir);
          sys::path::append(Candidate, Name);
          sys::path::remove_dots(Candidate, /*remove_dot_dot=*/true);
          if (sys::fs::is_regular_file(Candidate)) {
            if (isUnder(Candidate, J.HeaderRoots) && Seen.insert(Candidate).second) {
              const NamesOfFile &Header = of(Candidate);
              for (const auto &N : Header.Called)
                Called.insert(N.getKey());
              Work.emplace_back(std::string(Candidate), &Header);
            }
            break;
          }
          if (D == Dirs.size())
            break;
          Dir = Dirs[D];
        }
      }
    }
    return Called;
  }

private:
  StringMap<NamesOfFile> Scanned;
};

} // namespace

CallPlan calleesFirst(const std::vector<Job> &Jobs) {
  // The same file is scanned once however many jobs analyze it or include it.
  Scanner Files;
  StringMap<std::vector<size_t>> DefinedIn;
  for (size_t I = 0; I < Jobs.size(); ++I)
    for (const auto &Name : Files.of(Jobs[I].File, Jobs[I].Overlay).Defined)
      DefinedIn[Name.getKey()].push_back(I);

  // Kahn's algorithm over "calls a function defined in", the database's order among the ready.
  std::vector<std::set<size_t>> Callees(Jobs.size());
  std::vector<std::vector<size_t>> Callers(Jobs.size());
  std::vector<unsigned> Waiting(Jobs.size(), 0);
  for (size_t I = 0; I < Jobs.size(); ++I) {
    for (const auto &Name : Files.calledBy(Jobs[I]))
      if (auto It = DefinedIn.find(Name.getKey()); It != DefinedIn.end())
        for (size_t J : It->second)
          if (J != I && Jobs[J].File != Jobs[I].File)
            Callees[I].insert(J);
    Waiting[I] = Callees[I].size();
    for (size_t J : Callees[I])
      Callers[J].push_back(I);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> Ready;
  for (size_t I = 0; I < Jobs.size(); ++I)
    if (!Waiting[I])
      Ready.push(I);
  std::vector<bool> Placed(Jobs.size(), false);
  CallPlan Plan;
  Plan.WaitsFor.resize(Jobs.size());
  while (Plan.Order.size() < Jobs.size()) {
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
    for (size_t J : Callees[Next])
      if (Placed[J])
        Plan.WaitsFor[Next].push_back(J);
    Placed[Next] = true;
    Plan.Order.push_back(Next);
    for (size_t C : Callers[Next])
      if (!Placed[C] && --Waiting[C] == 0)
        Ready.push(C);
  }
  return Plan;
}

} // namespace torchtidy::driver
