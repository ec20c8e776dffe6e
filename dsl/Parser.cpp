//===- Parser.cpp - Parser of the .tile language: declarations, types -----===//
//
// Token handling, error reporting, and the top level: kernels, helper
// functions, parameters, grid and tune clauses, and type syntax. Statements
// and expressions are in ParserExpr.cpp.
//
//===----------------------------------------------------------------------===//

#include "dsl/ParserImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

std::unique_ptr<Module> kiln::dsl::parseModule(llvm::SourceMgr &sm,
                                               unsigned bufferId,
                                               DiagnosticEngine &diag) {
  Parser parser(sm, bufferId, diag);
  return parser.parseModule();
}

Parser::Parser(llvm::SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diag)
    : diag(diag), lexer(sm, bufferId, diag) {
  la.push_back(lexer.lex());
  prevEnd = lexer.getBufferStart();
}

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

const Token &Parser::peek(unsigned n) {
  while (la.size() <= n)
    la.push_back(lexer.lex());
  return la[n];
}

void Parser::consume() {
  if (la.front().is(TokenKind::Eof))
    return;
  prevEnd = la.front().getEndLoc();
  la.pop_front();
  if (la.empty())
    la.push_back(lexer.lex());
}

bool Parser::consumeIf(TokenKind kind) {
  if (tok().isNot(kind))
    return false;
  consume();
  return true;
}

bool Parser::consumeCloseAngle() {
  Token &t = la.front();
  TokenKind rest;
  switch (t.kind) {
  case TokenKind::Greater:
    consume();
    return true;
  case TokenKind::Shr: rest = TokenKind::Greater; break;
  case TokenKind::GreaterEq: rest = TokenKind::Assign; break;
  case TokenKind::ShrEq: rest = TokenKind::GreaterEq; break;
  default:
    return false;
  }
  // Split off the first `>`.
  prevEnd = SMLoc::getFromPointer(t.text.data() + 1);
  t.kind = rest;
  t.text = t.text.drop_front(1);
  return true;
}

bool Parser::startsType(const Token &t) {
  if (t.is(TokenKind::Star))
    return true;
  if (t.isNot(TokenKind::Identifier))
    return false;
  return t.text == "tile" || t.text == "view" ||
         parseScalarKind(t.text).has_value();
}

bool Parser::atNewLine() {
  const char *p = prevEnd.getPointer();
  const char *e = tok().text.data();
  if (!p || p > e)
    return false;
  return StringRef(p, e - p).contains('\n');
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

bool Parser::error(SMLoc loc, const llvm::Twine &msg,
                   llvm::ArrayRef<SMRange> ranges) {
  // An invalid character was reported by the lexer already; whatever the
  // parser would say about it is noise.
  if (stop() || loc == lastErrorLoc || tok().is(TokenKind::Error))
    return false;
  lastErrorLoc = loc;
  diag.error(loc, msg, ranges);
  return true;
}

std::string Parser::describeTok() {
  const Token &t = tok();
  if (t.is(TokenKind::Eof))
    return "end of file";
  StringRef text = t.text;
  if (text.size() > 32)
    return ("'" + text.take_front(29) + "...'").str();
  return ("'" + text + "'").str();
}

bool Parser::errorExpected(const llvm::Twine &what) {
  return error(tok().getLoc(), "expected " + what + ", found " + describeTok(),
               {tok().getRange()});
}

bool Parser::NestingGuard::enter() {
  if (p.aborted)
    return false;
  ++levels;
  if (++p.depth <= kMaxNesting)
    return true;
  // Reported directly: this one error must not be swallowed by the
  // suppression rules of Parser::error.
  if (!p.stop())
    p.diag.error(p.tok().getLoc(), "nesting is too deep (more than " +
                                       llvm::Twine(kMaxNesting) + " levels)");
  p.aborted = true;
  return false;
}

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  unsigned errorsBefore = diag.getNumErrors();
  bool empty = tok().is(TokenKind::Eof);
  while (!stop() && tok().isNot(TokenKind::Eof)) {
    if (tok().is(TokenKind::KwKernel)) {
      if (auto k = parseKernel())
        module->kernels.push_back(std::move(k));
      else
        skipToDecl();
      continue;
    }
    if (tok().is(TokenKind::KwFn)) {
      if (auto f = parseFn())
        module->functions.push_back(std::move(f));
      else
        skipToDecl();
      continue;
    }
    errorExpected("'kernel' or 'fn' at top level");
    consume();
    skipToDecl();
  }
  if (module->kernels.empty() && diag.getNumErrors() == errorsBefore) {
    SMLoc start = lexer.getBufferStart();
    if (empty)
      error(start, "empty file: expected at least one kernel");
    else
      error(start, "no kernel in file: a .tile file needs at least one "
                   "'kernel' declaration");
  }
  return module;
}

