#ifndef TORCHTIDY_CHECKS_UTILS_AUTOGRADMODEL_H
#define TORCHTIDY_CHECKS_UTILS_AUTOGRADMODEL_H

// The autograd facts checks ask for, computed lazily and cached per translation unit (callers,
// order, grad mode, provenance, loops). A model lives exactly as long as its ASTContext.

#include "utils/ProjectIndex.h"
#include "utils/Provenance.h"
#include "utils/TorchMatchers.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torchtidy {

using StmtMatcher = clang::ast_matchers::internal::Matcher<clang::Stmt>;

enum class GradMode { On, Off, Unknown };
struct GradModeFact {
  GradMode Mode = GradMode::Unknown;
  /// guard, set_enabled call, guarded caller; null: the default, or (Off) the calls of other TUs
  const clang::Stmt *DecidedBy = nullptr;
};

/// One call read the same way whether or not it is resolved (uninstantiated templates).
struct CallShape {
  llvm::StringRef Name;                     ///< `f` in `ns::f(x)`, `m` in `x.m()` / `x->m()`
  const clang::Expr *Object = nullptr;      ///< `x` in `x.m()`; null for free functions and implicit this
  const clang::FunctionDecl *Callee = nullptr; ///< AutogradModel::calledFunction, when known
  bool Resolved = false;                    ///< false: named only (dependent call)
};

struct InplaceOp {
  const clang::Expr *Target = nullptr;
  std::string Spelling;   ///< `add_`, `+=`, `=`
  std::string OutOfPlace; ///< the out-of-place twin (`add`, `+`); empty when there is none
  bool IsAssignment = false;
};

enum class LoopKind { Training, Eval, Other };
enum class LoopEventKind { Forward, Backward, Step, ZeroGrad, Eval, Train };
/// The FunctionSummary::Fact of event \p K: both list the events in the same order.
constexpr uint32_t indexFact(LoopEventKind K) { return 1u << unsigned(K); }
static_assert(FunctionSummary::ZeroGrad == indexFact(LoopEventKind::ZeroGrad) &&
              FunctionSummary::Train == indexFact(LoopEventKind::Train));

/// Something a loop body runs, directly or through helpers and lambdas.
struct LoopEvent {
  LoopEventKind Kind;
  const clang::Stmt *Site = nullptr; ///< the statement of the loop body that runs it (or the helper call)
  const clang::Stmt *Call = nullptr; ///< the call that does it (Site unless reached through a helper)
  unsigned Every = 1;   ///< 1: every iteration; k > 1: under `i % k == 0`; 0: under another condition
  bool Looped = false;  ///< run only in a loop of the helper Site calls (or of one it calls)
  bool GradOff = false; ///< a forward another TU's function runs with autograd off (GradOffForward)
};

struct LoopFacts {
  LoopKind Kind = LoopKind::Other;
  std::vector<LoopEvent> Events;
  const LoopEvent *first(LoopEventKind K) const; ///< null when none
  bool has(LoopEventKind K) const { return first(K) != nullptr; }
};

/// A loop running a statement, directly or through calls.
struct LoopSite {
  const clang::Stmt *Loop = nullptr;    ///< null: none, or in another TU (PerIteration::Across)
  const clang::CallExpr *Via = nullptr; ///< the call in the loop's function (Across: in Entry); null: none
};
struct PerIteration : LoopSite {
  unsigned Calls = 0; ///< calls between the loop's function and the statement (0: in the loop)
  /// Those calls here, the one in the statement's caller first, Via last.
  llvm::SmallVector<const clang::CallExpr *, 2> Path;
  const clang::FunctionDecl *Entry = nullptr; ///< with Across: the function here the loop calls
  std::optional<LoopCall> Across;             ///< the loop is in another TU
};

