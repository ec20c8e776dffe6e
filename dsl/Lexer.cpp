//===- Lexer.cpp - Lexer of the .tile language ----------------------------===//

#include "dsl/Lexer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

llvm::StringRef kiln::dsl::tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid character";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::IntLit: return "integer literal";
  case TokenKind::FloatLit: return "float literal";
  case TokenKind::StringLit: return "string literal";
  case TokenKind::KwKernel: return "'kernel'";
  case TokenKind::KwFn: return "'fn'";
  case TokenKind::KwLet: return "'let'";
  case TokenKind::KwVar: return "'var'";
  case TokenKind::KwFor: return "'for'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwIf: return "'if'";
  case TokenKind::KwElse: return "'else'";
  case TokenKind::KwReturn: return "'return'";
  case TokenKind::KwGrid: return "'grid'";
  case TokenKind::KwTune: return "'tune'";
  case TokenKind::KwWhere: return "'where'";
  case TokenKind::KwKey: return "'key'";
  case TokenKind::KwConst: return "'const'";
  case TokenKind::KwNone: return "'None'";
  case TokenKind::KwTrue: return "'true'";
  case TokenKind::KwFalse: return "'false'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Comma: return "','";
  case TokenKind::Semi: return "';'";
  case TokenKind::Colon: return "':'";
  case TokenKind::At: return "'@'";
  case TokenKind::Arrow: return "'->'";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Amp: return "'&'";
  case TokenKind::Pipe: return "'|'";
  case TokenKind::Caret: return "'^'";
  case TokenKind::Tilde: return "'~'";
  case TokenKind::Bang: return "'!'";
  case TokenKind::AmpAmp: return "'&&'";
  case TokenKind::PipePipe: return "'||'";
  case TokenKind::Shl: return "'<<'";
  case TokenKind::Shr: return "'>>'";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::Assign: return "'='";
  case TokenKind::PlusEq: return "'+='";
  case TokenKind::MinusEq: return "'-='";
  case TokenKind::StarEq: return "'*='";
  case TokenKind::SlashEq: return "'/='";
  case TokenKind::PercentEq: return "'%='";
  case TokenKind::AmpEq: return "'&='";
  case TokenKind::PipeEq: return "'|='";
  case TokenKind::CaretEq: return "'^='";
  case TokenKind::ShlEq: return "'<<='";
  case TokenKind::ShrEq: return "'>>='";
  }
  return "token";
}

static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

static bool isDigitOfBase(char c, unsigned base) {
  switch (base) {
  case 2: return c == '0' || c == '1';
  case 16: return llvm::isHexDigit(c);
  default: return llvm::isDigit(c);
  }
}

Lexer::Lexer(llvm::SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diag)
    : diag(diag) {
  const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(bufferId);
  bufStart = buf->getBufferStart();
  bufEnd = buf->getBufferEnd();
  cur = bufStart;
}

SMLoc Lexer::getBufferStart() const { return SMLoc::getFromPointer(bufStart); }
SMLoc Lexer::getBufferEnd() const { return SMLoc::getFromPointer(bufEnd); }

Token Lexer::makeToken(TokenKind kind, const char *start) {
  Token tok;
  tok.kind = kind;
  tok.text = StringRef(start, cur - start);
  return tok;
}

void Lexer::skipTrivia() {
  while (cur < bufEnd) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      ++cur;
      continue;
    }
    if (c == '/' && cur + 1 < bufEnd && cur[1] == '/') {
      const void *nl = memchr(cur, '\n', bufEnd - cur);
      cur = nl ? static_cast<const char *>(nl) + 1 : bufEnd;
      continue;
    }
    return;
  }
}

void Lexer::reportInvalidChar(const char *at) {
  unsigned char c = static_cast<unsigned char>(*at);
  const char *end = at + 1;
  // Treat a UTF-8 sequence as one character.
  if (c >= 0xC0)
    while (end < bufEnd && end < at + 4 &&
           (static_cast<unsigned char>(*end) & 0xC0) == 0x80)
      ++end;
  std::string shown;
  if (c >= 0x21 && c <= 0x7E) {
    shown.assign(1, static_cast<char>(c));
  } else {
    shown = "\\x";
    shown += llvm::hexdigit(c >> 4);
    shown += llvm::hexdigit(c & 0xF);
  }
  diag.error(SMRange(SMLoc::getFromPointer(at), SMLoc::getFromPointer(end)),
             "invalid character '" + shown + "' in source");
  cur = end;
}