void Parser::skipToDecl() {
  while (!stop() && tok().isNot(TokenKind::Eof) &&
         tok().isNot(TokenKind::KwKernel) && tok().isNot(TokenKind::KwFn))
    consume();
}

/// The part kernels and helpers share: `NAME [<const params>] (params)`.
/// The current token is the `kernel`/`fn` keyword; `what` is "kernel" or
/// "function" for messages.
bool Parser::parseDeclHead(llvm::StringRef what, std::string &name,
                           SMRange &nameRange,
                           std::vector<ConstParam> &constParams,
                           std::vector<Param> &params) {
  StringRef keyword = tok().text;
  consume(); // kernel / fn
  if (tok().isNot(TokenKind::Identifier)) {
    errorExpected("a " + what.str() + " name after '" + keyword.str() + "'");
    return false;
  }
  name = tok().text.str();
  nameRange = tok().getRange();
  consume();
  if (tok().is(TokenKind::Less) && !parseConstParams(constParams))
    return false;
  if (tok().isNot(TokenKind::LParen)) {
    errorExpected("'(' and the parameter list of " + what.str() + " '" + name +
                  "'");
    return false;
  }
  return parseParams(params, name);
}

std::unique_ptr<KernelDecl> Parser::parseKernel() {
  auto kernel = std::make_unique<KernelDecl>();
  SMLoc start = tok().getLoc();
  if (!parseDeclHead("kernel", kernel->name, kernel->nameRange,
                     kernel->constParams, kernel->params))
    return nullptr;
  StringRef name = kernel->name;

  if (tok().is(TokenKind::KwGrid)) {
    if (!parseGrid(*kernel))
      return nullptr;
  } else if (tok().is(TokenKind::KwTune) || tok().is(TokenKind::LBrace)) {
    error(tok().getLoc(), "kernel '" + name +
                              "' has no grid: expected 'grid (...)' after "
                              "the parameter list",
          {tok().getRange()});
  } else {
    errorExpected("'grid (...)' after the parameter list of kernel '" + name +
                  "'");
    return nullptr;
  }

  if (tok().is(TokenKind::KwTune) && !parseTune(*kernel))
    return nullptr;
  if (tok().isNot(TokenKind::LBrace)) {
    errorExpected("'{' to begin the body of kernel '" + name + "'");
    return nullptr;
  }
  kernel->body = parseBlock();
  kernel->range = rangeFrom(start);
  return kernel;
}

std::unique_ptr<FnDecl> Parser::parseFn() {
  auto fn = std::make_unique<FnDecl>();
  SMLoc start = tok().getLoc();
  if (!parseDeclHead("function", fn->name, fn->nameRange, fn->constParams,
                     fn->params))
    return nullptr;
  StringRef name = fn->name;
  if (consumeIf(TokenKind::Arrow)) {
    TypeExpr ret;
    if (!parseType(ret))
      return nullptr;
    fn->returnType = std::move(ret);
  }
  if (tok().isNot(TokenKind::LBrace)) {
    errorExpected("'{' to begin the body of function '" + name + "'");
    return nullptr;
  }
  fn->body = parseBlock();
  fn->range = rangeFrom(start);
  return fn;
}

