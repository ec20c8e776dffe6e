//===- MLIRGenImpl.h - Internals of MLIRGen --------------------*- C++ -*-===//
#ifndef KILN_COMPILER_MLIRGEN_MLIRGENIMPL_H
#define KILN_COMPILER_MLIRGEN_MLIRGENIMPL_H

#include "compiler/MLIRGen/MLIRGen.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// The declared type of the `i`-th const param that `inst` binds (helper
/// const params are passed as trailing scalar arguments).
dsl::ScalarKind helperConstParamKind(const dsl::HelperInstance &inst, size_t i);

class MLIRGen {
public:
  MLIRGen(mlir::MLIRContext &ctx, dsl::Sema &sema, llvm::SourceMgr &sm)
      : ctx(ctx), builder(&ctx), sema(sema), sm(sm) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(dsl::Module &module,
                                        llvm::ArrayRef<KernelToEmit> kernels);

  //===--- types and locations ---===//
  mlir::Location loc(llvm::SMLoc l);
  mlir::Type scalarType(dsl::ScalarKind k);
  mlir::Type toMLIR(const dsl::Type &t);
  mlir::RankedTensorType tileType(const dsl::Shape &shape, mlir::Type elem);

  //===--- declarations and statements (MLIRGen.cpp) ---===//
  void emitKernel(const KernelToEmit &k);
  void emitHelper(const dsl::HelperInstance &inst);
  void emitStmt(const dsl::Stmt &s);
  void emitLet(const dsl::LetStmt &s);
  /// Converts (and broadcasts) `v` of language type `t` to a declared type;
  /// `t` becomes the declared type.
  mlir::Value coerceToDeclared(mlir::Value v, dsl::Type &t,
                               const dsl::TypeExpr &te, mlir::Location l);
  void emitAssign(const dsl::AssignStmt &s);
  void emitFor(const dsl::ForStmt &s);
  void emitIf(const dsl::IfStmt &s);
  /// Emits stmts[i..] and then the pending continuations (see emitSeq).
  struct Continuation {
    llvm::ArrayRef<dsl::StmtPtr> stmts;
    size_t next;
    size_t scopeDepth;
  };
  void emitSeq(llvm::ArrayRef<dsl::StmtPtr> stmts, size_t i,
               std::vector<Continuation> cont);

  //===--- expressions (MLIRGenExpr.cpp) ---===//
  mlir::Value emitExpr(const dsl::Expr &e);
  mlir::Value emitUnary(const dsl::UnaryExpr &e);
  mlir::Value emitBinary(const dsl::BinaryExpr &e);
  mlir::Value emitBinaryOp(dsl::BinaryOp op, mlir::Value l, const dsl::Type &lt,
                           mlir::Value r, const dsl::Type &rt,
                           const dsl::Type &result, mlir::Location loc);
  mlir::Value emitCall(const dsl::CallExpr &e);
  mlir::Value emitHelperCall(const dsl::CallExpr &e,
                             const dsl::HelperInstance &inst);
  mlir::Value emitBuiltin(const dsl::CallExpr &e);
  mlir::Value emitReduction(const dsl::CallExpr &e, llvm::StringRef name);
  mlir::Value emitScan(const dsl::CallExpr &e, llvm::StringRef name);

  //===--- building blocks ---===//
  /// An integer (32 or 64 bits, scalar or tile) as f32 rounded to odd:
  /// truncated, the last kept bit set when inexact, so that rounding it to
  /// a narrower float (bf16) rounds once.
  mlir::Value intToF32RoundedToOdd(mlir::Value v, bool isSigned,
                                   mlir::Location loc);
  /// Converts a value of element kind `from` to element kind `to`
  /// (language `cast` semantics).
  mlir::Value convert(mlir::Value v, dsl::ScalarKind from, dsl::ScalarKind to,
                      mlir::Location loc);
  /// Broadcasts `v` (scalar or tile, language type `t`) to the shape of
  /// `target`; `refs` supply the dynamic sizes of `target`, then
  /// `explicitSizes` (one per `?` that no ref covers, in order).
  mlir::Value broadcastTo(mlir::Value v, const dsl::Type &t,
                          const dsl::Shape &target,
                          llvm::ArrayRef<mlir::Value> refs, mlir::Location loc,
                          llvm::ArrayRef<mlir::Value> explicitSizes = {});
  /// Converts and broadcasts `v` to the language type `target`.
  mlir::Value coerce(mlir::Value v, const dsl::Type &t, const dsl::Type &target,
                     llvm::ArrayRef<mlir::Value> refs, mlir::Location loc,
                     llvm::ArrayRef<mlir::Value> explicitSizes = {});
  /// i32 value of dimension `d` of tile `v`.
  mlir::Value dimValue(mlir::Value v, unsigned d, mlir::Location loc);
  /// Dynamic-size operands for `type` taken from `refs` (tiles whose shape
  /// covers the dynamic dims, right-aligned) or from `explicitSizes`.
  llvm::SmallVector<mlir::Value> dynSizes(mlir::RankedTensorType type,
                                          llvm::ArrayRef<mlir::Value> refs,
                                          llvm::ArrayRef<mlir::Value> explicitSizes,
                                          mlir::Location loc);
  /// A scalar constant.
  mlir::Value constant(mlir::Type type, double fv, int64_t iv,
                       mlir::Location loc);
  mlir::Value intConst(int64_t v, mlir::Type type, mlir::Location loc);
  /// `c` splat in the shape of `like` (or `c` itself when `like` is scalar).
  mlir::Value splatLike(mlir::Value c, mlir::Value like, mlir::Location loc);
  /// Values of a shape list (one i32 per entry).
  llvm::SmallVector<mlir::Value> emitList(const dsl::Expr &list);
  /// Values of a view offset list, as i32 or i64.
  llvm::SmallVector<mlir::Value> emitViewOffsets(const dsl::Expr &list);

  //===--- environment ---===//
  /// A name's current SSA value and its language type.
  struct Var {
    mlir::Value value;
    dsl::Type type;
  };
  void pushScope() { env.emplace_back(); }
  void popScope() { env.pop_back(); }
  void bind(const std::string &name, mlir::Value v, const dsl::Type &t) {
    env.back()[name] = Var{v, t};
  }
  Var *lookup(const std::string &name);
  /// Rebinds an existing name at the level where it is declared.
  void assign(const std::string &name, mlir::Value v);
  /// The names (declared outside `s`) that `s` assigns, in first-assignment
  /// order, with the scope level of their declaration.
  std::vector<std::pair<std::string, size_t>>
  assignedOuterVars(llvm::ArrayRef<const dsl::Stmt *> stmts);
  std::optional<size_t> levelOf(const std::string &name);

  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  dsl::Sema &sema;
  llvm::SourceMgr &sm;
  mlir::ModuleOp module;
  mlir::StringAttr fileName;
  std::vector<std::map<std::string, Var>> env;
  /// Set once a statement fails; emission stops.
  bool failed = false;
  /// True while emitting a helper body.
  bool inHelper = false;
  mlir::Value helperResult;
  /// The declared result type of the helper being emitted (may be null).
  const dsl::TypeExpr *helperReturnType = nullptr;
};

} // namespace kiln

#endif // KILN_COMPILER_MLIRGEN_MLIRGENIMPL_H
