#ifndef TORCHTIDY_CHECKS_UTILS_AUTOGRADMODEL_H
#define TORCHTIDY_CHECKS_UTILS_AUTOGRADMODEL_H

// The facts about autograd every check needs, computed once per translation unit: who calls
// a function, in which order statements run (Clang's CFG), whether autograd records at a
// statement, where a tensor comes from, what a loop does each iteration. Like clang-tidy's
// ExceptionAnalyzer it is built lazily and caches per function; unlike a check it lives
// exactly as long as the ASTContext it describes (clang-tidy creates checks per TU, and the
// plugin runs many TUs in one process).

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
  /// The statement that decided it: the guard's declaration, the set_enabled call, the
  /// guarded call of the enclosing function; null for the default (on) or when unknown.
  const clang::Stmt *DecidedBy = nullptr;
};

/// One call read the same way whether or not it is resolved (templates nobody instantiates).
struct CallShape {
  llvm::StringRef Name;                     ///< `f` in `ns::f(x)`, `m` in `x.m()` / `x->m()`
  const clang::Expr *Object = nullptr;      ///< `x` in `x.m()`; null for free functions and implicit this
  const clang::FunctionDecl *Callee = nullptr; ///< what runs (through lambdas held in locals), when known
  bool Resolved = false;                    ///< false: named only (dependent call)
};

/// An in-place tensor operation: what it mutates and how to name it.
struct InplaceOp {
  const clang::Expr *Target = nullptr;
  std::string Spelling;   ///< `add_`, `+=`, `=`
  std::string OutOfPlace; ///< the out-of-place twin (`add`, `+`); empty when there is none
  bool IsAssignment = false;
};

/// How a tensor became a leaf that requires grad.
enum class LeafKind { Created, Marked, Parameter };

struct LeafFact {
  LeafKind Kind;
  /// The factory with requires_grad, the requires_grad_() mark, the parameters() call or field.
  const clang::Stmt *Source = nullptr;
  /// The tensor is a view of the leaf (it shares its storage and autograd identity).
  bool View = false;
};

enum class LoopKind { Training, Eval, Other };
enum class LoopEventKind { Forward, Backward, Step, ZeroGrad, Eval, Train };
/// The project index's fact for event \p K (FunctionSummary::Fact).
uint32_t indexFact(LoopEventKind K);

/// Something a loop body runs, directly or through helpers and lambdas.
struct LoopEvent {
  LoopEventKind Kind;
  /// The statement of the loop body that runs it: the call itself or the helper call.
  const clang::Stmt *Site = nullptr;
  /// The call that does it (equal to Site unless reached through a helper).
  const clang::Stmt *Call = nullptr;
  /// 1: every iteration; k > 1: under `i % k == 0`; 0: under some other condition.
  unsigned Every = 1;
  /// Run by a function of another TU only inside a loop of its own (FunctionSummary::LoopedFacts).
  bool Looped = false;
};

struct LoopFacts {
  LoopKind Kind = LoopKind::Other;
  std::vector<LoopEvent> Events;
  /// The first event of kind \p K (the body's first, in source order), or null.
  const LoopEvent *first(LoopEventKind K) const;
  bool has(LoopEventKind K) const { return first(K) != nullptr; }
};

/// Where a statement runs on every iteration of a loop (see AutogradModel::loopRunning).
struct LoopSite {
  /// The loop; null when there is none, or when it is in another translation unit (Across).
  const clang::Stmt *Loop = nullptr;
  /// The call in the loop's function that reaches the statement; null when it is in the loop.
  /// With Across: the call in Entry that reaches it, null when the statement is in Entry.
  const clang::CallExpr *Via = nullptr;
};

/// A loop that runs a statement on every iteration, directly or through calls.
struct PerIteration : LoopSite {
  /// The calls between the loop's function and the statement (0: in the loop).
  unsigned Calls = 0;
  /// The loop is in another translation unit, which calls Entry (defined here) on each of its
  /// iterations (ProjectIndex::loopCalling); Across says where the loop is.
  const clang::FunctionDecl *Entry = nullptr;
  std::optional<LoopCall> Across;
};

