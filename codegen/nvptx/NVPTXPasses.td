//===- NVPTXPasses.td - Passes of the NVIDIA backend -------*- tablegen -*-===//

#ifndef KILN_NVPTX_PASSES
#define KILN_NVPTX_PASSES

include "mlir/Pass/PassBase.td"

def ConvertKilnGPUToNVVM : Pass<"convert-kiln-gpu-to-nvvm", "mlir::ModuleOp"> {
  let summary = "Lower the GPU stage's per-thread form to NVVM and LLVM";
  let description = [{
    Maps every per-thread primitive of `kiln_gpu` to NVVM or LLVM (ids to
    `%tid`/`%ctaid`, global accesses to `ld.global`/`st.global` of the
    access width with a branch around masked ones, shared accesses to
    address space 3 off the extern `kiln_shared` array, barriers to
    `bar.sync 0`), then lowers arith, math, vector, scf, cf and func to the
    LLVM dialect. The kernel gets `nvvm.kernel` and `nvvm.maxntid`.
    Shared buffers must have offsets (`tile-gpu-allocate-shared`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_NVPTX_PASSES
