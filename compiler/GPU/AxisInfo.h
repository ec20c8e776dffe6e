//===- AxisInfo.h - Contiguity, divisibility and constancy ------*- C++ -*-===//
//
// The axis analysis of the GPU stage. For every integer or pointer value
// (scalar or tile) of a specialized kernel it computes, per tile dimension:
//
//   contiguity[d]   the length of the runs of consecutive values along d
//                   (x, x+1, x+2, ... for integers; consecutive elements for
//                   pointers), each run starting at an index that is a
//                   multiple of its length;
//   divisibility[d] the largest power of two known to divide the first
//                   value of every such run (for pointers: in bytes; the
//                   address alignment), capped at 2^30;
//   constancy[d]    the length of the runs of equal values along d (a mask
//                   constant over 4 elements lets a 4-wide access share it).
//
// All three are powers of two. A load through pointers whose contiguity is
// 8 and whose divisibility is 16 bytes may move 16 bytes at once: ask
// getVectorizableElements, which combines the three.
//
// A scalar is treated as a tile of rank 1 and size 1 (contiguity 1,
// constancy 1). Facts come from `kiln.arange`, constants, `kiln.splat`,
// `kiln.broadcast`, `kiln.expand_dims`, `kiln.trans`, `kiln.reshape`, the
// kernel's `kiln.div` / `kiln.align` argument attributes (from `@div(N)` /
// `@align(N)`, and the fast-path assumptions the compiler adds per variant;
// a pointer is at least aligned to its element size), `kiln.addptr`,
// integer arithmetic, casts, comparisons, selects and `scf.for`/`scf.if`
// region values (a fixpoint over loops). Anything else is pessimistic. A
// view has no facts of its own: the alignment of its base and the
// divisibility of its strides are those of the operands of its
// `kiln.make_view`.
//
// Integer facts hold in the wrapping arithmetic of their type. Pointer
// contiguity (and that of integers widened from 32 bits or more) assumes,
// as Triton does, that offsets do not wrap around inside a run; the width
// that getVectorizableElements returns needs no such assumption. The rules
// and their proofs: AxisInfoRules.cpp; docs/codegen-gpu.md.
//
// Passes ask it through AxisInfoAnalysis::lookup; `tile-gpu-test-axis-info`
// prints it for lit tests. The facts describe the IR as it was analyzed:
// rerun the analysis after changing it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_AXISINFO_H
#define KILN_COMPILER_GPU_AXISINFO_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace kiln::gpu {

/// What is known of one value. All vectors have one entry per dimension of
/// the value's tile (1 for a scalar).
struct AxisInfo {
  llvm::SmallVector<int64_t, 3> contiguity;
  llvm::SmallVector<int64_t, 3> divisibility;
  llvm::SmallVector<int64_t, 3> constancy;
  /// Set when every element is this one integer.
  std::optional<int64_t> constantValue;

  unsigned getRank() const { return contiguity.size(); }
  /// The pessimistic fact for a value of `rank` dimensions: runs of 1,
  /// divisibility 1, no constant.
  static AxisInfo getPessimistic(unsigned rank);
  bool operator==(const AxisInfo &other) const;
};

/// Runs the analysis over every function under `root` when constructed.
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(mlir::Operation *root);
  ~AxisInfoAnalysis();

  /// The fact for `value`, or the pessimistic one if the analysis knows
  /// nothing of it (non-integer values, unreachable code).
  AxisInfo lookup(mlir::Value value) const;

  /// Convenience for a tile of pointers or integers accessed along `dim`:
  /// how many consecutive elements one access may cover (the contiguity
  /// along `dim`, limited by the divisibility of the run's start in
  /// elements and by the constancy of `mask`, when given): a power of two,
  /// at least 1. Each aligned group of that many elements is consecutive
  /// in memory and starts aligned to its size in bytes.
  int64_t getVectorizableElements(mlir::Value ptrOrOffsets, unsigned dim,
                                  mlir::Value mask = {}) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_AXISINFO_H
