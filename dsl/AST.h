//===- AST.h - Abstract syntax tree of the .tile language ------*- C++ -*-===//
//
// The parser builds this tree; semantic analysis (Sema) annotates every
// expression with its type; MLIRGen turns it into the kiln dialect. Every
// node carries the source range it was parsed from, so that diagnostics can
// point at it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_AST_H
#define KILN_DSL_AST_H

#include "dsl/Types.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::dsl {

//===----------------------------------------------------------------------===//
// Type syntax
//===----------------------------------------------------------------------===//

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// A type as written in the source: `f32`, `*f16`, `tile<f32, [BM, BN]>`,
/// `view<f16, 2>`.
struct TypeExpr {
  enum class Kind { Scalar, Pointer, Tile, View };
  Kind kind = Kind::Scalar;
  ScalarKind elem = ScalarKind::I32;
  std::vector<ExprPtr> dims; ///< Tile only: the shape expressions.
  int64_t rank = 0;          ///< View only.
  llvm::SMRange range;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind {
  IntLit,    ///< 42, 0x2A, 1_024
  FloatLit,  ///< 1.0, 1e-5, inf, nan
  BoolLit,   ///< true, false
  StringLit, ///< "fmt" (print/assert only)
  Ident,     ///< a name
  Unary,     ///< -x, !x, ~x
  Binary,    ///< x + y, ...
  Call,      ///< f(args), cast<T>(x), load(p, mask = m)
  Index,     ///< x[:, None]
  List,      ///< [a, b, c] (shapes, offsets, permutations)
};

struct Expr {
  explicit Expr(ExprKind kind, llvm::SMRange range)
      : kind(kind), range(range) {}
  virtual ~Expr() = default;

  ExprKind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return range.Start; }

  const ExprKind kind;
  llvm::SMRange range;
  /// Filled in by Sema.
  Type type;
};

struct IntLitExpr : Expr {
  IntLitExpr(llvm::SMRange r, uint64_t value) : Expr(ExprKind::IntLit, r), value(value) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::IntLit; }
  uint64_t value; ///< Magnitude as written (unary minus is a UnaryExpr).
};

struct FloatLitExpr : Expr {
  FloatLitExpr(llvm::SMRange r, double value) : Expr(ExprKind::FloatLit, r), value(value) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::FloatLit; }
  double value;
};

struct BoolLitExpr : Expr {
  BoolLitExpr(llvm::SMRange r, bool value) : Expr(ExprKind::BoolLit, r), value(value) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::BoolLit; }
  bool value;
};

struct StringLitExpr : Expr {
  StringLitExpr(llvm::SMRange r, std::string value)
      : Expr(ExprKind::StringLit, r), value(std::move(value)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::StringLit; }
  std::string value; ///< Escapes already decoded.
};

struct IdentExpr : Expr {
  IdentExpr(llvm::SMRange r, std::string name) : Expr(ExprKind::Ident, r), name(std::move(name)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Ident; }
  std::string name;
};

enum class UnaryOp { Neg, Not, BitNot };

struct UnaryExpr : Expr {
  UnaryExpr(llvm::SMRange r, UnaryOp op, ExprPtr operand)
      : Expr(ExprKind::Unary, r), op(op), operand(std::move(operand)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Unary; }
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp {
  Add, Sub, Mul, Div, Rem,
  Lt, Le, Gt, Ge, Eq, Ne,
  LogicAnd, LogicOr,
  BitAnd, BitOr, BitXor, Shl, Shr,
};

/// The spelling of a binary operator ("+", "<=", "&&", ...).
llvm::StringRef spelling(BinaryOp op);

struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMRange r, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(ExprKind::Binary, r), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Binary; }
  BinaryOp op;
  llvm::SMLoc opLoc; ///< Location of the operator token.
  ExprPtr lhs, rhs;
};

/// `name = value` inside a call's argument list.
struct NamedArg {
  std::string name;
  llvm::SMRange nameRange;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(llvm::SMRange r, std::string callee)
      : Expr(ExprKind::Call, r), callee(std::move(callee)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Call; }
  std::string callee;
  llvm::SMRange calleeRange;
  std::vector<TypeExpr> typeArgs; ///< cast<T>(...), zeros<T>(...)
  std::vector<ExprPtr> args;      ///< Positional arguments, in order.
  std::vector<NamedArg> namedArgs; ///< After the positional ones.
};

/// One subscript of an index expression: `:` keeps a dimension, `None`
/// inserts a unit dimension.
struct IndexItem {
  enum class Kind { Keep, NewAxis };
  Kind kind;
  llvm::SMRange range;
};

struct IndexExpr : Expr {
  IndexExpr(llvm::SMRange r, ExprPtr base)
      : Expr(ExprKind::Index, r), base(std::move(base)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Index; }
  ExprPtr base;
  std::vector<IndexItem> items;
};

struct ListExpr : Expr {
  explicit ListExpr(llvm::SMRange r) : Expr(ExprKind::List, r) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::List; }
  std::vector<ExprPtr> elements;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

