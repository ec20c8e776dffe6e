//===- ParserExpr.cpp - Parser of the .tile language: statements, exprs ---===//
//
// Blocks and statements (with recovery at `;` and `}`), and expressions by
// precedence climbing. Precedence, lowest to highest:
//   ||  <  &&  <  == != < <= > >= (non-associative)  <  |  <  ^  <  &
//   <  << >>  <  + -  <  * / %  <  unary - ! ~  <  postfix call / index.
//
//===----------------------------------------------------------------------===//

#include "dsl/ParserImpl.h"

#include "llvm/ADT/StringSet.h"

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<BlockStmt> Parser::parseBlock() {
  Token open = tok();
  auto block = std::make_unique<BlockStmt>(open.getRange());
  NestingGuard guard(*this);
  consume(); // {
  if (!guard.enter())
    return block;
  while (!stop()) {
    switch (tok().kind) {
    case TokenKind::RBrace:
      consume();
      block->range = rangeFrom(open.getLoc());
      return block;
    case TokenKind::Eof:
      if (error(tok().getLoc(),
                "expected '}' at end of file to close the block"))
        diag.note(open.getLoc(), "block opened here", {open.getRange()});
      block->range = rangeFrom(open.getLoc());
      return block;
    case TokenKind::KwKernel:
    case TokenKind::KwFn:
      if (error(tok().getLoc(), "expected '}' to close the block before " +
                                    describeTok()))
        diag.note(open.getLoc(), "block opened here", {open.getRange()});
      block->range = rangeFrom(open.getLoc());
      return block;
    case TokenKind::Semi:
      consume(); // an empty statement
      continue;
    default:
      break;
    }
    if (StmtPtr stmt = parseStatement())
      block->stmts.push_back(std::move(stmt));
    else
      skipStatement();
  }
  block->range = rangeFrom(open.getLoc());
  return block;
}

void Parser::skipStatement() {
  unsigned braces = 0;
  while (!stop()) {
    switch (tok().kind) {
    case TokenKind::Eof:
    case TokenKind::KwKernel:
    case TokenKind::KwFn:
      return;
    case TokenKind::Semi:
      consume();
      if (braces == 0)
        return;
      break;
    case TokenKind::LBrace:
      ++braces;
      consume();
      break;
    case TokenKind::RBrace:
      if (braces == 0)
        return;
      consume();
      if (--braces == 0)
        return; // a `{...}` group ends the broken statement
      break;
    default:
      consume();
      break;
    }
  }
}

void Parser::expectSemi(StringRef what) {
  if (consumeIf(TokenKind::Semi))
    return;
  error(prevEnd, "expected ';' after " + what);
  // A statement that ends its line is probably complete: go on with the next
  // line. Otherwise skip the rest of the broken statement.
  if (atNewLine() || tok().is(TokenKind::RBrace) || tok().is(TokenKind::Eof))
    return;
  skipStatement();
}

StmtPtr Parser::parseStatement() {
  switch (tok().kind) {
  case TokenKind::KwLet:
  case TokenKind::KwVar:
    return parseLet();
  case TokenKind::KwFor:
    return parseFor();
  case TokenKind::KwIf:
    return parseIf();
  case TokenKind::KwReturn:
    return parseReturn();
  case TokenKind::LBrace:
    return parseBlock();
  case TokenKind::KwElse:
    error(tok().getRange(), "'else' without a matching 'if'");
    return nullptr;
  default:
    return parseSimpleStatement();
  }
}

StmtPtr Parser::parseLet() {
  SMLoc start = tok().getLoc();
  bool isMutable = tok().is(TokenKind::KwVar);
  StringRef kw = isMutable ? "var" : "let";
  consume();
  if (tok().isNot(TokenKind::Identifier)) {
    errorExpected("a variable name after '" + kw + "'");
    return nullptr;
  }
  auto let = std::make_unique<LetStmt>(SMRange(start, start));
  let->isMutable = isMutable;
  let->name = tok().text.str();
  let->nameRange = tok().getRange();
  consume();
  if (consumeIf(TokenKind::Colon)) {
    TypeExpr type;
    if (!parseType(type))
      return nullptr;
    let->declaredType = std::move(type);
  }
  if (tok().isNot(TokenKind::Assign)) {
    errorExpected("'=' and an initial value for '" + let->name + "'");
    return nullptr;
  }
  consume();
  let->init = parseExpr();
  if (!let->init)
    return nullptr;
  expectSemi(("'" + kw + "' statement").str());
  let->range = rangeFrom(start);
  return let;
}

