// Unit tests of utils/FixIts: each edit applied to the code it was computed on, and each
// refusal (macros, templates, shared lines, unbraced bodies, values a move would change).
#include "utils/FixIts.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace clang;
using namespace clang::ast_matchers;
using namespace torchtidy;

namespace {

const char *Code = R"cpp(
#define STEP(o) o.step()
namespace torch { struct NoGradGuard {}; }
struct Opt { void step(); void zero_grad(); };
struct Tensor { Tensor detach() const; Tensor operator+(const Tensor &) const; };
Tensor make(int);
void sink(Tensor);
void loops(Opt &param, Tensor a, Tensor b) {
  Opt opt;
  int n = 3;
  for (int i = 0; i < n; ++i) {
    opt.step();
    sink(a +
         b);
    int k = i; sink(a);
    STEP(opt);
    if (i) sink(b);
    Opt fresh;
    Tensor reads_i = make(i);
    Tensor reads_n = make(n);
    Tensor reads_a = a;
    a = b;
    {
      Opt nested;
    }
  }
}
void tabs(Opt &opt) {
	while (true) {
		opt.step();
	}
}
template <typename T> void templ(T t) {
  {
    t.step();
  }
}
void use() { templ(Opt()); }
)cpp";

class FixItsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    AST = tooling::buildASTFromCodeWithArgs(Code, {"-std=c++17"}, "fixits.cpp").release();
    ASSERT_NE(AST, nullptr);
  }
  static void TearDownTestSuite() { delete AST; }
  static ASTContext &ctx() { return AST->getASTContext(); }

  /// The source after \p Fixes.
  static std::string apply(const fixits::Fixes &Fixes) {
    const SourceManager &SM = ctx().getSourceManager();
    std::string Out = Code;
    std::vector<FixItHint> Sorted(Fixes);
    std::sort(Sorted.begin(), Sorted.end(), [&](const FixItHint &A, const FixItHint &B) {
      return SM.getFileOffset(A.RemoveRange.getBegin()) > SM.getFileOffset(B.RemoveRange.getBegin());
    });
    for (const FixItHint &H : Sorted) {
      unsigned Begin = SM.getFileOffset(H.RemoveRange.getBegin());
      unsigned End = H.RemoveRange.isValid() && H.RemoveRange.getBegin() != H.RemoveRange.getEnd()
                         ? SM.getFileOffset(H.RemoveRange.getEnd())
                         : Begin;
      Out.replace(Begin, End - Begin, H.CodeToInsert);
    }
    return Out;
  }
  /// The \p N-th (0-based) statement-level call of \p Method in function \p Fn.
  static const CallExpr *call(StringRef Fn, StringRef Method, unsigned N = 0) {
    auto Found = match(functionDecl(hasName(Fn), forEachDescendant(
                                                     callExpr(callee(functionDecl(hasName(Method)))).bind("c"))),
                       ctx());
    return N < Found.size() ? Found[N].getNodeAs<CallExpr>("c") : nullptr;
  }
  static const DeclStmt *declaration(StringRef Var) {
    auto Found = match(declStmt(has(varDecl(hasName(Var)))).bind("d"), ctx());
    return Found.empty() ? nullptr : Found[0].getNodeAs<DeclStmt>("d");
  }
  static const Stmt *loopIn(StringRef Fn) {
    auto Found = match(functionDecl(hasName(Fn), forEachDescendant(stmt(anyOf(forStmt(), whileStmt())).bind("l"))),
                       ctx());
    return Found.empty() ? nullptr : Found[0].getNodeAs<Stmt>("l");
  }
  static ASTUnit *AST;
};
ASTUnit *FixItsTest::AST = nullptr;

TEST_F(FixItsTest, InsertsWithTheLinesIndentation) {
  const CallExpr *Step = call("loops", "step");
  EXPECT_NE(apply(fixits::insertAfter(Step, "opt.zero_grad();", ctx())).find("    opt.step();\n    opt.zero_grad();\n"),
            std::string::npos);
  EXPECT_NE(apply(fixits::insertBefore(Step, "first();\nsecond();", ctx()))
                .find("    first();\n    second();\n    opt.step();\n"),
            std::string::npos);
  const CallExpr *Tabbed = call("tabs", "step");
  EXPECT_NE(apply(fixits::insertAfter(Tabbed, "opt.zero_grad();", ctx())).find("\t\topt.step();\n\t\topt.zero_grad();\n"),
            std::string::npos);
}