/// The argument \p Call passes for \p Param, a parameter of the function the call runs
/// (AutogradModel::calledFunction): a member operator call (a lambda or functor called through a
/// local, `step(x)`) passes the object first. Null when the call passes none.
const clang::Expr *argumentFor(const clang::CallExpr *Call, const clang::ParmVarDecl *Param);
/// The parameter of \p Callee (the function \p Call runs) that the argument \p Arg binds to;
/// null for the object of a member operator call and for arguments past the parameters.
const clang::ParmVarDecl *parameterFor(const clang::CallExpr *Call, const clang::FunctionDecl *Callee,
                                       const clang::Expr *Arg);

/// The variable or field \p E names directly: `total`, `this->total_`, `stats.loss`.
const clang::ValueDecl *namedDecl(const clang::Expr *E);
/// The variable or field that holds the object \p E denotes as a whole: `acc`, `this->acc_`,
/// `s.acc` (the object `s`); null for an element (`v[k]`, `*p`) or a computed value.
const clang::ValueDecl *objectRoot(const clang::Expr *E);
/// The variable or field whose lifetime bounds the container \p E: `v` in `v`, `v[k]`,
/// `v.at(k)`, `*p`, `p->...`, `s.losses` (the object `s`), `this->losses_` (the field); the module
/// of `model->eval()`.
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
  /// Only the value held after this statement counts, in its function (until a later assignment
  /// replaces it on every path) and in the functions that code calls: "backpropagated before the
  /// function returns". Escapes then means handed to the caller (returned, written through a
  /// parameter). Null: every use, callers included.
  const clang::Stmt *After = nullptr;
  /// A field or global counts as escaping, since other translation units may use it; false: the
  /// uses this unit shows are all there are.
  bool FieldsEscape = true;
};

/// The node that takes the value of \p E, past the implicit nodes that only carry it (implicit
/// casts, parentheses, temporaries, cleanups, a copy or move): the variable it initialises, the
/// call, operator or member access it is an operand of, the return, the statement it stands
/// alone in. \p Carried (optional) receives \p E with those wrappers: the child of that node.
/// The first step of "where does this value go"; null (no kind) at the top of the tree and at a
/// node shared by a template and its instantiation (several parents: no one user).
clang::DynTypedNode valueUser(const clang::Expr *E, clang::ASTContext &Ctx, const clang::Stmt **Carried = nullptr);
/// The variable that receives the value of \p E: the local it initialises (a static or global one
/// is initialised once: null), or the variable it is assigned to or a smart pointer `reset()` with
/// (`v = E`, `*p = E`, `p.reset(E)`: `v`, `p`), past what carries it (valueUser) and a few
/// expressions that wrap it (a conversion of unique_ptr<Derived> to unique_ptr<Base>, `new`,
/// `std::move`). Null when the value goes anywhere else.
const clang::VarDecl *receivingVariable(const clang::Expr *E, clang::ASTContext &Ctx);

/// Whether \p S runs only under a condition within \p Scope (an `if` or `switch` branch, a `?:`
/// arm, the condition itself included): `if (!acc.defined()) acc = x;`, `case 0: acc = x;`.
bool underConditionWithin(const clang::Stmt *S, const clang::Stmt *Scope, clang::ASTContext &Ctx);
/// \p E as spelled in the source: implicit nodes and parentheses stripped until none is left.
const clang::Expr *asSpelled(const clang::Expr *E);
/// Whether \p S runs on every call of its function, as far as its text shows: under no
/// condition, switch or handler, not in a lambda, and after no `if` that may return.
bool runsOnEveryCall(const clang::Stmt *S, clang::ASTContext &Ctx);

/// The innermost block (or loop, or `if`) whose end destroys the local \p VD; the function body
/// for a parameter.
const clang::Stmt *lifetimeScope(const clang::VarDecl *VD, clang::ASTContext &Ctx);

/// How the values a loop writes outside itself can reach a backward pass.
struct LoopOutputs {
  bool ReachesGradient = false; ///< backpropagated later in the function, or by what it calls
  bool Escapes = false;         ///< returned, written through a reference parameter or a member
  bool EscapesToMember = false;
};

/// A value computed from a model output or a loss.
struct OutputCut {
  const clang::Expr *Output = nullptr; ///< the module forward or loss call it comes from
  /// What cut every path from it to that graph (`.detach()`, `.item()`, a no-grad guard, a
  /// tensor made from plain numbers); null while some path is still attached.
  const clang::Stmt *Cut = nullptr;
};

