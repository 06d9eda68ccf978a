#include "utils/FixIts.h"

#include "utils/TorchMatchers.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace torchtidy::fixits {
namespace {

/// A statement's lines: where its first line starts, where it ends (its ';' included), where
/// its last line ends (before the newline), and its indentation. Invalid unless the
/// statement is alone on its lines (a trailing `//` comment is fine).
struct Lines {
  SourceLocation LineBegin, End, LineEnd;
  StringRef Indent;
  bool valid() const { return LineBegin.isValid(); }
};

Lines linesOf(const Stmt *S, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  SourceLocation Begin = S->getBeginLoc(), Last = S->getEndLoc();
  if (Begin.isInvalid() || Last.isInvalid() || Begin.isMacroID() || Last.isMacroID() ||
      SM.getFileID(Begin) != SM.getFileID(Last))
    return {};
  // Its ';' when one follows; a statement made of an expression cannot end without one.
  SourceLocation End = Lexer::findLocationAfterToken(Last, tok::semi, SM, LO, false);
  if (End.isInvalid()) {
    if (isa<Expr, ReturnStmt, BreakStmt, ContinueStmt, DoStmt>(S))
      return {};
    End = Lexer::getLocForEndOfToken(Last, 0, SM, LO);
  }
  if (End.isInvalid())
    return {};
  auto [FID, BeginOff] = SM.getDecomposedLoc(Begin);
  unsigned EndOff = SM.getFileOffset(End);
  StringRef Buf = SM.getBufferData(FID);
  size_t LineStart = Buf.take_front(BeginOff).rfind('\n') + 1; // npos + 1 == 0
  StringRef Before = Buf.slice(LineStart, BeginOff);
  if (!Before.trim(" \t").empty())
    return {};
  size_t LineStop = std::min(Buf.find('\n', EndOff), Buf.size());
  StringRef After = Buf.slice(EndOff, LineStop).ltrim(" \t");
  if (!After.empty() && !After.starts_with("//"))
    return {};
  Lines L;
  L.LineBegin = Begin.getLocWithOffset(-static_cast<int>(BeginOff - LineStart));
  L.End = End;
  L.LineEnd = End.getLocWithOffset(static_cast<int>(LineStop - EndOff));
  L.Indent = Before;
  return L;
}

/// Whether \p S may be rewritten: written outside any macro, not in a template or in code
/// instantiated from one.
bool rewritable(const Stmt *S, ASTContext &Ctx) {
  if (S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID())
    return false;
  const FunctionDecl *Fn = enclosingFunction(S, Ctx);
  for (const DeclContext *DC = Fn; DC; DC = DC->getParent()) {
    if (const auto *FD = dyn_cast<FunctionDecl>(DC);
        FD && (FD->getTemplateInstantiationPattern() || FD->isDependentContext()))
      return false;
    if (isa<ClassTemplateSpecializationDecl>(DC))
      return false;
  }
  return true;
}

/// The lines of \p S when it is a rewritable statement of a `{}` block; else invalid.
Lines blockLines(const Stmt *S, ASTContext &Ctx) {
  return rewritable(S, Ctx) && enclosingBlock(S, Ctx) ? linesOf(S, Ctx) : Lines();
}

/// One indentation step of the code around \p S: its indentation less its block's.
std::string indentStep(const Stmt *S, StringRef Indent, ASTContext &Ctx) {
  if (const auto *Block = parentOf(S, Ctx).get<CompoundStmt>()) {
    StringRef Outer = Lexer::getIndentationForLine(Block->getLBracLoc(), Ctx.getSourceManager());
    if (Indent.size() > Outer.size() && Indent.starts_with(Outer))
      return Indent.drop_front(Outer.size()).str();
  }
  return "  ";
}

/// The statement's text with each line after the first moved from \p From to \p To
/// indentation; empty when a line is less indented than \p From.
std::optional<std::string> reindent(StringRef Text, StringRef From, StringRef To) {
  llvm::SmallVector<StringRef, 8> Parts;
  Text.split(Parts, '\n');
  std::string Out = Parts.front().str();
  for (StringRef Line : llvm::ArrayRef(Parts).drop_front()) {
    if (!Line.trim(" \t").empty() && !Line.starts_with(From))
      return std::nullopt;
    Out += "\n" + (Line.trim(" \t").empty() ? std::string() : To.str() + Line.drop_front(From.size()).str());
  }
  return Out;
}

/// \p Text (its later lines indented already) on lines of their own before or after \p S.
FixItHint insertLines(const Stmt *S, const Lines &L, const std::string &Text, bool Before) {
  return Before ? FixItHint::CreateInsertion(S->getBeginLoc(), Text + "\n" + L.Indent.str())
                : FixItHint::CreateInsertion(L.LineEnd, "\n" + L.Indent.str() + Text);
}

/// The text of \p S to the end of its lines \p L, its ';' included.
StringRef textOf(const Stmt *S, const Lines &L, ASTContext &Ctx) {
  return Lexer::getSourceText(CharSourceRange::getCharRange(S->getBeginLoc(), L.End), Ctx.getSourceManager(),
                              Ctx.getLangOpts());
}

Fixes insert(const Stmt *S, StringRef Code, bool Before, ASTContext &Ctx) {
  Lines L = blockLines(S, Ctx);
  // Code's later lines, indented by nothing, move to S's indentation.
  return L.valid() ? Fixes{insertLines(S, L, *reindent(Code, "", L.Indent), Before)} : Fixes();
}

/// Moves \p S to the line before (\p Before) or after \p Target, reindented to its level.
Fixes move(const Stmt *S, const Stmt *Target, bool Before, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  Lines From = linesOf(S, Ctx), To = blockLines(Target, Ctx);
  if (!From.valid() || !To.valid() || SM.getFileID(From.End) != SM.getFileID(To.End))
    return {};
  Fixes Removal = remove(S, Ctx);
  StringRef Text = textOf(S, From, Ctx);
  std::optional<std::string> Moved = reindent(Text, From.Indent, To.Indent);
  if (Removal.empty() || Text.empty() || !Moved)
    return {};
  Removal.push_back(insertLines(Target, To, *Moved, Before));
  return Removal;
}
} // namespace