/// The argument \p Call passes for \p Param (skipping a member operator call's object); or null.
const clang::Expr *argumentFor(const clang::CallExpr *Call, const clang::ParmVarDecl *Param);
/// The parameter of \p Callee (the function \p Call runs) that \p Arg binds to, or null.
const clang::ParmVarDecl *parameterFor(const clang::CallExpr *Call, const clang::FunctionDecl *Callee,
                                       const clang::Expr *Arg);

/// The functions the lookup of a call left unresolved in a template finds.
llvm::SmallVector<const clang::FunctionDecl *, 2> unresolvedCandidates(const clang::CallExpr *Call);

/// `p` in `p->`, `*p` (a raw or smart pointer, a ModuleHolder); else \p E, as spelled.
const clang::Expr *throughPointer(const clang::Expr *E);
/// An expression naming the variable or field \p D: `d`, `this->d`, `s.d`.
clang::ast_matchers::internal::Matcher<clang::Expr> refTo(const clang::ValueDecl *D);
/// The variable or field \p E names directly: `total`, `this->total_`, `stats.loss`.
const clang::ValueDecl *namedDecl(const clang::Expr *E);
/// The variable or field holding the whole object \p E (`s` of `s.acc`); null for an element.
const clang::ValueDecl *objectRoot(const clang::Expr *E);
/// objectRoot, also through elements and pointers: `v` of `v[k]`, `v.at(k)`, `*v`, `v->x`.
const clang::ValueDecl *containerRoot(const clang::Expr *E);

/// One write of values into a standard container that can hold a graph.
struct ContainerStore {
  const clang::Expr *Container = nullptr;
  const clang::Expr *Key = nullptr;                 ///< map key or index; null for appends
  llvm::SmallVector<const clang::Expr *, 2> Values; ///< tensors, aggregates of them, dependent values
};

enum class ValueFate {
  Contained,      ///< every use is visible and none backpropagates
  Escapes,        ///< some use is out of sight (another TU, an opaque call)
  Backpropagated, ///< they feed backward(): the graphs are kept on purpose
};
struct FateQuery {
  /// Only the value held after this statement counts, until an assignment replaces it on every
  /// path, in its function and its callees (Escapes: handed to the caller); null: every use.
  const clang::Stmt *After = nullptr;
  bool FieldsEscape = true; ///< fields and globals escape; false: this TU shows every use
  /// When set, a value kept beyond it (returned, stored in an outer variable) escapes too.
  const clang::Stmt *Scope = nullptr;
  bool Derived = true; ///< follow values computed from the held ones; false: copies and moves only
};

/// What AutogradModel::destinationOf climbs past besides valueUser's carriers: nothing more,
/// functional casts and constructions of a tensor, or also any construction, braced or
/// parenthesized list, std::make_pair and std::make_tuple.
enum class Through { Copies, Conversions, Aggregates };
enum class Destination {
  Unknown,   ///< no single parent, or a declaration other than a variable
  Variable,  ///< initializes Var
  Returned,  ///< Site: the return
  Assigned,  ///< the right side of `Target = ...` (operator=); Site: the assignment
  Stored,    ///< an argument of Target's push_back, insert, emplace, ... (also unresolved); Site: the call
  Argument,  ///< another operand of the call Site
  Object,    ///< the object of the member access Site, which does not pass it on
  Discarded, ///< a statement of its own (a block's, a branch's, a loop's, a label's) or a comma's left side
  Used,      ///< another node, Site, takes it
};
struct ValueDestination {
  Destination K = Destination::Unknown;
  const clang::Stmt *Site = nullptr;
  const clang::Expr *Value = nullptr; ///< Site's child (or Var's initializer) the value arrives as
  const clang::VarDecl *Var = nullptr;
  const clang::Expr *Target = nullptr; ///< the assigned side or the container
};

