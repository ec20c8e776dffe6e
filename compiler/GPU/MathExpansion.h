//===- MathExpansion.h - Math functions as arithmetic, for GPUs -*- C++ -*-===//
//
// The math functions a GPU backend has no instruction for, expanded into
// arithmetic within docs/language.md section 9.4 wherever MLIR's own
// approximations are not (both GPU backends use these, ahead of MLIR's).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_MATHEXPANSION_H
#define KILN_COMPILER_GPU_MATHEXPANSION_H

#include "mlir/IR/PatternMatch.h"

namespace kiln::gpu {

/// f32 `math.sin` and `math.cos` (scalars and vectors): reduction by pi/2 in
/// three parts with fused multiply-adds (exact enough for |x| far beyond
/// 1000: MLIR's one-constant reduction loses |x| * 2^-24 of absolute
/// accuracy, 2e-6 at x = 60), then Taylor polynomials on [-pi/4, pi/4] and
/// the quadrant's sign and swap. Added with `benefit` so that they win over
/// MLIR's polynomial approximations in the same pattern set.
void populateTrigExpansionPatterns(mlir::RewritePatternSet &patterns,
                                   unsigned benefit = 2);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_MATHEXPANSION_H
