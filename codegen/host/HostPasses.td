//===- HostPasses.td - Passes of the host backend ---------*- tablegen -*-===//

#ifndef KILN_CODEGEN_HOST_PASSES
#define KILN_CODEGEN_HOST_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToHost : Pass<"convert-tile-to-host", "mlir::ModuleOp"> {
  let summary = "Lower specialized kiln IR to tensor/linalg/scf/llvm for the CPU";
  let description = [{
    Runs on a module holding specialized kernels (static shapes, no
    `kiln.const_param`). Pointers become 64-bit addresses (i64, and tiles
    of i64), views become `!llvm.struct<(i64, array<R x i64>, array<R x
    i64>)>` (base, sizes, strides). Tile-producing kiln ops become
    `tensor.generate`, `linalg.matmul` or loop nests with tensor
    iter_args; memory ops become `llvm.load`/`llvm.store`/`llvm.atomicrmw`
    guarded by `scf.if` on their masks and bounds; `print` and `assert`
    call back into the runtime through the `KilnHostProgram` of
    runtime/include/kiln/host_abi.h. `arith`/`math` on tensors are left for
    `convert-elementwise-to-linalg`. Each kernel gets a C entry point
    `void <entry>(void **args, const KilnHostProgram *program)`.
  }];
  let options = [
    Option<"entrySuffix", "entry-suffix", "std::string", /*default=*/"\"\"",
           "Entry symbol = kernel name + this suffix (e.g. _v3)">,
    Option<"checkBounds", "check-bounds", "bool", /*default=*/"false",
           "Checked mode: ask the runtime before every access (also on when "
           "the module has `kiln.check_bounds`)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect", "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
  ];
}

def KilnHostLegalizeFloats : Pass<"kiln-host-legalize-floats"> {
  let summary = "Make host float code exact without libgcc: f16 conversions, min/max";
  let description = [{
    The portable host baselines (x86-64-v2, generic aarch64 without FP16)
    have no f16 conversion instructions, and LLVM would call
    `__extendhfsf2` / `__truncsfhf2` from libgcc, which a host code object
    must not depend on. This pass rewrites scalar `arith.extf` from f16 and
    `arith.truncf` to f16 (and f16 <-> integer conversions, through f32)
    into bit manipulation: exact widening, round-to-nearest-even
    narrowing with overflow to infinity, subnormals kept, NaN stays NaN.
    Run it after `arith-emulate-unsupported-floats` has moved f16
    arithmetic to f32.

    It also turns scalar `arith.maximumf` / `arith.minimumf` into
    `llvm.intr.maximum` / `llvm.intr.minimum` before `arith-expand` sees
    them: that pass's expansion (compare and select) ignores signed zero,
    so `maximum(0.0, -0.0)` would be `-0.0`; the intrinsics have the
    language's semantics (NaN-propagating, -0.0 < 0.0).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnHostHalfAsI16 : Pass<"kiln-host-half-as-i16", "mlir::ModuleOp"> {
  let summary = "Carry f16/bf16 values as i16 in the LLVM dialect";
  let description = [{
    Runs on LLVM-dialect IR in which all f16/bf16 arithmetic has already
    been expanded (values are only loaded, stored, selected and passed
    around). It retypes every remaining f16/bf16 value, block argument,
    function signature and constant to i16 and drops the then-trivial
    bitcasts, so that LLVM's backend never promotes a half-precision value
    through float (which, on baselines without F16C/AVX512-BF16, calls
    libgcc's __truncsfbf2 / __truncsfhf2). Vectors of them become vectors
    of i16. With `bf16-only`, f16 values stay (the emulator keeps f16
    arithmetic, which LLVM computes through libgcc's f16 conversions).
  }];
  let options = [
    Option<"bf16Only", "bf16-only", "bool", /*default=*/"false",
           "Retype only bf16 (f16 arithmetic may remain)">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CODEGEN_HOST_PASSES