/// The node taking the value of \p E past the implicit nodes that carry it (casts, parentheses,
/// temporaries, copies, moves); \p Carried receives its child. Empty at the top and at a node a
/// template shares with its instantiation.
clang::DynTypedNode valueUser(const clang::Expr *E, clang::ASTContext &Ctx, const clang::Stmt **Carried = nullptr);
/// Whether the value of \p E decides a branch: a condition, compared, negated, tested with
/// isnan/isinf/isfinite, or put in a local that is, \p Depth locals deep.
bool decidesBranch(const clang::Expr *E, clang::ASTContext &Ctx, unsigned Depth = 1);
/// The variable receiving \p E (past valueUser's carriers, `new`, `std::move`): the non-static
/// local it initialises, or `v`/`p` of `v = E`, `*p = E`, `p.reset(E)`.
const clang::VarDecl *receivingVariable(const clang::Expr *E, clang::ASTContext &Ctx);

/// Whether \p S runs only under an `if`, `switch` or `?:` within \p Scope (its condition included).
bool underConditionWithin(const clang::Stmt *S, const clang::Stmt *Scope, clang::ASTContext &Ctx);
/// \p E as spelled in the source: implicit nodes and parentheses stripped until none is left.
const clang::Expr *asSpelled(const clang::Expr *E);
/// Whether \p S runs on every call of its function: under no condition, switch, handler or
/// lambda, after no `if` that may return.
bool runsOnEveryCall(const clang::Stmt *S, clang::ASTContext &Ctx);

/// The innermost block, loop or `if` whose end destroys \p VD (a parameter: the function body).
const clang::Stmt *lifetimeScope(const clang::VarDecl *VD, clang::ASTContext &Ctx);

/// How the values a loop writes outside itself can reach a backward pass.
struct LoopOutputs {
  bool ReachesGradient = false; ///< backpropagated later, by callees, or by a caller handed them
  bool Escapes = false;         ///< returned, written through a reference parameter or a member
  bool UsersUnseen = false;     ///< handed out where no code that may use them is visible
};

/// A value computed from a model output or a loss.
struct OutputCut {
  const clang::Expr *Output = nullptr; ///< the module forward or loss call it comes from
  const clang::Stmt *Cut = nullptr;    ///< what cut every path to that graph; null: attached
};

/// Tensors, IValues, and containers, tuples and structs holding them: what can keep a graph alive.
bool canHoldGraph(clang::QualType T, unsigned Depth = 3);

/// What hostTensorSource accepts as a start on the host.
struct HostTensorQuery {
  llvm::function_ref<bool(const clang::Expr *)> OnHost; ///< other sources on the host (none)
  bool Factories = true;                                ///< hostFactoryCall()s
  /// Only fills the device could make itself, which a copy wastes: no from_blob (the host memory
  /// of the moment), no local written in place, torch::tensor(values) only over values the same
  /// every iteration of Loop (never in a called function).
  bool DeviceMakeable = false;
  const clang::Stmt *Scope = nullptr; ///< when set, only definitions inside it (or in what it calls) count
  const clang::Stmt *Loop = nullptr;  ///< see DeviceMakeable
};

/// The CheckOptions the model's answers depend on (docs/options.md); checks with equal options
/// share one model, so their facts agree.
struct ModelOptions {
  unsigned CallDepth = 3; ///< levels of user functions, lambdas and callers every query follows
  bool UninstantiatedTemplates = true; ///< analyze templates nobody instantiates, by call names
  /// An out-of-sight user call matching this (case-insensitively) runs backward() and step().
  std::string TrainingCallNames = "backward|step|train|update|optimi[sz]e|fit";
  bool UseProjectIndex = true;  ///< false while building the index
  std::string ProjectIndexPath; ///< empty: found upwards from the main file

  bool operator==(const ModelOptions &O) const {
    return CallDepth == O.CallDepth && UninstantiatedTemplates == O.UninstantiatedTemplates &&
           TrainingCallNames == O.TrainingCallNames && UseProjectIndex == O.UseProjectIndex &&
           ProjectIndexPath == O.ProjectIndexPath;
  }
};

