//===- AllocateShared.cpp - Offsets for the shared-memory buffers ---------===//
//
// tile-gpu-allocate-shared: gives every `kiln_gpu.shared_alloc` its byte
// offset in the program's shared memory. A buffer lives from its alloc to
// its last access (an access nested in a loop or branch keeps the buffer
// alive to the end of that op); buffers whose lives do not overlap share
// bytes (first fit, in program order). The kernel's total goes to its
// `kiln_gpu.shared_bytes` attribute; more than the target allows is an
// error that names the limit.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/IR/Builders.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUALLOCATESHARED
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

struct Interval {
  SharedAllocOp alloc;
  int64_t start, end; // program-order positions, inclusive
  int64_t offset = 0, size = 0;
};

/// The buffers of `fn` with their lives and first-fit offsets.
SmallVector<Interval> plan(func::FuncOp fn) {
  // Position of every op, and the last position nested in it.
  DenseMap<Operation *, std::pair<int64_t, int64_t>> pos;
  int64_t counter = 0;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    pos[op] = {counter, counter};
    ++counter;
  });
  fn.walk<WalkOrder::PostOrder>([&](Operation *op) {
    int64_t end = pos[op].second;
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (Operation &inner : b)
          end = std::max(end, pos[&inner].second);
    pos[op].second = end;
  });
  SmallVector<Interval> intervals;
  fn.walk([&](SharedAllocOp alloc) {
    Interval iv{alloc, pos[alloc].first, pos[alloc].first};
    Block *home = alloc->getBlock();
    for (Operation *user : alloc->getUsers()) {
      Operation *anchor = home->findAncestorOpInBlock(*user);
      if (!anchor)
        anchor = user;
      iv.end = std::max(iv.end, pos[anchor].second);
    }
    iv.size = alloc.getSize();
    intervals.push_back(iv);
  });
  for (size_t i = 0; i < intervals.size(); ++i) {
    Interval &iv = intervals[i];
    int64_t align = std::max<int64_t>(1, iv.alloc.getAlignment());
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      offset = (offset + align - 1) / align * align;
      for (size_t j = 0; j < i; ++j) {
        const Interval &o = intervals[j];
        bool liveTogether = o.start <= iv.end && iv.start <= o.end;
        bool overlap =
            offset < o.offset + o.size && o.offset < offset + iv.size;
        if (liveTogether && overlap) {
          offset = o.offset + o.size;
          moved = true;
        }
      }
    }
    iv.offset = offset;
  }
  return intervals;
}

int64_t totalOf(ArrayRef<Interval> intervals) {
  int64_t total = 0;
  for (const Interval &iv : intervals)
    total = std::max(total, iv.offset + iv.size);
  return total;
}

struct AllocateSharedPass
    : public kiln::gpu::impl::TileGPUAllocateSharedBase<AllocateSharedPass> {
  using Base::Base;
  using Base::recordOnly;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, "", 0);
    if (failed(config))
      return signalPassFailure();
    for (auto fn : module.getOps<func::FuncOp>())
      if (failed(allocate(fn, *config->target)))
        return signalPassFailure();
  }

  LogicalResult allocate(func::FuncOp fn, const GPUTarget &target) {
    SmallVector<Interval> intervals = plan(fn);
    Builder b(fn.getContext());
    for (Interval &iv : intervals)
      iv.alloc.setOffsetAttr(b.getI64IntegerAttr(iv.offset));
    int64_t total = totalOf(intervals);
    fn->setAttr(KilnGPUDialect::getSharedBytesAttrName(),
                b.getI64IntegerAttr(total));
    if (total > target.maxSharedBytes && !recordOnly)
      return fn.emitError("needs ")
             << total << " bytes of shared memory; " << target.arch
             << " has at most " << target.maxSharedBytes << " per program";
    return success();
  }
};

} // namespace

int64_t kiln::gpu::getSharedBytesNeeded(func::FuncOp fn) {
  return totalOf(plan(fn));
}
