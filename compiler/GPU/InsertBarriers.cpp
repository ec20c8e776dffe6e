//===- InsertBarriers.cpp - Barriers between shared-memory accesses -------===//
//
// tile-gpu-insert-barriers: after tile-gpu-allocate-shared, every shared
// access touches known bytes (its buffer's [offset, offset + size)). Walking
// the per-thread form in program order, the pass remembers which bytes any
// thread may have written or read since the last barrier, and puts a
// `kiln_gpu.barrier` before an access that could race with them: a read of
// bytes written (RAW), a write of bytes read (WAR) — the other threads'
// accesses are unknown, so every access counts as another thread's — and a
// write of bytes written through another buffer (WAW: buffers the
// allocator placed on the same bytes). Writes through one buffer need no
// barrier between them: the stage writes each byte of a buffer from one
// thread only, the same one each time.
//
// Barriers go only where every thread of the program arrives: at the
// function's top level, directly in a loop body, or in a branch whose
// condition is the same in every thread (a scalar computed from arguments,
// program ids and loop counters). An access nested in a thread-dependent
// `scf.if` (such as "only the owner of an element writes it") counts as
// happening at the `scf.if`. A loop is walked
// twice, so that accesses at the end of one iteration are seen by those at
// the start of the next.
//
// Asynchronous copies write their bytes at some time up to the
// `kiln_gpu.async_wait` that covers them. Starting one counts as a write
// for the accesses before it (WAR, WAW: a barrier first); its bytes stay
// pending, untouched by barriers, and count as written from the next wait
// on (RAW: a barrier between that wait and a read).
//
// Tensor copies (`kiln_gpu.tensor_load`) likewise count as writes for the
// accesses before them, but their bytes become visible to each thread at
// its `kiln_gpu.mbarrier_wait`, with no barrier: they are never pending.
// Initializing and invalidating a transaction barrier writes its bytes,
// arriving at and waiting on it reads them (so the threads' first wait
// comes after a barrier that follows the initialization).
//
// Proxies. The threads' shared accesses (loads, stores, matrix loads,
// cp.async) go through the generic proxy, tensor copies through the async
// one; the hardware orders the two only across a proxy fence. The pass
// remembers the bytes generic accesses touched since the last
// `kiln_gpu.shared_fence` (barriers do not clear them), and before a
// tensor copy into any of them puts a fence, then a barrier: every thread
// fences its own accesses, and the barrier orders them all before the
// copy (CUTLASS's consumers fence before releasing a slot likewise).
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUINSERTBARRIERS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

/// Byte ranges [begin, end) of shared memory, each with the buffer (its
/// `shared_alloc`) it was accessed through.
struct Ranges {
  struct Range {
    int64_t begin, end;
    Operation *buffer;
    bool operator==(const Range &o) const {
      return begin == o.begin && end == o.end && buffer == o.buffer;
    }
  };
  SmallVector<Range> list;

  /// Whether `r` overlaps a range; with `otherBuffersOnly`, only ranges
  /// accessed through another buffer count.
  bool overlaps(const Range &r, bool otherBuffersOnly = false) const {
    for (const Range &x : list)
      if (x.begin < r.end && r.begin < x.end &&
          !(otherBuffersOnly && x.buffer == r.buffer))
        return true;
    return false;
  }
  bool overlaps(const Ranges &other, bool otherBuffersOnly = false) const {
    for (const Range &r : other.list)
      if (overlaps(r, otherBuffersOnly))
        return true;
    return false;
  }
  void add(const Range &r) {
    if (!llvm::is_contained(list, r))
      list.push_back(r);
  }
  void add(const Ranges &other) {
    for (const Range &r : other.list)
      add(r);
  }
  bool empty() const { return list.empty(); }
};

