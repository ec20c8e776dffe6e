//===- HostLowering.h - Shared pieces of convert-tile-to-host --*- C++ -*-===//
//
// Private to codegen/host: the type converter, the pattern base class and
// the IR-building helpers shared by the lowering files
// (ConvertTileToHost.cpp: shape and compute ops and the pass;
// HostMemoryLowering.cpp: memory, atomics, print and assert).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_HOSTLOWERING_H
#define KILN_CODEGEN_HOST_HOSTLOWERING_H

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>
#include <string>

namespace kiln::host {

/// Size in bytes of one element of `t` in memory.
int64_t byteSize(mlir::Type t);
mlir::Value i64Const(mlir::OpBuilder &b, mlir::Location l, int64_t v);
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location l, int64_t v);
/// Sign-extends (or truncates) an integer to i64; index goes through a cast.
mlir::Value toI64(mlir::OpBuilder &b, mlir::Location l, mlir::Value v);
mlir::Value addrToPtr(mlir::OpBuilder &b, mlir::Location l, mlir::Value addr);
/// The checked mode (`kiln.check_bounds` on the module): every access that
/// its mask lets through first asks the runtime whether the memory is valid
/// (KilnHostProgram::check) and is skipped when it is not.
struct AccessCheck {
  mlir::Value program;  ///< The kernel's KilnHostProgram pointer.
  std::string where;    ///< "file:line:col" of the kiln op.
  mlir::ModuleOp module;
  /// i1: the runtime's verdict on [addr, addr + bytes).
  mlir::Value emit(mlir::OpBuilder &b, mlir::Location l, mlir::Value addr,
                   int64_t bytes, bool isStore) const;
};
/// The check for `op` when its module is in checked mode, else none.
std::optional<AccessCheck> accessCheckFor(mlir::Operation *op);

/// Runs `access` when `cond` (null: always) holds and, in checked mode, the
/// runtime accepts [addr, addr + bytes); else yields `otherwise` (null for
/// accesses without a result).
mlir::Value guardedAccess(
    mlir::OpBuilder &b, mlir::Location l, mlir::Value cond, mlir::Value addr,
    int64_t bytes, bool isStore, const std::optional<AccessCheck> &check, mlir::Value otherwise,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location)> access);
/// A scalar load of `elem` at `addr`, or `other` (zero if null) when
/// `cond` (null: always load) is false or the access check fails.
mlir::Value guardedLoad(mlir::OpBuilder &b, mlir::Location l, mlir::Type elem,
                        mlir::Value addr, mlir::Value cond, mlir::Value other,
                        const std::optional<AccessCheck> &check = std::nullopt);
/// A scalar store guarded by `cond` (may be null) and the access check.
void guardedStore(mlir::OpBuilder &b, mlir::Location l, mlir::Value value,
                  mlir::Value addr, mlir::Value cond,
                  const std::optional<AccessCheck> &check = std::nullopt);
/// The element at `idx` of `v` if it is a tensor, else `v`.
mlir::Value elementAt(mlir::OpBuilder &b, mlir::Location l, mlir::Value v,
                      mlir::ValueRange idx);
/// `tensor.generate` of `type` whose element at `idx` is `body(...)`.
mlir::Value generate(
    mlir::OpBuilder &b, mlir::Location l, mlir::RankedTensorType type,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);
/// A row-major loop nest over `shape` carrying `inits`.
mlir::scf::LoopNest loopNestOver(
    mlir::OpBuilder &b, mlir::Location l, llvm::ArrayRef<int64_t> shape,
    mlir::ValueRange inits,
    llvm::function_ref<mlir::scf::ValueVector(mlir::OpBuilder &, mlir::Location,
                                              mlir::ValueRange, mlir::ValueRange)>
        body);
/// Runs `body` for every index of `shape` (row-major loop nest).
void forEachIndex(
    mlir::OpBuilder &b, mlir::Location l, llvm::ArrayRef<int64_t> shape,
    llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);
