// Unit tests of utils/Provenance: the definitions the walk follows, and the questions the
// model asks of it (origin with its chain of definitions, leaf, output cut), on real LibTorch code.
#include "TestAST.h"
#include "utils/AutogradModel.h"
#include "utils/Provenance.h"
#include "utils/ProvenanceWalk.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <gtest/gtest.h>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy;

namespace {

const char *Code = R"cpp(
#include <torch/torch.h>
struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);
torch::Tensor score(Net &net, torch::Tensor x) {
  auto ignored = [] { return torch::ones({1}); };
  return net->forward(x);
}
void definitions(Net &net, torch::Tensor x) {
  torch::Tensor w = torch::zeros({4});
  w = torch::ones({4});
  w += x;
  w.requires_grad_();
  w.add_(1);
  std::vector<torch::Tensor> list;
  list.push_back(w);
  auto out = score(net, x);
  auto loss = out.sum();
  auto scaled = loss * 2;
  auto detached = scaled.detach();
  auto kept = detached;
  auto leaf = torch::randn({4}, torch::requires_grad());
  auto view = leaf.view({2, 2});
  view.add_(1);
  auto apply = [&](torch::Tensor t) { return t.sum(); };
  auto through_lambda = apply(out);
  through_lambda.requires_grad_();
}
void reaching(bool c) {
  torch::Tensor r = torch::zeros({4});
  if (c)
    r = torch::ones({4});
  else
    r = torch::rand({4});
  r.add_(1);
  torch::Tensor q = torch::zeros({4}, torch::requires_grad());
  for (int i = 0; i < 3; ++i) {
    q.add_(1);
    q = q.detach();
  }
  torch::Tensor e = torch::ones({4});
  if (c) {
    e = torch::zeros({4}, torch::requires_grad());
    return;
  }
  e.mul_(2);
}
void options() {
  auto opts = torch::TensorOptions().requires_grad(true);
  auto from_options = torch::randn({4}, opts);
  auto plain_options = torch::randn({4}, torch::TensorOptions().requires_grad(false));
}
void redefined(Net &net, torch::Tensor x) {
  auto h = net->forward(x);
  h = h.detach();
  auto after = h;
  auto y = torch::zeros({4}, torch::requires_grad());
  y = y * 3;
  auto grown = y;
}
void runtime_flag(bool flag) {
  auto runtime_marked = torch::randn({3});
  runtime_marked.requires_grad_(flag);
  auto runtime_scaled = runtime_marked * 2;
  runtime_marked.add_(1);
  auto const_marked = torch::randn({3});
  const_marked.requires_grad_(true);
  auto const_scaled = const_marked * 2;
  const_marked.add_(1);
}
struct OwnImpl : torch::nn::Module {
  OwnImpl() { weight = register_parameter("weight", torch::randn({3})); }
  torch::Tensor weight, unwritten_bias;
};
void fields(torch::nn::Linear &lin, OwnImpl &own) {
  lin->weight.add_(1);
  own.weight.add_(1);
  own.unwritten_bias.add_(1);
}
void compound_and_insert(Net &net, torch::Tensor in) {
  auto acc = torch::zeros({4}, torch::requires_grad());
  acc += net->forward(in);
  auto acc_read = acc;
  acc.mul_(2);
  std::vector<torch::Tensor> held;
  held.push_back(torch::ones({3}, torch::requires_grad()));
  held[0].add_(1);
  auto element = held[0];
}
torch::Tensor global_leaf = torch::zeros({2}, torch::requires_grad());
torch::Tensor make_leaf() { return torch::ones({2}, torch::requires_grad()); }
void takes(torch::Tensor passed) { passed.add_(1); }
void takes_guarded(torch::Tensor guarded) { guarded.add_(1); }
void leaf_edges(Net &net) {
  auto made = make_leaf();
  made.add_(1);
  global_leaf.add_(1);
  takes(torch::ones({2}, torch::requires_grad()));
  {
    torch::NoGradGuard no_grad;
    takes_guarded(torch::ones({2}, torch::requires_grad()));
  }
  for (auto &freezing : net->parameters())
    freezing.requires_grad_(false);
  for (auto &frozen : net->parameters())
    frozen.add_(1);
  for (auto &named : net->named_parameters())
    named.value().add_(1);
}
struct Scored { torch::Tensor logits; torch::Tensor loss; };
struct ScoringImpl : torch::nn::Module {
  ScoringImpl() : head(register_module("head", torch::nn::Linear(4, 1))) {}
  Scored forward(torch::Tensor x, torch::Tensor t) {
    auto scored_logits = head(x);
    return {scored_logits, torch::mse_loss(scored_logits, t)};
  }
  Scored frozen(torch::Tensor x) {
    Scored s;
    s.logits = head(x).detach();
    s.loss = torch::zeros({});
    return s;
  }
  torch::nn::Linear head;
};
TORCH_MODULE(Scoring);
void predict_into(Net &net, const torch::Tensor &x, torch::Tensor &pred) { pred = net->forward(x); }
void predict_guarded_into(Net &net, const torch::Tensor &x, torch::Tensor &pred) { pred = net->forward(x); }
void host_into(torch::Tensor &pred) { pred = torch::zeros({3}); }
void fields_and_out_parameters(Net &net, Scoring &scoring, torch::Tensor x) {
  auto scored = scoring->forward(x, x);
  auto scored_loss = scored.loss;
  auto frozen_scores = scoring->frozen(x);
  auto frozen_loss = frozen_scores.loss;
  auto frozen_logits = frozen_scores.logits;
  torch::Tensor predicted;
  predict_into(net, x, predicted);
  auto predicted_read = predicted;
  torch::Tensor hosted;
  host_into(hosted);
  auto hosted_read = hosted;
  torch::Tensor guarded_out;
  {
    torch::NoGradGuard no_grad;
    predict_guarded_into(net, x, guarded_out);
  }
  auto guarded_read = guarded_out;
  torch::Tensor overwritten;
  predict_into(net, x, overwritten);
  overwritten = torch::ones({3});
  auto overwritten_read = overwritten;
}
template <typename T> void uninstantiated(T t) {
  auto u = t;
  u = t + 1;
  u.add_(1);
}
)cpp";

class ProvenanceTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    AST = test::parseMainFile(Code, "provenance.cpp").release();
    ASSERT_NE(AST, nullptr);
    ASSERT_FALSE(AST->getDiagnostics().hasErrorOccurred());
  }
  static void TearDownTestSuite() { delete AST; }

  static ASTContext &ctx() { return AST->getASTContext(); }
  static AutogradModel &model() { return AutogradModel::get(ctx()); }
  static const VarDecl *var(StringRef Name) {
    auto M = match(findAll(varDecl(hasName(Name)).bind("v")), ctx());
    EXPECT_FALSE(M.empty()) << Name.str();
    return M.empty() ? nullptr : M.front().getNodeAs<VarDecl>("v");
  }
  /// The last reference to \p Name.
  static const Expr *lastRef(StringRef Name) {
    auto M = match(findAll(declRefExpr(to(varDecl(hasName(Name)))).bind("r")), ctx());
    EXPECT_FALSE(M.empty()) << Name.str();
    return M.empty() ? nullptr : M.back().getNodeAs<Expr>("r");
  }
  /// The call of \p Method on the local \p Object.
  static const CXXMemberCallExpr *callOn(StringRef Object, StringRef Method) {
    auto M = match(findAll(cxxMemberCallExpr(on(declRefExpr(to(varDecl(hasName(Object))))),
                                             callee(cxxMethodDecl(hasName(Method))))
                               .bind("c")),
                   ctx());
    EXPECT_FALSE(M.empty()) << Object.str() << "." << Method.str();
    return M.empty() ? nullptr : M.back().getNodeAs<CXXMemberCallExpr>("c");
  }
  /// The last call of \p Method on the member \p Field, reached through `->` or through `.`.
  static const CXXMemberCallExpr *callOnMember(StringRef Field, StringRef Method, bool Arrow) {
    auto M = match(findAll(cxxMemberCallExpr(on(memberExpr(member(hasName(Field))).bind("m")),
                                             callee(cxxMethodDecl(hasName(Method))))
                               .bind("c")),
                   ctx());
    const CXXMemberCallExpr *Last = nullptr;
    for (const BoundNodes &B : M)
      if (B.getNodeAs<MemberExpr>("m")->isArrow() == Arrow)
        Last = B.getNodeAs<CXXMemberCallExpr>("c");
    EXPECT_NE(Last, nullptr) << Field.str() << "." << Method.str();
    return Last;
  }
  /// The declaration and the writes of \p Name, as reachingAt takes them.
  static llvm::SmallVector<const Stmt *, 4> sitesOf(StringRef Name) {
    llvm::SmallVector<const Stmt *, 4> Sites{ctx().getParents(*var(Name))[0].get<DeclStmt>()};
    for (const Definition &D : definitionsOf(var(Name), ctx()))
      if (D.K == Definition::Assign)
        Sites.push_back(D.Site);
    return Sites;
  }
  static std::string text(const Expr *E) {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(E->getSourceRange()), ctx().getSourceManager(),
                                ctx().getLangOpts())
        .str();
  }
  static ASTUnit *AST;
};
ASTUnit *ProvenanceTest::AST = nullptr;

