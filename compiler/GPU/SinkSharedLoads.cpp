//===- SinkSharedLoads.cpp - Shared-memory reads next to their uses -------===//
//
// tile-gpu-sink-shared-loads: a layout conversion through shared memory
// reads all of a thread's registers where the conversion is, and its
// consumer may use them one part at a time much later. The matrix product
// on scalar FMAs is the case that matters: each operand is a whole block
// of A rows and B columns per thread, while a K step reads one column of A
// and one row of B. With every read up front, every operand register is
// live to the end of the product; worse, where both operands go through
// shared memory one after the other (AMD, no asynchronous copies), the
// allocator gives B the bytes A was read from, so a barrier keeps all of
// A's reads before B's writes. gfx1100 spilled 90 VGPRs on a 64x64x32 f32
// product that way.
//
// The pass moves each `kiln_gpu.shared_load` down its block to just before
// the first op that uses its result (an op holding a use in its regions
// counts), never past an op that may write the bytes it reads or
// synchronize: a write through the same buffer, a write whose bytes are
// unknown (a global store, a call), a barrier or an asynchronous wait (ops
// without declared effects), anything with a region that holds such an op.
// Before allocation distinct `shared_alloc`s are distinct bytes, so writes
// through other buffers are passed; allocation afterwards sees the longer
// lives and keeps such buffers apart, and barrier insertion puts barriers
// where the new order needs them. Reads and allocations are passed. The
// longer lives may need more shared memory (a 64x64x32 f32 product on
// gfx1100: 16 KB instead of 8); where the kernel would then no longer fit
// the target although it did before, every read of the function goes back
// where it was (a variant is never lost to this pass).
//
// The backends' schedulers may still hoist reads where registers allow
// (ptxas does, within a block); the stage no longer forces them early.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUSINKSHAREDLOADS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

/// What an op may write, as far as shared reads are concerned.
struct Writes {
  bool anything = false;               // unknown bytes, or synchronizes
  SmallVector<Operation *, 2> buffers; // the shared_allocs it writes through
};

Writes writesOf(Operation *op) {
  Writes w;
  if (isMemoryEffectFree(op))
    return w;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects) {
    w.anything = true;
    return w;
  }
  for (const MemoryEffects::EffectInstance &e : *effects) {
    if (isa<MemoryEffects::Read, MemoryEffects::Allocate>(e.getEffect()))
      continue;
    Value v = e.getValue();
    auto alloc = v ? v.getDefiningOp<SharedAllocOp>() : SharedAllocOp();
    if (!alloc) {
      w.anything = true;
      return w;
    }
    w.buffers.push_back(alloc);
  }
  return w;
}

/// Moves the shared loads of `block` (not of nested blocks) down; appends
/// each moved load and the op that followed it to `moved`.
void sinkInBlock(Block &block,
                 SmallVectorImpl<std::pair<Operation *, Operation *>> &moved) {
  SmallVector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  if (ops.empty())
    return;
  // writesTo[buffer]: the positions of the writes through each buffer, in
  // order; nextFence[i]: the first op at or after i that writes unknown
  // bytes or synchronizes (the terminator counts: nothing moves past it).
  size_t n = ops.size();
  DenseMap<Operation *, SmallVector<size_t>> writesTo;
  SmallVector<bool> fence(n);
  for (size_t i = 0; i < n; ++i) {
    Writes w = writesOf(ops[i]);
    for (Operation *buffer : w.buffers)
      writesTo[buffer].push_back(i);
    fence[i] = w.anything || ops[i]->hasTrait<OpTrait::IsTerminator>();
  }
  SmallVector<size_t> nextFence(n);
  for (size_t i = n, next = n - 1; i-- > 0;)
    nextFence[i] = next = fence[i] ? i : next;

  SmallVector<std::pair<Operation *, Operation *>> moves;
  for (size_t i = 0; i < n; ++i) {
    auto load = dyn_cast<SharedLoadOp>(ops[i]);
    if (!load)
      continue;
    if (i + 1 == n)
      continue; // last in a block without terminator: nowhere to go
    size_t target = nextFence[i + 1];
    Operation *buffer = load.getBuffer().getDefiningOp<SharedAllocOp>();
    if (!buffer)
      continue; // a buffer from elsewhere: its writers are unknown
    auto it = writesTo.find(buffer);
    if (it != writesTo.end()) {
      auto next = llvm::upper_bound(it->second, i);
      if (next != it->second.end())
        target = std::min(target, *next);
    }
    for (Operation *user : load->getUsers())
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        target = std::min(target, index.lookup(inBlock));
    if (target > i + 1)
      moves.push_back({load, ops[target]});
  }
  // In program order: loads moved before the same op keep their order.
  for (auto [load, before] : moves) {
    moved.push_back({load, load->getNextNode()});
    load->moveBefore(before);
  }
}

struct SinkSharedLoadsPass
    : kiln::gpu::impl::TileGPUSinkSharedLoadsBase<SinkSharedLoadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, "", 0);
    if (failed(config))
      return signalPassFailure();
    int64_t limit = config->target->maxSharedBytes;
    for (auto fn : module.getOps<func::FuncOp>()) {
      int64_t before = getSharedBytesNeeded(fn);
      SmallVector<std::pair<Operation *, Operation *>> moved;
      fn.walk([&](Block *block) { sinkInBlock(*block, moved); });
      // Longer lives may need more shared memory; never so much more that
      // a kernel which fit no longer does: then every read goes back.
      if (moved.empty() || getSharedBytesNeeded(fn) <= std::max(before, limit))
        continue;
      for (auto [load, next] : llvm::reverse(moved))
        load->moveBefore(next);
    }
  }
};

} // namespace