/// A tensor of `type` built by a loop nest inserting `body(...)` per index.
mlir::Value buildByLoops(
    mlir::OpBuilder &b, mlir::Location l, mlir::RankedTensorType type,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);
/// Applies `body` to the scalar operands: directly when `resultType` is a
/// scalar, else per element (tile operands are read at each index, null and
/// scalar operands passed as they are), building the result tile.
mlir::Value mapElements(
    mlir::OpBuilder &b, mlir::Location l, mlir::Type resultType,
    mlir::ValueRange operands,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);
/// Address of element `idx` (+ `offsets`) of a converted view, and whether
/// it is inside the view.
std::pair<mlir::Value, mlir::Value>
viewAddress(mlir::OpBuilder &b, mlir::Location l, mlir::Value view,
            mlir::ValueRange offsets, mlir::ValueRange idx, mlir::Type elem);
/// Loads the KilnHostProgram field at byte `offset` as `type`.
mlir::Value programField(mlir::OpBuilder &b, mlir::Location l,
                         mlir::Value program, int64_t offset, mlir::Type type);
/// Calls the KilnHostProgram callback at byte `offset` (of C type `type`,
/// whose first parameter is the runtime state) as
/// `callback(program->runtime, args...)`; returns its result, if any.
mlir::Value callProgramCallback(mlir::OpBuilder &b, mlir::Location l,
                                mlir::Value program, int64_t offset,
                                mlir::LLVM::LLVMFunctionType type,
                                mlir::ValueRange args);
/// Address of a private constant global holding `text` (NUL-terminated).
mlir::Value stringConstant(mlir::OpBuilder &b, mlir::Location l,
                           mlir::ModuleOp module, llvm::StringRef text);
/// An internal `llvm.func` created on first use (see the definition).
mlir::LLVM::LLVMFuncOp getOrCreateHelper(
    mlir::ModuleOp module, llvm::StringRef name,
    mlir::LLVM::LLVMFunctionType type,
    llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);
std::string typeSuffix(mlir::Type t);
/// The host_abi.h scalar kind code of an element type.
int32_t scalarKindCode(mlir::Type t);
/// The `KilnHostProgram *` argument of the kernel enclosing `op`.
mlir::Value programArg(mlir::Operation *op);


class HostTypeConverter : public mlir::TypeConverter {
public:
  explicit HostTypeConverter(mlir::MLIRContext *ctx) {
    using namespace mlir;
    addConversion([](Type t) { return t; });
    addConversion([ctx](PointerType) -> Type { return IntegerType::get(ctx, 64); });
    addConversion([ctx](RankedTensorType t) -> Type {
      if (isa<PointerType>(t.getElementType()))
        return RankedTensorType::get(t.getShape(), IntegerType::get(ctx, 64));
      return t;
    });
    addConversion([ctx](ViewType t) -> Type {
      Type i64 = IntegerType::get(ctx, 64);
      Type arr = LLVM::LLVMArrayType::get(i64, t.getRank());
      return LLVM::LLVMStructType::getLiteral(ctx, {i64, arr, arr});
    });
    auto materialize = [](OpBuilder &b, Type type, ValueRange inputs,
                          Location l) -> Value {
      return UnrealizedConversionCastOp::create(b, l, type, inputs).getResult(0);
    };
    addSourceMaterialization(materialize);
    addTargetMaterialization(materialize);
  }
};

template <typename Op>
struct HostPattern : mlir::OpConversionPattern<Op> {
  using mlir::OpConversionPattern<Op>::OpConversionPattern;
  mlir::RankedTensorType convertedTensor(mlir::Type t) const {
    return mlir::cast<mlir::RankedTensorType>(this->getTypeConverter()->convertType(t));
  }
};

void populateHostMemoryPatterns(HostTypeConverter &converter,
                                mlir::RewritePatternSet &patterns);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_HOSTLOWERING_H