TEST_F(ProvenanceTest, DefinitionsOfALocal) {
  std::vector<Definition> Defs = definitionsOf(var("w"), ctx());
  std::vector<Definition::Kind> Kinds;
  for (const Definition &D : Defs)
    Kinds.push_back(D.K);
  EXPECT_EQ(Kinds, (std::vector<Definition::Kind>{Definition::Init, Definition::Assign, Definition::Compound,
                                                  Definition::Mark, Definition::Mutate}));
  ASSERT_EQ(Defs.size(), 5u);
  EXPECT_EQ(text(Defs[1].Value), "torch::ones({4})");
  EXPECT_EQ(text(Defs[2].Value), "x");
  std::vector<Definition> List = definitionsOf(var("list"), ctx());
  ASSERT_FALSE(List.empty());
  EXPECT_EQ(List.back().K, Definition::Insert);
}

TEST_F(ProvenanceTest, ReturnsAndArguments) {
  auto Score = match(findAll(functionDecl(hasName("score"), isDefinition()).bind("f")), ctx());
  ASSERT_FALSE(Score.empty());
  auto Returned = returnedValues(Score[0].getNodeAs<FunctionDecl>("f"), ctx());
  ASSERT_EQ(Returned.size(), 1u); // not the lambda's
  EXPECT_EQ(text(Returned[0]), "net->forward(x)");
  // A lambda called through its object: the object is argument 0, `out` is the parameter's.
  const auto *Call = dyn_cast<CallExpr>(var("through_lambda")->getInit()->IgnoreUnlessSpelledInSource());
  ASSERT_NE(Call, nullptr);
  const Expr *Arg = argumentFor(Call, cast<ParmVarDecl>(var("t")));
  ASSERT_NE(Arg, nullptr);
  EXPECT_EQ(text(Arg), "out");
}

TEST_F(ProvenanceTest, OriginFollowsALambdaReturnWithTheCallsArguments) {
  // `apply(out)` returns `t.sum()` with `t` bound to `out`: attached through the model's output.
  const auto *Call = dyn_cast<CallExpr>(var("through_lambda")->getInit()->IgnoreUnlessSpelledInSource());
  ASSERT_NE(Call, nullptr);
  OriginResult R = model().origin(Call);
  EXPECT_EQ(R.Kind, TensorOrigin::GraphAttached);
  ASSERT_NE(R.Source, nullptr);
  EXPECT_EQ(text(R.Source), "net->forward(x)");
  // Its operator() alone: attached when its parameter is; not through a parameter it does not read.
  EXPECT_TRUE(model().returnsGraphThrough(Call->getDirectCallee(), 0));
  EXPECT_FALSE(model().returnsGraphThrough(Call->getDirectCallee(), 1));
}

