//===- AxisInfoRules.h - Transfer functions of the axis analysis -*- C++
//-*-===//
//
// Private to compiler/GPU: what the axis analysis (AxisInfo.cpp: the
// lattice, the data-flow analysis, the queries) and its transfer functions
// (AxisInfoRules.cpp: one per op family) share. What a fact means is
// written at the top of AxisInfo.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_AXISINFORULES_H
#define KILN_COMPILER_GPU_AXISINFORULES_H

#include "compiler/GPU/AxisInfo.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

namespace kiln::gpu::axis {

/// The cap of every divisibility.
inline constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

/// The tile shape of `type`; {1} for a scalar.
llvm::SmallVector<int64_t, 3> getTileShape(mlir::Type type);

/// Values whose facts the analysis computes: integer, index, float and
/// pointer scalars and ranked tiles of them. Anything else (views, vectors)
/// keeps the pessimistic fact.
bool isTracked(mlir::Type type);

/// The step between consecutive elements of a run: the pointee size in
/// bytes for pointers, 1 for everything else.
int64_t getStep(mlir::Type type);

/// The bit width of an integer or index element type (at most 64); 0 for
/// anything else.
unsigned getIntegerWidth(mlir::Type type);

/// The divisibility of the elements of `info` whose index along `d` is a
/// multiple of `stride` (a power of two), for runs advancing by `step`:
/// the run starts where runs are no longer than `stride`; inside longer
/// runs, the run start plus a multiple of `stride` steps.
int64_t divisibilityAt(const AxisInfo &info, unsigned d, int64_t stride,
                       int64_t step);

/// The divisibility of every element of `info`: the best bound that any
/// dimension gives.
int64_t divisibilityOfAll(const AxisInfo &info, int64_t step);

/// The fact of the single result of `op` from the facts of its operands
/// (all tracked), before normalization; std::nullopt when no rule knows
/// anything (the result is then pessimistic).
std::optional<AxisInfo> inferAxisInfo(mlir::Operation *op,
                                      llvm::ArrayRef<AxisInfo> operands);

} // namespace kiln::gpu::axis

#endif // KILN_COMPILER_GPU_AXISINFORULES_H
