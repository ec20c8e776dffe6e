//===- AMDGPUPasses.td - Passes of the AMD backend ---------*- tablegen -*-===//

#ifndef KILN_AMDGPU_PASSES
#define KILN_AMDGPU_PASSES

include "mlir/Pass/PassBase.td"

def ConvertKilnGPUToROCDL : Pass<"convert-kiln-gpu-to-rocdl", "mlir::ModuleOp"> {
  let summary = "Lower the GPU stage's per-thread form to AMDGPU LLVM";
  let description = [{
    Maps every per-thread primitive of `kiln_gpu` to LLVM's AMDGPU
    intrinsics (`llvm.amdgcn.*`) and plain LLVM: ids to the work-item and
    work-group ids (lane and wave from the thread id and the wave size of
    the module's target), program counts to the dispatch packet's grid
    size over the block size the compiler chose (no ockl), global accesses
    to address space 1 with a branch around masked ones, shared accesses to
    address space 3 off the extern `kiln_shared` array (dynamic LDS),
    barriers to `s_barrier` between work-group fences, shuffles to
    `ds_bpermute`, matrix instructions to MFMA (CDNA) or WMMA (RDNA),
    atomics to agent-scope atomics, `trap` to `s_trap`. `exp2` becomes the
    hardware's `v_exp_f32` (LLVM's exp2 intrinsic), sin and cos Kiln's own
    expansion; the other functions without an instruction MLIR's polynomial
    approximations. Then arith, math, vector, scf, cf and func become the
    LLVM dialect. The kernel gets the amdgpu_kernel calling convention
    (`rocdl.kernel`) and its flat work-group size.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_AMDGPU_PASSES