enum class StmtKind { Let, Assign, For, If, Return, ExprStmt, Block };

struct Stmt {
  explicit Stmt(StmtKind kind, llvm::SMRange range) : kind(kind), range(range) {}
  virtual ~Stmt() = default;
  StmtKind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return range.Start; }
  const StmtKind kind;
  llvm::SMRange range;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct BlockStmt : Stmt {
  explicit BlockStmt(llvm::SMRange r) : Stmt(StmtKind::Block, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Block; }
  std::vector<StmtPtr> stmts;
};

/// `let x = e;` / `var x = e;` (optionally `let x: T = e;`).
struct LetStmt : Stmt {
  LetStmt(llvm::SMRange r) : Stmt(StmtKind::Let, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Let; }
  std::string name;
  llvm::SMRange nameRange;
  bool isMutable = false;
  std::optional<TypeExpr> declaredType;
  ExprPtr init;
};

/// `x = e;`, `x += e;`, `x -= e;`, `x *= e;`, `x /= e;`.
struct AssignStmt : Stmt {
  AssignStmt(llvm::SMRange r) : Stmt(StmtKind::Assign, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Assign; }
  std::string name;
  llvm::SMRange nameRange;
  std::optional<BinaryOp> compound; ///< Add for `+=`, none for `=`.
  llvm::SMLoc opLoc;
  ExprPtr value;
};

/// `for i in range(lo, hi [, step]) { ... }`.
struct ForStmt : Stmt {
  ForStmt(llvm::SMRange r) : Stmt(StmtKind::For, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::For; }
  std::string var;
  llvm::SMRange varRange;
  ExprPtr lo, hi, step; ///< step may be null (means 1).
  std::unique_ptr<BlockStmt> body;
};

/// `if c { ... } else { ... }`; an `else if` is an IfStmt inside elseBlock.
struct IfStmt : Stmt {
  IfStmt(llvm::SMRange r) : Stmt(StmtKind::If, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::If; }
  ExprPtr cond;
  std::unique_ptr<BlockStmt> thenBlock;
  std::unique_ptr<BlockStmt> elseBlock; ///< May be null.
};

/// `return;` in a kernel, `return e;` in a helper.
struct ReturnStmt : Stmt {
  ReturnStmt(llvm::SMRange r) : Stmt(StmtKind::Return, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Return; }
  ExprPtr value; ///< May be null.
};

struct ExprStmt : Stmt {
  ExprStmt(llvm::SMRange r, ExprPtr e) : Stmt(StmtKind::ExprStmt, r), expr(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::ExprStmt; }
  ExprPtr expr;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// `BM: i32 = 64` in `<...>`.
struct ConstParam {
  std::string name;
  llvm::SMRange nameRange;
  ScalarKind type = ScalarKind::I32;
  llvm::SMRange typeRange;
  ExprPtr defaultValue; ///< May be null.
};

/// `@div(16)` / `@align(16)` after a runtime parameter's type.
struct Annotation {
  std::string name; ///< "div" or "align"
  llvm::SMRange range;
  ExprPtr value;
};

/// A runtime parameter `x: *f32 @align(16)`.
struct Param {
  std::string name;
  llvm::SMRange nameRange;
  TypeExpr type;
  std::vector<Annotation> annotations;
};

/// `P in [v, ...]` inside `tune`.
struct TuneEntry {
  std::string name;
  llvm::SMRange nameRange;
  std::vector<ExprPtr> values;
};

struct TuneClause {
  llvm::SMRange range;
  std::vector<TuneEntry> entries;
  ExprPtr where; ///< May be null.
  std::vector<std::unique_ptr<IdentExpr>> key; ///< May be empty.
  /// Per key param: how its values are bucketed, "pow2" (the default,
  /// `key (n)`) or "exact" (`key (n: exact)`).
  std::vector<std::string> keyBuckets;
  bool hasKey = false;
};

struct KernelDecl {
  std::string name;
  llvm::SMRange nameRange;
  llvm::SMRange range;
  std::vector<ConstParam> constParams;
  std::vector<Param> params;
  std::vector<ExprPtr> grid; ///< Empty only on error (grid is mandatory).
  llvm::SMRange gridRange;
  std::optional<TuneClause> tune;
  std::unique_ptr<BlockStmt> body;
};

/// `fn name<CONST>(params) -> T { ... }`, always inlined.
struct FnDecl {
  std::string name;
  llvm::SMRange nameRange;
  llvm::SMRange range;
  std::vector<ConstParam> constParams;
  std::vector<Param> params;
  std::optional<TypeExpr> returnType;
  std::unique_ptr<BlockStmt> body;
};

/// A whole .tile file.
struct Module {
  std::vector<std::unique_ptr<KernelDecl>> kernels;
  std::vector<std::unique_ptr<FnDecl>> functions;
};

} // namespace kiln::dsl

#endif // KILN_DSL_AST_H
