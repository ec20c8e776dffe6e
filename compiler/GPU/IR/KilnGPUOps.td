//===- KilnGPUOps.td - Ops of the kiln_gpu dialect ---------*- tablegen -*-===//
//
// The layout conversion (tile level) and the per-thread primitives. The
// per-thread ops are the whole contract between the GPU stage and its three
// consumers (codegen/nvptx, codegen/amdgpu, the CPU emulator): each has an
// exact per-thread meaning, written in its description.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GPU_OPS_TD
#define KILN_GPU_OPS_TD

include "compiler/GPU/IR/KilnGPUDialect.td"
include "compiler/GPU/IR/KilnGPUAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def KilnGPU_SharedBufferType : TypeDef<KilnGPU_Dialect, "SharedBuffer"> {
  let mnemonic = "shared";
  let summary = "a buffer in the program's shared memory";
  let description = [{
    Bytes of the shared memory (LDS) of one program, allocated by
    `kiln_gpu.shared_alloc`. Accesses give a byte offset into it.
  }];
}

//===----------------------------------------------------------------------===//
// Tile level
//===----------------------------------------------------------------------===//

def KilnGPU_ConvertLayoutOp : KilnGPU_Op<"convert_layout",
    [Pure, SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "move a tile to another layout";
  let description = [{
    The same tile, held as the result's encoding says. Depending on how the
    two layouts differ, the per-thread form moves registers within a
    thread, exchanges them between lanes with shuffles, or goes through
    shared memory.

    ```mlir
    %b = kiln_gpu.convert_layout %a : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
}

def KilnGPU_AsyncCopyTileOp : KilnGPU_Op<"async_copy_tile"> {
  let summary = "start copying a tile from global memory into a shared slot";
  let description = [{
    Tile level, made by `tile-gpu-pipeline`. Starts copying the elements
    the tile of pointers `ptr` points to into slot `slot` of `buffer`:
    slot `s` is the bytes `[s × T, (s + 1) × T)` with `T` the tile's
    element count times its element size, elements placed as the shared
    layout of the tile's shape says (`getSharedLayout`, the same place a
    layout conversion through shared memory puts them). Where `mask` is
    false, nothing is read and the element is written zero. The copies
    join the program's current group of asynchronous copies
    (`kiln_gpu.async_commit`); the slot's bytes may be read only after a
    `kiln_gpu.async_wait` that covers the group, followed by a barrier.
    The pointer tile's layout says which thread copies which elements.

    ```mlir
    kiln_gpu.async_copy_tile %buf[%slot], %ptrs, mask %m
        : tensor<64x32x!kiln.ptr<f16>, #blocked>
    ```
  }];
  let arguments = (ins KilnGPU_SharedBufferType:$buffer, I32:$slot,
                       AnyRankedTensor:$ptr, Optional<AnyRankedTensor>:$mask);
  let assemblyFormat = [{
    $buffer `[` $slot `]` `,` $ptr (`,` `mask` $mask^)? attr-dict `:` type($ptr)
    (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def KilnGPU_TensorBoxLoadOp : KilnGPU_Op<"tensor_box_load",
    [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "a view box that a tensor map can copy";
  let description = [{
    Tile level, made by `tile-gpu-lower-views` from a view load that
    `tile-gpu-fast-path` chose for the target's tensor copies (sm_90a's
    TMA; docs/codegen-gpu.md, "Tensor copies"). Its value is that of
    `kiln.load %ptrs, mask %mask, other %other` (the box in pointer form);
    `map` (the kernel argument `tensor_map` names) describes the same view
    to the hardware, and `coords` (i32, outermost first) are the box's
    offsets in it. `tile-gpu-pipeline` copies such boxes into its slots
    with the tensor map and rewrites any it does not pipeline into the
    `kiln.load` above, so no later pass sees the op.

    ```mlir
    %t = kiln_gpu.tensor_box_load %map[%r0, %k], %ptrs, mask %m
        {tensor_map = 0 : i64} : !llvm.ptr, tensor<128x64x!kiln.ptr<f16>>,
        tensor<128x64xi1> -> tensor<128x64xf16>
    ```
  }];
  let arguments = (ins AnyType:$map, Variadic<I32>:$coords,
                       AnyRankedTensor:$ptrs, Optional<AnyRankedTensor>:$mask,
                       Optional<AnyRankedTensor>:$other, I64Attr:$tensor_map);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $map `[` $coords `]` `,` $ptrs (`,` `mask` $mask^)? (`,` `other` $other^)?
    attr-dict `:` qualified(type($map)) `,` type($ptrs) (`,` type($mask)^)?
    (`,` type($other)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def KilnGPU_ReadTileOp : KilnGPU_Op<"read_tile"> {
  let summary = "read the tile held in a shared slot";
  let description = [{
    Tile level, made by `tile-gpu-pipeline`. The tile stored in slot
    `slot` of `buffer` (placed as `kiln_gpu.async_copy_tile` says), held
    as the result's layout says. For a matrix-instruction operand layout
    the per-thread form reads it with the target's matrix loads.

    The slot may hold a view of the result: with `tile_shape` (the stored
    tile's shape; the result's by default) and `order` (identity by
    default), the result is the stored tile reshaped, row-major, to the
    shape whose dimension `order[i]` is the result's dimension `i`, then
    transposed by `order` (`kiln.reshape`, then `kiln.trans`). Reading the
    view directly places each element where the result's layout wants it,
    with no layout conversion after the read.

    ```mlir
    %a = kiln_gpu.read_tile %buf[%slot] : tensor<64x32xf16, #operand>
    // K^T of a [1, 32, 64] tile of K, as the B operand of a dot.
    %b = kiln_gpu.read_tile %kbuf[%slot] {tile_shape = array<i64: 1, 32, 64>,
        order = array<i32: 1, 0>} : tensor<64x32xf16, #operand_b>
    ```
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemRead]>:$buffer,
                       I32:$slot,
                       OptionalAttr<DenseI64ArrayAttr>:$tile_shape,
                       OptionalAttr<DenseI32ArrayAttr>:$order);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$buffer `[` $slot `]` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-thread form: ids
//===----------------------------------------------------------------------===//

def KilnGPU_HwIdOp : KilnGPU_Op<"id", [Pure]> {
  let summary = "this thread's index in its program, warp or lane";
  let description = [{
    `thread`: 0 .. warps × warp size - 1; `lane`: thread mod warp size;
    `warp`: thread / warp size (uniform across a warp). i32.

    ```mlir
    %lane = kiln_gpu.id lane
    ```
  }];
  let arguments = (ins KilnGPU_HwIdKindAttr:$kind);
  let results = (outs I32:$result);
  let assemblyFormat = "$kind attr-dict";
  let builders = [
    OpBuilder<(ins "::kiln::gpu::HwIdKind":$kind), [{
      build($_builder, $_state, $_builder.getI32Type(), kind);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Per-thread form: global memory
//===----------------------------------------------------------------------===//

def KilnGPU_GlobalLoadOp : KilnGPU_Op<"load", [AttrSizedOperandSegments,
    OptionalTypesMatchWith<"`other` has the result type", "result", "other",
                           "$_self">]> {
  let summary = "load consecutive elements from global memory";
  let description = [{
    Reads the N elements of the result vector from the global address
    `addr` (bytes, i64) onwards as one access when `mask` is true;
    otherwise reads nothing and yields `other` (zero if absent). `addr`
    is a multiple of `alignment` bytes (the backend may emit one access
    of N × element size bytes when the alignment allows).

    With `[offset]` (i32), the address is `addr + zext(offset)`, and the
    op promises that `addr` is the same in every thread of the program
    and that `offset` is below 2^31 wherever `mask` is true (its value is
    unspecified where `mask` is false). A target with range-checked
    accesses (AMD's buffer loads) then reads with no branch: the masked
    threads' offset is moved past the range, which reads zero.

    ```mlir
    %v = kiln_gpu.load %addr, mask %m, other %o alignment 16 : vector<4xf32>
    %w = kiln_gpu.load %base[%off], mask %m alignment 16 : vector<4xf32>
    ```
  }];
  let arguments = (ins I64:$addr, Optional<I32>:$offset, Optional<I1>:$mask,
                       Optional<AnyVectorOfNonZeroRank>:$other,
                       I64Attr:$alignment);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $addr (`[` $offset^ `]`)? (`,` `mask` $mask^)? (`,` `other` $other^)?
    `alignment` $alignment attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def KilnGPU_GlobalStoreOp : KilnGPU_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "store consecutive elements to global memory";
  let description = [{
    Writes the N elements of `value` to the global address `addr` (bytes)
    onwards when `mask` is true. `addr` is a multiple of `alignment`.
    With `[offset]` (i32), the address is `addr + zext(offset)`, with the
    promises of `kiln_gpu.load`'s offset form (a uniform `addr`, an
    offset below 2^31 wherever `mask` is true): a masked thread's offset
    is moved past the range, where a range-checked store writes nothing.

    ```mlir
    kiln_gpu.store %addr, %v, mask %m alignment 16 : vector<4xf32>
    kiln_gpu.store %base[%off], %v, mask %m alignment 16 : vector<4xf32>
    ```
  }];
  let arguments = (ins I64:$addr, Optional<I32>:$offset,
                       AnyVectorOfNonZeroRank:$value,
                       Optional<I1>:$mask, I64Attr:$alignment);
  let assemblyFormat = [{
    $addr (`[` $offset^ `]`)? `,` $value (`,` `mask` $mask^)? `alignment`
    $alignment attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-thread form: warps and barriers
//===----------------------------------------------------------------------===//

def KilnGPU_ShuffleOp : KilnGPU_Op<"shuffle", [Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "read a value of another lane of the warp";
  let description = [{
    Every lane of the warp executes it together (convergent) and gets
    `value` of lane `lane ^ offset` (`xor`), `offset` (`idx`),
    `lane - offset` (`up`, own value when negative) or `lane + offset`
    (`down`, own value at or past the warp size). Any 8-64-bit integer or
    float.

    ```mlir
    %o = kiln_gpu.shuffle xor %v, %c16 : f32
    ```
  }];
  let arguments = (ins KilnGPU_ShuffleKindAttr:$kind, AnyTypeOf<[AnyInteger, AnyFloat]>:$value, I32:$offset);
  let results = (outs AnyTypeOf<[AnyInteger, AnyFloat]>:$result);
  let assemblyFormat = "$kind $value `,` $offset attr-dict `:` type($value)";
}

def KilnGPU_BarrierOp : KilnGPU_Op<"barrier"> {
  let summary = "wait for every thread of the program";
  let description = [{
    No thread passes until every thread of the program has reached it;
    shared-memory writes before it are visible to reads after it.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Per-thread form: shared memory
//===----------------------------------------------------------------------===//

def KilnGPU_SharedAllocOp : KilnGPU_Op<"shared_alloc",
    [MemoryEffects<[MemAlloc]>]> {
  let summary = "a buffer in the program's shared memory";
  let description = [{
    `size` bytes of shared memory, aligned to `alignment`, live from here
    to its last access. `tile-gpu-allocate-shared` gives every buffer its
    `offset` from the start of the program's shared memory, reusing bytes
    of buffers whose lives do not overlap.

    ```mlir
    %buf = kiln_gpu.shared_alloc size 4096 alignment 16 : !kiln_gpu.shared
    ```
  }];
  let arguments = (ins I64Attr:$size, I64Attr:$alignment,
                       OptionalAttr<I64Attr>:$offset);
  let results = (outs KilnGPU_SharedBufferType:$result);
  let assemblyFormat = [{
    `size` $size `alignment` $alignment (`offset` $offset^)? attr-dict
    `:` qualified(type($result))
  }];
}

def KilnGPU_SharedLoadOp : KilnGPU_Op<"shared_load"> {
  let summary = "load consecutive elements from shared memory";
  let description = [{
    Reads the N elements of the result from byte `offset` (i32) of
    `buffer` onwards. `offset` is a multiple of the element size, and
    when the result's size in bytes is a power of two up to 16, of that
    size (the alignment the backends give the access: vector accesses to
    shared memory must be aligned so). A bool (i1) element occupies one
    byte holding 0 or 1.

    ```mlir
    %v = kiln_gpu.shared_load %buf[%off] : vector<4xf16>
    ```
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemRead]>:$buffer,
                       I32:$offset);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = "$buffer `[` $offset `]` attr-dict `:` type($result)";
}

def KilnGPU_SharedStoreOp : KilnGPU_Op<"shared_store"> {
  let summary = "store consecutive elements to shared memory";
  let description = [{
    Writes the N elements of `value` to byte `offset` (i32) of `buffer`
    onwards; `offset` is aligned as for `kiln_gpu.shared_load`.

    ```mlir
    kiln_gpu.shared_store %buf[%off], %v : vector<4xf16>
    ```
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemWrite]>:$buffer,
                       I32:$offset, AnyVectorOfNonZeroRank:$value);
  let assemblyFormat = [{
    $buffer `[` $offset `]` `,` $value attr-dict `:` type($value)
  }];
}

def KilnGPU_SharedLoadMatrixOp : KilnGPU_Op<"shared_load_matrix"> {
  let summary = "warp-cooperative load of 8x8 matrices of 16-bit elements";
  let description = [{
    Every lane of the warp executes it together (convergent). `count` (1, 2
    or 4) 8x8 matrices of 16-bit elements are read from `buffer`: lane `i`
    gives, in `offset` (bytes), where row `i mod 8` of matrix `i / 8`
    starts (8 consecutive elements; lanes past 8 x count give unused
    addresses). Lane `l` gets, for each matrix `j` in order, the two
    elements at row `l / 4`, columns `2 (l mod 4)` and `2 (l mod 4) + 1`
    — or, with `transpose`, at rows `2 (l mod 4)` and `2 (l mod 4) + 1` of
    column `l / 4`. The result holds 2 x count elements, matrix by matrix.
    This is the register layout of the matrix instructions' 16-bit
    operands, so a target that has it (`hasMatrixLoad`) feeds them without
    shuffling.

    ```mlir
    %a = kiln_gpu.shared_load_matrix %buf[%off] count 4 : vector<8xf16>
    %b = kiln_gpu.shared_load_matrix %buf[%off] count 2 transpose : vector<4xbf16>
    ```
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemRead]>:$buffer,
                       I32:$offset, I32Attr:$count, UnitAttr:$transpose);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $buffer `[` $offset `]` `count` $count (`transpose` $transpose^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-thread form: asynchronous copies
//===----------------------------------------------------------------------===//

def KilnGPU_AsyncCopyOp : KilnGPU_Op<"async_copy"> {
  let summary = "start copying bytes from global to shared memory";
  let description = [{
    Starts copying `size` bytes (4, 8 or 16) from the global address
    `addr` to byte `offset` (i32) of `buffer`; both are multiples of
    `size`. When `mask` is false, global memory is not read and the
    `size` bytes are written zero. The copy joins this thread's current
    group (`kiln_gpu.async_commit` closes it). Its bytes are written at
    some time before the `kiln_gpu.async_wait` that covers its group
    returns: until then, neither this thread nor any other may access
    them, and other threads see them only after a barrier that follows
    that wait.

    ```mlir
    kiln_gpu.async_copy %buf[%off], %addr, mask %m size 16
    ```
  }];
  let arguments = (ins KilnGPU_SharedBufferType:$buffer, I32:$offset,
                       I64:$addr, Optional<I1>:$mask, I32Attr:$size);
  let assemblyFormat = [{
    $buffer `[` $offset `]` `,` $addr (`,` `mask` $mask^)? `size` $size
    attr-dict
  }];
  let hasVerifier = 1;
}

def KilnGPU_AsyncCommitOp : KilnGPU_Op<"async_commit"> {
  let summary = "close this thread's current group of asynchronous copies";
  let description = [{
    The copies this thread started since its previous commit form one
    group (possibly empty); later copies start a new one. Groups complete
    in the order they were committed.
  }];
  let assemblyFormat = "attr-dict";
}

def KilnGPU_AsyncWaitOp : KilnGPU_Op<"async_wait"> {
  let summary = "wait for this thread's older groups of copies";
  let description = [{
    Returns once at most `pending` of this thread's committed groups are
    still in flight: the copies of every older group have written their
    bytes (visible to this thread; to others after a barrier). `buffers`
    name the buffers the copies in flight may write, so that their lives
    reach this wait (it does not read them).

    ```mlir
    kiln_gpu.async_wait %a, %b pending 1 : !kiln_gpu.shared, !kiln_gpu.shared
    ```
  }];
  let arguments = (ins Variadic<KilnGPU_SharedBufferType>:$buffers,
                       I32Attr:$pending);
  let assemblyFormat = [{
    ($buffers^)? `pending` $pending attr-dict (`:` qualified(type($buffers))^)?
  }];
}

//===----------------------------------------------------------------------===//
// Per-thread form: tensor copies and their barriers
//===----------------------------------------------------------------------===//

def KilnGPU_MbarrierInitOp : KilnGPU_Op<"mbarrier_init"> {
  let summary = "initialize a transaction barrier in shared memory";
  let description = [{
    The 8 bytes at `offset` of `buffer` become a barrier whose phases
    complete when `count` arrivals (`kiln_gpu.mbarrier_arrive_tx`) and
    every byte those arrivals announced have come; its current phase is
    0. One thread initializes it; other threads may use it only after a
    barrier that follows (on NVIDIA, `mbarrier.init` then
    `fence.mbarrier_init`).

    ```mlir
    kiln_gpu.mbarrier_init %bars[%c8] count 2
    ```
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemWrite]>:$buffer,
                       I32:$offset, I32Attr:$count);
  let assemblyFormat = "$buffer `[` $offset `]` `count` $count attr-dict";
}

def KilnGPU_MbarrierArriveTxOp : KilnGPU_Op<"mbarrier_arrive_tx"> {
  let summary = "announce bytes on a transaction barrier and arrive";
  let description = [{
    Adds `bytes` to the bytes the barrier's current phase waits for, then
    arrives once (`mbarrier.arrive.expect_tx`). The tensor copies that
    name the barrier deliver those bytes.

    ```mlir
    kiln_gpu.mbarrier_arrive_tx %bars[%off] bytes 16384
    ```
  }];
  let arguments = (ins KilnGPU_SharedBufferType:$buffer, I32:$offset,
                       I32Attr:$bytes);
  let assemblyFormat = "$buffer `[` $offset `]` `bytes` $bytes attr-dict";
}

def KilnGPU_MbarrierWaitOp : KilnGPU_Op<"mbarrier_wait"> {
  let summary = "wait for a phase of a transaction barrier";
  let description = [{
    Returns once the barrier's phase of parity `parity` (i32, 0 or 1) has
    completed. The bytes tensor copies delivered to that phase are then
    visible to this thread, with no further barrier.

    ```mlir
    kiln_gpu.mbarrier_wait %bars[%off], %parity
    ```
  }];
  // No declared effects: a wait orders what follows, it is never dead.
  let arguments = (ins KilnGPU_SharedBufferType:$buffer, I32:$offset,
                       I32:$parity);
  let assemblyFormat = "$buffer `[` $offset `]` `,` $parity attr-dict";
}

def KilnGPU_MbarrierInvalOp : KilnGPU_Op<"mbarrier_inval"> {
  let summary = "end a transaction barrier's life";
  let description = [{
    The 8 bytes at `offset` of `buffer` stop being a barrier and may be
    used as ordinary shared memory again. One thread does it, after every
    thread's last wait on it (a barrier between).
  }];
  let arguments = (ins Arg<KilnGPU_SharedBufferType, "", [MemWrite]>:$buffer,
                       I32:$offset);
  let assemblyFormat = "$buffer `[` $offset `]` attr-dict";
}

def KilnGPU_TensorLoadOp : KilnGPU_Op<"tensor_load"> {
  let summary = "copy a box of a tensor map into shared memory (TMA)";
  let description = [{
    Executed by one thread: starts copying the box of the tensor map `map`
    (a kernel argument the runtime fills, docs/bundle.md "tensor_maps") at
    `coords` (i32, outermost first; may be negative or past the end, where
    elements read as zero) into shared memory at byte `offset` of
    `buffer`, placed as the map's swizzle says; the copy's bytes complete
    on the barrier at `bar_offset` of `bars`, whose current phase must
    expect them (`kiln_gpu.mbarrier_arrive_tx`). The bytes may be read
    only after an `kiln_gpu.mbarrier_wait` for that phase.

    ```mlir
    kiln_gpu.tensor_load %buf[%off], %map[%r, %k], %bars[%boff] : !llvm.ptr
    ```
  }];
  let arguments = (ins KilnGPU_SharedBufferType:$buffer, I32:$offset,
                       AnyType:$map, Variadic<I32>:$coords,
                       KilnGPU_SharedBufferType:$bars, I32:$bar_offset);
  let assemblyFormat = [{
    $buffer `[` $offset `]` `,` $map `[` $coords `]` `,` $bars `[` $bar_offset
    `]` attr-dict `:` qualified(type($map))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-thread form: matrix instructions
//===----------------------------------------------------------------------===//

def KilnGPU_MmaOp : KilnGPU_Op<"mma", [Pure,
    AllTypesMatch<["c", "result"]>]> {
  let summary = "one warp-wide matrix instruction";
  let description = [{
    Every lane of the warp executes it together: D = A × B + C for the
    target's instruction `instr`, each lane passing the registers of A, B
    and C it holds in the instruction's fragment layouts (see the target
    description) and getting its registers of D.

    ```mlir
    %d = kiln_gpu.mma "nv.mma.m16n8k16.f16" %a, %b, %c
        : vector<8xf16>, vector<4xf16> -> vector<4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$instr, AnyVectorOfNonZeroRank:$a,
                       AnyVectorOfNonZeroRank:$b, AnyVectorOfNonZeroRank:$c);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $instr $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `->` type($c)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Per-thread form: atomics
//===----------------------------------------------------------------------===//

def KilnGPU_WarpgroupMmaOp : KilnGPU_Op<"warpgroup_mma",
    [AttrSizedOperandSegments, AllTypesMatch<["c", "result"]>]> {
  let summary = "one matrix instruction of a group of warps (wgmma)";
  let description = [{
    Every thread of the `groupWarps` consecutive warps (a Hopper warpgroup:
    4, starting at a warp divisible by 4) executes it together: D = A × B +
    C for the target's warpgroup instruction `instr` (m64nNk16 for 16-bit
    operands, m64nNk32 for fp8). B is read
    from shared memory: the tile at byte `b_offset` of `b_buffer`, placed as
    the matrix descriptor `b_desc` says. A likewise (`a_buffer`,
    `a_offset`, `a_desc`), or from registers (`a`, in the instruction's A
    fragment layout). Warp w of the group passes and gets the registers of
    its 16 rows, [16 w, 16 w + 16), of C and D.

    A descriptor is the PTX ISA's 64-bit shared-memory matrix descriptor
    with a zero start address: the leading and stride dimension byte
    offsets (bits 16-29 and 32-45, in units of 16 bytes) and the swizzle
    (bits 62-63: 0 none, 1 128 bytes, 2 64 bytes, 3 32 bytes); the
    consumer adds the operand's shared address (bits 0-13, in units of 16
    bytes). A swizzled operand's 8-row atom starts on a multiple of 8 x
    the swizzle width in shared memory. `a_transpose` / `b_transpose`: the
    operand is stored M-major / N-major (elements along M or N contiguous)
    instead of K-major; only instructions with 16-bit operands have them
    (the verifier refuses them for fp8).

    The instruction is asynchronous on the hardware: its result may be
    used only through a `kiln_gpu.warpgroup_wait` (which also keeps C's
    registers untouched until then); the shared memory it reads must stay
    unchanged until that wait. Shared memory written by this program's
    ordinary stores must be fenced (`kiln_gpu.shared_fence`) by the
    writing threads before the barrier that orders the writes before it.

    ```mlir
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16"
        shared %abuf[%aoff], %bbuf[%boff], %c
        {a_desc = 4611686293305294848 : i64, b_desc = ...} : vector<32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$instr,
                       Arg<Optional<KilnGPU_SharedBufferType>, "",
                           [MemRead]>:$a_buffer,
                       Optional<I32>:$a_offset,
                       Optional<AnyVectorOfNonZeroRank>:$a,
                       Arg<KilnGPU_SharedBufferType, "", [MemRead]>:$b_buffer,
                       I32:$b_offset, AnyVectorOfNonZeroRank:$c,
                       OptionalAttr<I64Attr>:$a_desc, I64Attr:$b_desc,
                       UnitAttr:$a_transpose, UnitAttr:$b_transpose);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $instr (`shared` $a_buffer^ `[` $a_offset `]`)?
    (`registers` $a^ `:` type($a))? `,` $b_buffer `[` $b_offset `]` `,` $c
    attr-dict `:` type($c)
  }];
  let hasVerifier = 1;
}

def KilnGPU_WarpgroupWaitOp : KilnGPU_Op<"warpgroup_wait",
    [AllTypesMatch<["values", "results"]>]> {
  let summary = "wait for this group's warpgroup matrix instructions";
  let description = [{
    Every thread of the group executes it together. Returns once at most
    `pending` of the group's earlier batches of `kiln_gpu.warpgroup_mma`
    are in flight (a batch: the instructions issued since the previous
    wait); `values` (results of those instructions) are returned
    unchanged, complete. Uses of an instruction's result go through a
    wait.

    ```mlir
    %r:2 = kiln_gpu.warpgroup_wait %d0, %d1 pending 0
        : vector<32xf32>, vector<32xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyVectorOfNonZeroRank>:$values,
                       I32Attr:$pending);
  let results = (outs Variadic<AnyVectorOfNonZeroRank>:$results);
  let assemblyFormat = [{
    $values `pending` $pending attr-dict `:` type($values)
  }];
}

def KilnGPU_SharedFenceOp : KilnGPU_Op<"shared_fence"> {
  let summary = "make this thread's shared writes visible to wgmma";
  let description = [{
    This thread's earlier writes to shared memory (stores, and copies that
    a `kiln_gpu.async_wait` has landed) become visible to the
    `kiln_gpu.warpgroup_mma` reads that a later barrier orders after them
    (on NVIDIA: `fence.proxy.async.shared::cta`, the ordinary accesses
    and the matrix unit's being different proxies).
  }];
  let assemblyFormat = "attr-dict";
}

def KilnGPU_AtomicRMWOp : KilnGPU_Op<"atomic_rmw",
    [AllTypesMatch<["val", "result"]>]> {
  let summary = "atomic read-modify-write of one global element";
  let description = [{
    When `mask` is true (or absent), atomically replaces the element at the
    global address `addr` by `old <kind> val` (the kinds of
    `kiln.atomic_rmw`, acquire-release at device scope) and yields the old
    value; otherwise does nothing and yields zero. `kind` is the keyword
    of `kiln.atomic_rmw` (`add`, `max`, `min`, `umax`, `umin`, `and`, `or`,
    `xor`, `xchg`).

    ```mlir
    %old = kiln_gpu.atomic_rmw "add" %addr, %v, mask %m : f32
    ```
  }];
  let arguments = (ins StrAttr:$kind, I64:$addr,
                       AnyTypeOf<[AnyInteger, AnyFloat]>:$val,
                       Optional<I1>:$mask);
  let results = (outs AnyTypeOf<[AnyInteger, AnyFloat]>:$result);
  let assemblyFormat = [{
    $kind $addr `,` $val (`,` `mask` $mask^)? attr-dict `:` type($val)
  }];
  let hasVerifier = 1;
}

def KilnGPU_AtomicCASOp : KilnGPU_Op<"atomic_cas",
    [AllTypesMatch<["cmp", "val", "result"]>]> {
  let summary = "atomic compare-and-swap of one global element";
  let description = [{
    When `mask` is true (or absent), atomically replaces the element at
    `addr` by `val` if it equals `cmp` (bitwise), acquire-release at device
    scope, and yields the old value; otherwise does nothing and yields
    zero.

    ```mlir
    %old = kiln_gpu.atomic_cas %addr, %cmp, %v, mask %m : i32
    ```
  }];
  let arguments = (ins I64:$addr, AnyTypeOf<[AnyInteger, AnyFloat]>:$cmp,
                       AnyTypeOf<[AnyInteger, AnyFloat]>:$val,
                       Optional<I1>:$mask);
  let results = (outs AnyTypeOf<[AnyInteger, AnyFloat]>:$result);
  let assemblyFormat = [{
    $addr `,` $cmp `,` $val (`,` `mask` $mask^)? attr-dict `:` type($val)
  }];
}

//===----------------------------------------------------------------------===//
// Per-thread form: debugging
//===----------------------------------------------------------------------===//

def KilnGPU_PrintfOp : KilnGPU_Op<"printf"> {
  let summary = "print a formatted line from this thread";
  let description = [{
    C `printf` of `format` with `args` (integers printed with %d/%u/%lld,
    floats with %g after widening to f64), where the target has device
    printf.

    ```mlir
    kiln_gpu.printf "x[%d] = %g\n" (%i, %x : i32, f32)
    ```
  }];
  let arguments = (ins StrAttr:$format,
                       Variadic<AnyTypeOf<[AnyInteger, AnyFloat]>>:$args);
  let assemblyFormat = [{
    $format (` ` `(` $args^ `:` type($args) `)`)? attr-dict
  }];
}

def KilnGPU_TrapOp : KilnGPU_Op<"trap"> {
  let summary = "stop the kernel with an error";
  let description = [{
    Ends the launch with an error the runtime reports (a failed assertion).
    A `kiln_gpu.printf` right before it in the same block is its message:
    backends that can (AMD) hand that record to the runtime as the error's
    text instead of printing it.
  }];
  let assemblyFormat = "attr-dict";
}

#endif // KILN_GPU_OPS_TD
