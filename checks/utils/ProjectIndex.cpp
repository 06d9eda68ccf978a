#include "utils/ProjectIndex.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Index/USRGeneration.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <set>

using namespace clang;
namespace json = llvm::json;

namespace torchtidy {

namespace {
constexpr llvm::StringLiteral FactNames[] = {"forward", "backward", "step",        "zero_grad",
                                              "eval",    "train",    "autograd_grad", "accelerator",
                                              "returns_graph", "grad_off_forward", "returns_host",
                                              "returns_detached"};
/// The index file's format; a file of another version is refused, never misread.
constexpr int64_t FormatVersion = 1;
/// The most summaries an index may hold (a 100 MB index is no project's).
constexpr size_t MaxFunctions = 1u << 20;
/// The most loop calls one function may have (a call in every loop of a large project).
constexpr size_t MaxLoopCalls = 1u << 12;
/// How many callers that call a function on every call loopCalling climbs (see EveryCall).
constexpr unsigned MaxEveryCallHops = 6;
constexpr llvm::StringLiteral QueryNames[] = {"any", "model", "training"};
/// The prefix of a loopCalling lookup among the consulted keys (a USR starts with "c:").
constexpr llvm::StringLiteral LoopCallsKey = "loop-calls ";
/// The names of the CallGrad bits.
constexpr llvm::StringLiteral CallGradNames[] = {"off", "on"};
/// The prefix of a gradOffAtCalls lookup among the consulted keys.
constexpr llvm::StringLiteral CallGradKey = "call-grad ";

/// The names of the bits set in \p Bits (bit i: \p Names[i]).
json::Array bitNames(uint32_t Bits, llvm::ArrayRef<llvm::StringLiteral> Names) {
  json::Array Out;
  for (unsigned I = 0; I < Names.size(); ++I)
    if (Bits & (1u << I))
      Out.push_back(Names[I]);
  return Out;
}

/// The bits \p Names sets (bit i: \p Table[i]); false, reporting \p Unknown at \p P, for others.
bool nameBits(const std::vector<std::string> &Names, llvm::ArrayRef<llvm::StringLiteral> Table, uint32_t &Bits,
              json::Path P, llvm::StringLiteral Unknown) {
  Bits = 0;
  for (const std::string &N : Names) {
    const auto *It = llvm::find(Table, N);
    if (It == Table.end()) {
      P.report(Unknown);
      return false;
    }
    Bits |= 1u << (It - Table.begin());
  }
  return true;
}

/// A hash of a loopCalling answer; 0: none.
uint64_t hashOf(const std::optional<LoopCall> &C) {
  if (!C)
    return 0;
  std::string Bytes;
  llvm::raw_string_ostream OS(Bytes);
  OS << C->Loop << '\0' << C->Queries << ' ' << C->Calls << ' ' << C->Accelerator << ' ' << C->SameArgs;
  uint64_t H = llvm::xxHash64(OS.str());
  return H ? H : 1;
}

/// A hash of a gradOffAtCalls answer; 0: none.
uint64_t hashOf(std::optional<bool> GradOff) { return GradOff ? 1 + *GradOff : 0; }

} // namespace

// Outside the anonymous namespace: llvm::json finds them by argument-dependent lookup.
json::Value toJSON(const PassedParam &P) {
  return json::Object{{"param", int64_t(P.Param)}, {"callee", P.Callee}, {"callee_param", int64_t(P.CalleeParam)}};
}

bool fromJSON(const json::Value &V, PassedParam &PP, json::Path P) {
  json::ObjectMapper M(V, P);
  uint64_t Param = 0, To = 0;
  if (!M || !M.map("param", Param) || !M.map("callee", PP.Callee) || !M.map("callee_param", To))
    return false;
  if (Param >= 32 || To >= 32) {
    P.report("parameter out of range");
    return false;
  }
  PP.Param = unsigned(Param);
  PP.CalleeParam = unsigned(To);
  return true;
}

json::Value toJSON(const FunctionSummary &S) {
  json::Object O{{"name", S.Name}, {"facts", bitNames(S.Facts, FactNames)}};
  if (S.LoopedFacts)
    O["looped_facts"] = bitNames(S.LoopedFacts, FactNames);
  if (S.GraphOutParams)
    O["graph_out_params"] = int64_t(S.GraphOutParams);
  if (S.GraphThroughParams)
    O["graph_through_params"] = int64_t(S.GraphThroughParams);
  if (S.KeptParams)
    O["kept_params"] = int64_t(S.KeptParams);
  if (!S.PassedParams.empty())
    O["passed_params"] = S.PassedParams;
  if (!S.Callees.empty())
    O["callees"] = S.Callees;
  if (!S.EveryCall.empty())
    O["every_call"] = S.EveryCall;
  if (!S.LoopedCallees.empty())
    O["looped_callees"] = S.LoopedCallees;
  if (S.Conflicting)
    O["conflicting"] = true;
  return O;
}

bool fromJSON(const json::Value &V, FunctionSummary &S, json::Path P) {
  json::ObjectMapper M(V, P);
  std::vector<std::string> Facts, Looped;
  int64_t Out = 0, Through = 0, Kept = 0;
  if (!M || !M.map("name", S.Name) || !M.map("facts", Facts) || !M.mapOptional("looped_facts", Looped) ||
      !M.mapOptional("graph_out_params", Out) || !M.mapOptional("graph_through_params", Through) ||
      !M.mapOptional("kept_params", Kept) ||
      !M.mapOptional("passed_params", S.PassedParams) || !M.mapOptional("callees", S.Callees) ||
      !M.mapOptional("every_call", S.EveryCall) || !M.mapOptional("looped_callees", S.LoopedCallees) ||
      !M.mapOptional("conflicting", S.Conflicting))
    return false;
  for (auto [Name, Value, Bits] : {std::tuple("graph_out_params", Out, &S.GraphOutParams),
                                   std::tuple("graph_through_params", Through, &S.GraphThroughParams),
                                   std::tuple("kept_params", Kept, &S.KeptParams)}) {
    if (Value < 0 || Value > int64_t(UINT32_MAX)) {
      P.field(Name).report("out of range");
      return false;
    }
    *Bits = uint32_t(Value);
  }
  return nameBits(Facts, FactNames, S.Facts, P.field("facts"), "unknown fact") &&
         nameBits(Looped, FactNames, S.LoopedFacts, P.field("looped_facts"), "unknown fact");
}

json::Value toJSON(const LoopCall &C) {
  json::Object O{{"loop", C.Loop}, {"loops", bitNames(C.Queries, QueryNames)}, {"calls", int64_t(C.Calls)}};
  if (C.Accelerator)
    O["accelerator"] = true;
  if (C.SameArgs)
    O["same_args"] = int64_t(C.SameArgs);
  return O;
}

bool fromJSON(const json::Value &V, LoopCall &C, json::Path P) {
  json::ObjectMapper M(V, P);
  std::vector<std::string> Queries;
  int64_t Calls = 0, SameArgs = 0;
  if (!M || !M.map("loop", C.Loop) || !M.map("loops", Queries) || !M.map("calls", Calls) ||
      !M.mapOptional("accelerator", C.Accelerator) || !M.mapOptional("same_args", SameArgs))
    return false;
  if (Calls < 0 || Calls > 64) {
    P.field("calls").report("out of range");
    return false;
  }
  if (SameArgs < 0 || SameArgs > int64_t(UINT32_MAX)) {
    P.field("same_args").report("out of range");
    return false;
  }
  C.Calls = unsigned(Calls);
  C.SameArgs = uint32_t(SameArgs);
  return nameBits(Queries, QueryNames, C.Queries, P.field("loops"), "unknown loop kind");
}

std::string usrOf(const Decl *D) {
  llvm::SmallString<128> USR;
  if (!D || index::generateUSRForDecl(D, USR))
    return "";
  return std::string(USR);
}

void ProjectIndex::add(llvm::StringRef USR, FunctionSummary S) {
  for (const std::string &Callee : S.EveryCall) {
    std::vector<std::string> &Callers = EveryCallers[Callee];
    auto At = llvm::lower_bound(Callers, USR);
    if ((At == Callers.end() || *At != USR) && Callers.size() < MaxLoopCalls)
      Callers.insert(At, USR.str());
  }
  auto [It, Inserted] = Functions.try_emplace(USR, S);
  if (Inserted)
    return;
  FunctionSummary &Old = It->second;
  if (Old == S)
    return;
  Old.Conflicting = true;
  // A fact either definition runs outside its loops stays outside (the other looped ones too).
  uint32_t OwnLevel = (Old.Facts & ~Old.LoopedFacts) | (S.Facts & ~S.LoopedFacts);
  Old.Facts |= S.Facts;
  Old.LoopedFacts = Old.Facts & ~OwnLevel;
  // A callee either calls outside its loops is not looped.
  llvm::erase_if(Old.LoopedCallees, [&](const std::string &C) {
    return llvm::is_contained(S.Callees, C) && !llvm::is_contained(S.LoopedCallees, C);
  });
  for (const std::string &C : S.LoopedCallees)
    if (!llvm::is_contained(Old.Callees, C))
      Old.LoopedCallees.push_back(C);
  Old.GraphOutParams |= S.GraphOutParams;
  Old.GraphThroughParams |= S.GraphThroughParams;
  Old.KeptParams |= S.KeptParams;
  for (PassedParam &P : S.PassedParams)
    if (!llvm::is_contained(Old.PassedParams, P))
      Old.PassedParams.push_back(std::move(P));
  for (std::string &C : S.Callees)
    if (!llvm::is_contained(Old.Callees, C))
      Old.Callees.push_back(std::move(C));
  for (std::string &C : S.EveryCall)
    if (!llvm::is_contained(Old.EveryCall, C))
      Old.EveryCall.push_back(std::move(C));
}

void ProjectIndex::addCallGrad(llvm::StringRef CalleeUSR, uint32_t Bits) {
  if (Bits)
    CallGrads[CalleeUSR.str()] |= Bits;
}

std::optional<bool> ProjectIndex::gradOffAtCalls(llvm::StringRef USR) const {
  std::optional<bool> Off = allCallsGradOff(USR);
  Consulted[(CallGradKey + USR).str()] = hashOf(Off);
  return Off;
}

std::optional<bool> ProjectIndex::allCallsGradOff(llvm::StringRef USR) const {
  auto It = CallGrads.find(USR.str());
  if (It == CallGrads.end())
    return std::nullopt;
  return !(It->second & CalledGradOn);
}

void ProjectIndex::addLoopCall(llvm::StringRef CalleeUSR, LoopCall C) {
  std::vector<LoopCall> &Calls = LoopCalls[CalleeUSR.str()];
  auto It = llvm::lower_bound(Calls, C);
  std::set<std::string> &Members = LoopMembers[C.Loop];
  if (Members.size() < MaxLoopCalls)
    Members.insert(CalleeUSR.str());
  if ((It == Calls.end() || !(*It == C)) && Calls.size() < MaxLoopCalls)
    Calls.insert(It, std::move(C));
}

uint32_t ProjectIndex::queriesOf(const LoopCall &C) const {
  uint32_t Queries = C.Queries;
  if (auto It = LoopMembers.find(C.Loop); It != LoopMembers.end())
    for (const std::string &Member : It->second) {
      uint32_t Facts = joinedFacts(Member, /*OwnLevel=*/true, /*Record=*/false);
      if (Facts & (FunctionSummary::Forward | FunctionSummary::Backward | FunctionSummary::Step))
        Queries |= LoopCall::ModelLoop;
      if (Facts & (FunctionSummary::Backward | FunctionSummary::Step))
        Queries |= LoopCall::TrainingLoop;
    }
  return Queries;
}

std::optional<LoopCall> ProjectIndex::loopCalling(llvm::StringRef USR, LoopCall::Query Query,
                                                  unsigned MaxCalls) const {
  // The key names the question, so that only a different answer makes the TU stale.
  std::string Key = (LoopCallsKey + llvm::Twine(unsigned(Query)) + " " + llvm::Twine(MaxCalls) + " " + USR).str();
  std::optional<LoopCall> C = firstLoopCall(USR, Query, MaxCalls);
  Consulted[Key] = hashOf(C);
  return C;
}

std::optional<LoopCall> ProjectIndex::firstLoopCall(llvm::StringRef USR, uint32_t Query, unsigned MaxCalls) const {
  // Breadth first from USR up through the functions that call it on every call, so that the
  // loop fewest calls away answers; each level in the sorted order of the callers' USRs.
  std::vector<std::pair<std::string, unsigned>> Work{{USR.str(), 0}};
  llvm::StringSet<> Seen{USR};
  for (size_t I = 0; I < Work.size(); ++I) {
    const auto [Fn, Hops] = Work[I];
    if (auto It = LoopCalls.find(Fn); It != LoopCalls.end())
      for (const LoopCall &C : It->second)
        if (C.Calls <= MaxCalls && (queriesOf(C) & Query)) {
          LoopCall Found = C;
          Found.Queries = queriesOf(C);
          Found.Calls += Hops;
          // The arguments known are those of the loop's own call, not of a function above.
          if (Hops)
            Found.SameArgs = 0;
          return Found;
        }
    if (Hops == MaxEveryCallHops)
      continue;
    if (auto It = EveryCallers.find(Fn); It != EveryCallers.end())
      for (const std::string &Caller : It->second)
        if (Seen.insert(Caller).second)
          Work.emplace_back(Caller, Hops + 1);
  }
  return std::nullopt;
}

void ProjectIndex::merge(const ProjectIndex &Other) {
  for (const auto &F : Other.Functions)
    add(F.getKey(), F.getValue());
  for (const auto &[USR, Calls] : Other.LoopCalls)
    for (const LoopCall &C : Calls)
      addLoopCall(USR, C);
  for (const auto &[USR, Bits] : Other.CallGrads)
    addCallGrad(USR, Bits);
}

const FunctionSummary *ProjectIndex::find(llvm::StringRef USR) const {
  auto It = Functions.find(USR);
  return It == Functions.end() ? nullptr : &It->second;
}

uint32_t ProjectIndex::joinedFacts(llvm::StringRef USR, bool OwnLevel, bool Record) const {
  if (Record)
    Consulted[USR] = answerHash(USR);
  uint32_t Facts = 0;
  llvm::StringSet<> Seen{USR};
  std::vector<llvm::StringRef> Work{USR};
  while (!Work.empty()) {
    const FunctionSummary *S = find(Work.back());
    Work.pop_back();
    if (!S)
      continue;
    Facts |= S->Facts & ~(OwnLevel ? S->LoopedFacts : 0) & ~FunctionSummary::OwnFacts;
    for (const std::string &C : S->Callees)
      if (!(OwnLevel && llvm::is_contained(S->LoopedCallees, C)) && Seen.insert(C).second)
        Work.push_back(C);
  }
  return Facts;
}

std::optional<uint32_t> ProjectIndex::factsOf(llvm::StringRef USR) const {
  const FunctionSummary *Root = find(USR);
  uint32_t Facts = joinedFacts(USR, /*OwnLevel=*/false);
  if (!Root)
    return std::nullopt;
  return Facts | (Root->Facts & FunctionSummary::OwnFacts);
}

std::optional<uint32_t> ProjectIndex::factsOf(const FunctionDecl *FD) const {
  std::string USR = usrOf(FD);
  if (USR.empty())
    return std::nullopt;
  return factsOf(USR);
}

uint32_t ProjectIndex::ownLevelFactsOf(const FunctionDecl *FD) const {
  std::string USR = usrOf(FD);
  return USR.empty() ? 0 : joinedFacts(USR, /*OwnLevel=*/true);
}

uint32_t ProjectIndex::graphOutParamsOf(const FunctionDecl *FD) const {
  const FunctionSummary *S = recordedSummary(FD);
  return S ? S->GraphOutParams : 0;
}

uint32_t ProjectIndex::graphThroughParamsOf(const FunctionDecl *FD) const {
  const FunctionSummary *S = recordedSummary(FD);
  return S ? S->GraphThroughParams : 0;
}

const FunctionSummary *ProjectIndex::recordedSummary(const FunctionDecl *FD) const {
  std::string USR = usrOf(FD);
  if (USR.empty())
    return nullptr;
  Consulted[USR] = answerHash(USR);
  return find(USR);
}

bool ProjectIndex::keepsParam(const FunctionDecl *FD, unsigned Param) const {
  std::string USR = usrOf(FD);
  if (USR.empty())
    return false;
  Consulted[USR] = answerHash(USR);
  std::set<std::pair<llvm::StringRef, unsigned>> Seen;
  std::vector<std::pair<llvm::StringRef, unsigned>> Work{{USR, Param}};
  while (!Work.empty()) {
    auto [Fn, I] = Work.back();
    Work.pop_back();
    const FunctionSummary *S = find(Fn);
    if (!S || !Seen.insert({Fn, I}).second)
      continue;
    if (I < 32 && (S->KeptParams & (1u << I)))
      return true;
    for (const PassedParam &P : S->PassedParams)
      if (P.Param == I)
        Work.emplace_back(P.Callee, P.CalleeParam);
  }
  return false;
}

uint64_t ProjectIndex::answerHash(llvm::StringRef USR) const {
  if (USR.consume_front(LoopCallsKey)) {
    unsigned Query = 0, MaxCalls = 0;
    auto [QueryText, Rest] = USR.split(' ');
    auto [CallsText, Callee] = Rest.split(' ');
    if (QueryText.getAsInteger(10, Query) || CallsText.getAsInteger(10, MaxCalls))
      return 0;
    return hashOf(firstLoopCall(Callee, Query, MaxCalls));
  }
  if (USR.consume_front(CallGradKey))
    return hashOf(allCallsGradOff(USR));
  const FunctionSummary *Root = find(USR);
  if (!Root)
    return 0;
  // Every summary reachable through its callees, in a stable order, hashed with xxHash64: the
  // result cache keeps it, so it must not vary by process as llvm::hash_code's seed may (and the
  // plugin cannot bind to that seed in another LLVM's clang-tidy).
  std::string Bytes;
  llvm::raw_string_ostream OS(Bytes);
  llvm::StringSet<> Seen{USR};
  std::vector<llvm::StringRef> Work{USR};
  while (!Work.empty()) {
    llvm::StringRef Cur = Work.back();
    Work.pop_back();
    OS << Cur << '\0';
    const FunctionSummary *S = find(Cur);
    if (!S) {
      OS << '-' << '\0';
      continue;
    }
    OS << S->Facts << ' ' << S->LoopedFacts << ' ' << S->GraphOutParams << ' ' << S->GraphThroughParams << ' '
       << S->KeptParams << '\0';
    for (const std::string &C : S->LoopedCallees)
      OS << C << '\1';
    for (const PassedParam &P : S->PassedParams)
      OS << P.Param << ' ' << P.Callee << ' ' << P.CalleeParam << '\2';
    for (const std::string &C : S->Callees)
      if (Seen.insert(C).second)
        Work.push_back(C);
    for (const PassedParam &P : S->PassedParams)
      if (Seen.insert(P.Callee).second)
        Work.push_back(P.Callee);
  }
  uint64_t H = llvm::xxHash64(OS.str());
  return H ? H : 1;
}

std::string ProjectIndex::toJSONText() const {
  // json::OStream writes an object's keys sorted: the same project gives the same bytes.
  json::Object Fns;
  for (const auto &F : Functions)
    Fns[F.getKey()] = toJSON(F.getValue());
  json::Object Top{{"torchtidy_index", FormatVersion}, {"functions", std::move(Fns)}};
  json::Object Loops;
  for (const auto &[USR, Calls] : LoopCalls)
    Loops[USR] = Calls;
  if (!Loops.empty())
    Top["loop_calls"] = std::move(Loops);
  json::Object Grads;
  for (const auto &[USR, Bits] : CallGrads)
    Grads[USR] = bitNames(Bits, CallGradNames);
  if (!Grads.empty())
    Top["call_grad"] = std::move(Grads);
  std::string Text;
  // json::OStream rather than formatv: the plugin may only use what every clang-tidy it loads into
  // exports, and clang-tidy-19 does not export formatv's type info.
  llvm::raw_string_ostream OS(Text);
  json::OStream(OS, /*IndentSize=*/1).value(std::move(Top));
  OS.flush();
  return Text;
}

llvm::Expected<ProjectIndex> ProjectIndex::fromJSON(llvm::StringRef Text) {
  llvm::Expected<json::Value> V = json::parse(Text);
  if (!V)
    return V.takeError();
  const json::Object *O = V->getAsObject();
  std::optional<int64_t> Version = O ? O->getInteger("torchtidy_index") : std::nullopt;
  if (!Version || *Version != FormatVersion)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "not a torchtidy index of format version %d", int(FormatVersion));
  const json::Object *Fns = O->getObject("functions");
  if (!Fns)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no 'functions' object");
  if (Fns->size() > MaxFunctions)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "more than %zu functions",
                                   MaxFunctions);
  ProjectIndex I;
  for (const auto &[USR, Value] : *Fns) {
    FunctionSummary S;
    json::Path::Root R("function");
    if (!torchtidy::fromJSON(Value, S, R))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "function '%s': %s",
                                     USR.str().c_str(), llvm::toString(R.getError()).c_str());
    I.add(USR, std::move(S));
  }
  std::map<std::string, std::vector<LoopCall>> Loops;
  json::Path::Root R("loop_calls");
  if (const json::Value *LV = O->get("loop_calls"); LV && !json::fromJSON(*LV, Loops, R))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", llvm::toString(R.getError()).c_str());
  if (Loops.size() > MaxFunctions)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "more than %zu called functions", MaxFunctions);
  for (auto &[USR, Calls] : Loops) {
    if (Calls.size() > MaxLoopCalls)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "loop calls of '%s': more than %zu",
                                     USR.c_str(), MaxLoopCalls);
    for (LoopCall &C : Calls)
      I.addLoopCall(USR, std::move(C));
  }
  std::map<std::string, std::vector<std::string>> Grads;
  json::Path::Root G("call_grad");
  if (const json::Value *GV = O->get("call_grad"); GV && !json::fromJSON(*GV, Grads, G))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", llvm::toString(G.getError()).c_str());
  if (Grads.size() > MaxFunctions)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "more than %zu called functions", MaxFunctions);
  for (const auto &[USR, Names] : Grads) {
    uint32_t Bits = 0;
    if (!nameBits(Names, CallGradNames, Bits, G, "unknown grad mode"))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "call_grad of '%s': %s", USR.c_str(),
                                     llvm::toString(G.getError()).c_str());
    I.addCallGrad(USR, Bits);
  }
  return I;
}