bool needsParens(const Expr *E) {
  E = E->IgnoreImplicit();
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
    return OCE->getOperator() != OO_Subscript && OCE->getOperator() != OO_Call && OCE->getOperator() != OO_Arrow;
  return !isa<DeclRefExpr, MemberExpr, CallExpr, ParenExpr, ArraySubscriptExpr>(E);
}

StringRef sourceText(const Stmt *S, ASTContext &Ctx) {
  if (S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID())
    return {};
  return Lexer::getSourceText(CharSourceRange::getTokenRange(S->getSourceRange()), Ctx.getSourceManager(),
                              Ctx.getLangOpts());
}

bool declaresTorch(StringRef Name, ASTContext &Ctx) {
  for (const NamedDecl *NS : Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get("torch")))
    if (const auto *DC = dyn_cast<NamespaceDecl>(NS))
      if (!DC->lookup(&Ctx.Idents.get(Name)).empty())
        return true;
  return false;
}

std::string sameObjectCall(const CallExpr *Call, StringRef Method, const Stmt *Scope, ASTContext &Ctx) {
  const auto *Callee = dyn_cast<MemberExpr>(Call->getCallee()->IgnoreParens());
  if (!Callee)
    return {};
  const Expr *Obj = Callee->getBase()->IgnoreParenImpCasts();
  // `holder->m()` through an operator->: the holder is the object as written.
  const Expr *Written = Callee->getBase();
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Obj); Op && Op->getOperator() == OO_Arrow)
    Obj = Written = Op->getArg(0)->IgnoreParenImpCasts();
  bool Named = false;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Obj))
    Named = isa<VarDecl>(Ref->getDecl()) &&
            Ctx.getSourceManager().isBeforeInTranslationUnit(Ref->getDecl()->getLocation(), Scope->getBeginLoc());
  else if (const auto *Member = dyn_cast<MemberExpr>(Obj))
    Named = isa<CXXThisExpr>(Member->getBase()->IgnoreParenImpCasts());
  StringRef Object = sourceText(Written, Ctx);
  if (!Named || Object.empty() || Object.contains('\n'))
    return {};
  return (Object + (Callee->isArrow() ? "->" : ".") + Method + "()").str();
}

const DeclStmt *declarationOf(const Expr *Init, ASTContext &Ctx) {
  DynTypedNode N = DynTypedNode::create(*Init);
  while (isa_and_nonnull<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
                         CXXConstructExpr>(parentOf(N, Ctx).get<Stmt>()))
    N = parentOf(N, Ctx);
  const auto *VD = parentOf(N, Ctx).get<VarDecl>();
  const auto *DS = VD ? parentOf(VD, Ctx).get<DeclStmt>() : nullptr;
  return DS && DS->isSingleDecl() && VD->getInit() && VD->getInit()->IgnoreImplicit() == Init->IgnoreImplicit()
             ? DS
             : nullptr;
}

const CompoundStmt *enclosingBlock(const Stmt *S, ASTContext &Ctx) {
  const auto *Block = parentOf(S, Ctx).get<CompoundStmt>();
  return Block && !isa_and_nonnull<SwitchStmt>(parentOf(Block, Ctx).get<Stmt>()) ? Block : nullptr;
}

const Stmt *blockStatement(const Stmt *E, ASTContext &Ctx) {
  // Up through expressions only: an expression in a condition, a loop header or a
  // declaration's initializer is no statement of its own.
  for (const Stmt *S = E; S && (S == E || isa<Expr>(S)); S = parentOf(S, Ctx).get<Stmt>())
    if (enclosingBlock(S, Ctx))
      return S;
  return nullptr;
}

const Stmt *statementOf(const Expr *E, ASTContext &Ctx) {
  const Stmt *S = blockStatement(E, Ctx);
  const auto *SE = dyn_cast_or_null<Expr>(S);
  return SE && SE->IgnoreImplicit() == E->IgnoreImplicit() ? S : nullptr;
}

