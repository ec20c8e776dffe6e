//===- Token.h - Tokens of the .tile language -------------------*- C++ -*-===//
//
// The lexer turns a source buffer into a stream of Tokens. A token keeps its
// spelling (a slice of the buffer, so it lives as long as the SourceMgr) and,
// for literals, the decoded value.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_TOKEN_H
#define KILN_DSL_TOKEN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>

namespace kiln::dsl {

enum class TokenKind {
  Eof,
  /// An invalid character (already reported by the lexer).
  Error,

  // Names and literals.
  Identifier,
  IntLit,
  FloatLit, ///< Also `inf` and `nan`.
  StringLit,

  // Keywords.
  KwKernel,
  KwFn,
  KwLet,
  KwVar,
  KwFor,
  KwIn,
  KwIf,
  KwElse,
  KwReturn,
  KwGrid,
  KwTune,
  KwWhere,
  KwKey,
  KwConst,
  KwNone,
  KwTrue,
  KwFalse,

  // Punctuation.
  LParen,   ///< (
  RParen,   ///< )
  LBracket, ///< [
  RBracket, ///< ]
  LBrace,   ///< {
  RBrace,   ///< }
  Comma,    ///< ,
  Semi,     ///< ;
  Colon,    ///< :
  At,       ///< @
  Arrow,    ///< ->

  // Operators.
  Plus,       ///< +
  Minus,      ///< -
  Star,       ///< *
  Slash,      ///< /
  Percent,    ///< %
  Amp,        ///< &
  Pipe,       ///< |
  Caret,      ///< ^
  Tilde,      ///< ~
  Bang,       ///< !
  AmpAmp,     ///< &&
  PipePipe,   ///< ||
  Shl,        ///< <<
  Shr,        ///< >>
  Less,       ///< <
  LessEq,     ///< <=
  Greater,    ///< >
  GreaterEq,  ///< >=
  EqEq,       ///< ==
  NotEq,      ///< !=
  Assign,     ///< =
  PlusEq,     ///< +=
  MinusEq,    ///< -=
  StarEq,     ///< *=
  SlashEq,    ///< /=
  PercentEq,  ///< %=
  AmpEq,      ///< &=
  PipeEq,     ///< |=
  CaretEq,    ///< ^=
  ShlEq,      ///< <<=
  ShrEq,      ///< >>=
};

/// A short human-readable name of a token kind for messages: "';'",
/// "identifier", "end of file", "'kernel'".
llvm::StringRef tokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  /// The spelling in the source buffer (empty for Eof).
  llvm::StringRef text;
  /// IntLit: the value (0 after a lexical error in the literal).
  uint64_t intValue = 0;
  /// FloatLit (including `inf` / `nan`): the value.
  double floatValue = 0.0;
  /// StringLit: the contents with escapes decoded.
  std::string stringValue;

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
  bool isIdent(llvm::StringRef name) const {
    return kind == TokenKind::Identifier && text == name;
  }

  llvm::SMLoc getLoc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  /// Just past the last character.
  llvm::SMLoc getEndLoc() const {
    return llvm::SMLoc::getFromPointer(text.data() + text.size());
  }
  llvm::SMRange getRange() const { return {getLoc(), getEndLoc()}; }
};

} // namespace kiln::dsl

#endif // KILN_DSL_TOKEN_H
