//===- KilnGPUDialect.td - The kiln_gpu dialect ------------*- tablegen -*-===//
//
// The GPU stage's dialect: layout encodings on tile types, the layout
// conversion op, and the per-thread primitives the stage ends in. Every
// tablegen generator of compiler/GPU/IR/CMakeLists.txt runs on
// KilnGPUOps.td, which includes this file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GPU_DIALECT_TD
#define KILN_GPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def KilnGPU_Dialect : Dialect {
  let name = "kiln_gpu";
  let cppNamespace = "::kiln::gpu";
  let summary = "Layouts and per-thread primitives of Kiln's GPU stage";
  let description = [{
    Two halves. At the tile level, layout encodings (`#kiln_gpu.blocked`,
    `#kiln_gpu.slice`, `#kiln_gpu.mma`, `#kiln_gpu.operand`) say which
    register of which lane of which warp holds which element of a tile, and
    `kiln_gpu.convert_layout` moves a tile between two of them. At the end
    of the stage, the per-thread form: each tile is the `vector` of the
    registers one thread holds, and a few primitives (ids, global and
    shared accesses, shuffles, barriers, matrix instructions) say what a
    thread does. docs/codegen-gpu.md describes both.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Module attribute naming the arch the stage compiles for.
    static llvm::StringRef getTargetAttrName() { return "kiln_gpu.target"; }
    /// Module attribute: warps per program.
    static llvm::StringRef getWarpsAttrName() { return "kiln_gpu.warps"; }
    /// Function attribute set by tile-gpu-allocate-shared: bytes of shared
    /// memory the kernel needs.
    static llvm::StringRef getSharedBytesAttrName() {
      return "kiln_gpu.shared_bytes";
    }
    /// Op attribute of the per-thread form (an i32 array, one entry per
    /// register of the op's vector result): registers with the same entry
    /// hold equal values, entries numbered in order of first appearance.
    /// tile-gpu-compute-once-per-run computes such a result once per group.
    static llvm::StringRef getEqualRunsAttrName() {
      return "kiln_gpu.equal_runs";
    }
  private:
    void registerAttributes();
    void registerTypes();
  }];
}

class KilnGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<KilnGPU_Dialect, mnemonic, traits>;

def KilnGPU_HwIdKindAttr : I32EnumAttr<"HwIdKind", "hardware index", [
    I32EnumAttrCase<"thread", 0>,
    I32EnumAttrCase<"lane", 1>,
    I32EnumAttrCase<"warp", 2>,
  ]> {
  let cppNamespace = "::kiln::gpu";
}

def KilnGPU_ShuffleKindAttr : I32EnumAttr<"ShuffleKind", "warp shuffle", [
    I32EnumAttrCase<"xor_", 0, "xor">,
    I32EnumAttrCase<"idx", 1>,
    I32EnumAttrCase<"up", 2>,
    I32EnumAttrCase<"down", 3>,
  ]> {
  let cppNamespace = "::kiln::gpu";
}

#endif // KILN_GPU_DIALECT_TD