Fixes appendCall(const Expr *E, StringRef Suffix, ASTContext &Ctx) {
  if (!rewritable(E, Ctx) || sourceText(E, Ctx).empty())
    return {};
  SourceLocation End = Lexer::getLocForEndOfToken(E->getEndLoc(), 0, Ctx.getSourceManager(), Ctx.getLangOpts());
  if (End.isInvalid())
    return {};
  if (!needsParens(E))
    return {FixItHint::CreateInsertion(End, Suffix)};
  return {FixItHint::CreateInsertion(E->getBeginLoc(), "("), FixItHint::CreateInsertion(End, (")" + Suffix).str())};
}

Fixes insertBefore(const Stmt *S, StringRef Code, ASTContext &Ctx) { return insert(S, Code, true, Ctx); }

Fixes insertAfter(const Stmt *S, StringRef Code, ASTContext &Ctx) { return insert(S, Code, false, Ctx); }

Fixes insertFirst(const CompoundStmt *Block, StringRef Code, ASTContext &Ctx) {
  if (Block->body_empty())
    return {};
  const Stmt *First = Block->body_front();
  Lines L = linesOf(First, Ctx);
  // The block's first statement on the line after its `{`.
  const SourceManager &SM = Ctx.getSourceManager();
  if (!rewritable(Block, Ctx) || !L.valid() || Block->getLBracLoc().isMacroID() ||
      SM.getSpellingLineNumber(Block->getLBracLoc()) + 1 != SM.getSpellingLineNumber(First->getBeginLoc()))
    return {};
  return {FixItHint::CreateInsertion(First->getBeginLoc(), (Code + "\n" + L.Indent).str())};
}

Fixes remove(const Stmt *S, ASTContext &Ctx) {
  Lines L = blockLines(S, Ctx);
  if (!L.valid())
    return {};
  // From the newline before its first line to the end of its last line. (Not from the start
  // of its line to the start of the next: clang's edit merging then also eats the space that
  // follows, the next line's first.)
  if (Ctx.getSourceManager().getFileOffset(L.LineBegin) == 0)
    return {};
  return {FixItHint::CreateRemoval(CharSourceRange::getCharRange(L.LineBegin.getLocWithOffset(-1), L.LineEnd))};
}

Fixes moveAfter(const Stmt *S, const Stmt *After, ASTContext &Ctx) { return move(S, After, false, Ctx); }

Fixes hoistBefore(const DeclStmt *DS, const Stmt *Loop, ASTContext &Ctx) {
  using namespace clang::ast_matchers;
  const auto *VD = DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
  const FunctionDecl *Fn = enclosingFunction(Loop, Ctx);
  if (!VD || !VD->getIdentifier() || VD->isStaticLocal() || !Fn || !Fn->getBody() ||
      enclosingBlock(DS, Ctx) != loopBody(Loop))
    return {};
  const SourceManager &SM = Ctx.getSourceManager();
  auto Named = [&](const VarDecl *V) { return ignoringParenImpCasts(declRefExpr(to(varDecl(equalsNode(V))))); };
  auto Written = [&](const VarDecl *V) {
    return !match(findAll(expr(anyOf(binaryOperator(isAssignmentOperator(), hasLHS(Named(V))),
                                     cxxOperatorCallExpr(isAssignmentOperator(), hasArgument(0, Named(V))),
                                     unaryOperator(hasAnyOperatorName("++", "--"), hasUnaryOperand(Named(V))),
                                     callExpr(callee(functionDecl(hasName("::std::move"))), hasArgument(0, Named(V)))))),
                  *Loop, Ctx)
                .empty();
  };
  bool NameTaken = llvm::any_of(Fn->parameters(), [&](const ParmVarDecl *P) { return P->getName() == VD->getName(); }) ||
                   match(findAll(declStmt(has(varDecl(hasName(VD->getName()))))), *Fn->getBody(), Ctx).size() != 1;
  if (Written(VD) || NameTaken)
    return {};
  for (const BoundNodes &B : match(findAll(declRefExpr(to(varDecl(hasLocalStorage()).bind("read")))), *DS, Ctx)) {
    const auto *Read = B.getNodeAs<VarDecl>("read");
    if (!SM.isBeforeInTranslationUnit(Read->getLocation(), Loop->getBeginLoc()) || Written(Read))
      return {};
  }
  return move(DS, Loop, /*Before=*/true, Ctx);
}

Fixes wrapInBlock(const Stmt *S, StringRef First, ASTContext &Ctx) {
  Lines L = blockLines(S, Ctx);
  if (!L.valid())
    return {};
  std::string Inner = L.Indent.str() + indentStep(S, L.Indent, Ctx);
  StringRef Text = textOf(S, L, Ctx);
  std::optional<std::string> Body = reindent(Text, L.Indent, Inner);
  if (Text.empty() || !Body)
    return {};
  return {FixItHint::CreateReplacement(CharSourceRange::getCharRange(S->getBeginLoc(), L.End),
                                       "{\n" + Inner + First.str() + "\n" + Inner + *Body + "\n" + L.Indent.str() +
                                           "}")};
}

} // namespace torchtidy::fixits