TEST_F(ProvenanceTest, OriginAndItsChainOfDefinitions) {
  OriginResult R = model().origin(lastRef("scaled"));
  EXPECT_EQ(R.Kind, TensorOrigin::GraphAttached);
  ASSERT_NE(R.Source, nullptr);
  EXPECT_EQ(text(R.Source), "net->forward(x)");
  std::vector<std::string> Chain;
  for (const Expr *E : R.Chain)
    Chain.push_back(text(E));
  // scaled <- loss * 2 <- out.sum() <- score(net, x) <- return net->forward(x)
  EXPECT_EQ(Chain, (std::vector<std::string>{"loss * 2", "out.sum()", "score(net, x)", "net->forward(x)"}));
  EXPECT_EQ(model().origin(lastRef("detached")).Kind, TensorOrigin::Detached);
  ASSERT_EQ(model().origin(lastRef("detached")).Chain.size(), 1u);
  EXPECT_EQ(text(model().origin(lastRef("detached")).Chain[0]), "scaled.detach()");
}

TEST_F(ProvenanceTest, OriginFollowsTheDefinitionsThatReachTheRead) {
  // `h = h.detach()` hides the forward before it; `y = y * 3` reads the leaf defined before it.
  EXPECT_EQ(model().origin(var("after")->getInit()).Kind, TensorOrigin::Detached);
  EXPECT_EQ(model().origin(var("grown")->getInit()).Kind, TensorOrigin::GraphAttached);
}

TEST_F(ProvenanceTest, FactoryOptionsBuiltBeforehandAskForGrad) {
  // One rule for a factory asking for grad, whether the options are written in the call or in
  // a local: origin and leaf agree.
  const Expr *FromOptions = var("from_options")->getInit();
  EXPECT_EQ(model().origin(FromOptions).Kind, TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(model().origin(var("plain_options")->getInit()).Kind, TensorOrigin::Data);
  std::optional<LeafFact> L = model().leafAt(FromOptions, FromOptions);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Created);
}

TEST_F(ProvenanceTest, LeafAndCutAreQuestionsOfTheSameWalk) {
  // `view.add_(1)`: a view of a leaf that requires grad, through the local's initializer.
  auto AddCall = match(findAll(cxxMemberCallExpr(on(declRefExpr(to(varDecl(hasName("view"))))),
                                                        callee(cxxMethodDecl(hasName("add_"))))
                                          .bind("c")),
                              ctx());
  ASSERT_FALSE(AddCall.empty());
  const auto *Add = AddCall[0].getNodeAs<CXXMemberCallExpr>("c");
  std::optional<LeafFact> L = model().leafAt(Add->getImplicitObjectArgument(), Add);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Created);
  EXPECT_TRUE(L->View);
  EXPECT_FALSE(model().leafAt(lastRef("scaled"), lastRef("scaled")));
  // The output cut follows the lambda's parameter to the argument its call passes.
  std::optional<OutputCut> C = model().outputCut(lastRef("through_lambda"));
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Cut, nullptr);
  ASSERT_TRUE(model().outputCut(lastRef("detached")));
  EXPECT_NE(model().outputCut(lastRef("detached"))->Cut, nullptr);
}

TEST_F(ProvenanceTest, ReachingDefinitions) {
  // Both branches' assignments reach `r.add_(1)`; the initializer does not.
  llvm::SmallVector<const Stmt *, 4> R = sitesOf("r");
  ASSERT_EQ(R.size(), 3u);
  EXPECT_EQ(model().reachingAt(R, callOn("r", "add_")), (llvm::SmallVector<const Stmt *, 2>{R[1], R[2]}));
  // In the loop: the initializer on the first iteration, the detach on the next ones.
  llvm::SmallVector<const Stmt *, 4> Q = sitesOf("q");
  ASSERT_EQ(Q.size(), 2u);
  EXPECT_EQ(model().reachingAt(Q, callOn("q", "add_")), Q);
  // The assignment on the returning branch does not reach.
  llvm::SmallVector<const Stmt *, 4> E = sitesOf("e");
  EXPECT_EQ(model().reachingAt(E, callOn("e", "mul_")), (llvm::SmallVector<const Stmt *, 2>{E[0]}));
  // In a template nobody instantiates: the last site before, in source order.
  llvm::SmallVector<const Stmt *, 4> U = sitesOf("u");
  ASSERT_EQ(U.size(), 2u);
  EXPECT_EQ(model().reachingAt(U, lastRef("u")), (llvm::SmallVector<const Stmt *, 2>{U[1]}));
}