/// Tensors, IValues, containers, tuples and structs of the program holding them: values
/// that can keep a graph alive.
bool canHoldGraph(clang::QualType T, unsigned Depth = 3);

/// What AutogradModel::hostTensorSource takes beyond LibTorch's own facts. An empty callback
/// accepts everything (OnHost: nothing).
struct HostTensorQuery {
  /// Which host factory calls (hostFactoryCall) count.
  llvm::function_ref<bool(const clang::CallExpr *)> Factory;
  /// Other expressions whose tensor is on the host (a copy to the host, for a check that reports those).
  llvm::function_ref<bool(const clang::Expr *)> OnHost;
  /// Which locals the walk follows to their definitions.
  llvm::function_ref<bool(const clang::VarDecl *)> Local;
  /// When set, only definitions inside it count (a loop's body: the tensor is made in the
  /// iteration, not before the loop).
  const clang::Stmt *Scope = nullptr;
};

/// The settings the model's answers depend on: clang-tidy CheckOptions, read by every check
/// (TorchCheck) per check or globally (docs/options.md). Checks with the same settings share
/// one model, so their facts agree.
struct ModelOptions {
  /// How many levels of user functions, lambdas and callers every query follows.
  unsigned CallDepth = 3;
  /// Whether code in a template nobody instantiates is analyzed, by the names of its calls
  /// (instantiated templates are analyzed through their instantiations either way).
  bool UninstantiatedTemplates = true;
  /// A call into user code whose body the translation unit does not contain (or, in a
  /// template nobody instantiates, a member call on an object of unknown type) whose name
  /// this regular expression matches (case-insensitively, anywhere in the name) is taken to
  /// train: to run backward() and step() (`train_step(batch)`, `trainer.update(loss)`).
  std::string TrainingCallNames = "backward|step|train|update|optimi[sz]e|fit";
  /// Whether calls into functions defined in other translation units are answered from the
  /// project index (ProjectIndex::forContext); false when computing the index itself, whose
  /// summaries must depend on their own TU only.
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
  /// The model of \p Ctx for settings \p Options, created on first use and destroyed with
  /// \p Ctx; one per distinct settings (normally one per translation unit).
  static AutogradModel &get(clang::ASTContext &Ctx, const ModelOptions &Options = ModelOptions());

  AutogradModel(clang::ASTContext &Ctx, ModelOptions Options);
  ~AutogradModel();
  AutogradModel(const AutogradModel &) = delete;
  AutogradModel &operator=(const AutogradModel &) = delete;

  clang::ASTContext &context() const { return Ctx; }
  const ModelOptions &options() const { return Opts; }
  /// How many levels of user functions, lambdas and callers queries follow (CallDepth).
  unsigned depth() const { return Opts.CallDepth; }
  /// What the project's other translation units define (ProjectIndex); null when none.
  const ProjectIndex *index() const { return Index; }
  /// The facts the project index holds for \p Callee, a user function whose body this TU does
  /// not hold (FunctionSummary::Fact bits); nullopt when unknown or when it has a body here.
  std::optional<uint32_t> indexedFacts(const clang::FunctionDecl *Callee) const;
  /// Whether \p Fn's own code shows tensors on an accelerator: a torch::Device parameter or
  /// field, `.cuda()`, a device other than the CPU, a CUDA query, or a call of a function of
  /// another TU that does.
  bool showsAccelerator(const clang::FunctionDecl *Fn);

