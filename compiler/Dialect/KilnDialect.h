//===- KilnDialect.h - The kiln dialect -------------------------*- C++ -*-===//
//
// The one public header of the kiln dialect: the dialect, its types
// (`!kiln.ptr<T>`, `!kiln.view<T, N>`), enums and ops, and small helpers on
// pointer-like and tile types.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILNDIALECT_H
#define KILN_DIALECT_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

#include "compiler/Dialect/KilnDialect.h.inc"
#include "compiler/Dialect/KilnEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/Dialect/KilnTypes.h.inc"

namespace kiln {

/// The element type of a shaped type, or the type itself.
using mlir::getElementTypeOrSelf;

/// True for a tile: a ranked tensor (of rank 1 to 3 where ops verify).
bool isTile(mlir::Type type);

/// `T` for `!kiln.ptr<T>` or a tile of `!kiln.ptr<T>`; null for any other
/// type.
mlir::Type getPointeeType(mlir::Type ptrOrTileOfPtr);

/// The type that a load through `ptrLike` yields: `T` for `!kiln.ptr<T>`,
/// `tensor<SxT>` for `tensor<Sx!kiln.ptr<T>>` (same encoding); null when
/// `ptrLike` is not a pointer or a tile of pointers.
mlir::Type getPointeeTypeSameShape(mlir::Type ptrLike);

/// `elementType` in the shape of `type`: `elementType` itself when `type` is
/// a scalar, the tile (or vector) of `elementType` of the same shape (and
/// encoding) when it is a tile (or vector).
mlir::Type getTypeSameShape(mlir::Type type, mlir::Type elementType);

/// `i1` or a tile of `i1` in the shape of `type` (the type of a mask).
mlir::Type getI1SameShape(mlir::Type type);

/// The pointer type to the elements of `valueType`, in its shape:
/// `!kiln.ptr<f32>` for `f32`, `tensor<128x!kiln.ptr<f32>>` for
/// `tensor<128xf32>`.
mlir::Type getPointerTypeSameShape(mlir::Type valueType);

/// The integer value of `value` when it is defined by a constant (an
/// `arith.constant` or anything that folds to an integer attribute).
std::optional<int64_t> getConstantInt(mlir::Value value);

/// The shape of `type` as far as it is known: each dynamic (`?`) dimension
/// is replaced by the value of the matching dynamic-size operand (one per
/// `?` dimension, in order) when that operand is a constant, and stays
/// `ShapedType::kDynamic` otherwise. `dynSizes` may be shorter than the
/// number of `?` dimensions (the remaining ones stay dynamic).
llvm::SmallVector<int64_t> getKnownShape(mlir::RankedTensorType type,
                                         mlir::ValueRange dynSizes);

/// Clones the combining region of a `kiln.reduce` or `kiln.scan` at the
/// builder's insertion point with `acc` and `fresh` (N values each) as its
/// 2N arguments; returns the N combined values.
llvm::SmallVector<mlir::Value> cloneCombiner(mlir::OpBuilder &b,
                                             mlir::Region &combiner,
                                             mlir::ValueRange acc,
                                             mlir::ValueRange fresh);

/// `x` (an f32 scalar, tensor or vector) rounded to tf32: 10 explicit
/// mantissa bits, to nearest even; infinities and NaNs pass unchanged. What
/// `dot(..., precision = "tf32")` does to its operands on every target.
mlir::Value buildRoundToTF32(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value x);

/// `64x?x32`-style text of a shape, for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// "file:line:col" of a location (through call sites, names and fused
/// locations), or "" when it has none: what runtime reports name.
std::string locationText(mlir::Location loc);

/// What a failed `kiln.assert` reports on every backend:
/// "file:line:col: assertion failed[: message]".
std::string assertionText(mlir::Location loc, llvm::StringRef message);

} // namespace kiln

#define GET_OP_CLASSES
#include "compiler/Dialect/KilnOps.h.inc"

#endif // KILN_DIALECT_KILNDIALECT_H
