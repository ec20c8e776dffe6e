//===- Passes.td - Passes of the GPU stage -----------------*- tablegen -*-===//
//
// The vendor-neutral GPU stage (docs/codegen-gpu.md). Every pass reads the
// target description named by its `target` option (or by the module's
// `kiln_gpu.target` attribute); none names a vendor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GPU_PASSES
#define KILN_GPU_PASSES

include "mlir/Pass/PassBase.td"

def TileGPUTestAxisInfo : Pass<"tile-gpu-test-axis-info", "mlir::func::FuncOp"> {
  let summary = "Print the axis analysis (contiguity, divisibility, constancy)";
  let description = [{
    Runs the axis analysis (compiler/GPU/AxisInfo.h) over a specialized
    kernel and attaches its result to every op that defines a tile or an
    integer/pointer scalar as remarks, for lit tests:
    `contiguity = [..], divisibility = [..], constancy = [..]`. Loads and
    stores through tiles of pointers also get the elements one access may
    cover per dimension: `vectorizable = [..]`.
  }];
}

def TileGPUBindLaunchConditions : Pass<"tile-gpu-bind-launch-conditions", "mlir::ModuleOp"> {
  let summary = "Use the parameter values that launch conditions fix";
  let description = [{
    The first pass of the stage. A variant runs only where its `where`
    conditions hold (checked at every launch), so each conjunct
    `(== CONST param)` — a runtime integer parameter equal to one of the
    variant's const params — gives the parameter's value: its uses become
    that constant (attention's `HEAD_DIM == head_dim` makes the masks over
    the head dimension constant, so the loads vectorize without `@div`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileGPUFastPath : Pass<"tile-gpu-fast-path", "mlir::ModuleOp"> {
  let summary = "Make a variant module its fast path (what the image assumes)";
  let description = [{
    What the GPU backends do to the copy of a variant they compile as its
    fast-path image (FastPath.cpp, docs/codegen-gpu.md "The fast path"), as
    a pass for tests: pointer parameters without `@align` get
    `kiln.align = 16`, integer parameters without `@div` `kiln.div = 16`,
    and on targets with range-checked accesses the runtime strides of view
    boxes are clamped (`arith.minui`) to the bounds the image assumes; on
    targets with tensor copies the view loads they take are marked
    `kiln_gpu.tensor_map = i` and the kernel gets an `!llvm.ptr` argument
    per map. The module attributes `kiln_gpu.assumes` and
    `kiln_gpu.tensor_maps` receive the image's "assumes" JSON and its
    "tensor_maps" array (docs/bundle.md); none when it assumes nothing.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"",
           "GPU arch (e.g. sm_80, gfx942)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def TileGPULowerViews : Pass<"tile-gpu-lower-views", "mlir::ModuleOp"> {
  let summary = "Rewrite view accesses into bounds-checked tiles of pointers";
  let description = [{
    The first pass of the stage, on one specialized variant module. Each
    `kiln.view_load` / `kiln.view_store` becomes a `kiln.load` /
    `kiln.store` through the tile of pointers
    `base + sum_d (o_d + arange(0, S_d)) * stride_d` (element offsets in
    i64, expanded and broadcast per dimension), masked by
    `0 <= o_d + i_d < size_d` in every dimension; a load's `other` is
    splat to the box (zero when absent). Coordinates are i32 where that is
    exact (i32 offsets against sizes extended from i32), i64 otherwise; a
    stride that is the constant 1 is not multiplied. Views carried by
    `scf.for`, `scf.if` and `scf.while` travel as their parts (base, sizes,
    strides); `kiln.make_view` ops are erased. A view anywhere else is a
    located error.

    With `relative-offsets` (targets with range-checked accesses), a box
    whose strides along its extents above 1 are bounded (constants, the
    fast path's clamps) with a reach under 2^31 bytes has its address
    split at its origin instead: the scalar pointer
    `base + sum_d o_d * stride_d`, splat, plus the lanes' offsets
    `sum_d arange(0, S_d) * stride_d`, which convert-tile-to-gpu-threads
    accesses as a uniform base plus 32-bit offsets. The mask is the same.

    A view load marked `kiln_gpu.tensor_map = i` (tile-gpu-fast-path)
    becomes a `kiln_gpu.tensor_box_load` of the kernel argument with the
    same mark, its offsets and the pointer form above.
  }];
  let options = [
    Option<"relativeOffsets", "relative-offsets", "bool",
           /*default=*/"false",
           "Address each box as its origin plus offsets relative to it">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::kiln::gpu::KilnGPUDialect"];
}

def TileGPUAssignLayouts : Pass<"tile-gpu-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Give every tile of a variant a distributed layout";
  let description = [{
    Runs on one specialized variant module. Memory accesses anchor
    coalesced blocked layouts (vector width from the axis analysis and the
    target's widest access), which flow backward through the ops that
    compute addresses and masks; everything else takes the layout of its
    operands, reductions the slice of theirs. Inserts
    `kiln_gpu.convert_layout` where an operand's layout differs from the
    one its user needs. Records the target and warps on the module. First,
    an fp8 `kiln.dot` the target has no matrix instruction for (or one that
    mixes E4M3 and E5M2) widens its operands to f16 (`arith.extf`, exact)
    where the target has an f16 instruction for the shape.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "GPU arch (default: the module's kiln_gpu.target)">,
    Option<"warps", "warps", "int", /*default=*/"0",
           "Warps per program (default: the variant's `warps`)">,
  ];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect"];
}

def TileGPUPipeline : Pass<"tile-gpu-pipeline", "mlir::ModuleOp"> {
  let summary = "Software-pipeline the loads that feed matrix products";
  let description = [{
    Runs after layout assignment and conversion removal. In each `scf.for`
    whose body loads tiles that feed a `kiln.dot` (directly or through
    layout conversions and other data movement), with the variant's
    `stages` S >= 2 on a target with asynchronous copies, those loads
    become `kiln_gpu.async_copy_tile`s into S slots of a shared buffer,
    issued S - 1 iterations ahead: a prologue starts the copies of the
    first S - 1 iterations; each iteration waits for its own slot
    (`kiln_gpu.async_wait` with S - 2 groups left in flight), starts the
    copies of iteration i + S - 1 into the slot freed by iteration i - 1,
    and reads its operands with `kiln_gpu.read_tile`; after the loop, a
    wait for everything. The address and mask computation of a pipelined
    load (its backward slice in the body, and the loop-carried values it
    advances, such as pointer tiles bumped each iteration) is cloned for
    the iteration ahead; copies of iterations past the end are masked off.
    A load is pipelined when its masked-off elements read zero (no
    `other`, or a zero one) and each thread's copies are at least 4
    contiguous, aligned bytes; a loop is left as it is when the slice has
    side effects or a loop-carried value it advances is used elsewhere.
    On targets with tensor copies a `kiln_gpu.tensor_box_load` is copied
    by thread 0 from its tensor map on per-slot transaction barriers
    instead (docs/codegen-gpu.md, "Tensor copies"); a box no loop takes
    becomes its `kiln.load`, and its map argument and recipe (the
    module's `kiln_gpu.tensor_maps`) are dropped.
  }];
  let options = [
    Option<"stages", "stages", "int", /*default=*/"0",
           "Pipeline depth (default: the variant's `stages`, else 2)">,
  ];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def ConvertTileToGPUThreads : Pass<"convert-tile-to-gpu-threads", "mlir::ModuleOp"> {
  let summary = "Lower tiles with layouts to the per-thread form";
  let description = [{
    Each tile becomes the `vector` of registers one thread holds (as its
    layout says); pointers become i64 byte addresses; loads and stores
    become `kiln_gpu.load`/`kiln_gpu.store` of as many consecutive
    elements as the layout and the axis analysis allow; data movement
    between layouts (broadcast, expand_dims, trans, reshape,
    convert_layout) permutes registers when lanes and warps keep their
    elements, and goes through `kiln_gpu.shared_alloc` buffers with
    barriers otherwise. Runs after `tile-gpu-assign-layouts` (it reads the
    module's `kiln_gpu.target` and `kiln_gpu.warps`).
  }];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileGPUAllocateShared : Pass<"tile-gpu-allocate-shared", "mlir::ModuleOp"> {
  let summary = "Give every shared-memory buffer its offset";
  let description = [{
    Liveness-based allocation of the `kiln_gpu.shared_alloc` buffers of the
    per-thread form: a buffer lives from its alloc to its last access (to
    the end of the loop or branch holding that access); buffers that are
    never live together share bytes (first fit). Sets each alloc's
    `offset` and the kernel's `kiln_gpu.shared_bytes`; more than the
    target's shared memory is an error naming the limit (with
    `record-only`, the total is recorded and the caller decides: a backend
    drops such a variant with a note).
  }];
  let options = [
    Option<"recordOnly", "record-only", "bool", /*default=*/"false",
           "Do not fail when the kernel needs more than the target has">,
  ];
}

def TileGPUInsertBarriers : Pass<"tile-gpu-insert-barriers", "mlir::ModuleOp"> {
  let summary = "Put barriers between racing shared-memory accesses";
  let description = [{
    Runs after `tile-gpu-allocate-shared`. Walks the per-thread form in
    program order, remembering the shared bytes any thread may have read or
    written since the last barrier, and inserts `kiln_gpu.barrier` before a
    read of written bytes, a write of read bytes, or a write of bytes
    written through another buffer (the stage writes each byte of a buffer
    from one thread only). An asynchronous copy counts as a write when it
    starts (against earlier reads); its bytes count as written from the
    next `kiln_gpu.async_wait` on, and barriers do not affect copies in
    flight. Barriers are
    placed only where every thread arrives (top level, loop bodies, and the
    branches of an `scf.if` whose condition is the same in every thread; an
    access inside a thread-dependent `scf.if` counts at the `scf.if`);
    loops are walked twice so that one iteration's accesses guard the next
    one's.
  }];
}

def TileGPUSinkSharedLoads : Pass<"tile-gpu-sink-shared-loads", "mlir::ModuleOp"> {
  let summary = "Move shared-memory reads down to their first use";
  let description = [{
    Runs on the per-thread form, before `tile-gpu-allocate-shared`. Moves
    each `kiln_gpu.shared_load` down its block to just before the first op
    that uses its result (or holds a use in its regions), never past an op
    that may write the bytes it reads or synchronize: a write through the
    same `shared_alloc`, a write to unknown bytes (global stores), an op
    without declared effects (barriers, asynchronous waits) or with a
    region holding one of these. Writes through other buffers, reads and
    allocations are passed: before allocation distinct buffers are
    distinct bytes, and the allocator then sees the longer lives. A layout
    conversion reads all of a thread's registers at once; a consumer that
    uses them one part at a time (a matrix product on scalar FMAs, K step
    by K step) no longer keeps them all live to its end. The longer lives
    may need more shared memory: where a function would then exceed the
    target's limit although it did not before, all its reads go back
    where they were.
  }];
}

def TileGPUComputeOncePerRun : Pass<"tile-gpu-compute-once-per-run", "mlir::ModuleOp"> {
  let summary = "Compute marked per-thread results once per group of equal registers";
  let description = [{
    The first step of every backend's lowering of the per-thread form.
    The per-thread conversion marks an integer elementwise op whose result
    the axis analysis proves constant over runs of a thread's registers
    (`offs < n` with n a multiple of 16) with `kiln_gpu.equal_runs`, the
    group of each register. This pass computes such an op on the first
    register of each group (`vector.shuffle` of its operands) and spreads
    the results back; registers of the operands nothing else reads are
    then dead. The mark is left out of the per-thread code that the
    fast-path trials compare, so an assumption that only lengthens runs is
    never kept as a launch condition; it is applied after them. A mark
    that does not fit its op (not one entry per register of a
    one-dimensional vector result, groups not numbered in order, operands
    of another length) is an error.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def TileGPURemoveConversions : Pass<"tile-gpu-remove-conversions", "mlir::ModuleOp"> {
  let summary = "Recompute cheap values in the wanted layout instead of converting";
  let description = [{
    For every `kiln_gpu.convert_layout` whose source is a short chain of
    ops that compute in any layout (aranges, splats, splat constants,
    elementwise arithmetic, comparisons, selects, pointer offsets,
    broadcasts, expand_dims), computes the chain again directly in the
    converted layout and drops the conversion — indices and masks cost a
    few instructions per register, a conversion a trip through shared
    memory. Conversions of loads, reductions and matrix products stay.
    Then: a conversion feeding a narrowing cast moves after it, a
    loop-carried tile moves to the layout its loop computes it in, a
    reduction of converted inputs reads their sources, and the same
    conversion in both branches of an `scf.if` is made once before it.
  }];
}

#endif // KILN_GPU_PASSES
