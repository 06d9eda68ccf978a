// Unit tests of checks/utils on real LibTorch code (libtorch-dev headers through the test PCH).
#include "TestAST.h"
#include "utils/AutogradModel.h"
#include "utils/TorchMatchers.h"

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
torch::Tensor helper_loss(Net &net, torch::Tensor x) { return net->forward(x).sum(); }
void subject() {
  Net net;
  auto shared = std::make_shared<NetImpl>();
  torch::optim::SGD opt(net->parameters(), 0.1);
  torch::Tensor x = torch::randn({2, 4});
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  torch::Tensor w2 = torch::zeros({3}, torch::TensorOptions().requires_grad(true));
  torch::Tensor attached = net->forward(x);
  torch::Tensor by_call_operator = net(x);
  torch::Tensor attached_sum = attached.sum();
  torch::Tensor cloned = attached_sum.clone();
  torch::Tensor detached = attached.detach();
  torch::Tensor via_helper = helper_loss(net, x);
  torch::Tensor on_leaf = w * 2;
  torch::Tensor data_only = x + 1;
  torch::Tensor marked = torch::zeros({3});
  marked.requires_grad_();
  torch::Tensor indices = attached.argmax(1);
  torch::Tensor loss = torch::mse_loss(attached, torch::zeros({2, 1}));
  torch::Tensor reassigned = torch::zeros({1});
  reassigned = attached.mean();
  {
    torch::NoGradGuard g;
    torch::Tensor guarded = net->forward(x);
  }
  for (int i = 0; i < 3; ++i) {
    torch::Tensor in_loop = x * 2;
    opt.zero_grad();
    attached_sum.backward();
    opt.step();
  }
  while (true) {
    torch::Tensor in_eval_loop = net->forward(x);
    break;
  }
  for (auto &p : net->parameters()) {
    torch::Tensor param = p;
  }
  torch::Tensor weight = net->fc->weight;
  torch::Tensor grad = net->fc->weight.grad();
}
void evaluate(Net &net, torch::Tensor x) { torch::Tensor pred_in_callee = net->forward(x); }
void caller(Net &net, torch::Tensor x) {
  torch::NoGradGuard no_grad;
  evaluate(net, x);
}
void guards() {
  at::NoGradGuard a;
  c10::InferenceMode b;
  c10::InferenceMode c(false);
  torch::AutoGradMode d(false);
  torch::AutoGradMode e(true);
  int f = 0;
}
void step_in_helper(torch::optim::Optimizer &o) { o.step(); }
void training_via_helper(torch::optim::Optimizer &o) {
  for (int i = 0; i < 2; ++i)
    step_in_helper(o);
}
)cpp";

class VocabularyTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    AST = test::parseMainFile(Code, "vocabulary.cpp").release();
    ASSERT_NE(AST, nullptr);
    ASSERT_FALSE(AST->getDiagnostics().hasErrorOccurred());
  }
  static void TearDownTestSuite() { delete AST; }

  static ASTContext &ctx() { return AST->getASTContext(); }
  static const VarDecl *var(StringRef Name) {
    auto M = match(findAll(varDecl(hasName(Name), unless(parmVarDecl())).bind("v")), ctx());
    return M.empty() ? nullptr : M.front().getNodeAs<VarDecl>("v");
  }
  static TensorOrigin origin(StringRef Name) {
    const VarDecl *V = var(Name);
    EXPECT_NE(V, nullptr) << Name.str();
    return V && V->getInit() ? AutogradModel::get(ctx()).origin(V->getInit()).Kind : TensorOrigin::Unknown;
  }
  static const Stmt *declOf(StringRef Name) {
    auto Parents = ctx().getParents(*var(Name));
    return Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
  }
  static ASTUnit *AST;
};
ASTUnit *VocabularyTest::AST = nullptr;

TEST_F(VocabularyTest, TypesResolveThroughAliases) {
  EXPECT_TRUE(isTensorType(var("x")->getType()));
  EXPECT_FALSE(isTensorType(var("f")->getType()));
  EXPECT_TRUE(isModuleType(var("net")->getType()));
  EXPECT_TRUE(isModuleType(var("shared")->getType()));
  EXPECT_TRUE(isOptimizerType(var("opt")->getType()));
  EXPECT_FALSE(isOptimizerType(var("net")->getType()));
}

TEST_F(VocabularyTest, GradModeGuards) {
  EXPECT_EQ(gradModeEffect(var("g")), 1);
  EXPECT_EQ(gradModeEffect(var("a")), 1);
  EXPECT_EQ(gradModeEffect(var("b")), 1);
  EXPECT_EQ(gradModeEffect(var("c")), -1);
  EXPECT_EQ(gradModeEffect(var("d")), 1);
  EXPECT_EQ(gradModeEffect(var("e")), -1);
  EXPECT_EQ(gradModeEffect(var("f")), 0);
}

