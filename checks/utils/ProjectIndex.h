#ifndef TORCHTIDY_CHECKS_UTILS_PROJECTINDEX_H
#define TORCHTIDY_CHECKS_UTILS_PROJECTINDEX_H

// What a project's functions do, for calls into bodies a TU does not hold: per-function
// summaries keyed by USR, each computed from its own TU alone (so cached with its text), callees
// resolved here. Built by the driver, or by `torchtidy index` for the plugin
// (docs/project-index.md).

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace torchtidy {

/// A parameter a function hands on to a parameter of another, whose summary says whether it keeps it.
struct PassedParam {
  unsigned Param = 0;       ///< the function's parameter
  std::string Callee;       ///< the USR of the function it is passed to
  unsigned CalleeParam = 0; ///< the callee's parameter it binds to

  bool operator==(const PassedParam &O) const {
    return Param == O.Param && Callee == O.Callee && CalleeParam == O.CalleeParam;
  }
};

/// What one function does, as far as its own translation unit shows.
struct FunctionSummary {
  enum Fact : uint32_t {
    Forward = 1u << 0,     ///< runs a model forward
    Backward = 1u << 1,    ///< runs backward()
    Step = 1u << 2,        ///< runs an optimizer's step()
    ZeroGrad = 1u << 3,    ///< clears gradients
    Eval = 1u << 4,        ///< switches a module to eval()
    Train = 1u << 5,       ///< switches a module to train()
    Grad = 1u << 6,        ///< calls torch::autograd::grad (needs the graph it is handed)
    Accelerator = 1u << 7, ///< shows tensors on an accelerator (a device, .cuda(), a CUDA query)
    ReturnsGraph = 1u << 8, ///< returns a graph-attached tensor
    /// runs its forwards with autograd off (a NoGradGuard in its body): a prediction helper
    GradOffForward = 1u << 9,
    /// returns a tensor made on the host on every path, a fill the device could make itself
    /// (AutogradModel::hostTensorSource with HostTensorQuery::DeviceMakeable)
    ReturnsHost = 1u << 10,
    /// returns values whose graph is cut on every path, whatever its caller passes: detached
    /// copies (`return h.detach();`, a tuple of them; AutogradModel::isDetached)
    ReturnsDetached = 1u << 11,
    /// The facts of the function itself, not joined from its callees.
    OwnFacts = ReturnsGraph | GradOffForward | ReturnsHost | ReturnsDetached
  };
  std::string Name; ///< qualified name, for messages
  uint32_t Facts = 0;
  /// The Facts its body runs only inside loops of its own (an epoch function's backward()).
  uint32_t LoopedFacts = 0;
  /// Bit i: the function assigns a graph-attached tensor to its out-parameter i (`Tensor &` or `Tensor *`).
  uint32_t GraphOutParams = 0;
  /// Bit i: the function returns a graph-attached tensor when its argument i holds one (a loss
  /// over the output it is handed). See AutogradModel::returnsGraphThrough.
  uint32_t GraphThroughParams = 0;
  /// Bit i: the function keeps the object its parameter i holds (through copies, moves and
  /// containers, not values computed from it) beyond the call: in a member, a global or static,
  /// a container it did not make. See keepsParam.
  uint32_t KeptParams = 0;
  /// Its parameters it passes to functions whose bodies its TU does not hold.
  std::vector<PassedParam> PassedParams;
  /// The user functions it calls (USRs): factsOf follows them, in this TU or another.
  std::vector<std::string> Callees;
  /// The user functions it calls on every call, in no loop (USRs; see loopCalling).
  std::vector<std::string> EveryCall;
  /// The Callees it calls only inside its own loops: what they run is looped here too.
  std::vector<std::string> LoopedCallees;
  /// Definitions merged into this one that disagreed (inline functions seen differently).
  bool Conflicting = false;

  bool operator==(const FunctionSummary &O) const {
    return Facts == O.Facts && LoopedFacts == O.LoopedFacts && GraphOutParams == O.GraphOutParams &&
           GraphThroughParams == O.GraphThroughParams &&
           KeptParams == O.KeptParams && PassedParams == O.PassedParams && Callees == O.Callees &&
           EveryCall == O.EveryCall && LoopedCallees == O.LoopedCallees;
  }
};

/// A call on every iteration of a loop, from the loop's TU, for the callee's TU to report a
/// per-iteration cost in its body.
struct LoopCall {
  /// Which loops the call runs in on every iteration (AutogradModel::perIterationLoop's Kinds).
  enum Query : uint32_t {
    AnyLoop = 1u << 0,     ///< any loop (no Kinds)
    ModelLoop = 1u << 1,   ///< one running forward, backward() or step() on each iteration
    TrainingLoop = 1u << 2 ///< one running backward() or step() on each iteration
  };
  std::string Loop;      ///< where the loop starts, "file:line"
  uint32_t Queries = 0;  ///< the Query bits the loop answers
  unsigned Calls = 0;    ///< calls between the loop's function and the call (0: in the loop)
  bool Accelerator = false; ///< the code around the loop shows an accelerator
  /// Bit i: the callee's parameter i gets the same value on every iteration (a call in the
  /// loop itself, Calls == 0; else none is known).
  uint32_t SameArgs = 0;

  bool operator==(const LoopCall &O) const {
    return Loop == O.Loop && Queries == O.Queries && Calls == O.Calls && Accelerator == O.Accelerator &&
           SameArgs == O.SameArgs;
  }
  bool operator<(const LoopCall &O) const {
    return std::tie(Loop, Calls, Queries, Accelerator, SameArgs) <
           std::tie(O.Loop, O.Calls, O.Queries, O.Accelerator, O.SameArgs);
  }
};

/// Whether autograd records at a project's calls of a function, from the TUs that do not hold
/// its body ("call_grad" in the index file): bits, joined over every such call.
enum CallGrad : uint32_t {
  CalledGradOff = 1u << 0, ///< some call runs with autograd off there (AutogradModel::gradDisabledAt)
  CalledGradOn = 1u << 1   ///< some call runs with autograd on
};

/// The USR of \p D (clang::index), empty when it has none.
std::string usrOf(const clang::Decl *D);

class ProjectIndex {
public:
  /// Adds the summary of \p USR; a second definition (inline) is merged, keeping each fact
  /// either shows and noting a disagreement.
  void add(llvm::StringRef USR, FunctionSummary S);
  /// Records that \p CalleeUSR is called on every iteration of a loop, once per distinct record.
  void addLoopCall(llvm::StringRef CalleeUSR, LoopCall C);
  /// The first loop (by place) calling \p USR every iteration that answers \p Query, at most
  /// \p MaxCalls calls above; else the nearest one calling a function that calls USR on every
  /// call (EveryCall), up to 6 hops (added to LoopCall::Calls, not to MaxCalls). Recorded.
  std::optional<LoopCall> loopCalling(llvm::StringRef USR, LoopCall::Query Query, unsigned MaxCalls) const;
  /// Records how autograd is set (CallGrad bits) at calls of \p CalleeUSR from a TU that does
  /// not hold its body.
  void addCallGrad(llvm::StringRef CalleeUSR, uint32_t Bits);
  /// Whether autograd is off at every call of \p USR from the TUs that do not hold its body;
  /// nullopt when none is known. Recorded.
  std::optional<bool> gradOffAtCalls(llvm::StringRef USR) const;
  /// Adds every summary, loop call and call's grad mode of \p Other.
  void merge(const ProjectIndex &Other);
  bool empty() const { return Functions.empty() && LoopCalls.empty() && CallGrads.empty(); }
  size_t size() const { return Functions.size(); }
  const FunctionSummary *find(llvm::StringRef USR) const;

  /// The facts of \p USR joined with its callees' to any depth (OwnFacts: its own); nullopt when the project
  /// defines none. Recorded.
  std::optional<uint32_t> factsOf(llvm::StringRef USR) const;
  /// The facts of \p FD, which this TU declares without a body (see factsOf).
  std::optional<uint32_t> factsOf(const clang::FunctionDecl *FD) const;
  /// Of factsOf(\p FD), those it runs outside every loop of its own and of its callees.
  uint32_t ownLevelFactsOf(const clang::FunctionDecl *FD) const;
  /// Bit i set: \p FD assigns a graph-attached tensor to its out-parameter i (`Tensor &`, `Tensor *`).
  uint32_t graphOutParamsOf(const clang::FunctionDecl *FD) const;
  /// Bit i set: \p FD returns a graph-attached tensor when its argument i holds one. Recorded.
  uint32_t graphThroughParamsOf(const clang::FunctionDecl *FD) const;
  /// Whether \p FD keeps its parameter \p Param (KeptParams), itself or through the functions it
  /// passes it to (PassedParams), to any depth; false when the project does not say. Recorded.
  bool keepsParam(const clang::FunctionDecl *FD, unsigned Param) const;

  /// The functions looked up so far, with answerHash: a TU's analysis is replayed only while
  /// these answers stay the same.
  const llvm::StringMap<uint64_t> &consulted() const { return Consulted; }
  /// A hash of what factsOf (or, for a key loopCalling or gradOffAtCalls recorded, that one)
  /// answers; 0: none.
  uint64_t answerHash(llvm::StringRef USR) const;

  /// The index as JSON text (functions sorted by USR: the same project gives the same bytes).
  std::string toJSONText() const;
  static llvm::Expected<ProjectIndex> fromJSON(llvm::StringRef Text);
  static llvm::Expected<ProjectIndex> load(llvm::StringRef Path);
  /// Writes the index atomically (a temporary file renamed over \p Path).
  llvm::Error save(llvm::StringRef Path) const;

  /// The index for the TU of \p Ctx: setForProcess's, else the file \p OptionPath, else the
  /// nearest `torchtidy-index.json` at or above the main file; null when none.
  static const ProjectIndex *forContext(clang::ASTContext &Ctx, llvm::StringRef OptionPath = "");
  /// Makes every later forContext answer \p Index (null: none), so a driver's worker never reads
  /// a file the user left behind.
  static void setForProcess(std::shared_ptr<const ProjectIndex> Index);
  /// Undoes setForProcess: forContext looks for files again (tests).
  static void clearForProcess();

private:
  llvm::StringMap<FunctionSummary> Functions;
  /// The summary of \p FD, its answer recorded; null when the project defines none.
  const FunctionSummary *recordedSummary(const clang::FunctionDecl *FD) const;
  /// The facts of \p USR and its callees (with \p OwnLevel: outside loops), without OwnFacts;
  /// recorded unless \p Record is false (the answer that depends on it is recorded instead).
  uint32_t joinedFacts(llvm::StringRef USR, bool OwnLevel, bool Record = true) const;
  /// loopCalling's answer, not recorded.
  std::optional<LoopCall> firstLoopCall(llvm::StringRef USR, uint32_t Query, unsigned MaxCalls) const;
  /// Callee USR to the loops that call it, sorted.
  std::map<std::string, std::vector<LoopCall>> LoopCalls;
  /// Where a loop starts to the functions of other TUs it calls on every iteration.
  std::map<std::string, std::set<std::string>> LoopMembers;
  /// \p C's Queries, with what the functions its loop calls run at their own level (not
  /// recorded: loopCalling records its answer): a loop
  /// is a training loop when one of them runs backward() or step() (the loop's TU recorded it
  /// without the index).
  uint32_t queriesOf(const LoopCall &C) const;
  /// Callee USR to the CallGrad bits of its calls from other TUs.
  std::map<std::string, uint32_t> CallGrads;
  /// gradOffAtCalls's answer, not recorded.
  std::optional<bool> allCallsGradOff(llvm::StringRef USR) const;
  /// Callee USR to the functions that call it on every call of theirs (EveryCall), sorted.
  std::map<std::string, std::vector<std::string>> EveryCallers;
  mutable llvm::StringMap<uint64_t> Consulted;
};

} // namespace torchtidy

#endif