/// `<NAME: SCALAR [= default], ...>`; the current token is `<`.
bool Parser::parseConstParams(std::vector<ConstParam> &out) {
  consume(); // <
  llvm::StringSet<> seen;
  while (!stop()) {
    if (consumeCloseAngle())
      return true;
    if (tok().isNot(TokenKind::Identifier)) {
      errorExpected("a const parameter name or '>'");
      return false;
    }
    ConstParam param;
    param.name = tok().text.str();
    param.nameRange = tok().getRange();
    consume();
    if (!seen.insert(param.name).second)
      error(param.nameRange, "duplicate parameter '" + param.name + "'");
    if (tok().isNot(TokenKind::Colon)) {
      errorExpected("':' and a type after const parameter '" + param.name +
                    "'");
      return false;
    }
    consume();
    TypeExpr type;
    SMLoc typeStart = tok().getLoc();
    if (!parseType(type))
      return false;
    param.typeRange = rangeFrom(typeStart);
    if (type.kind != TypeExpr::Kind::Scalar)
      error(param.typeRange, "const parameter '" + param.name +
                                 "' must have a scalar type such as 'i32'");
    param.type = type.elem;
    if (consumeIf(TokenKind::Assign)) {
      // Comparisons would swallow the closing `>`; they need parentheses.
      param.defaultValue = parseBinary(kPrecBitOr);
      if (!param.defaultValue)
        return false;
    }
    out.push_back(std::move(param));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (consumeCloseAngle())
      return true;
    errorExpected("',' or '>' after const parameter '" + out.back().name +
                  "'");
    return false;
  }
  return false;
}

/// `(NAME: TYPE annotation*, ...)`; the current token is `(`.
bool Parser::parseParams(std::vector<Param> &out, StringRef owner) {
  consume(); // (
  llvm::StringSet<> seen;
  while (!stop()) {
    if (consumeIf(TokenKind::RParen))
      return true;
    if (tok().isNot(TokenKind::Identifier)) {
      errorExpected("a parameter name or ')' in the parameter list of '" +
                    owner + "'");
      return false;
    }
    Param param;
    param.name = tok().text.str();
    param.nameRange = tok().getRange();
    consume();
    if (!seen.insert(param.name).second)
      error(param.nameRange, "duplicate parameter '" + param.name + "'");
    if (tok().isNot(TokenKind::Colon)) {
      errorExpected("':' and a type after parameter '" + param.name + "'");
      return false;
    }
    consume();
    if (!parseType(param.type) || !parseAnnotations(param))
      return false;
    out.push_back(std::move(param));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (consumeIf(TokenKind::RParen))
      return true;
    errorExpected("',' or ')' after parameter '" + out.back().name + "'");
    return false;
  }
  return false;
}

bool Parser::parseAnnotations(Param &param) {
  while (!stop() && tok().is(TokenKind::At)) {
    SMLoc start = tok().getLoc();
    consume(); // @
    if (tok().isNot(TokenKind::Identifier)) {
      errorExpected("an annotation name after '@'");
      return false;
    }
    Annotation ann;
    ann.name = tok().text.str();
    consume();
    bool known = ann.name == "div" || ann.name == "align";
    if (!known)
      error(rangeFrom(start), "unknown annotation '@" + ann.name +
                                  "'; expected '@div' or '@align'");
    if (tok().isNot(TokenKind::LParen)) {
      if (known) {
        errorExpected("'(' after '@" + ann.name + "'");
        return false;
      }
      continue;
    }
    consume(); // (
    ann.value = parseExpr();
    if (!ann.value)
      return false;
    if (!consumeIf(TokenKind::RParen)) {
      errorExpected("')' after the value of '@" + ann.name + "'");
      return false;
    }
    ann.range = rangeFrom(start);
    if (known)
      param.annotations.push_back(std::move(ann));
  }
  return true;
}

