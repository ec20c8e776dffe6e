//===- Lexer.h - Lexer of the .tile language --------------------*- C++ -*-===//
//
// Splits one SourceMgr buffer into Tokens. Lexical errors (invalid
// characters, malformed or out-of-range literals, unterminated strings) are
// reported to the DiagnosticEngine and lexing goes on, so the parser sees a
// usable token stream. Once the engine has seen too many errors the lexer
// returns Eof, so garbage input cannot keep it busy.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_LEXER_H
#define KILN_DSL_LEXER_H

#include "dsl/Diagnostics.h"
#include "dsl/Token.h"

#include "llvm/Support/SourceMgr.h"

namespace kiln::dsl {

class Lexer {
public:
  Lexer(llvm::SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diag);

  /// The next token; Eof (repeatedly) at the end of the buffer.
  Token lex();

  /// The start of the buffer.
  llvm::SMLoc getBufferStart() const;
  /// The end of the buffer (the location of Eof).
  llvm::SMLoc getBufferEnd() const;

private:
  Token makeToken(TokenKind kind, const char *start);
  Token lexIdentifier(const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  void skipTrivia();
  /// Scans `[0-9_]*` digits of the given base after `cur`; returns false if an
  /// underscore is not between two digits.
  bool scanDigits(unsigned base);
  void reportInvalidChar(const char *at);

  DiagnosticEngine &diag;
  const char *bufStart;
  const char *bufEnd;
  const char *cur;
};

} // namespace kiln::dsl

#endif // KILN_DSL_LEXER_H
