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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torchtidy {

using StmtMatcher = clang::ast_matchers::internal::Matcher<clang::Stmt>;

/// Whether autograd records at a statement.
enum class GradMode { On, Off, Unknown };

struct GradModeFact {
  GradMode Mode = GradMode::Unknown;
  /// The guard's declaration, set_enabled call or guarded caller; null for the default or unknown.
  const clang::Stmt *DecidedBy = nullptr;
};

/// One call read the same way whether or not it is resolved (uninstantiated templates).
struct CallShape {
  llvm::StringRef Name;                     ///< `f` in `ns::f(x)`, `m` in `x.m()` / `x->m()`
  const clang::Expr *Object = nullptr;      ///< `x` in `x.m()`; null for free functions and implicit this
  const clang::FunctionDecl *Callee = nullptr; ///< AutogradModel::calledFunction, when known
  bool Resolved = false;                    ///< false: named only (dependent call)
};

/// An in-place tensor operation: what it mutates and how to name it.
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
  /// 1: every iteration; k > 1: under `i % k == 0`; 0: under some other condition.
  unsigned Every = 1;
  /// Run by the function called only inside a loop of its own or of a function it calls
  /// (another TU's: LoopedFacts): not on each of the caller's iterations.
  bool Looped = false;
  bool GradOff = false; ///< a forward another TU's function runs with autograd off (GradOffForward)
};

struct LoopFacts {
  LoopKind Kind = LoopKind::Other;
  std::vector<LoopEvent> Events;
  const LoopEvent *first(LoopEventKind K) const; ///< in source order; null when none
  bool has(LoopEventKind K) const { return first(K) != nullptr; }
};

/// Where a statement runs on every iteration of a loop (see AutogradModel::loopRunning).
struct LoopSite {
  const clang::Stmt *Loop = nullptr; ///< null: none, or in another TU (PerIteration::Across)
  /// The call in the loop's function (with Across: in Entry) reaching the statement; null when
  /// the statement is in that function.
  const clang::CallExpr *Via = nullptr;
};

/// A loop that runs a statement on every iteration, directly or through calls.
struct PerIteration : LoopSite {
  unsigned Calls = 0; ///< calls between the loop's function and the statement (0: in the loop)
  /// Set when the loop is in another TU and calls Entry (defined here) on each iteration.
  const clang::FunctionDecl *Entry = nullptr;
  std::optional<LoopCall> Across;
};

/// The argument \p Call passes for \p Param (skipping a member operator call's object); or null.
const clang::Expr *argumentFor(const clang::CallExpr *Call, const clang::ParmVarDecl *Param);
/// The parameter of \p Callee (the function \p Call runs) that \p Arg binds to, or null.
const clang::ParmVarDecl *parameterFor(const clang::CallExpr *Call, const clang::FunctionDecl *Callee,
                                       const clang::Expr *Arg);

/// What a call left unresolved in an uninstantiated template may run: its lookup's functions.
llvm::SmallVector<const clang::FunctionDecl *, 2> unresolvedCandidates(const clang::CallExpr *Call);

/// `p` in `p->`, `*p` (a raw or smart pointer, a ModuleHolder); else \p E, as spelled.
const clang::Expr *throughPointer(const clang::Expr *E);
/// An expression naming the variable or field \p D: `d`, `this->d`, `s.d`.
clang::ast_matchers::internal::Matcher<clang::Expr> refTo(const clang::ValueDecl *D);
/// The variable or field \p E names directly: `total`, `this->total_`, `stats.loss`.
const clang::ValueDecl *namedDecl(const clang::Expr *E);
/// The variable or field holding the whole object \p E: `acc`, `this->acc_`, `s` of `s.acc`;
/// null for an element (`v[k]`, `*p`) or a computed value.
const clang::ValueDecl *objectRoot(const clang::Expr *E);
/// The variable or field whose lifetime bounds the container \p E: `v` of `v[k]`, `v.at(k)`,
/// `*v`, `v->...`, `v.losses`; the field of `this->losses_`.
const clang::ValueDecl *containerRoot(const clang::Expr *E);

