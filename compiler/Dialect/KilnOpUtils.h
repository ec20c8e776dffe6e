//===- KilnOpUtils.h - Verification helpers of kiln ops ---------*- C++ -*-===//
//
// Private to compiler/Dialect: helpers shared by the op verifiers of
// KilnOps.cpp, KilnMemoryOps.cpp and KilnComputeOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILNOPUTILS_H
#define KILN_DIALECT_KILNOPUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace kiln::opcheck {

/// Checks the dynamic-size operands of an op whose result tile is `type`:
/// one per `?` dimension, and every static or constant size a positive power
/// of two.
llvm::LogicalResult verifyTileSizes(mlir::Operation *op,
                                    mlir::RankedTensorType type,
                                    mlir::ValueRange dynSizes);

/// True when the two dimensions may be equal (either is `?`, or both equal).
bool dimsCompatible(int64_t lhs, int64_t rhs);

/// Same rank and compatible dimensions.
bool shapesCompatible(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

} // namespace kiln::opcheck

#endif // KILN_DIALECT_KILNOPUTILS_H
