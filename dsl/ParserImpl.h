//===- ParserImpl.h - Internals of the .tile parser -------------*- C++ -*-===//
//
// The Parser class shared by Parser.cpp (declarations, types) and
// ParserExpr.cpp (statements, expressions). Not part of the public API; use
// parseModule() from Parser.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_PARSERIMPL_H
#define KILN_DSL_PARSERIMPL_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"
#include "dsl/Lexer.h"
#include "dsl/Parser.h"

#include <deque>

namespace kiln::dsl {

class Parser {
public:
  Parser(llvm::SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diag);

  std::unique_ptr<Module> parseModule();

  //===--- Tokens ---------------------------------------------------------===//

  const Token &tok() { return la.front(); }
  /// The token `n` positions ahead (0: the current one).
  const Token &peek(unsigned n);
  void consume();
  bool consumeIf(TokenKind kind);
  /// Consumes a `>` that closes an angle-bracket list, splitting `>>`, `>=`,
  /// `>>=` (as in `view<f16, 2>>`).
  bool consumeCloseAngle();
  /// Whether `t` can start a type (`*`, a scalar type name, `tile`, `view`).
  static bool startsType(const Token &t);
  /// Whether the source between the previous and the current token contains
  /// a line break.
  bool atNewLine();

  llvm::SMRange rangeFrom(llvm::SMLoc start) const { return {start, prevEnd}; }

  //===--- Errors ---------------------------------------------------------===//

  /// Reports an error unless parsing has stopped or an error was already
  /// reported at the same place. Returns whether it was reported.
  bool error(llvm::SMLoc loc, const llvm::Twine &msg,
             llvm::ArrayRef<llvm::SMRange> ranges = {});
  bool error(llvm::SMRange range, const llvm::Twine &msg) {
    return error(range.Start, msg, {range});
  }
  /// "expected <what>, found '<current token>'" at the current token.
  bool errorExpected(const llvm::Twine &what);
  /// The current token for messages: "'foo'" or "end of file".
  std::string describeTok();

  /// Whether to stop parsing: nesting limit hit or too many errors.
  bool stop() const { return aborted || diag.tooManyErrors(); }

  /// Counts one nesting level for as long as it lives.
  class NestingGuard {
  public:
    explicit NestingGuard(Parser &p) : p(p) {}
    ~NestingGuard() { p.depth -= levels; }
    /// Enters one more level; false (after one error) if too deep.
    bool enter();

  private:
    Parser &p;
    unsigned levels = 0;
  };

  //===--- Declarations (Parser.cpp) --------------------------------------===//

  bool parseDeclHead(llvm::StringRef what, std::string &name,
                     llvm::SMRange &nameRange,
                     std::vector<ConstParam> &constParams,
                     std::vector<Param> &params);
  std::unique_ptr<KernelDecl> parseKernel();
  std::unique_ptr<FnDecl> parseFn();
  bool parseConstParams(std::vector<ConstParam> &out);
  bool parseParams(std::vector<Param> &out, llvm::StringRef owner);
  bool parseAnnotations(Param &param);
  bool parseGrid(KernelDecl &kernel);
  bool parseTune(KernelDecl &kernel);
  bool parseType(TypeExpr &out);
  bool parseScalarType(ScalarKind &out, llvm::StringRef context);
  void reportUnknownType(const Token &t);
  void skipToDecl();

  //===--- Statements (ParserExpr.cpp) ------------------------------------===//

  /// Parses `{ stmts }`; the current token must be `{`.
  std::unique_ptr<BlockStmt> parseBlock();
  StmtPtr parseStatement();
  StmtPtr parseLet();
  StmtPtr parseFor();
  std::unique_ptr<IfStmt> parseIf();
  StmtPtr parseReturn();
  StmtPtr parseSimpleStatement();
  /// Expects the `;` ending a statement described by `what`; on error decides
  /// whether to skip the rest of the line.
  void expectSemi(llvm::StringRef what);
  /// Skips to the next `;` (consumed) or the `}` of the current block.
  void skipStatement();

  //===--- Expressions (ParserExpr.cpp) -----------------------------------===//

  ExprPtr parseExpr();
  ExprPtr parseBinary(int minPrec);
  ExprPtr parseUnary();
  ExprPtr parsePostfix(ExprPtr base);
  ExprPtr parsePrimary();
  ExprPtr parseCall();
  ExprPtr parseParen();
  std::unique_ptr<ListExpr> parseList();
  ExprPtr parseIndex(ExprPtr base);

  /// The precedence of a binary operator token (0: not one).
  static int binaryPrecedence(TokenKind kind, BinaryOp &op);
  static constexpr int kPrecCompare = 3;
  static constexpr int kPrecBitOr = 4;

private:
  DiagnosticEngine &diag;
  Lexer lexer;
  std::deque<Token> la;
  llvm::SMLoc prevEnd;
  llvm::SMLoc lastErrorLoc;
  unsigned depth = 0;
  bool aborted = false;
};

} // namespace kiln::dsl

#endif // KILN_DSL_PARSERIMPL_H