/// One write of values into a standard container that can hold a graph.
struct ContainerStore {
  const clang::Expr *Container = nullptr; ///< the container expression written to
  const clang::Expr *Key = nullptr;       ///< map key or subscript index; null for sequence appends
  /// The parts stored: tensors, aggregates holding them, values of dependent type.
  llvm::SmallVector<const clang::Expr *, 2> Values;
};

/// What becomes of the values a variable, field or container holds.
enum class ValueFate {
  Contained,      ///< every use is visible and none backpropagates
  Escapes,        ///< some use is out of sight (another TU, an opaque call)
  Backpropagated, ///< they feed backward(): the graphs are kept on purpose
};
/// Where AutogradModel::fateOf looks.
struct FateQuery {
  /// Only the value held after this statement counts, until a later assignment replaces it on
  /// every path, in its function and what that calls; Escapes then means handed to the caller.
  /// Null: every use, callers included.
  const clang::Stmt *After = nullptr;
  /// Fields and globals escape (other TUs may use them); false: this TU shows every use.
  bool FieldsEscape = true;
  /// When set, a value kept beyond this statement (a loop or helper body) escapes too: returned,
  /// or put into a variable or container declared outside it.
  const clang::Stmt *Scope = nullptr;
  /// Whether values computed from the held ones (a tensor op's, a call's result) are followed
  /// too; false: only the objects themselves, through copies, moves and aggregates holding them.
  bool Derived = true;
};

/// The node taking the value of \p E past the implicit nodes that carry it (casts, parentheses,
/// temporaries, cleanups, copies, moves): a variable, call, operand, return or statement.
/// \p Carried receives that node's child. Empty at the top and at a node shared by a template and
/// its instantiation.
clang::DynTypedNode valueUser(const clang::Expr *E, clang::ASTContext &Ctx, const clang::Stmt **Carried = nullptr);
/// Whether the value of \p E decides a branch: it is a condition (of an `if`, loop, `switch`,
/// `?:`), is compared, negated or tested with isnan/isinf/isfinite, or goes into a local that
/// does so, \p Depth locals deep (valueUser's steps up).
bool decidesBranch(const clang::Expr *E, clang::ASTContext &Ctx, unsigned Depth = 1);
/// The variable receiving \p E (past valueUser's carriers, `new`, `std::move`, smart pointer
/// upcasts): the non-static local it initialises, or `v`/`p` of `v = E`, `*p = E`, `p.reset(E)`.
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
  /// Backpropagated later in the function, by its callees, or by a caller (for a member: another
  /// method of the class) they are handed to.
  bool ReachesGradient = false;
  bool Escapes = false;     ///< returned, written through a reference parameter or a member
  bool UsersUnseen = false; ///< handed out where no code that may use them is visible
};

/// A value computed from a model output or a loss.
struct OutputCut {
  const clang::Expr *Output = nullptr; ///< the module forward or loss call it comes from
  /// What cut every path to that graph (`.detach()`, `.item()`, no-grad, a tensor of plain
  /// numbers); null while some path is attached.
  const clang::Stmt *Cut = nullptr;
};

/// Tensors, IValues, and containers, tuples and structs holding them: what can keep a graph alive.
bool canHoldGraph(clang::QualType T, unsigned Depth = 3);

/// What AutogradModel::hostTensorSource accepts beyond LibTorch's own facts; an empty callback
/// accepts everything (OnHost: nothing).
struct HostTensorQuery {
  llvm::function_ref<bool(const clang::CallExpr *)> Factory; ///< which hostFactoryCall()s count
  llvm::function_ref<bool(const clang::Expr *)> OnHost;      ///< other sources on the host
  llvm::function_ref<bool(const clang::VarDecl *)> Local;    ///< which locals are followed
  /// When set, only definitions inside it count (a loop body: made in the iteration).
  const clang::Stmt *Scope = nullptr;
};

