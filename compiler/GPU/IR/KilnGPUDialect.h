//===- KilnGPUDialect.h - The kiln_gpu dialect ------------------*- C++ -*-===//
//
// The one public header of the kiln_gpu dialect: layout encodings, the
// shared-buffer type, the layout conversion and the per-thread primitives.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_IR_KILNGPUDIALECT_H
#define KILN_COMPILER_GPU_IR_KILNGPUDIALECT_H

#include "compiler/GPU/LinearLayout.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/GPU/IR/KilnGPUDialect.h.inc"
#include "compiler/GPU/IR/KilnGPUEnums.h.inc"
#include "compiler/GPU/IR/KilnGPUAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/GPU/IR/KilnGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/GPU/IR/KilnGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "compiler/GPU/IR/KilnGPUOps.h.inc"

namespace kiln::gpu {

/// The distributed layout of a tile type, or null when it has none.
DistributedLayoutAttr getLayout(mlir::Type type);

/// The linear layout of a tile whose encoding is a distributed layout.
LinearLayout getLinearLayout(mlir::RankedTensorType type);

/// Registers each thread holds of a tile of this type.
int64_t getRegistersPerThread(mlir::RankedTensorType type);

/// The blocked layout the stage uses by default for a tile of `shape`:
/// one element per thread, lanes along the last dimension first, warps
/// along the first.
BlockedAttr getDefaultBlockedLayout(mlir::MLIRContext *ctx,
                                    llvm::ArrayRef<int64_t> shape,
                                    int32_t warpSize, int32_t numWarps);

/// A blocked layout for coalesced accesses of `shape`: `vector` consecutive
/// elements per thread along `order[0]`, lanes then warps filling the
/// dimensions in `order` (fastest first).
BlockedAttr getCoalescedLayout(mlir::MLIRContext *ctx,
                               llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<unsigned> order, int32_t vector,
                               int32_t warpSize, int32_t numWarps);

/// The layout of a tile of `shape` in shared memory: a map from `offset`
/// (in elements) to the tile's coordinates, bijective. The dimensions in
/// `order` (fastest first; empty: row-major, the last dimension fastest),
/// except that the 16-byte chunks of a row (the fastest dimension; rows
/// are the second-fastest) are XOR-swizzled with the row's low bits (rows
/// that share a 128-byte bank line share a phase), so that the threads
/// reading one column — or eight rows of 16 bytes, as a matrix load does —
/// hit different banks; and rows longer than 128 bytes are stored as
/// 128-byte wide columns of the tile, one after the other (each column all
/// rows deep). The swizzles are then those of the wgmma matrix
/// descriptors (128, 64 and 32 bytes), whose canonical layouts these are.
LinearLayout getSharedLayout(llvm::ArrayRef<int32_t> shape, int64_t elemBytes,
                             llvm::ArrayRef<unsigned> order = {});

/// `type` with the encoding `layout`.
mlir::RankedTensorType withLayout(mlir::RankedTensorType type,
                                  mlir::Attribute layout);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_IR_KILNGPUDIALECT_H
