//===- Passes.h - Tile-level passes of the kiln dialect --------*- C++ -*-===//
#ifndef KILN_COMPILER_TRANSFORMS_PASSES_H
#define KILN_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

/// Gives every tile of `f` its static shape where the sizes it depends on
/// are constants (see tile-refine-shapes). `context` (e.g. "in variant
/// BLOCK=128") is attached as a note to every error. Fails after reporting.
mlir::LogicalResult refineShapes(mlir::func::FuncOp f, llvm::StringRef context);

/// Greedy canonicalization of `op` with the patterns of every loaded
/// dialect and op (the upstream canonicalizer's pattern set).
mlir::LogicalResult canonicalize(mlir::Operation *op);

/// The patterns of tile-expand-fp8: fp8 conversions on bit patterns.
void populateExpandFp8Patterns(mlir::RewritePatternSet &patterns);

/// The integer type that carries fp8 bits where LLVM needs a type: i8 for
/// f8E4M3FN/f8E5M2, the same shape of i8 for a ranked shaped type of them;
/// null for everything else.
mlir::Type getFp8Carrier(mlir::Type t);

/// The tile-level pipeline of `kiln compile`: inline helpers, specialize
/// each tune variant, canonicalize + CSE.
void buildTilePipeline(mlir::OpPassManager &pm);

} // namespace kiln

#endif // KILN_COMPILER_TRANSFORMS_PASSES_H