TEST_F(VocabularyTest, NoGradScopes) {
  AutogradModel &M = AutogradModel::get(ctx());
  EXPECT_TRUE(M.gradDisabledAt(declOf("guarded")));
  EXPECT_FALSE(M.gradDisabledAt(declOf("attached")));
  // The guard is in the only caller of evaluate().
  EXPECT_TRUE(M.gradDisabledAt(declOf("pred_in_callee")));
}

TEST_F(VocabularyTest, Loops) {
  const Stmt *Loop = enclosingLoop(declOf("in_loop"), ctx());
  ASSERT_NE(Loop, nullptr);
  EXPECT_TRUE(isa<ForStmt>(Loop));
  EXPECT_EQ(AutogradModel::get(ctx()).loop(Loop).Kind, LoopKind::Training);
  const Stmt *EvalLoop = enclosingLoop(declOf("in_eval_loop"), ctx());
  ASSERT_NE(EvalLoop, nullptr);
  EXPECT_NE(AutogradModel::get(ctx()).loop(EvalLoop).Kind, LoopKind::Training);
  EXPECT_EQ(enclosingLoop(declOf("attached"), ctx()), nullptr);
  auto Helper = match(findAll(forStmt(hasAncestor(functionDecl(hasName("training_via_helper")))).bind("l")), ctx());
  ASSERT_FALSE(Helper.empty());
  EXPECT_EQ(AutogradModel::get(ctx()).loop(Helper[0].getNodeAs<Stmt>("l")).Kind, LoopKind::Training);
}

TEST_F(VocabularyTest, TensorOrigins) {
  EXPECT_EQ(origin("x"), TensorOrigin::Data);
  EXPECT_EQ(origin("w"), TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(origin("w2"), TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(origin("attached"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("by_call_operator"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("attached_sum"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("cloned"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("detached"), TensorOrigin::Detached);
  EXPECT_EQ(origin("via_helper"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("on_leaf"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("data_only"), TensorOrigin::Data);
  EXPECT_EQ(origin("indices"), TensorOrigin::Data);
  EXPECT_EQ(origin("loss"), TensorOrigin::GraphAttached);
  EXPECT_EQ(origin("guarded"), TensorOrigin::Detached);
  EXPECT_EQ(origin("param"), TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(origin("weight"), TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(origin("grad"), TensorOrigin::Data);
  // Flow: later assignments and requires_grad_() marks count.
  auto Ref = [](StringRef Name) {
    auto M = match(findAll(declRefExpr(to(varDecl(hasName(Name)))).bind("r")), ctx());
    return M.front().getNodeAs<Expr>("r");
  };
  EXPECT_EQ(AutogradModel::get(ctx()).origin(Ref("marked")).Kind, TensorOrigin::RequiresGradLeaf);
  EXPECT_EQ(AutogradModel::get(ctx()).origin(Ref("reassigned")).Kind, TensorOrigin::GraphAttached);
}

} // namespace

// Code the parser could not understand, in one function of a translation unit that does not compile.
TEST(UnparsedCode, OnlyTheFunctionHoldingIt) {
  const char *Broken = R"cpp(
#include <torch/torch.h>
void misspelled_type(torch::nn::Linear &m, torch::Tensor x) {
  torch::optim::SGDD opt(m->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) { auto l_type = m->forward(x).sum(); l_type.backward(); }
}
void misspelled_call(torch::nn::Linear &m, torch::Tensor x) {
  torch::optim::SGD opt(m->parameters(), 0.1);
  for (int i = 0; i < 2; ++i) { opt.zero_gard(); auto l_call = m->forward(x).sum(); l_call.backward(); }
}
void intact(torch::nn::Linear &m, torch::Tensor x) {
  for (int i = 0; i < 2; ++i) { auto l_intact = m->forward(x).sum(); l_intact.backward(); }
}
)cpp";
  std::vector<std::string> Args = {"-std=c++17", "-isystem", TORCHTIDY_TORCH_INCLUDE,
                                   "-include-pch", TORCHTIDY_TEST_PCH,
                                   "-resource-dir", TORCHTIDY_CLANG_RESOURCE_DIR};
  std::unique_ptr<ASTUnit> AST = tooling::buildASTFromCodeWithArgs(Broken, Args, "broken.cpp");
  ASSERT_NE(AST, nullptr);
  ASSERT_TRUE(AST->getDiagnostics().hasErrorOccurred());
  ASTContext &Ctx = AST->getASTContext();
  auto DeclOf = [&](StringRef Name) -> const Stmt * {
    auto M = match(findAll(declStmt(has(varDecl(hasName(Name)))).bind("d")), Ctx);
    return M.empty() ? nullptr : M.front().getNodeAs<Stmt>("d");
  };
  ASSERT_NE(DeclOf("l_type"), nullptr);
  EXPECT_TRUE(holdsUnparsedCode(DeclOf("l_type"), Ctx));
  EXPECT_TRUE(holdsUnparsedCode(DeclOf("l_call"), Ctx));
  EXPECT_FALSE(holdsUnparsedCode(DeclOf("l_intact"), Ctx));
}