llvm::Expected<ProjectIndex> ProjectIndex::load(llvm::StringRef Path) {
  if (!llvm::sys::fs::is_regular_file(Path))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: not a regular file",
                                   Path.str().c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Text =
      llvm::MemoryBuffer::getFile(Path, /*IsText=*/true, /*RequiresNullTerminator=*/false);
  if (!Text)
    return llvm::createStringError(Text.getError(), "%s: %s", Path.str().c_str(),
                                   Text.getError().message().c_str());
  llvm::Expected<ProjectIndex> I = fromJSON((*Text)->getBuffer());
  if (!I)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", Path.str().c_str(),
                                   llvm::toString(I.takeError()).c_str());
  return I;
}

llvm::Error ProjectIndex::save(llvm::StringRef Path) const {
  llvm::SmallString<256> Temp;
  int FD;
  llvm::SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%%%";
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(Model, FD, Temp))
    return llvm::createStringError(EC, "cannot write %s: %s", Path.str().c_str(), EC.message().c_str());
  {
    llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
    Out << toJSONText() << "\n";
    Out.close();
    if (Out.has_error()) {
      llvm::sys::fs::remove(Temp);
      return llvm::createStringError(Out.error(), "cannot write %s: %s", Path.str().c_str(),
                                     Out.error().message().c_str());
    }
  }
  if (std::error_code EC = llvm::sys::fs::rename(Temp, Path)) {
    llvm::sys::fs::remove(Temp);
    return llvm::createStringError(EC, "cannot write %s: %s", Path.str().c_str(), EC.message().c_str());
  }
  return llvm::Error::success();
}