TEST_F(ProvenanceTest, LeafFollowsTheDefinitionsThatReach) {
  const CXXMemberCallExpr *AddQ = callOn("q", "add_");
  std::optional<LeafFact> L = model().leafAt(AddQ->getImplicitObjectArgument(), AddQ);
  ASSERT_TRUE(L); // the first iteration's leaf
  EXPECT_EQ(L->Kind, LeafKind::Created);
  const CXXMemberCallExpr *MulE = callOn("e", "mul_");
  EXPECT_FALSE(model().leafAt(MulE->getImplicitObjectArgument(), MulE));
  const CXXMemberCallExpr *AddR = callOn("r", "add_");
  EXPECT_FALSE(model().leafAt(AddR->getImplicitObjectArgument(), AddR));
}

TEST_F(ProvenanceTest, ARuntimeRequiresGradFlagIsNotOn) {
  // One fact (markFlag): a flag that is not a constant is not known to be on, and no question
  // reads it as on: the origin stays plain data, the tensor is no leaf; a constant flag is on.
  EXPECT_EQ(markFlag(callOn("runtime_marked", "requires_grad_"), ctx()), std::nullopt);
  EXPECT_EQ(model().origin(callOn("runtime_marked", "requires_grad_")).Kind, TensorOrigin::Data);
  EXPECT_EQ(model().origin(var("runtime_scaled")->getInit()).Kind, TensorOrigin::Data);
  const CXXMemberCallExpr *AddRuntime = callOn("runtime_marked", "add_");
  EXPECT_FALSE(model().leafAt(AddRuntime->getImplicitObjectArgument(), AddRuntime));
  EXPECT_EQ(markFlag(callOn("const_marked", "requires_grad_"), ctx()), std::optional(true));
  EXPECT_EQ(model().origin(var("const_scaled")->getInit()).Kind, TensorOrigin::GraphAttached);
  const CXXMemberCallExpr *AddConst = callOn("const_marked", "add_");
  std::optional<LeafFact> L = model().leafAt(AddConst->getImplicitObjectArgument(), AddConst);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Marked);
}

TEST_F(ProvenanceTest, ModuleParameterFields) {
  // A library module's parameter field (isParameterFieldName): a parameter to both questions.
  const CXXMemberCallExpr *LibAdd = callOnMember("weight", "add_", /*Arrow=*/true);
  EXPECT_EQ(model().origin(LibAdd->getImplicitObjectArgument()).Kind, TensorOrigin::RequiresGradLeaf);
  std::optional<LeafFact> L = model().leafAt(LibAdd->getImplicitObjectArgument(), LibAdd);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Parameter);
  // A user module's field registered as a parameter: the leaf question follows its writes.
  const CXXMemberCallExpr *OwnAdd = callOnMember("weight", "add_", /*Arrow=*/false);
  L = model().leafAt(OwnAdd->getImplicitObjectArgument(), OwnAdd);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Parameter);
  EXPECT_EQ(model().origin(OwnAdd->getImplicitObjectArgument()).Kind, TensorOrigin::RequiresGradLeaf);
  // One never written in this unit: the origin question, which follows no field's writes, takes
  // it by its name; the leaf question, which would raise an error on it, has nothing to follow.
  const CXXMemberCallExpr *Unwritten = callOnMember("unwritten_bias", "add_", /*Arrow=*/false);
  EXPECT_EQ(model().origin(Unwritten->getImplicitObjectArgument()).Kind, TensorOrigin::RequiresGradLeaf);
  EXPECT_FALSE(model().leafAt(Unwritten->getImplicitObjectArgument(), Unwritten));
}