/// The CheckOptions the model's answers depend on (docs/options.md); checks with equal options
/// share one model, so their facts agree.
struct ModelOptions {
  unsigned CallDepth = 3; ///< levels of user functions, lambdas and callers every query follows
  bool UninstantiatedTemplates = true; ///< analyze templates nobody instantiates, by call names
  /// A call into user code out of sight whose name this matches (case-insensitively, anywhere)
  /// runs backward() and step() (`train_step(batch)`, `trainer.update(loss)`).
  std::string TrainingCallNames = "backward|step|train|update|optimi[sz]e|fit";
  /// Answer calls into other TUs from the project index; false while building the index.
  bool UseProjectIndex = true;
  /// The index file to read (option ProjectIndex); empty: found upwards from the main file.
  std::string ProjectIndexPath;

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
  /// The function a call runs: its callee, the one lambda or function held by the std::function
  /// local it calls, or the one callable the visible calls pass for the std::function parameter.
  const clang::FunctionDecl *calledFunction(const clang::CallExpr *Call);
  /// Every function a call may run: calledFunction, each callable passed for the parameter, or
  /// each candidate of a call left unresolved in an uninstantiated template.
  llvm::SmallVector<const clang::FunctionDecl *, 2> calledFunctions(const clang::CallExpr *Call);
  CallShape callShape(const clang::CallExpr *Call);
  /// The first node matching \p M under \p Root (inclusive), following the user functions and
  /// lambdas it calls \p Depth levels deep (default: CallDepth).
  const clang::Stmt *findReachable(const clang::Stmt *Root, const StmtMatcher &M,
                                   std::optional<unsigned> Depth = std::nullopt);
  /// Hands \p Visit \p Root (Fn null), then each body findReachable would search, once, until it
  /// answers true. With \p OutsideLoops, only through calls outside the loops of their function.
  void forEachReachable(const clang::Stmt *Root, unsigned Depth,
                        llvm::function_ref<bool(const clang::Stmt *Body, const clang::FunctionDecl *Fn)> Visit,
                        bool OutsideLoops = false);