/// `grid (e [, e [, e]])`; the current token is `grid`.
bool Parser::parseGrid(KernelDecl &kernel) {
  SMLoc start = tok().getLoc();
  consume(); // grid
  if (tok().isNot(TokenKind::LParen)) {
    errorExpected("'(' after 'grid'");
    return false;
  }
  consume();
  bool reportedTooMany = false;
  while (!stop()) {
    if (tok().is(TokenKind::RParen))
      break;
    SMLoc exprStart = tok().getLoc();
    ExprPtr e = parseExpr();
    if (!e)
      return false;
    if (kernel.grid.size() < 3) {
      kernel.grid.push_back(std::move(e));
    } else if (!reportedTooMany) {
      reportedTooMany = true;
      error(rangeFrom(exprStart), "grid has at most 3 dimensions");
    }
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (tok().isNot(TokenKind::RParen)) {
    errorExpected("',' or ')' in 'grid (...)'");
    return false;
  }
  consume();
  kernel.gridRange = rangeFrom(start);
  if (kernel.grid.empty())
    error(kernel.gridRange, "grid needs at least one dimension, as in "
                            "'grid (rows)'");
  return !stop();
}

/// `tune P in [v, ...], ... [where COND] [key (ARG, ...)]`.
bool Parser::parseTune(KernelDecl &kernel) {
  TuneClause tune;
  SMLoc start = tok().getLoc();
  consume(); // tune
  llvm::StringSet<> seen;
  while (!stop()) {
    if (tok().isNot(TokenKind::Identifier)) {
      errorExpected("a parameter name in 'tune'");
      return false;
    }
    TuneEntry entry;
    entry.name = tok().text.str();
    entry.nameRange = tok().getRange();
    consume();
    if (!seen.insert(entry.name).second)
      error(entry.nameRange,
            "'" + entry.name + "' appears twice in the tune clause");
    if (tok().isNot(TokenKind::KwIn)) {
      errorExpected("'in' after '" + entry.name + "' in 'tune'");
      return false;
    }
    consume();
    if (tok().isNot(TokenKind::LBracket)) {
      errorExpected("'[' and a list of values for '" + entry.name + "'");
      return false;
    }
    std::unique_ptr<ListExpr> list = parseList();
    if (!list)
      return false;
    if (list->elements.empty())
      error(list->range, "tune list for '" + entry.name + "' is empty");
    entry.values = std::move(list->elements);
    tune.entries.push_back(std::move(entry));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (consumeIf(TokenKind::KwWhere)) {
    tune.where = parseExpr();
    if (!tune.where)
      return false;
  }
  if (tok().is(TokenKind::KwKey)) {
    consume();
    tune.hasKey = true;
    if (tok().isNot(TokenKind::LParen)) {
      errorExpected("'(' after 'key'");
      return false;
    }
    consume();
    while (!stop()) {
      if (tok().isNot(TokenKind::Identifier)) {
        errorExpected("a parameter name in 'key (...)'");
        return false;
      }
      tune.key.push_back(
          std::make_unique<IdentExpr>(tok().getRange(), tok().text.str()));
      consume();
      // `n: exact` or `n: pow2` (the default).
      std::string bucket = "pow2";
      if (consumeIf(TokenKind::Colon)) {
        if (tok().isNot(TokenKind::Identifier) ||
            (tok().text != "exact" && tok().text != "pow2")) {
          errorExpected("a bucketing after ':' in 'key (...)': 'exact' or "
                        "'pow2'");
          return false;
        }
        bucket = tok().text.str();
        consume();
      }
      tune.keyBuckets.push_back(bucket);
      if (!consumeIf(TokenKind::Comma))
        break;
      if (tok().is(TokenKind::RParen))
        break;
    }
    if (!consumeIf(TokenKind::RParen)) {
      errorExpected("',' or ')' in 'key (...)'");
      return false;
    }
    if (tok().is(TokenKind::KwWhere)) {
      error(tok().getRange(),
            "'where' must come before 'key' in a tune clause");
      return false;
    }
  }
  tune.range = rangeFrom(start);
  kernel.tune = std::move(tune);
  return !stop();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

void Parser::reportUnknownType(const Token &t) {
  static const std::pair<const char *, const char *> aliases[] = {
      {"float", "f32"},    {"float32", "f32"},  {"double", "f64"},
      {"float64", "f64"},  {"half", "f16"},     {"float16", "f16"},
      {"bfloat16", "bf16"}, {"int", "i32"},     {"int32", "i32"},
      {"int64", "i64"},    {"long", "i64"},     {"int8", "i8"},
      {"int16", "i16"},    {"uint", "u32"},     {"uint32", "u32"},
      {"uint8", "u8"},     {"uint16", "u16"},   {"uint64", "u64"},
      {"char", "i8"},      {"boolean", "bool"},
  };
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"bool", "i8",   "i16", "i32", "i64",
                                  "u8",   "u16",  "u32", "u64", "f16",
                                  "bf16", "f32",  "f64", "f8e4m3", "f8e5m2"};
    for (auto &[alias, real] : aliases)
      v.push_back(alias);
    return v;
  }();
  // A common name from another language (`float`) or a typo of one.
  std::string suggestion = suggestName(t.text, names);
  for (auto &[alias, real] : aliases)
    if (suggestion == alias)
      suggestion = real;
  if (suggestion.empty())
    error(t.getRange(), "unknown type '" + t.text + "'");
  else
    error(t.getRange(),
          "unknown type '" + t.text + "'; did you mean '" + suggestion + "'?");
}

bool Parser::parseScalarType(ScalarKind &out, StringRef context) {
  if (tok().is(TokenKind::Star) && context == "tile") {
    error(tok().getRange(),
          "a tile of pointers cannot be written as a type; it is inferred "
          "from pointer arithmetic such as 'p + offs'");
    return false;
  }
  if (tok().isNot(TokenKind::Identifier)) {
    errorExpected(("a scalar type in '" + context + "'").str());
    return false;
  }
  if (std::optional<ScalarKind> k = parseScalarKind(tok().text))
    out = *k;
  else
    reportUnknownType(tok());
  consume();
  return true;
}

bool Parser::parseType(TypeExpr &out) {
  SMLoc start = tok().getLoc();
  if (tok().is(TokenKind::Star)) {
    consume();
    if (tok().is(TokenKind::Star)) {
      error(tok().getRange(), "pointers to pointers are not supported");
      return false;
    }
    if (tok().isNot(TokenKind::Identifier) || tok().text == "tile" ||
        tok().text == "view") {
      errorExpected("a scalar type after '*'");
      return false;
    }
    out.kind = TypeExpr::Kind::Pointer;
    if (!parseScalarType(out.elem, "*"))
      return false;
    out.range = rangeFrom(start);
    return true;
  }
  if (tok().isNot(TokenKind::Identifier)) {
    errorExpected("a type");
    return false;
  }
  StringRef name = tok().text;
  if (name == "tile" || name == "view") {
    bool isTile = name == "tile";
    consume();
    if (tok().isNot(TokenKind::Less)) {
      errorExpected(isTile ? "'<' after 'tile', as in 'tile<f32, [BM, BN]>'"
                           : "'<' after 'view', as in 'view<f16, 2>'");
      return false;
    }
    consume();
    out.kind = isTile ? TypeExpr::Kind::Tile : TypeExpr::Kind::View;
    if (!parseScalarType(out.elem, isTile ? "tile" : "view"))
      return false;
    if (!consumeIf(TokenKind::Comma)) {
      errorExpected(isTile ? "',' and the shape in 'tile<...>'"
                           : "',' and the rank in 'view<...>'");
      return false;
    }
    if (isTile) {
      if (tok().isNot(TokenKind::LBracket)) {
        errorExpected("a shape such as '[BM, BN]' in 'tile<...>'");
        return false;
      }
      std::unique_ptr<ListExpr> shape = parseList();
      if (!shape)
        return false;
      if (shape->elements.empty())
        error(shape->range, "a tile needs at least one dimension");
      out.dims = std::move(shape->elements);
    } else {
      if (tok().isNot(TokenKind::IntLit)) {
        errorExpected("an integer rank in 'view<...>'");
        return false;
      }
      out.rank = static_cast<int64_t>(tok().intValue);
      consume();
    }
    if (!consumeCloseAngle()) {
      errorExpected(isTile ? "'>' to close 'tile<...>'"
                           : "'>' to close 'view<...>'");
      return false;
    }
    out.range = rangeFrom(start);
    return true;
  }
  out.kind = TypeExpr::Kind::Scalar;
  if (std::optional<ScalarKind> k = parseScalarKind(name))
    out.elem = *k;
  else
    reportUnknownType(tok());
  consume();
  out.range = rangeFrom(start);
  return true;
}
