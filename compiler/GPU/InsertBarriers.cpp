//===- InsertBarriers.cpp - Barriers between shared-memory accesses -------===//
//
// tile-gpu-insert-barriers: after tile-gpu-allocate-shared, every shared
// access touches known bytes (its buffer's [offset, offset + size)). Walking
// the per-thread form in program order, the pass remembers which bytes any
// thread may have written or read since the last barrier, and puts a
// `kiln_gpu.barrier` before an access that could race with them: a read of
// bytes written (RAW), a write of bytes read or written (WAR, WAW) — the
// other threads' accesses are unknown, so every access counts as another
// thread's. Buffers that share bytes (reused by the allocator) race too.
//
// Barriers go only where every thread of the program arrives: at the
// function's top level or directly in a loop body. An access nested in an
// `scf.if` (a thread-dependent branch, such as "only the owner of an
// element writes it") counts as happening at the `scf.if`. A loop is walked
// twice, so that accesses at the end of one iteration are seen by those at
// the start of the next.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUINSERTBARRIERS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

/// Byte ranges [begin, end) of shared memory.
struct Ranges {
  SmallVector<std::pair<int64_t, int64_t>> list;

  bool overlaps(std::pair<int64_t, int64_t> r) const {
    for (auto [b, e] : list)
      if (b < r.second && r.first < e)
        return true;
    return false;
  }
  bool overlaps(const Ranges &other) const {
    for (auto r : other.list)
      if (overlaps(r))
        return true;
    return false;
  }
  void add(std::pair<int64_t, int64_t> r) {
    if (!llvm::is_contained(list, r))
      list.push_back(r);
  }
  void add(const Ranges &other) {
    for (auto r : other.list)
      add(r);
  }
  bool empty() const { return list.empty(); }
};

/// What is pending since the last barrier.
struct State {
  Ranges written, read;
  void clear() {
    written.list.clear();
    read.list.clear();
  }
  void join(const State &other) {
    written.add(other.written);
    read.add(other.read);
  }
};

class BarrierInserter {
public:
  LogicalResult run(func::FuncOp fn) {
    State state;
    return walkBlock(fn.getBody().front(), state);
  }

private:
  /// The bytes `op` (or anything nested in it) reads and writes.
  LogicalResult summarize(Operation *op, Ranges &reads, Ranges &writes) {
    WalkResult r = op->walk([&](Operation *inner) {
      Value buffer;
      bool isWrite = false;
      if (auto l = dyn_cast<SharedLoadOp>(inner))
        buffer = l.getBuffer();
      else if (auto m = dyn_cast<SharedLoadMatrixOp>(inner))
        buffer = m.getBuffer();
      else if (auto s = dyn_cast<SharedStoreOp>(inner))
        buffer = s.getBuffer(), isWrite = true;
      else
        return WalkResult::advance();
      auto alloc = buffer.getDefiningOp<SharedAllocOp>();
      if (!alloc || !alloc.getOffset()) {
        inner->emitOpError("accesses a shared buffer without an offset: run "
                           "tile-gpu-allocate-shared first");
        return WalkResult::interrupt();
      }
      std::pair<int64_t, int64_t> range{
          int64_t(*alloc.getOffset()),
          int64_t(*alloc.getOffset()) + int64_t(alloc.getSize())};
      (isWrite ? writes : reads).add(range);
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// A barrier is due before an access of `reads`/`writes`.
  static bool races(const State &s, const Ranges &reads, const Ranges &writes) {
    return s.written.overlaps(reads) || s.written.overlaps(writes) ||
           s.read.overlaps(writes);
  }

  LogicalResult walkBlock(Block &block, State &state) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<BarrierOp>(op)) {
        state.clear();
        continue;
      }
      if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        // Twice: the second pass sees the first iteration's leftovers.
        State inLoop = state;
        for (int pass = 0; pass < 2; ++pass)
          if (failed(walkBlock(*forOp.getBody(), inLoop)))
            return failure();
        state.join(inLoop);
        continue;
      }
      if (isa<scf::WhileOp>(op))
        return op.emitOpError("while loops in the per-thread form are not "
                              "supported by barrier insertion");
      Ranges reads, writes;
      if (failed(summarize(&op, reads, writes)))
        return failure();
      if (reads.empty() && writes.empty())
        continue;
      if (races(state, reads, writes)) {
        OpBuilder b(&op);
        BarrierOp::create(b, op.getLoc());
        state.clear();
      }
      state.read.add(reads);
      state.written.add(writes);
    }
    return success();
  }
};

struct InsertBarriersPass
    : public kiln::gpu::impl::TileGPUInsertBarriersBase<InsertBarriersPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (failed(BarrierInserter().run(fn)))
        return signalPassFailure();
  }
};

} // namespace
