//===- KilnGPUAttrs.td - Layout encodings ------------------*- tablegen -*-===//
//
// Each distributed layout is a named constructor of a LinearLayout
// (compiler/GPU/LinearLayout.h): toLinearLayout(shape) gives the map from
// (register, lane, warp) to the tile's elements for a tile of that shape.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GPU_ATTRS_TD
#define KILN_GPU_ATTRS_TD

include "compiler/GPU/IR/KilnGPUDialect.td"
include "compiler/GPU/IR/KilnGPUAttrInterfaces.td"
include "mlir/IR/TensorEncoding.td"

class KilnGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<KilnGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def KilnGPU_BlockedAttr : KilnGPU_Attr<"Blocked", "blocked",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedLayout>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "each thread holds a block of consecutive elements";
  let description = [{
    Per dimension: `sizePerThread` consecutive elements per thread,
    `threadsPerWarp` lanes and `warpsPerBlock` warps along it (products:
    the warp size and the program's warps); `order` lists the dimensions
    fastest first. A tile larger than the threads cover repeats in
    registers; a smaller one is held in copies (broadcast).

    ```mlir
    #kiln_gpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8],
                      warpsPerBlock = [4, 1], order = [1, 0]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int32_t">:$sizePerThread,
                        ArrayRefParameter<"int32_t">:$threadsPerWarp,
                        ArrayRefParameter<"int32_t">:$warpsPerBlock,
                        ArrayRefParameter<"int32_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
        `warpsPerBlock` `=` `[` $warpsPerBlock `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
}

def KilnGPU_SliceAttr : KilnGPU_Attr<"Slice", "slice",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedLayout>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "the parent layout with one dimension removed";
  let description = [{
    The layout of a reduction's result: the elements of `parent` with
    dimension `dim` dropped; the threads that held different positions
    along `dim` now hold copies.

    ```mlir
    #kiln_gpu.slice<dim = 1, parent = #blocked>
    ```
  }];
  let parameters = (ins "unsigned":$dim,
                        "::kiln::gpu::DistributedLayoutAttr":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
}

def KilnGPU_MmaAttr : KilnGPU_Attr<"Mma", "mma",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedLayout>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "accumulator layout of a matrix instruction";
  let description = [{
    The accumulator (and result) layout of the target's matrix instruction
    `instr` (named by the target description): its per-warp fragment,
    tiled over `warpsPerBlock` warps (rows, columns) and repeated in
    registers over the tile.

    `transposed`: the product is computed transposed, D^T = B^T A^T + C^T,
    with the instruction's A operand fed from B and its B operand from A.
    Every fragment is then the instruction's fragment with rows and columns
    exchanged: the accumulator is the instruction's C fragment transposed,
    operand A takes the instruction's B fragment and operand B its A
    fragment; an instruction tile covers n x m of the result. On AMD's
    matrix instructions this puts a row of the result in one lane, in the
    same registers the next product's A operand wants (attention's
    probabilities), and row reductions stay in-thread.

    ```mlir
    #kiln_gpu.mma<instr = "nv.mma.m16n8k16.f16", warpsPerBlock = [2, 2]>
    #kiln_gpu.mma<instr = "amd.mfma.32x32x8.bf16", warpsPerBlock = [4, 1], transposed = true>
    ```
  }];
  let parameters = (ins StringRefParameter<>:$instr,
                        ArrayRefParameter<"int32_t">:$warpsPerBlock,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = [{
    `<` `instr` `=` $instr `,` `warpsPerBlock` `=` `[` $warpsPerBlock `]`
        (`,` `transposed` `=` $transposed^)? `>`
  }];
  let extraClassDeclaration = [{
    /// The per-warp fragment of operand `index` (0: A, M x K; 1: B, K x N;
    /// 2: the accumulator, M x N) over the tile's (dim0, dim1), as the
    /// instruction is used (transposed or not).
    LinearLayout getFragment(unsigned index) const;
    /// Rows and columns of the result one instruction covers.
    int32_t getTileRows() const;
    int32_t getTileCols() const;
  }];
}

def KilnGPU_OperandAttr : KilnGPU_Attr<"Operand", "operand",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedLayout>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "operand layout of a matrix instruction";
  let description = [{
    The layout of operand `index` (0: A, M x K; 1: B, K x N) of the matrix
    instruction of the `parent` accumulator layout: the instruction's
    per-warp fragment, repeated over K in registers, tiled over the warps
    that share rows (A) or columns (B) of the accumulator and held in
    copies by the others.

    ```mlir
    #kiln_gpu.operand<index = 0, parent = #mma>
    ```
  }];
  let parameters = (ins "unsigned":$index, "::kiln::gpu::MmaAttr":$parent);
  let assemblyFormat = "`<` `index` `=` $index `,` `parent` `=` $parent `>`";
}

def KilnGPU_DotOperandAttr : KilnGPU_Attr<"DotOperand", "dot_operand",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedLayout>,
     DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "operand layout of a dot computed with scalar FMAs";
  let description = [{
    For a `dot` whose types have no matrix instruction on the target: the
    accumulator has the blocked layout `parent`, and each thread holds, for
    every accumulator row it owns, the whole K extent of operand A
    (`index = 0`, M x K), and for every column, the whole K extent of B
    (`index = 1`, K x N); threads that share rows (columns) hold copies.

    ```mlir
    #kiln_gpu.dot_operand<index = 0, parent = #blocked>
    ```
  }];
  let parameters = (ins "unsigned":$index, "::kiln::gpu::BlockedAttr":$parent);
  let assemblyFormat = "`<` `index` `=` $index `,` `parent` `=` $parent `>`";
}

#endif // KILN_GPU_ATTRS_TD