namespace {
struct Loaded {
  llvm::sys::TimePoint<> Modified;
  uint64_t Size = 0;
  std::shared_ptr<const ProjectIndex> Index;
};
std::mutex IndexMutex;
bool ProcessIndexSet = false;
std::shared_ptr<const ProjectIndex> ProcessIndex;
std::map<std::string, Loaded> &loadedFiles() {
  static std::map<std::string, Loaded> Files;
  return Files;
}
/// Indexes replaced by a newer file stay alive: a model of a live TU may still point at one.
std::vector<std::shared_ptr<const ProjectIndex>> &retired() {
  static std::vector<std::shared_ptr<const ProjectIndex>> Old;
  return Old;
}

/// The index in \p Path, reloaded when the file changed; null (noted on stderr once per content)
/// when unreadable.
std::shared_ptr<const ProjectIndex> loadCached(llvm::StringRef Path) {
  llvm::sys::fs::file_status St;
  if (llvm::sys::fs::status(Path, St) || !llvm::sys::fs::is_regular_file(St))
    return nullptr;
  Loaded &L = loadedFiles()[Path.str()];
  bool Changed = L.Modified != St.getLastModificationTime() || L.Size != St.getSize();
  if (!Changed && L.Index)
    return L.Index;
  L.Modified = St.getLastModificationTime();
  L.Size = St.getSize();
  if (L.Index)
    retired().push_back(std::move(L.Index));
  llvm::Expected<ProjectIndex> I = ProjectIndex::load(Path);
  if (!I) {
    std::string Message = llvm::toString(I.takeError());
    if (Changed)
      llvm::errs() << "torchtidy: warning: project index ignored: " << Message << "\n";
    return L.Index = nullptr;
  }
  L.Index = std::make_shared<const ProjectIndex>(std::move(*I));
  return L.Index;
}
} // namespace

