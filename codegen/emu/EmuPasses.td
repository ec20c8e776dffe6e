//===- EmuPasses.td - Passes of the emulator backend ------*- tablegen -*-===//

#ifndef KILN_EMU_PASSES
#define KILN_EMU_PASSES

include "mlir/Pass/PassBase.td"

def ConvertKilnGPUToEmu : Pass<"convert-kiln-gpu-to-emu", "mlir::ModuleOp"> {
  let summary = "Lower the per-thread form to host code for the emulator";
  let description = [{
    The kernel of the per-thread form becomes host code that runs one GPU
    thread (runtime/include/kiln/emu_abi.h): `entry(void **args,
    KilnEmuThread *thread)` loads the arguments as the host ABI passes
    them and calls the kernel, which now takes the thread as its last
    argument. Ids and program ids are read from the thread; global
    accesses and atomics are host memory operations (in checked builds,
    each access is first checked by the emulator); every primitive that
    involves other threads or shared memory — barriers, shuffles, shared
    accesses, matrix loads and instructions, asynchronous copies, printf,
    trap — is a call through the thread's table of emulator callbacks,
    with the op's source location. f16 arithmetic stays (LLVM computes it
    through libgcc's conversions), bf16 arithmetic is computed in f32, math
    without an LLVM intrinsic goes to libm; then arith, math, vector, scf,
    cf and func are lowered to LLVM. Shared buffers must have offsets
    (`tile-gpu-allocate-shared`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // KILN_EMU_PASSES