Token Lexer::lex() {
  {
    skipTrivia();
    if (cur >= bufEnd || diag.tooManyErrors()) {
      Token tok;
      tok.kind = TokenKind::Eof;
      tok.text = StringRef(bufEnd, 0);
      return tok;
    }
    const char *start = cur;
    char c = *cur;
    if (isIdentStart(c))
      return lexIdentifier(start);
    if (llvm::isDigit(c))
      return lexNumber(start);
    if (c == '"')
      return lexString(start);
    if (c == '.' && cur + 1 < bufEnd && llvm::isDigit(cur[1])) {
      // `.5`: report, then lex it as a float so the parser can go on.
      diag.error(SMLoc::getFromPointer(cur),
                 "expected a digit before '.' in float literal (write '0.5', "
                 "not '.5')");
      ++cur;
      Token tok = lexNumber(cur);
      tok.kind = TokenKind::FloatLit;
      tok.floatValue = 0.0;
      tok.text = StringRef(start, cur - start);
      return tok;
    }

    if (c == '.' && cur + 1 < bufEnd && cur[1] == '.') {
      cur += 2;
      Token tok = makeToken(TokenKind::Error, start);
      diag.error(tok.getRange(), "'..' is not an operator; a loop over a "
                                 "range is written 'for i in range(lo, hi)'");
      return tok;
    }

    ++cur;
    auto next = [&](char want) {
      if (cur < bufEnd && *cur == want) {
        ++cur;
        return true;
      }
      return false;
    };
    switch (c) {
    case '(': return makeToken(TokenKind::LParen, start);
    case ')': return makeToken(TokenKind::RParen, start);
    case '[': return makeToken(TokenKind::LBracket, start);
    case ']': return makeToken(TokenKind::RBracket, start);
    case '{': return makeToken(TokenKind::LBrace, start);
    case '}': return makeToken(TokenKind::RBrace, start);
    case ',': return makeToken(TokenKind::Comma, start);
    case ';': return makeToken(TokenKind::Semi, start);
    case ':': return makeToken(TokenKind::Colon, start);
    case '@': return makeToken(TokenKind::At, start);
    case '~': return makeToken(TokenKind::Tilde, start);
    case '+':
      return makeToken(next('=') ? TokenKind::PlusEq : TokenKind::Plus, start);
    case '-':
      if (next('>'))
        return makeToken(TokenKind::Arrow, start);
      return makeToken(next('=') ? TokenKind::MinusEq : TokenKind::Minus, start);
    case '*':
      return makeToken(next('=') ? TokenKind::StarEq : TokenKind::Star, start);
    case '/':
      return makeToken(next('=') ? TokenKind::SlashEq : TokenKind::Slash, start);
    case '%':
      return makeToken(next('=') ? TokenKind::PercentEq : TokenKind::Percent,
                       start);
    case '^':
      return makeToken(next('=') ? TokenKind::CaretEq : TokenKind::Caret, start);
    case '!':
      return makeToken(next('=') ? TokenKind::NotEq : TokenKind::Bang, start);
    case '=':
      return makeToken(next('=') ? TokenKind::EqEq : TokenKind::Assign, start);
    case '&':
      if (next('&'))
        return makeToken(TokenKind::AmpAmp, start);
      return makeToken(next('=') ? TokenKind::AmpEq : TokenKind::Amp, start);
    case '|':
      if (next('|'))
        return makeToken(TokenKind::PipePipe, start);
      return makeToken(next('=') ? TokenKind::PipeEq : TokenKind::Pipe, start);
    case '<':
      if (next('<'))
        return makeToken(next('=') ? TokenKind::ShlEq : TokenKind::Shl, start);
      return makeToken(next('=') ? TokenKind::LessEq : TokenKind::Less, start);
    case '>':
      if (next('>'))
        return makeToken(next('=') ? TokenKind::ShrEq : TokenKind::Shr, start);
      return makeToken(next('=') ? TokenKind::GreaterEq : TokenKind::Greater,
                       start);
    default:
      cur = start;
      reportInvalidChar(start);
      return makeToken(TokenKind::Error, start);
    }
  }
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur < bufEnd && isIdentChar(*cur))
    ++cur;
  StringRef text(start, cur - start);
  if (text == "inf" || text == "nan") {
    Token tok = makeToken(TokenKind::FloatLit, start);
    tok.floatValue = text == "inf" ? std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::quiet_NaN();
    return tok;
  }
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("kernel", TokenKind::KwKernel)
                       .Case("fn", TokenKind::KwFn)
                       .Case("let", TokenKind::KwLet)
                       .Case("var", TokenKind::KwVar)
                       .Case("for", TokenKind::KwFor)
                       .Case("in", TokenKind::KwIn)
                       .Case("if", TokenKind::KwIf)
                       .Case("else", TokenKind::KwElse)
                       .Case("return", TokenKind::KwReturn)
                       .Case("grid", TokenKind::KwGrid)
                       .Case("tune", TokenKind::KwTune)
                       .Case("where", TokenKind::KwWhere)
                       .Case("key", TokenKind::KwKey)
                       .Case("const", TokenKind::KwConst)
                       .Case("None", TokenKind::KwNone)
                       .Case("true", TokenKind::KwTrue)
                       .Case("false", TokenKind::KwFalse)
                       .Default(TokenKind::Identifier);
  return makeToken(kind, start);
}

bool Lexer::scanDigits(unsigned base) {
  bool ok = true;
  bool prevDigit = false;
  while (cur < bufEnd) {
    char c = *cur;
    if (isDigitOfBase(c, base)) {
      prevDigit = true;
    } else if (c == '_') {
      bool nextDigit = cur + 1 < bufEnd && isDigitOfBase(cur[1], base);
      if (!prevDigit || !nextDigit)
        ok = false;
      prevDigit = false;
    } else {
      break;
    }
    ++cur;
  }
  return ok;
}

