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
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect", "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
  ];
}

#endif // KILN_CODEGEN_HOST_PASSES