class AutogradModel {
public:
  /// The model of \p Ctx for \p Options, made on first use and destroyed with \p Ctx.
  static AutogradModel &get(clang::ASTContext &Ctx, const ModelOptions &Options = ModelOptions());

  AutogradModel(clang::ASTContext &Ctx, ModelOptions Options);
  ~AutogradModel();
  AutogradModel(const AutogradModel &) = delete;
  AutogradModel &operator=(const AutogradModel &) = delete;

  clang::ASTContext &context() const { return Ctx; }
  const ProjectIndex *index() const { return Index; } ///< the other TUs' summaries; null when none
  /// The index's FunctionSummary::Fact bits for \p Callee; nullopt when unknown or defined here.
  std::optional<uint32_t> indexedFacts(const clang::FunctionDecl *Callee) const;
  /// Whether \p Fn's own code shows an accelerator: a torch::Device parameter or field, `.cuda()`,
  /// a non-CPU device, a CUDA query, or a call into another TU that does.
  bool showsAccelerator(const clang::FunctionDecl *Fn);

  // ---- calls and functions ---------------------------------------------------------------
  /// The calls of \p FD (or of any instantiation of its pattern) in user code.
  llvm::ArrayRef<const clang::CallExpr *> callersOf(const clang::FunctionDecl *FD);
  /// The function a call runs: its callee, or the one callable a std::function local or
  /// parameter it calls holds.
  const clang::FunctionDecl *calledFunction(const clang::CallExpr *Call);
  /// Every function a call may run: calledFunction, each callable passed for the parameter, or
  /// each unresolvedCandidates.
  llvm::SmallVector<const clang::FunctionDecl *, 2> calledFunctions(const clang::CallExpr *Call);
  CallShape callShape(const clang::CallExpr *Call);
  /// The first node matching \p M under \p Root, following calls \p Depth levels (CallDepth).
  const clang::Stmt *findReachable(const clang::Stmt *Root, const StmtMatcher &M,
                                   std::optional<unsigned> Depth = std::nullopt);
  /// Hands \p Visit \p Root (Fn null), then each body findReachable would search, once, until it
  /// answers true. With \p OutsideLoops, only through calls outside the loops of their function.
  void forEachReachable(const clang::Stmt *Root, unsigned Depth,
                        llvm::function_ref<bool(const clang::Stmt *Body, const clang::FunctionDecl *Fn)> Visit,
                        bool OutsideLoops = false);
  /// The one "here, else the caller's" climb: \p Visit sees the path (\p S, then one call per
  /// function above it) and the levels left, and stops the climb (true) or names in \p Up the
  /// function whose calls come next; \p Beyond is asked when none of Up's calls stops it.
  bool climbCallers(const clang::Stmt *S, unsigned Depth,
                    llvm::function_ref<bool(llvm::ArrayRef<const clang::Stmt *> Path, unsigned Left,
                                            const clang::FunctionDecl *&Up)>
                        Visit,
                    llvm::function_ref<bool(const clang::FunctionDecl *Up, unsigned Left,
                                            llvm::ArrayRef<const clang::Stmt *> Path)>
                        Beyond = nullptr);