  // ---- order (the CFG of the enclosing function, built once per function) -----------------
  /// Whether some path runs \p A, then \p B, with none of \p Others between; where no CFG holds
  /// both, whether A is the last of them before B in source order.
  bool mayRunBefore(const clang::Stmt *A, const clang::Stmt *B, llvm::ArrayRef<const clang::Stmt *> Others = {});
  /// mayRunBefore, but false where no CFG holds both: an order it cannot see is none.
  bool mayRunBeforeAvoiding(const clang::Stmt *A, const clang::Stmt *B, llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// Whether some path runs \p A, re-enters the head of a loop around \p B (in B's function),
  /// then runs B, avoiding \p Avoid: A's write may reach B in a later iteration.
  bool mayRunInLaterIteration(const clang::Stmt *A, const clang::Stmt *B,
                              llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// Reaching definitions: the \p Sites (of one variable) some path runs before \p At with no
  /// other site between; a lambda counts where it is made; without a CFG, the last in source order.
  llvm::SmallVector<const clang::Stmt *, 2> reachingAt(llvm::ArrayRef<const clang::Stmt *> Sites,
                                                      const clang::Stmt *At);
  /// Whether every path that reaches \p B runs \p A first (A dominates B).
  bool runsBeforeOnEveryPath(const clang::Stmt *A, const clang::Stmt *B);

  // ---- grad mode (thread-local: a guard does not reach into a lambda run by std::thread) --
  /// Whether autograd records where \p S runs, and what decided it.
  GradModeFact gradModeAt(const clang::Stmt *S);
  bool gradDisabledAt(const clang::Stmt *S) { return gradModeAt(S).Mode == GradMode::Off; }
  /// The call starting the thread \p S runs on (`std::thread`, `std::async`, a pool's submit),
  /// directly or through callers; null: the thread of the code around it.
  const clang::Expr *threadLaunchOf(const clang::Stmt *S);

  // ---- provenance (Provenance.h): questions asked of one walk over definitions --------------
  /// Where the value of \p E comes from, joined over the reaching definitions of the locals it
  /// reads (`p = p.detach();` detaches), with the chain of definitions that decided it.
  OriginResult origin(const clang::Expr *E);
  /// origin(), and a value of dependent type read by call names.
  OriginResult originAt(const clang::Expr *E);
  /// \p E keeps a graph alive: a graph-attached tensor, or an aggregate or tuple holding one.
  bool isGraphAttached(const clang::Expr *E);
  /// Whether \p E is computed from a model output or loss (through locals, containers of numbers,
  /// user functions' returns), and what cut its graph on every path.
  std::optional<OutputCut> outputCut(const clang::Expr *E);
  /// \p E is a leaf requiring grad: created or marked so, a parameter, or handed to an optimizer.
  bool isRequiresGradLeaf(const clang::Expr *E);
  /// The leaf requiring grad that \p E denotes or views at \p At: a local by its last assignment
  /// or mark before At; also fields, parameters (through callers), parameter containers.
  std::optional<LeafFact> leafAt(const clang::Expr *E, const clang::Stmt *At);
  /// \p E is an in-place tensor op (`t.add_(x)`, `t += x`, `at::relu_(t)`, `t[0] = x`), also
  /// unresolved in an uninstantiated template (by name).
  std::optional<InplaceOp> inplaceOp(const clang::Expr *E);

  // ---- devices -----------------------------------------------------------------------------
  /// Whether code around \p S may use an accelerator: S's function (and a lambda's own) or a
  /// caller, up to CallDepth + 1 levels, showsAccelerator().
  bool mayUseAccelerator(const clang::Stmt *S);
  /// Where the tensor \p E was made when every path starts on the host (a hostFactoryCall or
  /// \p Q.OnHost), through device-keeping tensor methods, operators on host operands and reaching
  /// definitions of locals; else null.
  const clang::Expr *hostTensorSource(const clang::Expr *E, const HostTensorQuery &Q = {});

  // ---- loops -------------------------------------------------------------------------------
  /// The innermost loop whose body contains \p S (through lambdas defined in it), or null.
  const clang::Stmt *enclosingLoop(const clang::Stmt *S) { return S ? torchtidy::enclosingLoop(S, Ctx) : nullptr; }
  /// What \p Loop runs each iteration (body, condition, increment), and so what kind of loop it is.
  const LoopFacts &loop(const clang::Stmt *Loop);
  /// The events \p Root runs, in source order, directly or through the functions it calls.
  llvm::ArrayRef<LoopEvent> eventsIn(const clang::Stmt *Root);
  /// A forward: matchers::moduleForwardCall(), or a member `forward` called on an object of
  /// dependent type in an uninstantiated template; never a free `forward(x)` (std::forward).
  static StmtMatcher forwardCall();
  /// The statements that are event \p K, also by name in an uninstantiated template. ZeroGrad is
  /// gradClearing(); Forward is a forwardCall() but for isParameterFreeForward modules.
  static StmtMatcher event(LoopEventKind K);
  /// The statements of \p Root that run event \p K (eventsIn's Sites), each once.
  llvm::SmallVector<const clang::Stmt *, 4> sitesIn(const clang::Stmt *Root, LoopEventKind K);
  /// The calls of \p Fn made in a loop of their own function, with that loop (Via: the call).
  llvm::SmallVector<LoopSite, 4> callsInLoops(const clang::FunctionDecl *Fn);
  /// The loop (and its call of the helper, Via) keeping what \p Write puts into \p Kept across
  /// calls: one the argument or captured local outlives; for a field or global, loopAround.
  LoopSite loopKeeping(const clang::Stmt *Write, const clang::ValueDecl *Kept);
  /// The innermost training loop around \p S, in its function or around a caller.
  const clang::Stmt *trainingLoopOf(const clang::Stmt *S);
  /// The first event of \p Kinds that \p Loop runs at its own level (atOwnLevel), or null.
  const LoopEvent *ownLevelEvent(const clang::Stmt *Loop, llvm::ArrayRef<LoopEventKind> Kinds);
  /// Whether \p E runs once per run of \p Loop's body (null: the function's), not in a nested
  /// loop nor in a loop of the helper running it (here or in another TU).
  bool atOwnLevel(const LoopEvent &E, const clang::Stmt *Loop);
  /// The innermost loop around \p S or a call of its function (up to CallDepth callers) with an
  /// ownLevelEvent of \p Kinds; Via: the call that reaches S.
  LoopSite loopRunning(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds);
  /// How often \p S runs per iteration of \p Loop (LoopEvent::Every); `if (i % k)` and a condition
  /// the same every iteration (`if (verbose)`) count as 1.
  unsigned everyNth(const clang::Stmt *S, const clang::Stmt *Loop);
  /// The innermost loop (with an ownLevelEvent of \p Kinds, if any) around \p S or a caller that
  /// runs S every iteration; with \p AcrossTUs, else another TU's loop that does (Across).
  std::optional<PerIteration> perIterationLoop(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds = {},
                                               bool AcrossTUs = false);
  /// Whether each iteration of \p Loop is a step: backward() or step() at its own level, or a
  /// forward when no nested loop trains (an epoch loop around a step loop is not).
  bool iteratesSteps(const clang::Stmt *Loop);
  /// Whether \p E is the same every iteration of \p Loop: it reads only invariants and loop locals
  /// initialised from them, and calls no user function.
  bool sameEveryIteration(const clang::Expr *E, const clang::Stmt *Loop);
  /// Every variable and field \p E reads (through call arguments only) is an invariantEntity of
  /// \p Loop (a helper's locals and parameters are not).
  bool readsOnlyInvariants(const clang::Expr *E, const clang::Stmt *Loop);
  /// The variable or field \p E names (`x`, `model->`, `s.field`) if declared outside \p Loop and
  /// written by no iteration (step() writes the optimizer's tensors); else null.
  const clang::ValueDecl *invariantEntity(const clang::Expr *E, const clang::Stmt *Loop);
  /// What \p Write (null: any) puts into \p Container, declared outside \p Loop, survives into
  /// the next iteration: some path from Write around the loop neither clears nor reassigns it.
  bool outlivesIteration(const clang::ValueDecl *Container, const clang::Stmt *Loop,
                         const clang::Stmt *Write = nullptr);
  /// \p E as a write into a standard container (`c.push_back(v)`, `c[k] = v`, `c.at(k) = v`),
  /// also unresolved in a template.
  std::optional<ContainerStore> containerStore(const clang::Expr *E);
  /// What becomes of the values \p Holder (variable, field, container) holds, followed through
  /// variables, containers, tensor ops, callees and callers, where \p Q looks.
  ValueFate fateOf(const clang::ValueDecl *Holder, const FateQuery &Q = {});

  /// What the graph-holding values \p Loop writes outside itself feed (until reassigned):
  /// gradient consumers, returns, out-parameters, members.
  LoopOutputs loopOutputs(const clang::Stmt *Loop);
  /// The outermost function (not a lambda) whose body contains \p S.
  const clang::FunctionDecl *outermostFunction(const clang::Stmt *S);
  /// What needs a recorded graph: event() Backward or Step, torch::autograd::grad() (also by
  /// name), or a call left unresolved one of whose candidates reaches one.
  StmtMatcher gradientConsumer();
  /// \p Call goes into user code out of sight (no body here, or an unknown object's member in an
  /// uninstantiated template) named like ModelOptions::TrainingCallNames: assume it trains.
  bool isOpaqueTrainingCall(const clang::CallExpr *Call);
  /// A gradientConsumer() or an opaque training call.
  StmtMatcher trainingCall();

private:
  /// What loopAround's judge does with a loop: looks further out, takes it, or gives up.
  enum class Verdict { Skip, Take, Stop };
  /// Whether loopAround climbs from a lambda's body to its calls, and not through recursion.
  enum Climb : unsigned { ThroughLambdaCalls = 1, NotThroughRecursion = 2 };
  /// The one "the loop here, else the caller's" walk: the innermost loop around \p S or a call
  /// of its function (callers up to CallDepth, as \p How allows) that \p Judge takes, seeing the
  /// path (S and one call per function); else what \p Beyond answers (depth left, path).
  std::optional<PerIteration>
  loopAround(const clang::Stmt *S,
             llvm::function_ref<Verdict(const clang::Stmt *Loop, llvm::ArrayRef<const clang::Stmt *> Path)> Judge,
             unsigned How,
             llvm::function_ref<std::optional<PerIteration>(const clang::FunctionDecl *, unsigned,
                                                            llvm::ArrayRef<const clang::Stmt *>)>
                 Beyond = nullptr);
  GradModeFact gradModeIn(const clang::Stmt *S, unsigned Depth);
  const clang::Stmt *handedOverUnderNoGrad(const clang::FunctionDecl *FD, unsigned Depth);
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
