//===- SemaImpl.h - Internals of semantic analysis -------------*- C++ -*-===//
//
// Private to Sema.cpp and SemaBuiltins.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_SEMAIMPL_H
#define KILN_DSL_SEMAIMPL_H

#include "dsl/Sema.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::dsl {

/// Tile limits of v0.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;
constexpr int64_t kMaxTileRank = 3;

struct Symbol {
  enum class Kind { ConstParam, Param, Local, LoopVar };
  Kind kind = Kind::Local;
  Type type;
  llvm::SMRange declRange;
  bool isMutable = false;
  /// Compile-time value (const params, `let` of a constant expression).
  std::optional<ConstInt> constVal;
};

class Sema::Impl {
public:
  Impl(Sema &owner, DiagnosticEngine &diag, llvm::SourceMgr &sm)
      : owner(owner), diag(diag), sm(sm) {}

  bool checkModule(Module &module);
  bool instantiate(const HelperInstance &inst, bool report, Type *result);

  //===--- declarations ---===//
  void checkKernel(KernelDecl &k);
  void declareConstParams(std::vector<ConstParam> &params, bool isKernel);
  void declareParams(std::vector<Param> &params, bool isKernel);
  void checkGrid(KernelDecl &k);
  void checkTune(KernelDecl &k);
  /// Checks that the tile types of a helper's signature name only its
  /// const params.
  void checkHelperSignature(const FnDecl &fn);
  std::optional<Type> resolveTypeExpr(TypeExpr &t);

  //===--- statements ---===//
  void checkBlock(BlockStmt &b, bool newScope = true);
  void checkStmt(Stmt &s);
  void checkLet(LetStmt &s);
  void checkAssign(AssignStmt &s);
  void checkFor(ForStmt &s);
  void checkIf(IfStmt &s);
  void checkReturn(ReturnStmt &s);

  //===--- expressions ---===//
  Type checkExpr(Expr &e);
  Type checkIdent(IdentExpr &e);
  Type checkUnary(UnaryExpr &e);
  Type checkBinary(BinaryExpr &e);
  /// The rules of a binary operator; `lhs` is the left operand (checked),
  /// `rhs` the right one (checked). Used by `x op= v` too.
  Type combineBinary(BinaryOp op, Expr *lhs, Expr &rhs, llvm::SMLoc opLoc);
  Type checkIndex(IndexExpr &e);
  Type checkCall(CallExpr &e);
  Type checkHelperCall(CallExpr &e, const FnDecl &fn);
  Type checkBuiltin(CallExpr &e, bool &handled);

  //===--- helpers used by builtins ---===//
  /// Gives an untyped literal expression (tree) the element type `k`,
  /// checking that integer literals fit. Returns false after an error.
  bool coerceLiteral(Expr &e, ScalarKind k);
  /// Fixes an untyped literal to its default type (checking the range).
  void finalize(Expr &e);
  /// Unifies the element types of two value operands (literal adaptation,
  /// widening within a class). `what` names the operation for messages.
  std::optional<ScalarKind> unifyElems(Expr &l, Expr &r, llvm::StringRef what,
                                       llvm::SMLoc loc);
  /// numpy broadcasting of two shapes; reports at `loc` on mismatch.
  std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b,
                                       llvm::SMLoc loc,
                                       llvm::ArrayRef<llvm::SMRange> ranges);
  /// A compile-time integer expression (e.g. an axis, a shape entry).
  std::optional<ConstInt> requireConstInt(Expr &e, llvm::StringRef what);
  /// A shape given as a list of constant integers: `[BM, 64]`.
  std::optional<Shape> requireShapeList(Expr &e, llvm::StringRef what);
  /// Checks a tile shape: rank 1..3, known dims powers of two, size limit.
  bool checkTileShape(const Shape &s, llvm::SMRange range, llvm::StringRef what);
  std::optional<ConstInt> constOf(const Expr &e) const;
  void setConst(const Expr &e, ConstInt c) { constInts[&e] = std::move(c); }
  std::optional<int64_t> requireAxis(Expr *axisExpr, const Type &t,
                                     llvm::StringRef what, llvm::SMLoc loc);
  std::string text(llvm::SMRange r) const { return owner.getText(r); }

  //===--- scopes ---===//
  void pushScope() { scopes.emplace_back(); }
  void popScope() { scopes.pop_back(); }
  Symbol *lookup(const std::string &name);
  void declare(const std::string &name, Symbol sym);
  std::vector<std::string> visibleNames() const;

  Sema &owner;
  DiagnosticEngine &diag;
  llvm::SourceMgr &sm;
  std::vector<std::map<std::string, Symbol>> scopes;
  std::map<std::string, FnDecl *> functions;
  std::map<const Expr *, ConstInt> constInts;
  std::map<const CallExpr *, size_t> callInstances;
  std::vector<const FnDecl *> instStack;
  /// Helpers whose body has been checked at least once (for some instance).
  std::set<const FnDecl *> checkedHelpers;
  /// Helpers whose signature is wrong (calls to them are not checked).
  std::set<const FnDecl *> badSignatures;

  // The declaration being checked.
  KernelDecl *curKernel = nullptr;
  const FnDecl *curFn = nullptr;
  std::optional<Type> curReturnType; ///< Helpers: declared or first seen.
  bool curReturnSeen = false;
  Type lastInstanceResult;
  int loopDepth = 0;
  int blockDepth = 0;
};

} // namespace kiln::dsl

#endif // KILN_DSL_SEMAIMPL_H