  // ---- order (the CFG of the enclosing function, built once per function) -----------------
  /// Whether some path runs \p A, then \p B, with none of \p Others between; where no CFG holds
  /// both, whether A is the last of them before B in source order.
  bool mayRunBefore(const clang::Stmt *A, const clang::Stmt *B, llvm::ArrayRef<const clang::Stmt *> Others = {});
  /// mayRunBefore, but false where no CFG holds both.
  bool mayRunBeforeAvoiding(const clang::Stmt *A, const clang::Stmt *B, llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// Whether some path avoiding \p Avoid runs \p A, re-enters a loop around \p B, then runs B.
  bool mayRunInLaterIteration(const clang::Stmt *A, const clang::Stmt *B,
                              llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// Reaching definitions: the \p Sites (of one variable) some path runs before \p At with no
  /// other site between; a lambda counts where it is made.
  llvm::SmallVector<const clang::Stmt *, 2> reachingAt(llvm::ArrayRef<const clang::Stmt *> Sites,
                                                      const clang::Stmt *At);
  /// Whether \p A dominates \p B.
  bool runsBeforeOnEveryPath(const clang::Stmt *A, const clang::Stmt *B);
  /// Whether \p B post-dominates \p A: every path from A to the function's exit runs B.
  bool runsAfterOnEveryPath(const clang::Stmt *A, const clang::Stmt *B);

  // ---- grad mode (thread-local: a guard does not reach into a lambda run by std::thread) --
  GradModeFact gradModeAt(const clang::Stmt *S);
  bool gradDisabledAt(const clang::Stmt *S) { return gradModeAt(S).Mode == GradMode::Off; }
  /// The call starting the thread \p S runs on (`std::thread`, `std::async`, a pool's submit),
  /// directly or through callers; null: the thread of the code around it.
  const clang::Expr *threadLaunchOf(const clang::Stmt *S);

  // ---- provenance (Provenance.h): questions asked of one walk over definitions --------------
  /// Where the value of \p E comes from, joined over the reaching definitions of the locals it
  /// reads, with the chain of definitions that decided it.
  OriginResult origin(const clang::Expr *E);
  /// origin(), and a value of dependent type read by call names.
  OriginResult originAt(const clang::Expr *E);
  /// \p E keeps a graph alive: a graph-attached tensor, or an aggregate or tuple holding one.
  bool isGraphAttached(const clang::Expr *E);
  /// \p E keeps no graph alive on any path, its graph cut: a tensor detached or computed where
  /// autograd is off (origin Detached); a pair, tuple or aggregate of such
  /// (`std::make_tuple(h.detach(), c.detach())`), also as a user function returns it (another
  /// TU's: the index's FunctionSummary::ReturnsDetached).
  bool isDetached(const clang::Expr *E);
  /// Whether \p E is computed from a model output or loss, and what cut its graph on every path.
  std::optional<OutputCut> outputCut(const clang::Expr *E);
  /// Whether \p FD, defined here, returns a graph-attached tensor when its tensor parameter
  /// \p Param holds one (`return torch::nll_loss(output, target);` through `output`).
  bool returnsGraphThrough(const clang::FunctionDecl *FD, unsigned Param);
  /// \p E is a leaf requiring grad: created or marked so, a parameter, or handed to an optimizer.
  bool isRequiresGradLeaf(const clang::Expr *E);
  /// The leaf requiring grad that \p E denotes or views at \p At.
  std::optional<LeafFact> leafAt(const clang::Expr *E, const clang::Stmt *At);
  /// \p E is an in-place tensor op (`t.add_(x)`, `t += x`, `at::relu_(t)`, `t[0] = x`), also
  /// unresolved in an uninstantiated template.
  std::optional<InplaceOp> inplaceOp(const clang::Expr *E);

  // ---- devices -----------------------------------------------------------------------------
  /// Whether \p S's function, its own lambda or a caller (CallDepth + 1 levels) showsAccelerator.
  bool mayUseAccelerator(const clang::Stmt *S);
  /// Where the tensor \p E was made when every path starts on the host (a hostFactoryCall or
  /// \p Q.OnHost), through device-keeping tensor methods, operators on host operands, reaching
  /// definitions of locals, and user functions every return of which does (another TU's: the
  /// index's FunctionSummary::ReturnsHost); else null.
  const clang::Expr *hostTensorSource(const clang::Expr *E, const HostTensorQuery &Q = {});

  // ---- loops -------------------------------------------------------------------------------
  /// The innermost loop whose body contains \p S (through lambdas defined in it), or null.
  const clang::Stmt *enclosingLoop(const clang::Stmt *S) { return S ? torchtidy::enclosingLoop(S, Ctx) : nullptr; }
  /// What \p Loop runs each iteration (body, condition, increment), and so what kind of loop it is.
  const LoopFacts &loop(const clang::Stmt *Loop);
  /// The events \p Root runs, in source order, directly or through the functions it calls.
  llvm::ArrayRef<LoopEvent> eventsIn(const clang::Stmt *Root);
  /// A forward: matchers::moduleForwardCall(), or a member `forward` called on an object of
  /// dependent type; never a free `forward(x)` (std::forward).
  static StmtMatcher forwardCall();
  /// The statements that are event \p K, also by name in an uninstantiated template. Forward
  /// leaves out isParameterFreeForward modules.
  static StmtMatcher event(LoopEventKind K);
  /// The statements of \p Root that run event \p K (eventsIn's Sites), each once.
  llvm::SmallVector<const clang::Stmt *, 4> sitesIn(const clang::Stmt *Root, LoopEventKind K);
  /// The calls of \p Fn made in a loop of their own function, with that loop.
  llvm::SmallVector<LoopSite, 4> callsInLoops(const clang::FunctionDecl *Fn);
  /// The loop keeping what \p Write puts into \p Kept across calls: one the argument or captured
  /// local outlives; for a field or global, the loop around Write or a caller.
  LoopSite loopKeeping(const clang::Stmt *Write, const clang::ValueDecl *Kept);
  /// The innermost training loop around \p S, in its function or around a caller (a lambda's
  /// is found where it is defined, and with \p ThroughLambdas also around its calls); \p Calls
  /// receives the calls on the way, the one in S's caller first and the one in the loop last.
  const clang::Stmt *trainingLoopOf(const clang::Stmt *S, llvm::SmallVectorImpl<const clang::CallExpr *> *Calls = nullptr,
                                    bool ThroughLambdas = false);
  /// The first event of \p Kinds that \p Loop runs atOwnLevel (and \p Where accepts), or null.
  const LoopEvent *ownLevelEvent(const clang::Stmt *Loop, llvm::ArrayRef<LoopEventKind> Kinds,
                                 llvm::function_ref<bool(const LoopEvent &)> Where = nullptr);
  /// Whether \p E runs once per run of \p Loop's body (null: the function's), not in a nested
  /// loop nor in a loop of the helper running it (here or in another TU).
  bool atOwnLevel(const LoopEvent &E, const clang::Stmt *Loop);
  /// The innermost loop around \p S or a caller with an ownLevelEvent of \p Kinds.
  LoopSite loopRunning(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds);
  /// How often \p S runs per iteration of \p Loop (LoopEvent::Every); a condition the same every
  /// iteration (`if (verbose)`) counts as 1.
  unsigned everyNth(const clang::Stmt *S, const clang::Stmt *Loop);
  /// The innermost loop (with an ownLevelEvent of \p Kinds, if any) around \p S or a caller that
  /// runs S every iteration; with \p AcrossTUs, else another TU's loop that does (Across).
  std::optional<PerIteration> perIterationLoop(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds = {},
                                               bool AcrossTUs = false);
  /// Whether each iteration of \p Loop is a step: backward() or step() at its own level, or a
  /// forward when no nested loop trains.
  bool iteratesSteps(const clang::Stmt *Loop);
  /// Whether every iteration of \p Loop runs a visible backward() at its own level, under no
  /// condition, keeping no graph (no retain_graph, no create_graph): the graphs an iteration
  /// records are freed by its end, so a sum of them can no longer be backpropagated.
  bool freesGraphsEachIteration(const clang::Stmt *Loop);
  /// Whether \p E reads only invariants and loop locals initialised from them, calling no user
  /// function: the same every iteration of \p Loop.
  bool sameEveryIteration(const clang::Expr *E, const clang::Stmt *Loop);
  /// Every variable and field \p E reads (through call arguments only) is an invariantEntity.
  bool readsOnlyInvariants(const clang::Expr *E, const clang::Stmt *Loop);
  /// The variable or field \p E names if declared outside \p Loop and written by no iteration.
  const clang::ValueDecl *invariantEntity(const clang::Expr *E, const clang::Stmt *Loop);
  /// What \p Write (null: any) puts into \p Container, declared outside \p Loop, survives into
  /// the next iteration: some path from Write around the loop neither clears nor reassigns it.
  bool outlivesIteration(const clang::ValueDecl *Container, const clang::Stmt *Loop,
                         const clang::Stmt *Write = nullptr);
  /// \p E as a write into a standard container (`c.push_back(v)`, `c[k] = v`), also unresolved.
  std::optional<ContainerStore> containerStore(const clang::Expr *E);
  /// Where the value of \p E goes: past valueUser's carriers, the nodes \p Carry names, and
  /// the calls of a method on it that \p PassesOn says hand it on (`t.view(...)`).
  ValueDestination destinationOf(const clang::Expr *E, Through Carry = Through::Aggregates,
                                 llvm::function_ref<bool(const clang::CXXMemberCallExpr *)> PassesOn = nullptr);
  /// What becomes of the values \p Holder holds, where \p Q looks.
  ValueFate fateOf(const clang::ValueDecl *Holder, const FateQuery &Q = {});
  /// What the graph-holding values \p Loop writes outside itself feed (until reassigned).
  LoopOutputs loopOutputs(const clang::Stmt *Loop);
  /// The outermost function (not a lambda) whose body contains \p S.
  const clang::FunctionDecl *outermostFunction(const clang::Stmt *S);
  /// What needs a recorded graph: backward(), step(), torch::autograd::grad(), or a call left
  /// unresolved one of whose candidates reaches one.
  StmtMatcher gradientConsumer();
  /// \p Call goes into user code out of sight named like ModelOptions::TrainingCallNames.
  bool isOpaqueTrainingCall(const clang::CallExpr *Call);
  /// A gradientConsumer() or an opaque training call.
  StmtMatcher trainingCall();

private:
  enum class Verdict { Skip, Take, Stop };
  enum Climb : unsigned { ThroughLambdaCalls = 1, NotThroughRecursion = 2 };
  /// The innermost loop around \p S or a call of its function (climbCallers, as \p How allows)
  /// that \p Judge takes, seeing the path; else what \p Beyond answers.
  std::optional<PerIteration>
  loopAround(const clang::Stmt *S,
             llvm::function_ref<Verdict(const clang::Stmt *Loop, llvm::ArrayRef<const clang::Stmt *> Path)> Judge,
             unsigned How,
             llvm::function_ref<std::optional<PerIteration>(const clang::FunctionDecl *, unsigned,
                                                            llvm::ArrayRef<const clang::Stmt *>)>
                 Beyond = nullptr);
  GradModeFact gradModeIn(const clang::Stmt *S, unsigned Depth);
  /// isDetached, following user functions \p Depth levels.
  bool detachedWithin(const clang::Expr *E, unsigned Depth);
  const clang::Stmt *handedOverUnderNoGrad(const clang::FunctionDecl *FD, unsigned Depth);
  /// Whether \p FD runs only where other TUs call it with autograd off: the index knows such a
  /// call of it (or of a method it overrides) and none with autograd on, and this TU neither
  /// calls it (nor those methods) nor hands it over.
  bool calledGradOffElsewhere(const clang::FunctionDecl *FD);
  llvm::ArrayRef<const clang::DeclRefExpr *> handedOver(const clang::FunctionDecl *FD);
  /// The call that runs \p FD (with \p LE: the lambda \p LE makes) on another thread.
  const clang::Expr *handedToThread(const clang::FunctionDecl *FD, const clang::LambdaExpr *LE = nullptr);

  struct Impl;
  clang::ASTContext &Ctx;
  const ModelOptions Opts;
  const ProjectIndex *Index = nullptr;
  std::unique_ptr<Impl> P;
  friend struct Impl;
};

} // namespace torchtidy

#endif
