//===- MathExpansion.h - Math functions as arithmetic, for GPUs -*- C++ -*-===//
//
// The math functions a GPU backend has no instruction for, expanded into
// arithmetic within docs/language.md section 9.4 wherever MLIR's own
// approximations are not (both GPU backends use these, ahead of MLIR's).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_MATHEXPANSION_H
#define KILN_COMPILER_GPU_MATHEXPANSION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::gpu {

/// Kiln's own expansions into arithmetic (fused multiply-adds, IEEE
/// arithmetic, roundeven/floor, integer bit operations), scalars and
/// vectors, added with `benefit` so that they win over MLIR's polynomial
/// approximations in the same pattern set:
/// - `math.sin` and `math.cos` on f32 and f64: reduction by pi/2 in three
///   parts with fused multiply-adds (MLIR's one-constant reduction loses
///   |x| * 2^-24 of absolute accuracy, 2e-6 at x = 60), Taylor polynomials
///   on [-pi/4, pi/4], the quadrant's sign and swap;
/// - on f64, `math.exp`, `exp2`, `log`, `log2`, `tanh` and `erf` (MLIR has
///   no f64 approximations; NVIDIA's libdevice and AMD's ocml are not
///   used): within a few ulps, docs/codegen-gpu.md "Math";
/// - `arith.remf` (C's fmod, exact) on every float type: a loop per
///   element taking up to 50 (f64) or 18 (f32) quotient bits a round.
/// Code without a device library, the same on every GPU target and on the
/// emulator.
void populateMathExpansionPatterns(mlir::RewritePatternSet &patterns,
                                   unsigned benefit = 2);

/// The math of a GPU backend's per-thread form, without device libraries:
/// `addBackendPatterns` first (the backend's own instructions, e.g. NVIDIA's
/// ex2), then populateMathExpansionPatterns, f16/bf16 functions
/// in f32, MLIR's expansions (pow, tan, hyperbolics, ...) and polynomial
/// approximations for every function that is neither always an instruction
/// (sqrt, rsqrt, fma, abs, floor, ceil) nor one of `native` (function
/// names the backend's LLVM target expands itself, e.g. "exp2"). What is
/// left must be an instruction; anything else is an error "'math.X' on T
/// is not supported by the `backend` backend yet (it would need
/// `library`)".
mlir::LogicalResult
lowerGPUMath(mlir::ModuleOp module, llvm::ArrayRef<llvm::StringRef> native,
             llvm::StringRef backend, llvm::StringRef library,
             llvm::function_ref<void(mlir::RewritePatternSet &)>
                 addBackendPatterns);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_MATHEXPANSION_H