/// What is pending since the last barrier, and the bytes of asynchronous
/// copies not yet waited for.
struct State {
  Ranges written, read, inFlight;
  /// Bytes accessed through the generic proxy since the last proxy fence.
  Ranges generic;
  /// A barrier orders the accesses before it; copies in flight go on.
  void clear() {
    written.list.clear();
    read.list.clear();
  }
  void join(const State &other) {
    written.add(other.written);
    read.add(other.read);
    inFlight.add(other.inFlight);
    generic.add(other.generic);
  }
};

/// The bytes an op (or anything nested in it) accesses.
struct Accesses {
  Ranges reads, writes, asyncWrites, tensorWrites;
  /// The bytes of reads, writes and asynchronous copies of the generic
  /// proxy (the threads' own accesses).
  Ranges generic;
  bool empty() const {
    return reads.empty() && writes.empty() && asyncWrites.empty() &&
           tensorWrites.empty();
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
  LogicalResult summarize(Operation *op, Accesses &acc) {
    WalkResult r = op->walk([&](Operation *inner) {
      Value buffer;
      Ranges *set = &acc.reads;
      if (auto w = dyn_cast<WarpgroupMmaOp>(inner)) {
        // The matrix unit reads B, and A unless it is in registers.
        if (w.getABuffer() && failed(addRange(w, w.getABuffer(), acc.reads)))
          return WalkResult::interrupt();
        buffer = w.getBBuffer();
      } else if (auto l = dyn_cast<SharedLoadOp>(inner))
        buffer = l.getBuffer();
      else if (auto m = dyn_cast<SharedLoadMatrixOp>(inner))
        buffer = m.getBuffer();
      else if (auto s = dyn_cast<SharedStoreOp>(inner))
        buffer = s.getBuffer(), set = &acc.writes;
      else if (auto c = dyn_cast<AsyncCopyOp>(inner))
        buffer = c.getBuffer(), set = &acc.asyncWrites;
      else if (auto t = dyn_cast<TensorLoadOp>(inner))
        buffer = t.getBuffer(), set = &acc.tensorWrites;
      else if (isa<MbarrierInitOp, MbarrierInvalOp>(inner))
        buffer = inner->getOperand(0), set = &acc.writes;
      else if (isa<MbarrierArriveTxOp, MbarrierWaitOp>(inner))
        buffer = inner->getOperand(0);
      else
        return WalkResult::advance();
      if (isa<SharedLoadOp, SharedLoadMatrixOp, SharedStoreOp, AsyncCopyOp>(
              inner) &&
          failed(addRange(inner, buffer, acc.generic)))
        return WalkResult::interrupt();
      return failed(addRange(inner, buffer, *set)) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// Adds the bytes of `buffer`, which `op` accesses, to `set`.
  static LogicalResult addRange(Operation *op, Value buffer, Ranges &set) {
    auto alloc = buffer.getDefiningOp<SharedAllocOp>();
    if (!alloc || !alloc.getOffset())
      return op->emitOpError("accesses a shared buffer without an offset: "
                             "run tile-gpu-allocate-shared first");
    set.add({int64_t(*alloc.getOffset()),
             int64_t(*alloc.getOffset()) + int64_t(alloc.getSize()), alloc});
    return success();
  }

  /// A barrier is due before an access of `reads`/`writes`. Writes through
  /// one buffer do not race with each other: the stage's stores into a
  /// buffer write each byte from one thread only (the owner of its
  /// element, the same thread each time), so only writes through another
  /// buffer sharing the bytes count as a write-after-write.
  static bool races(const State &s, const Ranges &reads, const Ranges &writes) {
    return s.written.overlaps(reads) ||
           s.written.overlaps(writes, /*otherBuffersOnly=*/true) ||
           s.read.overlaps(writes);
  }
  static bool races(const State &s, const Accesses &acc) {
    // A copy started after a wait goes after the barrier that publishes
    // the landed bytes (the same barrier then also covers the reads of the
    // slot the copy overwrites), so it counts every written byte.
    return races(s, acc.reads, acc.writes) ||
           s.written.overlaps(acc.asyncWrites) ||
           s.read.overlaps(acc.asyncWrites) ||
           s.written.overlaps(acc.tensorWrites) ||
           s.read.overlaps(acc.tensorWrites);
  }

  /// True when `v` may differ between the threads of a program: it
  /// depends on a thread id, on another thread's data (shuffles, shared
  /// memory, matrix instructions, atomics) or on per-thread registers
  /// (vectors). Scalars computed from arguments, program ids, constants
  /// and loop counters are the same in every thread.
  bool isThreadDependent(Value v) {
    auto it = dependent.find(v);
    if (it != dependent.end())
      return it->second;
    dependent[v] = false; // cycles through loop-carried values
    bool dep = false;
    if (isa<VectorType>(v.getType())) {
      dep = true;
    } else if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
        if (arg == forOp.getInductionVar()) {
          dep = isThreadDependent(forOp.getLowerBound()) ||
                isThreadDependent(forOp.getStep());
        } else {
          unsigned k = arg.getArgNumber() - 1;
          dep = isThreadDependent(forOp.getInitArgs()[k]) ||
                isThreadDependent(
                    forOp.getBody()->getTerminator()->getOperand(k));
        }
      } else {
        dep = !isa<func::FuncOp>(parent);
      }
    } else {
      Operation *def = v.getDefiningOp();
      dep = def->getNumRegions() != 0 ||
            isa<HwIdOp, ShuffleOp, SharedLoadOp, SharedLoadMatrixOp, MmaOp,
                AtomicRMWOp, AtomicCASOp, GlobalLoadOp>(def) ||
            llvm::any_of(def->getOperands(),
                         [&](Value o) { return isThreadDependent(o); });
    }
    dependent[v] = dep;
    return dep;
  }

  DenseMap<Value, bool> dependent;
  int inserted = 0;
  int dropped = getTestFault("drop-barrier").value_or(-1);

  LogicalResult walkBlock(Block &block, State &state) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<BarrierOp>(op)) {
        state.clear();
        continue;
      }
      if (isa<SharedFenceOp>(op)) {
        state.generic.list.clear();
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
      if (auto ifOp = dyn_cast<scf::IfOp>(op);
          ifOp && !isThreadDependent(ifOp.getCondition())) {
        // Every thread takes the same branch: barriers go inside it.
        State thenState = state, elseState = state;
        if (failed(walkBlock(ifOp.getThenRegion().front(), thenState)))
          return failure();
        if (!ifOp.getElseRegion().empty() &&
            failed(walkBlock(ifOp.getElseRegion().front(), elseState)))
          return failure();
        thenState.join(elseState);
        state = thenState;
        continue;
      }
      if (isa<AsyncWaitOp>(op)) {
        // Conservatively, every copy in flight has landed (a wait that
        // leaves groups pending only makes barriers more frequent).
        state.written.add(state.inFlight);
        state.inFlight.list.clear();
        continue;
      }
      if (isa<scf::WhileOp>(op))
        return op.emitOpError("while loops in the per-thread form are not "
                              "supported by barrier insertion");
      Accesses acc;
      if (failed(summarize(&op, acc)))
        return failure();
      if (acc.empty())
        continue;
      bool crossesProxies = state.generic.overlaps(acc.tensorWrites);
      if (crossesProxies) {
        OpBuilder b(&op);
        SharedFenceOp::create(b, op.getLoc());
        state.generic.list.clear();
      }
      if (crossesProxies || races(state, acc)) {
        // A test fault leaves one barrier out (docs/emulator.md).
        if (dropped != inserted++) {
          OpBuilder b(&op);
          BarrierOp::create(b, op.getLoc());
        }
        state.clear();
      }
      state.read.add(acc.reads);
      state.written.add(acc.writes);
      state.inFlight.add(acc.asyncWrites);
      state.generic.add(acc.generic);
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