Token Lexer::lexNumber(const char *start) {
  unsigned base = 10;
  const char *digitsStart = start;
  if (*cur == '0' && cur + 1 < bufEnd &&
      (cur[1] == 'x' || cur[1] == 'X' || cur[1] == 'b' || cur[1] == 'B')) {
    base = (cur[1] == 'x' || cur[1] == 'X') ? 16 : 2;
    cur += 2;
    digitsStart = cur;
  }
  bool ok = scanDigits(base);
  // A literal needs at least one digit after a base prefix.
  if (cur == digitsStart || (base != 10 && *digitsStart == '_'))
    ok = false;

  bool isFloat = false;
  bool badDot = false;
  if (base == 10) {
    // `0..n` is not a float: leave the `..` to be reported on its own.
    if (cur < bufEnd && *cur == '.' && !(cur + 1 < bufEnd && cur[1] == '.')) {
      isFloat = true;
      ++cur;
      if (cur < bufEnd && llvm::isDigit(*cur)) {
        ok &= scanDigits(10);
      } else {
        badDot = true;
      }
    }
    if (!badDot && cur < bufEnd && (*cur == 'e' || *cur == 'E')) {
      const char *p = cur + 1;
      if (p < bufEnd && (*p == '+' || *p == '-'))
        ++p;
      isFloat = true;
      if (p < bufEnd && llvm::isDigit(*p)) {
        cur = p;
        ok &= scanDigits(10);
      }
      // Otherwise the `e` is swallowed below as a malformed suffix.
    }
  }
  // Letters or digits glued to the literal (`12abc`, `0b102`, `1e`).
  if (!badDot && cur < bufEnd && isIdentChar(*cur)) {
    ok = false;
    while (cur < bufEnd && isIdentChar(*cur))
      ++cur;
  }

  Token tok = makeToken(isFloat ? TokenKind::FloatLit : TokenKind::IntLit,
                        start);
  SMRange range = tok.getRange();
  if (badDot) {
    diag.error(SMLoc::getFromPointer(cur - 1),
               "expected digits after '.' in float literal", {range});
    return tok;
  }
  if (!ok) {
    diag.error(range, llvm::Twine("malformed ") +
                          (isFloat ? "float" : "integer") + " literal '" +
                          tok.text + "'");
    return tok;
  }

  if (isFloat) {
    llvm::SmallString<64> clean;
    for (char ch : tok.text)
      if (ch != '_')
        clean.push_back(ch);
    errno = 0;
    double value = std::strtod(clean.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(value)) {
      diag.error(range, "float literal '" + tok.text + "' is out of range");
      value = 0.0;
    }
    tok.floatValue = value;
    return tok;
  }

  uint64_t value = 0;
  for (const char *p = digitsStart; p < cur; ++p) {
    if (*p == '_')
      continue;
    unsigned d = llvm::hexDigitValue(*p);
    if (value > (std::numeric_limits<uint64_t>::max() - d) / base) {
      diag.error(range, "integer literal '" + tok.text +
                            "' is too large (the largest is "
                            "18446744073709551615)");
      return tok;
    }
    value = value * base + d;
  }
  tok.intValue = value;
  return tok;
}

Token Lexer::lexString(const char *start) {
  ++cur; // opening quote
  std::string value;
  while (true) {
    if (cur >= bufEnd || *cur == '\n' || *cur == '\r') {
      // An Error token: the parser stays quiet about what follows.
      Token tok = makeToken(TokenKind::Error, start);
      diag.error(tok.getRange(), "unterminated string literal");
      return tok;
    }
    char c = *cur;
    if (c == '"') {
      ++cur;
      break;
    }
    if (c != '\\') {
      value.push_back(c);
      ++cur;
      continue;
    }
    // An escape sequence.
    if (cur + 1 >= bufEnd || cur[1] == '\n' || cur[1] == '\r') {
      ++cur;
      continue; // reported as unterminated above
    }
    char e = cur[1];
    switch (e) {
    case 'n': value.push_back('\n'); break;
    case 't': value.push_back('\t'); break;
    case '\\': value.push_back('\\'); break;
    case '"': value.push_back('"'); break;
    default: {
      std::string shown = llvm::isPrint(e) ? std::string(1, e)
                                           : (llvm::Twine("x") +
                                              llvm::utohexstr(
                                                  static_cast<unsigned char>(e)))
                                                 .str();
      diag.error(SMRange(SMLoc::getFromPointer(cur),
                         SMLoc::getFromPointer(cur + 2)),
                 "unknown escape sequence '\\" + shown +
                     "' in string literal (use \\n, \\t, \\\\ or \\\")");
      value.push_back(e);
      break;
    }
    }
    cur += 2;
  }
  Token tok = makeToken(TokenKind::StringLit, start);
  tok.stringValue = std::move(value);
  return tok;
}
