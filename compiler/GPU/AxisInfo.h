//===- AxisInfo.h - Contiguity, divisibility and constancy ------*- C++ -*-===//
//
// The axis analysis of the GPU stage. For every integer or pointer value
// (scalar or tile) of a specialized kernel it computes, per tile dimension:
//
//   contiguity[d]   the length of the runs of consecutive values along d
//                   (x, x+1, x+2, ... for integers; consecutive elements for
//                   pointers): a load through a tile of pointers whose
//                   innermost contiguity is 4 can move 4 elements at once;
//   divisibility[d] the largest power of two known to divide the first
//                   value of every such run (for pointers: in bytes; the
//                   address alignment), capped at 2^30;
//   constancy[d]    the length of the runs of equal values along d (a mask
//                   constant over 4 elements lets a 4-wide access share it).
//
// A scalar is treated as a tile of rank 1 and size 1 (contiguity 1,
// constancy 1). Facts come from `kiln.arange`, constants, `kiln.splat`,
// `kiln.broadcast`, `kiln.expand_dims`, the kernel's `kiln.div` /
// `kiln.align` argument attributes (from `@div(N)` / `@align(N)`, and the
// fast-path assumptions the compiler adds per variant), `kiln.addptr`,
// integer arithmetic, comparisons, selects and `scf.for`/`scf.if` region
// values (a fixpoint over loops). Views contribute the alignment of their
// base and the divisibility of their strides through `kiln.make_view`.
//
// Passes ask it through AxisInfoAnalysis::lookup; `tile-gpu-test-axis-info`
// prints it for lit tests.
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
  /// elements and by the constancy of `mask`, when given).
  int64_t getVectorizableElements(mlir::Value ptrOrOffsets, unsigned dim,
                                  mlir::Value mask = {}) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_AXISINFO_H