StmtPtr Parser::parseFor() {
  SMLoc start = tok().getLoc();
  consume(); // for
  if (tok().isNot(TokenKind::Identifier)) {
    errorExpected("a loop variable name after 'for'");
    return nullptr;
  }
  auto loop = std::make_unique<ForStmt>(SMRange(start, start));
  loop->var = tok().text.str();
  loop->varRange = tok().getRange();
  consume();
  if (tok().isNot(TokenKind::KwIn)) {
    errorExpected("'in' after the loop variable '" + loop->var + "'");
    return nullptr;
  }
  consume();
  if (!tok().isIdent("range") || peek(1).isNot(TokenKind::LParen)) {
    error(tok().getLoc(), "expected 'range(...)' after 'in'",
          {tok().getRange()});
    return nullptr;
  }
  SMLoc rangeStart = tok().getLoc();
  consume(); // range
  consume(); // (
  std::vector<ExprPtr> bounds;
  while (!stop() && tok().isNot(TokenKind::RParen)) {
    ExprPtr e = parseExpr();
    if (!e)
      return nullptr;
    bounds.push_back(std::move(e));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (!consumeIf(TokenKind::RParen)) {
    errorExpected("',' or ')' in 'range(...)'");
    return nullptr;
  }
  if (bounds.size() < 2 || bounds.size() > 3) {
    error(rangeFrom(rangeStart),
          "'range' takes 2 or 3 arguments (start, end [, step]), found " +
              llvm::Twine(bounds.size()));
    return nullptr;
  }
  loop->lo = std::move(bounds[0]);
  loop->hi = std::move(bounds[1]);
  if (bounds.size() == 3)
    loop->step = std::move(bounds[2]);
  if (tok().isNot(TokenKind::LBrace)) {
    errorExpected("'{' after the 'for' header");
    return nullptr;
  }
  loop->body = parseBlock();
  loop->range = rangeFrom(start);
  return loop;
}

std::unique_ptr<IfStmt> Parser::parseIf() {
  NestingGuard guard(*this);
  if (!guard.enter())
    return nullptr;
  SMLoc start = tok().getLoc();
  consume(); // if
  auto stmt = std::make_unique<IfStmt>(SMRange(start, start));
  stmt->cond = parseExpr();
  if (!stmt->cond)
    return nullptr;
  if (tok().isNot(TokenKind::LBrace)) {
    errorExpected("'{' after the 'if' condition");
    return nullptr;
  }
  stmt->thenBlock = parseBlock();
  if (consumeIf(TokenKind::KwElse)) {
    if (tok().is(TokenKind::KwIf)) {
      SMLoc elseIfStart = tok().getLoc();
      std::unique_ptr<IfStmt> nested = parseIf();
      if (!nested)
        return nullptr;
      stmt->elseBlock = std::make_unique<BlockStmt>(rangeFrom(elseIfStart));
      stmt->elseBlock->stmts.push_back(std::move(nested));
    } else if (tok().is(TokenKind::LBrace)) {
      stmt->elseBlock = parseBlock();
    } else {
      errorExpected("'{' or 'if' after 'else'");
      return nullptr;
    }
  }
  stmt->range = rangeFrom(start);
  return stmt;
}

StmtPtr Parser::parseReturn() {
  SMLoc start = tok().getLoc();
  consume(); // return
  auto ret = std::make_unique<ReturnStmt>(SMRange(start, start));
  if (tok().isNot(TokenKind::Semi) && tok().isNot(TokenKind::RBrace)) {
    ret->value = parseExpr();
    if (!ret->value)
      return nullptr;
  }
  expectSemi("'return' statement");
  ret->range = rangeFrom(start);
  return ret;
}

static std::optional<BinaryOp> compoundAssignOp(TokenKind kind, bool &isAssign) {
  isAssign = true;
  switch (kind) {
  case TokenKind::Assign: return std::nullopt;
  case TokenKind::PlusEq: return BinaryOp::Add;
  case TokenKind::MinusEq: return BinaryOp::Sub;
  case TokenKind::StarEq: return BinaryOp::Mul;
  case TokenKind::SlashEq: return BinaryOp::Div;
  case TokenKind::PercentEq: return BinaryOp::Rem;
  case TokenKind::AmpEq: return BinaryOp::BitAnd;
  case TokenKind::PipeEq: return BinaryOp::BitOr;
  case TokenKind::CaretEq: return BinaryOp::BitXor;
  case TokenKind::ShlEq: return BinaryOp::Shl;
  case TokenKind::ShrEq: return BinaryOp::Shr;
  default:
    isAssign = false;
    return std::nullopt;
  }
}

StmtPtr Parser::parseSimpleStatement() {
  SMLoc start = tok().getLoc();
  bool isAssign = false;
  if (tok().is(TokenKind::Identifier)) {
    std::optional<BinaryOp> op = compoundAssignOp(peek(1).kind, isAssign);
    if (isAssign) {
      auto assign = std::make_unique<AssignStmt>(SMRange(start, start));
      assign->name = tok().text.str();
      assign->nameRange = tok().getRange();
      consume();
      assign->compound = op;
      assign->opLoc = tok().getLoc();
      consume();
      assign->value = parseExpr();
      if (!assign->value)
        return nullptr;
      expectSemi("assignment");
      assign->range = rangeFrom(start);
      return assign;
    }
  }
  ExprPtr e = parseExpr();
  if (!e)
    return nullptr;
  compoundAssignOp(tok().kind, isAssign);
  if (isAssign) {
    error(tok().getLoc(),
          "cannot assign to this expression; only variables can be assigned",
          {e->range});
    return nullptr;
  }
  expectSemi("expression statement");
  return std::make_unique<ExprStmt>(rangeFrom(start), std::move(e));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

int Parser::binaryPrecedence(TokenKind kind, BinaryOp &op) {
  switch (kind) {
  case TokenKind::PipePipe: op = BinaryOp::LogicOr; return 1;
  case TokenKind::AmpAmp: op = BinaryOp::LogicAnd; return 2;
  case TokenKind::EqEq: op = BinaryOp::Eq; return kPrecCompare;
  case TokenKind::NotEq: op = BinaryOp::Ne; return kPrecCompare;
  case TokenKind::Less: op = BinaryOp::Lt; return kPrecCompare;
  case TokenKind::LessEq: op = BinaryOp::Le; return kPrecCompare;
  case TokenKind::Greater: op = BinaryOp::Gt; return kPrecCompare;
  case TokenKind::GreaterEq: op = BinaryOp::Ge; return kPrecCompare;
  case TokenKind::Pipe: op = BinaryOp::BitOr; return kPrecBitOr;
  case TokenKind::Caret: op = BinaryOp::BitXor; return 5;
  case TokenKind::Amp: op = BinaryOp::BitAnd; return 6;
  case TokenKind::Shl: op = BinaryOp::Shl; return 7;
  case TokenKind::Shr: op = BinaryOp::Shr; return 7;
  case TokenKind::Plus: op = BinaryOp::Add; return 8;
  case TokenKind::Minus: op = BinaryOp::Sub; return 8;
  case TokenKind::Star: op = BinaryOp::Mul; return 9;
  case TokenKind::Slash: op = BinaryOp::Div; return 9;
  case TokenKind::Percent: op = BinaryOp::Rem; return 9;
  default: return 0;
  }
}

ExprPtr Parser::parseExpr() { return parseBinary(1); }

ExprPtr Parser::parseBinary(int minPrec) {
  ExprPtr lhs = parseUnary();
  if (!lhs)
    return nullptr;
  // Every operator applied deepens the tree by one; count it as nesting so
  // that later recursive passes over the tree stay bounded too.
  NestingGuard guard(*this);
  bool lhsIsComparison = false;
  while (true) {
    BinaryOp op;
    int prec = binaryPrecedence(tok().kind, op);
    if (prec == 0 || prec < minPrec)
      return lhs;
    if (!guard.enter())
      return nullptr;
    Token opTok = tok();
    consume();
    if (prec == kPrecCompare && lhsIsComparison)
      error(opTok.getLoc(),
            "comparison operators cannot be chained; use parentheses",
            {opTok.getRange()});
    ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    SMRange range(lhs->range.Start, rhs->range.End);
    auto bin =
        std::make_unique<BinaryExpr>(range, op, std::move(lhs), std::move(rhs));
    bin->opLoc = opTok.getLoc();
    lhs = std::move(bin);
    lhsIsComparison = prec == kPrecCompare;
  }
}

ExprPtr Parser::parseUnary() {
  UnaryOp op;
  switch (tok().kind) {
  case TokenKind::Minus: op = UnaryOp::Neg; break;
  case TokenKind::Bang: op = UnaryOp::Not; break;
  case TokenKind::Tilde: op = UnaryOp::BitNot; break;
  default: {
    ExprPtr primary = parsePrimary();
    if (!primary)
      return nullptr;
    return parsePostfix(std::move(primary));
  }
  }
  NestingGuard guard(*this);
  if (!guard.enter())
    return nullptr;
  SMLoc start = tok().getLoc();
  consume();
  ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  SMRange range(start, operand->range.End);
  return std::make_unique<UnaryExpr>(range, op, std::move(operand));
}

ExprPtr Parser::parsePostfix(ExprPtr base) {
  NestingGuard guard(*this);
  while (tok().is(TokenKind::LBracket)) {
    if (!guard.enter())
      return nullptr;
    base = parseIndex(std::move(base));
    if (!base)
      return nullptr;
  }
  return base;
}

ExprPtr Parser::parseIndex(ExprPtr base) {
  SMLoc start = base->range.Start;
  consume(); // [
  auto index = std::make_unique<IndexExpr>(SMRange(start, start),
                                           std::move(base));
  while (!stop()) {
    IndexItem item;
    item.range = tok().getRange();
    if (tok().is(TokenKind::Colon)) {
      item.kind = IndexItem::Kind::Keep;
    } else if (tok().is(TokenKind::KwNone)) {
      item.kind = IndexItem::Kind::NewAxis;
    } else {
      error(tok().getLoc(),
            "expected ':' or 'None' in index; tiles cannot be indexed by "
            "value",
            {tok().getRange()});
      return nullptr;
    }
    consume();
    index->items.push_back(item);
    if (consumeIf(TokenKind::Comma)) {
      if (tok().is(TokenKind::RBracket))
        break;
      continue;
    }
    if (tok().is(TokenKind::RBracket))
      break;
    errorExpected("',' or ']' in index");
    return nullptr;
  }
  if (!consumeIf(TokenKind::RBracket))
    return nullptr;
  index->range = rangeFrom(start);
  return index;
}

ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::IntLit: {
    auto e = std::make_unique<IntLitExpr>(t.getRange(), t.intValue);
    consume();
    return e;
  }
  case TokenKind::FloatLit: {
    auto e = std::make_unique<FloatLitExpr>(t.getRange(), t.floatValue);
    consume();
    return e;
  }
  case TokenKind::StringLit: {
    auto e = std::make_unique<StringLitExpr>(t.getRange(), t.stringValue);
    consume();
    return e;
  }
  case TokenKind::KwTrue:
  case TokenKind::KwFalse: {
    auto e = std::make_unique<BoolLitExpr>(t.getRange(),
                                           t.is(TokenKind::KwTrue));
    consume();
    return e;
  }
  case TokenKind::Identifier: {
    const Token &next = peek(1);
    if (next.is(TokenKind::LParen) ||
        (next.is(TokenKind::Less) && startsType(peek(2))))
      return parseCall();
    auto e = std::make_unique<IdentExpr>(tok().getRange(), tok().text.str());
    consume();
    return e;
  }
  case TokenKind::KwWhere:
    // `where(c, a, b)` is a builtin; `where` is a keyword only in `tune`.
    if (peek(1).is(TokenKind::LParen))
      return parseCall();
    break;
  case TokenKind::LParen:
    return parseParen();
  case TokenKind::LBracket:
    return parseList();
  case TokenKind::KwNone:
    error(tok().getRange(),
          "'None' is only valid inside an index, as in 'x[:, None]'");
    return nullptr;
  default:
    break;
  }
  errorExpected("expression");
  return nullptr;
}