  // ---- calls and functions ---------------------------------------------------------------
  /// The calls of \p FD (or of any instantiation of its pattern) in user code.
  llvm::ArrayRef<const clang::CallExpr *> callersOf(const clang::FunctionDecl *FD);
  /// The function a call runs: its callee, or the lambda held in the local it calls, or the one
  /// lambda or function the visible calls pass for the std::function parameter it calls.
  const clang::FunctionDecl *calledFunction(const clang::CallExpr *Call);
  /// Every function a call may run: calledFunction, or, for a call of a std::function parameter
  /// (`callback(loss)`), each lambda or function that a visible call of the parameter's function
  /// passes for it (a lambda, a local holding one, a function), one per call site.
  llvm::SmallVector<const clang::FunctionDecl *, 2> calledFunctions(const clang::CallExpr *Call);
  /// The name, object and callee of a call, resolved or not.
  CallShape callShape(const clang::CallExpr *Call);
  /// First node matching \p M under \p Root (inclusive), following the user functions and
  /// lambdas it calls (calledFunction) under the shared depth limit. \p M need not bind anything.
  const clang::Stmt *findReachable(const clang::Stmt *Root, const StmtMatcher &M) {
    return findReachable(Root, M, Opts.CallDepth);
  }
  /// findReachable, following calls \p Depth levels deep.
  const clang::Stmt *findReachable(const clang::Stmt *Root, const StmtMatcher &M, unsigned Depth);