TEST_F(ProvenanceTest, CompoundAssignmentsAndInsertsAsDefinitions) {
  // `acc += forward(in)` changes the value in place: the origin joins what it adds; the tensor
  // is still the leaf it was (the leaf question neither finds nor hides a leaf there).
  EXPECT_EQ(model().origin(var("acc_read")->getInit()).Kind, TensorOrigin::GraphAttached);
  const CXXMemberCallExpr *Mul = callOn("acc", "mul_");
  std::optional<LeafFact> L = model().leafAt(Mul->getImplicitObjectArgument(), Mul);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Created);
  // `held.push_back(leaf)` defines the container's elements for the leaf question (and the
  // cut question); the origin question asks about tensors, and an element read back is no
  // value it follows into the container.
  const auto *Element = var("element")->getInit()->IgnoreUnlessSpelledInSource();
  L = model().leafAt(Element, Element);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Created);
  EXPECT_NE(model().origin(Element).Kind, TensorOrigin::RequiresGradLeaf);
}

TEST_F(ProvenanceTest, LeafEdges) {
  // What the leaf question follows beyond the origin's locals: a user function's returns, a
  // global's initializer, the arguments of calls outside no-grad code, the elements of what
  // lists parameters unless a loop before froze them.
  auto LeafOfObject = [](const CXXMemberCallExpr *Call) {
    return Call ? model().leafAt(Call->getImplicitObjectArgument(), Call) : std::nullopt;
  };
  for (StringRef Name : {"made", "global_leaf", "passed"}) {
    std::optional<LeafFact> L = LeafOfObject(callOn(Name, "add_"));
    ASSERT_TRUE(L) << Name.str();
    EXPECT_EQ(L->Kind, LeafKind::Created) << Name.str();
    EXPECT_FALSE(L->View);
  }
  EXPECT_FALSE(LeafOfObject(callOn("guarded", "add_")));
  EXPECT_FALSE(LeafOfObject(callOn("frozen", "add_")));
  auto Value = cxxMemberCallExpr(on(declRefExpr(to(varDecl(hasName("named"))))), callee(cxxMethodDecl(hasName("value"))));
  auto Named = match(findAll(cxxMemberCallExpr(on(Value), callee(cxxMethodDecl(hasName("add_")))).bind("c")), ctx());
  ASSERT_FALSE(Named.empty());
  std::optional<LeafFact> L = LeafOfObject(Named.back().getNodeAs<CXXMemberCallExpr>("c"));
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Kind, LeafKind::Parameter);
}

TEST_F(ProvenanceTest, OriginOfAFieldOfAReturnedStruct) {
  // `scored.loss`: the member of the braced list the module's forward returns, through its
  // local `scored_logits` to the Linear's output.
  OriginResult R = model().origin(var("scored_loss")->getInit());
  EXPECT_EQ(R.Kind, TensorOrigin::GraphAttached);
  ASSERT_NE(R.Source, nullptr);
  EXPECT_EQ(text(R.Source), "head(x)");
  // A struct whose fields are written with a detached and a host value.
  EXPECT_EQ(model().origin(var("frozen_loss")->getInit()).Kind, TensorOrigin::Data);
  EXPECT_EQ(model().origin(var("frozen_logits")->getInit()).Kind, TensorOrigin::Detached);
}

TEST_F(ProvenanceTest, OriginOfAnOutParameterWrittenInThisUnit) {
  // `predict_into(net, x, predicted)` assigns the forward's output to its `Tensor &` parameter.
  OriginResult R = model().origin(var("predicted_read")->getInit());
  EXPECT_EQ(R.Kind, TensorOrigin::GraphAttached);
  ASSERT_NE(R.Source, nullptr);
  EXPECT_EQ(text(R.Source), "net->forward(x)");
  EXPECT_EQ(model().origin(var("hosted_read")->getInit()).Kind, TensorOrigin::Data);
  // A helper called under a NoGradGuard writes no graph; a later assignment hides the write.
  EXPECT_EQ(model().origin(var("guarded_read")->getInit()).Kind, TensorOrigin::Detached);
  EXPECT_EQ(model().origin(var("overwritten_read")->getInit()).Kind, TensorOrigin::Data);
}

} // namespace
