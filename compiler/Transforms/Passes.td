//===- Passes.td - Tile-level passes of the kiln dialect ---*- tablegen -*-===//

#ifndef KILN_TRANSFORMS_PASSES
#define KILN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileInlineHelpers : Pass<"tile-inline-helpers", "mlir::ModuleOp"> {
  let summary = "Inline every call to a `fn` helper and erase the helpers";
  let description = [{
    `fn` helpers of the .tile language are always inlined. MLIRGen emits one
    private `func.func` per distinct helper instantiation (marked
    `kiln.helper`); this pass inlines every `func.call` to such a function,
    innermost first, and erases the helpers. A recursive helper is an error.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def TileSpecializeConstParams : Pass<"tile-specialize", "mlir::ModuleOp"> {
  let summary = "Turn each generic kernel into one module per tune variant";
  let description = [{
    A generic kernel (a `func.func` marked `kiln.kernel`) reads its const
    params through `kiln.const_param` and its `kiln.variants` attribute lists
    the pruned tune space (one dictionary of const-param values per variant).
    For every variant, this pass clones the kernel into a nested
    `builtin.module` named `<kernel>_v<index>` carrying the variant as
    `kiln.variant`, replaces each `kiln.const_param` by a constant,
    refines every dynamically shaped tile to its static shape (see
    `tile-refine-shapes`; unused code is checked too, as refinement runs
    before folding), checks the language rules that only static shapes
    show (`dot` dimensions of at least 16), folds and verifies the result.
    The generic kernel is removed. Shape errors that only appear for some
    variant are reported at the op's source location with a note naming the
    variant. Kernels must not call helpers any more (run
    `tile-inline-helpers` first). With `only-variant=N`, only variant N of
    each kernel is kept; no kernel having it is an error.
  }];
  let options = [
    Option<"onlyVariant", "only-variant", "int", /*default=*/"-1",
           "Specialize only this variant index (-1: all)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileRefineShapes : Pass<"tile-refine-shapes", "mlir::func::FuncOp"> {
  let summary = "Refine dynamically shaped tiles whose sizes are now constant";
  let description = [{
    Walks a function in order and gives every tile (ranked tensor) result
    its static shape where the ops' size operands (arange bounds, splat and
    box sizes, ...) are constants, propagating through elementwise ops and
    the region arguments and results of `scf.for`/`scf.if`. Every refined
    dimension must be a power of two. Fails with a located error on a
    mismatch.
  }];
}

def TileExpandFp8 : Pass<"tile-expand-fp8"> {
  let summary = "Compute conversions from and to fp8 on their bit patterns";
  let description = [{
    LLVM has no fp8 types (the LLVM type converter makes them i8), so every
    `arith.extf` from and `arith.truncf` to `f8E4M3FN`/`f8E5M2` becomes
    integer and exact float arithmetic on the bits: round to nearest even,
    saturating to the largest finite value (E5M2 keeps infinities), NaN
    stays NaN. Scalars, vectors and tensors alike. Used by the host pipeline
    and at the end of the GPU stage (so the CPU emulator runs what the GPUs
    run). With `as-i8` (the GPU stage), every fp8 value left (loaded,
    stored, moved between lanes, fed to a matrix instruction, whose name
    says how to read it) then becomes i8, constants their bits, and the
    bitcasts between them vanish: the backends then never meet a type LLVM
    lacks.
  }];
  let options = [
    Option<"asI8", "as-i8", "bool", /*default=*/"false",
           "Afterwards, retype every remaining fp8 value to i8">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // KILN_TRANSFORMS_PASSES