ExprPtr Parser::parseParen() {
  NestingGuard guard(*this);
  if (!guard.enter())
    return nullptr;
  Token open = tok();
  consume(); // (
  ExprPtr e = parseExpr();
  if (!e)
    return nullptr;
  if (tok().isNot(TokenKind::RParen)) {
    if (errorExpected("')' to close the parenthesized expression"))
      diag.note(open.getLoc(), "to match this '('", {open.getRange()});
    return nullptr;
  }
  consume();
  // The parentheses belong to the expression's range (there is no node for
  // them), so that enclosing ranges cover them too.
  e->range = rangeFrom(open.getLoc());
  return e;
}

std::unique_ptr<ListExpr> Parser::parseList() {
  NestingGuard guard(*this);
  if (!guard.enter())
    return nullptr;
  Token open = tok();
  consume(); // [
  auto list = std::make_unique<ListExpr>(open.getRange());
  while (!stop() && tok().isNot(TokenKind::RBracket)) {
    ExprPtr e = parseExpr();
    if (!e)
      return nullptr;
    list->elements.push_back(std::move(e));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (tok().isNot(TokenKind::RBracket)) {
    if (errorExpected("',' or ']' in list"))
      diag.note(open.getLoc(), "to match this '['", {open.getRange()});
    return nullptr;
  }
  consume();
  list->range = rangeFrom(open.getLoc());
  return list;
}

ExprPtr Parser::parseCall() {
  NestingGuard guard(*this);
  if (!guard.enter())
    return nullptr;
  SMLoc start = tok().getLoc();
  auto call = std::make_unique<CallExpr>(SMRange(start, start),
                                         tok().text.str());
  call->calleeRange = tok().getRange();
  consume(); // name
  StringRef callee = call->callee;

  if (consumeIf(TokenKind::Less)) {
    while (!stop()) {
      TypeExpr type;
      if (!parseType(type))
        return nullptr;
      call->typeArgs.push_back(std::move(type));
      if (!consumeIf(TokenKind::Comma))
        break;
    }
    if (!consumeCloseAngle()) {
      errorExpected("',' or '>' in the type arguments of '" + callee + "'");
      return nullptr;
    }
    if (tok().isNot(TokenKind::LParen)) {
      errorExpected("'(' after the type arguments of '" + callee + "'");
      return nullptr;
    }
  }
  Token open = tok();
  consume(); // (
  llvm::StringSet<> named;
  while (!stop() && tok().isNot(TokenKind::RParen)) {
    if (tok().is(TokenKind::Identifier) && peek(1).is(TokenKind::Assign)) {
      NamedArg arg;
      arg.name = tok().text.str();
      arg.nameRange = tok().getRange();
      consume(); // name
      consume(); // =
      arg.value = parseExpr();
      if (!arg.value)
        return nullptr;
      if (!named.insert(arg.name).second)
        error(arg.nameRange, "argument '" + arg.name + "' given twice");
      call->namedArgs.push_back(std::move(arg));
    } else {
      ExprPtr e = parseExpr();
      if (!e)
        return nullptr;
      if (!call->namedArgs.empty())
        error(e->range, "positional argument after a named argument");
      else
        call->args.push_back(std::move(e));
    }
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (tok().isNot(TokenKind::RParen)) {
    if (errorExpected("',' or ')' in the arguments of '" + callee + "'"))
      diag.note(open.getLoc(), "to match this '('", {open.getRange()});
    return nullptr;
  }
  consume();
  call->range = rangeFrom(start);
  return call;
}