void ProjectIndex::setForProcess(std::shared_ptr<const ProjectIndex> Index) {
  std::lock_guard<std::mutex> Lock(IndexMutex);
  ProcessIndexSet = true;
  ProcessIndex = std::move(Index);
}

void ProjectIndex::clearForProcess() {
  std::lock_guard<std::mutex> Lock(IndexMutex);
  ProcessIndexSet = false;
  ProcessIndex = nullptr;
}

const ProjectIndex *ProjectIndex::forContext(ASTContext &Ctx, llvm::StringRef OptionPath) {
  std::lock_guard<std::mutex> Lock(IndexMutex);
  if (ProcessIndexSet)
    return ProcessIndex.get();
  if (!OptionPath.empty())
    return loadCached(OptionPath).get();
  const SourceManager &SM = Ctx.getSourceManager();
  OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID());
  if (!Main)
    return nullptr;
  llvm::SmallString<256> Dir(Main->getName());
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_filename(Dir);
  for (; !Dir.empty(); Dir = llvm::sys::path::parent_path(Dir).str()) { // not a view of its own buffer
    llvm::SmallString<256> Candidate(Dir);
    llvm::sys::path::append(Candidate, "torchtidy-index.json");
    if (llvm::sys::fs::exists(Candidate))
      return loadCached(Candidate).get();
    if (llvm::sys::path::parent_path(Dir) == Dir)
      break;
  }
  return nullptr;
}

} // namespace torchtidy