  // ---- order (the CFG of the enclosing function, built once per function) -----------------
  /// Whether some path runs \p A and then \p B (same function; false otherwise).
  bool mayRunBefore(const clang::Stmt *A, const clang::Stmt *B);
  /// Whether some path runs \p A and then \p B without running any of \p Avoid in between.
  bool mayRunBeforeAvoiding(const clang::Stmt *A, const clang::Stmt *B,
                            llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// Whether some path runs \p A, then goes around the back edge of a loop enclosing \p B in
  /// B's function (re-entering its head), then runs \p B, without running any of \p Avoid
  /// after A: a value \p A writes may reach \p B in a later iteration.
  bool mayRunInLaterIteration(const clang::Stmt *A, const clang::Stmt *B,
                              llvm::ArrayRef<const clang::Stmt *> Avoid);
  /// The statements of \p Sites (the definitions of one variable) whose value may reach \p At:
  /// some path runs the site and then \p At with no other of \p Sites in between (reaching
  /// definitions). A lambda defined in the other's function counts where it is made; where no
  /// CFG holds both (a template nobody instantiates), the last site before \p At in source order.
  llvm::SmallVector<const clang::Stmt *, 2> reachingAt(llvm::ArrayRef<const clang::Stmt *> Sites,
                                                      const clang::Stmt *At);
  /// Whether every path that reaches \p B runs \p A first (A dominates B).
  bool runsBeforeOnEveryPath(const clang::Stmt *A, const clang::Stmt *B);

  // ---- grad mode (thread-local: a guard does not reach into a lambda run by std::thread) --
  /// Whether autograd records where \p S runs, and what decided it.
  GradModeFact gradModeAt(const clang::Stmt *S);
  /// gradModeAt(S) is Off.
  bool gradDisabledAt(const clang::Stmt *S) { return gradModeAt(S).Mode == GradMode::Off; }
  /// The call that starts the thread \p S runs on (`std::thread`, `std::async`, a thread pool's
  /// submit), when \p S runs in a lambda or function handed to one, directly or through the
  /// functions that call it; null when \p S runs on the thread of the code around it.
  const clang::Expr *threadLaunchOf(const clang::Stmt *S);

  // ---- provenance (Provenance.h): questions asked of one walk over definitions --------------
  /// Where the value of \p E comes from, joined over every definition of the locals it reads
  /// (flow-insensitive), with the chain of definitions that decided it.
  OriginResult origin(const clang::Expr *E);
  /// Where the value of \p E comes from, and the expression that decided it. A local read
  /// after an assignment that runs last on every path takes that assignment's origin
  /// (`p = p.detach();` detaches); a value of dependent type is read by call names.
  OriginResult originAt(const clang::Expr *E);
  /// \p E keeps an autograd graph alive: a graph-attached tensor, or an aggregate, pair or
  /// tuple holding one.
  bool isGraphAttached(const clang::Expr *E);
  /// Whether \p E is computed from a model output or a loss (through locals, containers of
  /// numbers, user functions' returns), and what cut its graph on every path.
  std::optional<OutputCut> outputCut(const clang::Expr *E);
  /// \p E is a leaf that requires grad: created or marked so, a module parameter, or a
  /// tensor handed to an optimizer.
  bool isRequiresGradLeaf(const clang::Expr *E);
  /// The leaf that requires grad \p E denotes, or views, where \p At runs: locals follow their
  /// last assignment or mark before \p At; fields, parameters (through callers), containers and
  /// dictionaries of module parameters are followed too.
  std::optional<LeafFact> leafAt(const clang::Expr *E, const clang::Stmt *At);
  /// \p E is an in-place tensor op (`t.add_(x)`, `t += x`, `at::relu_(t)`, `t[0] = x`), also one
  /// left unresolved in a template nobody instantiates (recognised by name).
  std::optional<InplaceOp> inplaceOp(const clang::Expr *E);

  // ---- devices -----------------------------------------------------------------------------
  /// Whether the code around \p S may put tensors on an accelerator: S's function (for a
  /// lambda, the function it is written in, and the lambda itself) or one of their callers (up
  /// to depth() + 1 levels: the helpers of a loop, the loop's function and its callers) shows a device that is not the CPU (deviceKind), a torch::Device parameter,
  /// field or call, `.cuda()`, or a CUDA query. False for plainly CPU-only code.
  bool mayUseAccelerator(const clang::Stmt *S);
  /// Where the tensor \p E was made, when it plainly lives on the host: a host factory call
  /// (hostFactoryCall; \p Q.Factory picks which) or what \p Q.OnHost accepts, followed back
  /// through the tensor methods that keep a tensor where it is and arithmetic operators (every
  /// tensor operand on the host: a 0-dim host tensor times a device one is on the device), and
  /// through locals (\p Q.Local picks which) to every definition that reaches the read
  /// (reachingAt). Null when some path may start elsewhere.
  const clang::Expr *hostTensorSource(const clang::Expr *E, const HostTensorQuery &Q = {});

  // ---- loops -------------------------------------------------------------------------------
  /// The innermost loop whose body contains \p S (through lambdas defined in it), or null.
  const clang::Stmt *enclosingLoop(const clang::Stmt *S);
  /// What \p Loop runs each iteration (body, condition, increment), and so what kind of loop it is.
  const LoopFacts &loop(const clang::Stmt *Loop);
  /// The events \p Root runs, in source order, directly or through the user functions and
  /// lambdas it calls (Site: the statement under \p Root that runs it; Every: 1).
  llvm::ArrayRef<LoopEvent> eventsIn(const clang::Stmt *Root);
  /// The statements that are event \p K: resolved calls, or, in a template nobody
  /// instantiates, calls by name (ZeroGrad: anything that clears gradients, see gradClearing).
  /// Forward: a model forward (matchers::moduleForwardCall), not one of LibTorch's
  /// parameter-free modules (isParameterFreeModule), which records nothing of its own.
  static StmtMatcher event(LoopEventKind K);
  /// The statements of \p Root that run event \p K (see eventsIn), each once.
  llvm::SmallVector<const clang::Stmt *, 4> sitesIn(const clang::Stmt *Root, LoopEventKind K);
  /// The calls of \p Fn made in a loop of their own function, each with the innermost loop
  /// around it (LoopSite::Via: the call), in callersOf order.
  llvm::SmallVector<LoopSite, 4> callsInLoops(const clang::FunctionDecl *Fn);
  /// The loop that keeps what \p Write, in a helper, puts into \p Kept from one call to the
  /// next, and the call in it that reaches the helper (Via). \p Kept is a reference parameter:
  /// a call (callsInLoops) in a loop that what the call passes for it (objectRoot) outlives
  /// (outlivesIteration); a local of another function, captured by a lambda: a call in a loop
  /// it outlives; a field or a global: the innermost loop around a call of the helper or of a
  /// function calling it (up to depth() callers).
  LoopSite loopKeeping(const clang::Stmt *Write, const clang::ValueDecl *Kept);
  /// The innermost training loop around \p S, in its function or around a caller.
  const clang::Stmt *trainingLoopOf(const clang::Stmt *S);
  /// The first event of one of \p Kinds that \p Loop runs at its own level, on each of its own
  /// iterations: in its body outside nested loops, directly or in a helper that does not loop
  /// around it (an epoch loop around the batch loop does not); null when none.
  const LoopEvent *ownLevelEvent(const clang::Stmt *Loop, llvm::ArrayRef<LoopEventKind> Kinds);
  /// Whether \p E runs once per run of \p Loop's body (null: of the function's body), not in a
  /// loop nested in it nor in a loop of the helper that runs it (here or in another TU).
  bool atOwnLevel(const LoopEvent &E, const clang::Stmt *Loop);
  /// The innermost loop around \p S that runs one of \p Kinds on each of its own iterations
  /// (see ownLevelEvent), in S's function or around a call of it (up to depth()
  /// callers); and the call in that loop that reaches S when S is in a helper.
  LoopSite loopRunning(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds);
  /// How often \p S runs per iteration of \p Loop (encoding of LoopEvent::Every). `if (i % k)`
  /// (also `if (enabled && i % k)`) skips one iteration in k: its then-branch counts as every
  /// iteration. A condition the same on every iteration (sameEveryIteration: `if (verbose)`)
  /// runs its branch on all iterations or none: it counts as every iteration.
  unsigned everyNth(const clang::Stmt *S, const clang::Stmt *Loop);
  /// The loop that runs \p S on every one of its iterations: the innermost loop around \p S
  /// (any loop, or one that runs one of \p Kinds at its own level, see ownLevelEvent), or
  /// else, when \p S is in no such loop of its function, the loop that calls that function
  /// (following callers up to depth()). None when a condition on the way from \p S to that
  /// loop, in the helpers too, may differ between iterations (everyNth is not 1): an
  /// interval, a step counter, a helper's parameter. A switch the same on every iteration
  /// (`if (verbose)`) is no such condition.
  /// With \p AcrossTUs, a loop of another translation unit that calls the function holding \p S
  /// (or one of its callers here) on every iteration counts too (the project index's loop calls;
  /// Loop is then null, see PerIteration::Across), when no loop of this TU does.
  std::optional<PerIteration> perIterationLoop(const clang::Stmt *S, llvm::ArrayRef<LoopEventKind> Kinds = {},
                                               bool AcrossTUs = false);
  /// Whether each iteration of \p Loop is a step: it runs backward() or step() at its own level
  /// (directly or in a helper with no loop of its own), or a model forward when no loop nested
  /// in it trains. An epoch, fold or sweep loop around a step loop is not.
  bool iteratesSteps(const clang::Stmt *Loop);
  /// Whether \p E has the same value on every iteration of \p Loop: every variable and field
  /// it reads is loop-invariant or a local of the loop initialised from such values only, and
  /// it calls no user function (which might return something new each time). The locals and
  /// parameters of a helper the loop calls are computed per call: they are not.
  bool sameEveryIteration(const clang::Expr *E, const clang::Stmt *Loop);
  /// Every variable and field \p E reads is invariant in \p Loop (see invariantEntity);
  /// literals and constants are. The locals and parameters of a function the loop is not in
  /// (a helper called from it) are not: they are computed per call. Calls are followed only
  /// through their arguments.
  bool readsOnlyInvariants(const clang::Expr *E, const clang::Stmt *Loop);
  /// The variable or field \p E names (`x`, `model->`, `this->field`, `s.field`) when it is
  /// declared outside \p Loop and no iteration writes it (an optimizer's step() writes every
  /// tensor the optimizer owns); null otherwise.
  const clang::ValueDecl *invariantEntity(const clang::Expr *E, const clang::Stmt *Loop);
  /// What \p Container holds survives an iteration of \p Loop: it is declared outside the loop
  /// and not emptied (`clear()`, reassigned) by a statement of the loop body that runs on
  /// every iteration.
  bool outlivesIteration(const clang::ValueDecl *Container, const clang::Stmt *Loop);
  /// What \p Write puts into \p Container survives into the next iteration of \p Loop: the
  /// container is declared outside the loop, and some path from \p Write around the loop
  /// back to it neither clears (`clear()`) nor reassigns it.
  bool outlivesIteration(const clang::ValueDecl *Container, const clang::Stmt *Loop, const clang::Stmt *Write);
  /// The value of the local \p V, declared in \p Scope (a loop body, a helper's body), is kept
  /// beyond it: returned, inserted into a container, or assigned, moved or put into an
  /// aggregate that is declared outside \p Scope (a variable, an element, a field).
  bool valueEscapes(const clang::VarDecl *V, const clang::Stmt *Scope);
  /// \p E as a write into a standard container: `c.push_back(v)` and the other insertions,
  /// `c[k] = v`, `c.at(k) = v`; also left unresolved in a template (values of dependent type).
  std::optional<ContainerStore> containerStore(const clang::Expr *E);
  /// What later becomes of the values \p Holder (a variable, field or container) holds,
  /// followed through variables, containers, tensor ops, the user functions they are handed to
  /// and the callers they are returned to, where \p Q looks.
  ValueFate fateOf(const clang::ValueDecl *Holder, const FateQuery &Q = {});

  /// What the graph-holding values \p Loop writes outside itself can feed, following them
  /// (flow-sensitively: a later assignment of a new value ends the trail) to gradient
  /// consumers, returns, out-parameters and members.
  LoopOutputs loopOutputs(const clang::Stmt *Loop);
  /// Whether a caller of \p FD (for \p ToMember, another method of its class) runs a gradient
  /// consumer; \p AnyUserSeen tells whether any was visible.
  bool escapeFeedsGradient(const clang::FunctionDecl *FD, bool ToMember, bool &AnyUserSeen);
  /// The outermost function (not a lambda) whose body contains \p S.
  const clang::FunctionDecl *outermostFunction(const clang::Stmt *S);
  /// backward(), optimizer step() or torch::autograd::grad(): what needs a recorded graph (in a
  /// template nobody instantiates, also by name).
  StmtMatcher gradientConsumer();
  /// \p Call goes into user code out of sight (no body in this translation unit, or a member
  /// of an object of unknown type in a template nobody instantiates) and is named like a
  /// training step (ModelOptions::TrainingCallNames): assume it backpropagates and steps.
  bool isOpaqueTrainingCall(const clang::CallExpr *Call);
  /// What needs a recorded graph as far as this unit can tell: a gradientConsumer() or an
  /// opaque training call.
  StmtMatcher trainingCall();

private:
  /// What loopAround does with a loop around the statement: looks further out, takes it, or gives up.
  enum class Verdict { Skip, Take, Stop };
  /// How loopAround climbs to callers: also from a lambda's body to the calls of the lambda; not
  /// through a function's calls of itself.
  enum Climb : unsigned { ThroughLambdaCalls = 1, NotThroughRecursion = 2 };
  /// The innermost loop around \p S that \p Judge takes, in S's function or around a call of it
  /// (callers up to depth(), as \p How allows), and the call in that loop that reaches S. \p Judge
  /// sees each loop with the path to it: S and the calls, one per function, that reach S. Where
  /// no caller's loop is taken, \p Beyond (optional) may answer for the function with what is
  /// left of the depth and the path. The one "the loop here, else the caller's" walk.
  std::optional<PerIteration>
  loopAround(const clang::Stmt *S,
             llvm::function_ref<Verdict(const clang::Stmt *Loop, llvm::ArrayRef<const clang::Stmt *> Path)> Judge,
             unsigned How,
             llvm::function_ref<std::optional<PerIteration>(const clang::FunctionDecl *, unsigned,
                                                            llvm::ArrayRef<const clang::Stmt *>)>
                 Beyond = nullptr);
  const clang::Expr *lastAssignedValue(const clang::DeclRefExpr *Ref);
  GradModeFact gradModeIn(const clang::Stmt *S, unsigned Depth);
  /// `i % k`, alone or in a conjunction with switches that are the same on every iteration of
  /// \p Loop: true on all but one iteration in k.
  bool almostEveryIteration(const clang::Expr *Cond, const clang::Stmt *Loop);
  const clang::Stmt *handedOverUnderNoGrad(const clang::FunctionDecl *FD, unsigned Depth);
  llvm::ArrayRef<const clang::DeclRefExpr *> handedOver(const clang::FunctionDecl *FD);
  const clang::Expr *handedToThread(const clang::FunctionDecl *FD);

  /// A loop of another TU that calls \p FD on every iteration, answering perIterationLoop's
  /// \p Kinds, at most \p MaxCalls calls above that call (the project index's loop calls).
  std::optional<PerIteration> loopInOtherTU(const clang::FunctionDecl *FD, llvm::ArrayRef<LoopEventKind> Kinds,
                                            unsigned MaxCalls);
  struct Impl;
  clang::ASTContext &Ctx;
  const ModelOptions Opts;
  const ProjectIndex *Index = nullptr;
  std::unique_ptr<Impl> P;
  friend struct Impl;
};

} // namespace torchtidy

#endif