TEST_F(FixItsTest, SameObjectCall) {
  EXPECT_EQ(fixits::sameObjectCall(call("loops", "step"), "zero_grad", loopIn("loops"), ctx()), "opt.zero_grad()");
  // A variable declared after the scope's start cannot be named there.
  EXPECT_EQ(fixits::sameObjectCall(call("loops", "step"), "zero_grad", declaration("opt"), ctx()), "");
}

TEST_F(FixItsTest, WrapsMultiLineStatementsOneStepDeeper) {
  const Stmt *Sink = fixits::blockStatement(call("loops", "sink"), ctx());
  ASSERT_NE(Sink, nullptr);
  EXPECT_NE(apply(fixits::wrapInBlock(Sink, "torch::NoGradGuard no_grad;", ctx()))
                .find("    {\n      torch::NoGradGuard no_grad;\n      sink(a +\n           b);\n    }\n"),
            std::string::npos);
}

TEST_F(FixItsTest, RefusesWhatItCannotBeSureOf) {
  // Shares its line with another statement.
  EXPECT_TRUE(fixits::insertAfter(call("loops", "sink", 1), "x();", ctx()).empty());
  // Written by a macro.
  EXPECT_TRUE(fixits::insertAfter(call("loops", "step", 1), "x();", ctx()).empty());
  // The body of an unbraced if is no statement of a block.
  EXPECT_EQ(fixits::blockStatement(call("loops", "sink", 2), ctx()), nullptr);
  // In a template (its pattern, and its instantiation).
  for (unsigned I = 0; const CallExpr *C = call("templ", "step", I); ++I)
    EXPECT_TRUE(fixits::insertAfter(C, "x();", ctx()).empty());
}

TEST_F(FixItsTest, AppendsACallWithParenthesesWhereNeeded) {
  const auto *Sum = dyn_cast<Expr>(call("loops", "sink")->getArg(0)->IgnoreImplicit());
  EXPECT_NE(apply(fixits::appendCall(Sum, ".detach()", ctx())).find("sink((a +\n         b).detach());"),
            std::string::npos);
}

TEST_F(FixItsTest, MovesAndRemovesWholeLines) {
  const CallExpr *Step = call("loops", "step");
  const Stmt *Fresh = declaration("fresh");
  EXPECT_NE(apply(fixits::moveAfter(Step, Fresh, ctx())).find("    Opt fresh;\n    opt.step();\n    Tensor reads_i"),
            std::string::npos);
  std::string Removed = apply(fixits::remove(Step, ctx()));
  EXPECT_NE(Removed.find("++i) {\n    sink(a +"), std::string::npos);
}

TEST_F(FixItsTest, HoistsOnlyWhatTheLoopLeavesUnchanged) {
  const Stmt *Loop = loopIn("loops");

  EXPECT_NE(apply(fixits::hoistBefore(declaration("fresh"), Loop, ctx())).find("  Opt fresh;\n  for (int i"),
            std::string::npos);
  EXPECT_NE(apply(fixits::hoistBefore(declaration("reads_n"), Loop, ctx())).find("  Tensor reads_n = make(n);\n  for"),
            std::string::npos);
  EXPECT_TRUE(fixits::hoistBefore(declaration("reads_i"), Loop, ctx()).empty()); // the loop's variable
  EXPECT_TRUE(fixits::hoistBefore(declaration("reads_a"), Loop, ctx()).empty()); // assigned in the loop
  EXPECT_TRUE(fixits::hoistBefore(declaration("nested"), Loop, ctx()).empty());  // not a statement of its body
}

TEST_F(FixItsTest, EnclosingBlock) {
  const Stmt *Loop = loopIn("loops");
  EXPECT_EQ(fixits::enclosingBlock(declaration("fresh"), ctx()), cast<ForStmt>(Loop)->getBody());
  EXPECT_NE(fixits::enclosingBlock(declaration("nested"), ctx()), cast<ForStmt>(Loop)->getBody());
  EXPECT_EQ(fixits::enclosingBlock(call("loops", "sink", 2), ctx()), nullptr); // an unbraced if's body
}

TEST_F(FixItsTest, DeclarationOfAnInitializer) {
  auto Found = match(callExpr(callee(functionDecl(hasName("make"))), hasArgument(0, ignoringImpCasts(
                                                                          declRefExpr(to(varDecl(hasName("n"))))))).bind("c"),
                     ctx());
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(fixits::declarationOf(Found[0].getNodeAs<Expr>("c"), ctx()), declaration("reads_n"));
}

} // namespace
