//===- Pipeline.cpp - Software pipelining of the loads that feed dot -------===//
//
// tile-gpu-pipeline (docs/codegen-gpu.md, "Software pipelining"). For a
// loop
//
//   for i in range(lb, ub, step) { a = load(pa(i, x)); x = next(x); ...dot(a..) }
//
// with S = `stages`, d = S - 1, the loads that feed matrix products go
// through S slots of shared memory, d iterations ahead:
//
//   buf = shared_alloc(S × tile)
//   x' = x;  for p in 0..d-1: async_copy_tile buf[p] <- pa(lb + p·step, x'),
//                             masked by lb + p·step < ub;  commit;  x' = next(x')
//   for i (x = x', r = 0, w = d) {
//     async_wait pending S - 2            // iteration i's slot has landed
//     async_copy_tile buf[w] <- pa(i + d·step, x), masked by i + d·step < ub
//     commit;  x = next(x)
//     a = read_tile buf[r]  ...dot(a..)
//     r, w = (r + 1) mod S, (w + 1) mod S
//   }
//   async_wait pending 0
//
// The address computation of a load (its backward slice in the body) is
// cloned for the iteration ahead; loop-carried values that it advances
// (`x`, such as pointer tiles bumped each iteration) then run d iterations
// ahead, which is why they may serve nothing but that computation. The one
// barrier each iteration needs (between the wait and the copy into the slot
// iteration i - 1 read) is placed by tile-gpu-insert-barriers, which knows
// that a copy's bytes land at the wait.
//
// Targets without asynchronous copies (AMD): the loads run one iteration
// ahead into registers instead, their tiles carried by the loop
// (rewriteRegisters), when the loop's tiles fit in half of a thread's
// registers (fitsRegisters).
//
// Tensor copies (targets with TMA; docs/codegen-gpu.md, "Tensor copies").
// A `kiln_gpu.tensor_box_load` the loop pipelines is copied by one thread
// with its tensor map instead: each slot has a transaction barrier
// (8 bytes of `bars`, initialized before the prologue with one arrival
// per such load), the copy into slot w is
//
//   if (thread == 0 && runs) { mbarrier_arrive_tx bars[w] bytes T
//                              tensor_load buf[w] <- map[coords] (per piece) }
//
// and the iteration waits for its slot's phase, `mbarrier_wait bars[r],
// phase`, where the carried `phase` flips each time r wraps; the bytes are
// then visible without a barrier (tile-gpu-insert-barriers adds a proxy
// fence before a refill of bytes the threads accessed themselves). Copies
// for iterations past the end are not started, so nothing is waited for
// after the loop; the barriers are
// invalidated there. A tensor_box_load left unpipelined becomes the
// `kiln.load` of its pointer form.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

/// True when `v` is zero in every element: a zero constant or a splat of
/// one.
bool isZeroTile(Value v) {
  if (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero()))
    return true;
  if (auto splat = v.getDefiningOp<kiln::SplatOp>())
    return isZeroTile(splat.getSrc());
  return false;
}

/// The pointer form of a load this pass pipelines: `kiln.load` or
/// `kiln_gpu.tensor_box_load`.
struct LoadParts {
  Value ptr, mask, other;
};
LoadParts getLoadParts(Operation *op) {
  if (auto load = dyn_cast<kiln::LoadOp>(op))
    return {load.getPtr(), load.getMask(), load.getOther()};
  auto box = cast<TensorBoxLoadOp>(op);
  return {box.getPtrs(), box.getMask(), box.getOther()};
}

/// The `kiln.load` a tensor_box_load means.
void replaceByPointerLoad(TensorBoxLoadOp box) {
  OpBuilder b(box);
  Value load = kiln::LoadOp::create(b, box.getLoc(), box.getPtrs(),
                                    box.getMask(), box.getOther());
  box.replaceAllUsesWith(load);
  box.erase();
}

/// A builder at the start of `if (thread == 0 && also)` (no `also`:
/// thread 0 alone), created at `b`'s insertion point.
OpBuilder threadZeroBlock(OpBuilder &b, Location loc, Value also = Value()) {
  Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     HwIdOp::create(b, loc, HwIdKind::thread),
                                     threads::i32Const(b, loc, 0));
  if (also)
    cond = arith::AndIOp::create(b, loc, cond, also);
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  return OpBuilder::atBlockBegin(ifOp.thenBlock());
}

/// True when the value of `load` reaches an operand A or B of a
/// `kiln.dot` in its block through data movement and casts.
bool feedsDot(Operation *load) {
  SmallVector<Value> work{load->getResult(0)};
  for (unsigned steps = 0; !work.empty() && steps < 64; ++steps) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != load->getBlock())
        continue;
      if (auto dot = dyn_cast<kiln::DotOp>(user)) {
        if (use.getOperandNumber() < 2)
          return true;
        continue;
      }
      if (isa<ConvertLayoutOp, kiln::ReshapeOp, kiln::TransOp,
              kiln::BroadcastOp, kiln::ExpandDimsOp>(user) ||
          (user->getNumResults() == 1 && user->getNumOperands() == 1 &&
           user->hasTrait<OpTrait::Elementwise>()))
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

class LoopPipeliner {
public:
  LoopPipeliner(scf::ForOp loop, int32_t stages, const threads::Context &c)
      : loop(loop), stages(stages), c(c) {}

  /// Pipelines the loop when it qualifies; true if it changed.
  bool run() {
    collectLoads();
    if (loads.empty() || !collectSlice())
      return false;
    if (!registers)
      rewrite();
    else if (fitsRegisters())
      rewriteRegisters();
    else
      return false;
    return true;
  }

private:
  /// The loads of the body that feed a dot and can be copied
  /// asynchronously (by the threads, or with a tensor map).
  void collectLoads() {
    registers = !c.target->hasAsyncCopy;
    for (Operation &op : *loop.getBody()) {
      if (!isa<kiln::LoadOp, TensorBoxLoadOp>(op))
        continue;
      LoadParts parts = getLoadParts(&op);
      auto ptrType = dyn_cast<RankedTensorType>(parts.ptr.getType());
      if (!ptrType || !getLayout(ptrType) || !feedsDot(&op))
        continue;
      if (registers) {
        // No asynchronous copies: the next iteration's tile is loaded
        // into registers ahead (any `other`: a load fills it itself).
        if (isa<kiln::LoadOp>(op)) {
          loads.push_back(&op);
          plans.push_back(std::nullopt);
        }
        continue;
      }
      if (parts.other && !isZeroTile(parts.other))
        continue; // masked-off elements must read zero, as copies write
      Type elem = getPointeeType(ptrType);
      if (isa<TensorBoxLoadOp>(op) && c.target->hasTensorCopy)
        if (std::optional<threads::TensorCopyPlan> plan =
                threads::planTensorCopy(ptrType.getShape(),
                                        getElementBytes(elem))) {
          loads.push_back(&op);
          plans.push_back(plan);
          continue;
        }
      threads::SharedTile tile =
          threads::getSharedTile(Value(), Value(), ptrType.getShape(), elem);
      threads::AccessPlan p =
          threads::planAccess(c, parts.ptr, parts.mask, ptrType);
      int32_t width =
          threads::getSharedRunWidth(tile, getLinearLayout(ptrType), p.vector);
      if (width * tile.elemBytes < 4)
        continue; // the smallest asynchronous copy is 4 bytes
      loads.push_back(&op);
      plans.push_back(std::nullopt);
    }
  }

  /// Whether load `i` is copied with its tensor map.
  bool isTensorCopy(size_t i) const { return plans[i].has_value(); }
  bool hasTensorCopies() const {
    return llvm::any_of(plans, [](const auto &p) { return p.has_value(); });
  }
  bool hasThreadCopies() const {
    return llvm::any_of(plans, [](const auto &p) { return !p.has_value(); });
  }
  /// The buffers of the loads the threads copy.
  SmallVector<Value> threadCopyBuffers() const {
    SmallVector<Value> out;
    for (size_t i = 0; i < loads.size(); ++i)
      if (!isTensorCopy(i))
        out.push_back(buffers[i]);
    return out;
  }

  /// The ops that compute the loads' addresses and masks (`slice`) and the
  /// loop-carried values they advance (`carried`); false when they cannot
  /// run ahead.
  bool collectSlice() {
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    SmallVector<Value> work;
    for (auto [i, load] : llvm::enumerate(loads)) {
      if (isTensorCopy(i)) {
        auto box = cast<TensorBoxLoadOp>(load);
        llvm::append_range(work, box.getCoords());
        continue;
      }
      LoadParts parts = getLoadParts(load);
      work.push_back(parts.ptr);
      if (parts.mask)
        work.push_back(parts.mask);
      if (registers && parts.other)
        work.push_back(parts.other); // the load ahead takes it too
    }
    llvm::SetVector<Operation *> ops;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() != body || arg == loop.getInductionVar())
          continue;
        unsigned idx = arg.getArgNumber() - 1;
        if (carried.insert(idx))
          work.push_back(yield.getOperand(idx));
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!body->findAncestorOpInBlock(*def))
        continue; // defined before the loop
      if (def->getBlock() != body || def->getNumRegions() != 0 ||
          !isMemoryEffectFree(def))
        return false;
      if (ops.insert(def))
        work.append(def->operand_begin(), def->operand_end());
    }
    // Program order, for cloning.
    for (Operation &op : *body)
      if (ops.contains(&op))
        slice.push_back(&op);
    // Values computed from loop-carried ones run ahead: they may feed only
    // the slice, the loads and the carried values' own yields.
    DenseSet<Operation *> inSlice(ops.begin(), ops.end());
    DenseSet<Operation *> loadOps(loads.begin(), loads.end());
    DenseSet<Value> ahead;
    for (unsigned idx : carried) {
      if (!loop->getResult(idx).use_empty())
        return false;
      ahead.insert(body->getArgument(idx + 1));
    }
    for (Operation *op : slice)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return ahead.contains(v); }))
        for (Value r : op->getResults())
          ahead.insert(r);
    for (Value v : ahead)
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (inSlice.contains(user) || loadOps.contains(user))
          continue;
        if (user == yield && carried.contains(use.getOperandNumber()))
          continue;
        return false;
      }
    return true;
  }

  /// `iv + k × step` (for cloning the slice) and whether that iteration
  /// runs. 32-bit loops compute it in 64 bits, so it cannot wrap.
  std::pair<Value, Value> iterationAhead(OpBuilder &b, Location loc, Value iv,
                                         int64_t k) {
    Type type = iv.getType();
    bool isUnsigned = loop.getUnsignedCmp();
    Value step = loop.getStep(), ub = loop.getUpperBound();
    auto constant = [&](Type t, int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
    };
    if (type.isInteger() && type.getIntOrFloatBitWidth() < 64) {
      Type i64 = b.getI64Type();
      auto widen = [&](Value v) -> Value {
        if (isUnsigned)
          return arith::ExtUIOp::create(b, loc, i64, v);
        return arith::ExtSIOp::create(b, loc, i64, v);
      };
      Value next = arith::AddIOp::create(
          b, loc, widen(iv),
          arith::MulIOp::create(b, loc, widen(step), constant(i64, k)));
      Value runs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         next, widen(ub));
      return {arith::TruncIOp::create(b, loc, type, next), runs};
    }
    Value next = arith::AddIOp::create(
        b, loc, iv, arith::MulIOp::create(b, loc, step, constant(type, k)));
    Value runs = arith::CmpIOp::create(
        b, loc, isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt,
        next, ub);
    return {next, runs};
  }

  /// The carried values the slice advances, as the loop starts them.
  DenseMap<unsigned, Value> carriedInits() {
    DenseMap<unsigned, Value> out;
    for (unsigned idx : carried)
      out[idx] = loop.getInitArgs()[idx];
    return out;
  }

  /// The carried values the slice advances, as the loop's body sees them.
  DenseMap<unsigned, Value> carriedArgs() {
    DenseMap<unsigned, Value> out;
    for (unsigned idx : carried)
      out[idx] = loop.getBody()->getArgument(idx + 1);
    return out;
  }

  /// The loop carries those values ahead: they start at `init`, and each
  /// iteration yields `next`.
  void carryAhead(const DenseMap<unsigned, Value> &init,
                  const DenseMap<unsigned, Value> &next) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (unsigned idx : carried) {
      loop.getInitArgsMutable()[idx].set(init.lookup(idx));
      yield->setOperand(idx, next.lookup(idx));
    }
  }

  /// Erases the body's side-effect-free ops left without uses (the
  /// original address computation of the loads the pass replaced).
  void eraseDeadOps() {
    Block *body = loop.getBody();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
      if (&op != body->getTerminator() && op.use_empty() &&
          isMemoryEffectFree(&op))
        op.erase();
  }

  /// Clones the slice for iteration `iv` (carried values from `carriedIn`,
  /// indexed like the loop's iter args) and starts its copies into `slot`
  /// (in registers mode: its loads, whose tiles go to `loaded`); returns
  /// the carried values for the next iteration.
  DenseMap<unsigned, Value> issue(OpBuilder &b, Value iv, Value runs,
                                  const DenseMap<unsigned, Value> &carriedIn,
                                  Value slot,
                                  SmallVector<Value> *loaded = nullptr) {
    Block *body = loop.getBody();
    IRMapping map;
    map.map(loop.getInductionVar(), iv);
    for (auto [idx, v] : carriedIn)
      map.map(body->getArgument(idx + 1), v);
    for (Operation *op : slice)
      b.clone(*op, map);
    for (auto [i, load] : llvm::enumerate(loads)) {
      Location loc = load->getLoc();
      if (isTensorCopy(i)) {
        issueTensorCopy(b, cast<TensorBoxLoadOp>(load), *plans[i], buffers[i],
                        slot, runs, map);
        continue;
      }
      LoadParts parts = getLoadParts(load);
      Value ptr = map.lookupOrDefault(parts.ptr);
      auto maskType = cast<RankedTensorType>(getI1SameShape(ptr.getType()));
      Value mask = kiln::SplatOp::create(b, loc, maskType, runs);
      if (parts.mask)
        mask = arith::AndIOp::create(b, loc, map.lookupOrDefault(parts.mask),
                                     mask);
      if (registers) {
        Value other = parts.other ? map.lookupOrDefault(parts.other) : Value();
        auto ahead = kiln::LoadOp::create(b, loc, ptr, mask, other);
        for (NamedAttribute a : load->getDiscardableAttrs())
          ahead->setAttr(a.getName(), a.getValue());
        loaded->push_back(ahead.getResult());
        continue;
      }
      AsyncCopyTileOp::create(b, loc, buffers[i], slot, ptr, mask);
    }
    if (hasThreadCopies() && !registers)
      AsyncCommitOp::create(b, loop.getLoc());
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    DenseMap<unsigned, Value> out;
    for (unsigned idx : carried)
      out[idx] = map.lookupOrDefault(yield.getOperand(idx));
    return out;
  }

  /// `if (thread == 0 && runs)`: announces the slot's bytes on its
  /// barrier and starts the tensor copies of `box`'s pieces into `slot`.
  void issueTensorCopy(OpBuilder &b, TensorBoxLoadOp box,
                       const threads::TensorCopyPlan &plan, Value buffer,
                       Value slot, Value runs, IRMapping &map) {
    Location loc = box.getLoc();
    OpBuilder tb = threadZeroBlock(b, loc, runs);
    int64_t slotBytes = plan.pieces * plan.pieceBytes;
    Value bar =
        arith::MulIOp::create(tb, loc, slot, threads::i32Const(tb, loc, 8));
    MbarrierArriveTxOp::create(tb, loc, bars, bar,
                               tb.getI32IntegerAttr(int32_t(slotBytes)));
    Value slotStart = arith::MulIOp::create(
        tb, loc, slot, threads::i32Const(tb, loc, int32_t(slotBytes)));
    SmallVector<Value> coords;
    for (Value c : box.getCoords())
      coords.push_back(map.lookupOrDefault(c));
    Value inner = coords.back();
    for (int64_t j = 0; j < plan.pieces; ++j) {
      coords.back() =
          j ? arith::AddIOp::create(
                  tb, loc, inner,
                  threads::i32Const(tb, loc, int32_t(j * plan.pieceBox.back())))
            : inner;
      Value offset =
          j ? arith::AddIOp::create(
                  tb, loc, slotStart,
                  threads::i32Const(tb, loc, int32_t(j * plan.pieceBytes)))
            : slotStart;
      TensorLoadOp::create(tb, loc, buffer, offset, box.getMap(), coords, bars,
                           bar);
    }
  }

  void rewrite() {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    int32_t d = stages - 1;
    int32_t tensorCopies = 0;
    for (auto [i, load] : llvm::enumerate(loads)) {
      auto ptrType = cast<RankedTensorType>(getLoadParts(load).ptr.getType());
      int64_t slotBytes =
          ptrType.getNumElements() * getElementBytes(getPointeeType(ptrType));
      int64_t alignment = std::clamp<int64_t>(slotBytes, 16, 128);
      if (isTensorCopy(i)) {
        alignment = plans[i]->alignment;
        ++tensorCopies;
      }
      buffers.push_back(threads::allocShared(b, load->getLoc(),
                                             stages * slotBytes, alignment));
    }
    // The slots' transaction barriers, ready before the prologue's copies
    // (the barrier pass puts a barrier between their initialization and
    // the other threads' waits).
    if (tensorCopies) {
      bars = threads::allocShared(b, loc, 8 * stages, 8);
      OpBuilder ib = threadZeroBlock(b, loc);
      for (int32_t s = 0; s < stages; ++s)
        MbarrierInitOp::create(ib, loc, bars, threads::i32Const(ib, loc, 8 * s),
                               ib.getI32IntegerAttr(tensorCopies));
    }
    // Prologue: iterations 0 .. d - 1 into slots 0 .. d - 1.
    DenseMap<unsigned, Value> carriedValues = carriedInits();
    for (int32_t p = 0; p < d; ++p) {
      auto [iv, runs] = iterationAhead(b, loc, loop.getLowerBound(), p);
      carriedValues =
          issue(b, iv, runs, carriedValues, threads::i32Const(b, loc, p));
    }
    // The loop carries the values d iterations ahead and the two slots.
    IRRewriter rewriter(b);
    rewriter.setInsertionPoint(loop);
    Value readInit = threads::i32Const(b, loc, 0);
    Value writeInit = threads::i32Const(b, loc, d);
    unsigned numIter = loop.getNumRegionIterArgs();
    auto bump = [&](OpBuilder &bb, Value slot) -> Value {
      Value next =
          arith::AddIOp::create(bb, loc, slot, threads::i32Const(bb, loc, 1));
      Value wraps = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq,
                                          next,
                                          threads::i32Const(bb, loc, stages));
      return arith::SelectOp::create(bb, loc, wraps,
                                     threads::i32Const(bb, loc, 0), next);
    };
    // With tensor copies, also the parity of the read slot's phase, which
    // flips when the read slot wraps.
    SmallVector<Value> inits{readInit, writeInit};
    if (bars)
      inits.push_back(threads::i32Const(b, loc, 0));
    FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &bb, Location, ArrayRef<BlockArgument> args) {
          SmallVector<Value> next{bump(bb, args[0]), bump(bb, args[1])};
          if (bars) {
            Value wraps = arith::CmpIOp::create(
                bb, loc, arith::CmpIPredicate::eq, next[0],
                threads::i32Const(bb, loc, 0));
            next.push_back(arith::SelectOp::create(
                bb, loc, wraps,
                arith::XOrIOp::create(bb, loc, args[2],
                                      threads::i32Const(bb, loc, 1)),
                args[2]));
          }
          return next;
        });
    assert(succeeded(replaced) && "scf.for takes more iter args");
    loop = cast<scf::ForOp>(replaced->getOperation());
    Block *body = loop.getBody();
    Value readSlot = body->getArgument(numIter + 1);
    Value writeSlot = body->getArgument(numIter + 2);

    // The iteration: wait for this iteration's slots, start iteration
    // i + d's copies, read the slots where the loads were. With warpgroup
    // products the copies start at the end of the iteration instead: the
    // products read their slots asynchronously, and the slot iteration
    // i + d writes is the one iteration i - 1's products read, which the
    // product's wait in iteration i covers (ThreadWarpgroup.cpp keeps one
    // batch of them in flight).
    b.setInsertionPointToStart(body);
    if (hasThreadCopies())
      AsyncWaitOp::create(b, loc, threadCopyBuffers(),
                          b.getI32IntegerAttr(stages - 2));
    if (bars)
      MbarrierWaitOp::create(
          b, loc, bars,
          arith::MulIOp::create(b, loc, readSlot, threads::i32Const(b, loc, 8)),
          body->getArgument(numIter + 3));
    // (Test fault, docs/emulator.md: the copies start before the product
    // while the previous batch may still read the slot they overwrite.)
    if (hasInFlightProduct()) {
      loop->setAttr(threads::kCopiesAfterProductsAttr, b.getUnitAttr());
      if (!getTestFault("wgmma-copies-early"))
        b.setInsertionPoint(body->getTerminator());
    }
    auto [iv, runs] = iterationAhead(b, loc, loop.getInductionVar(), d);
    carryAhead(carriedValues, issue(b, iv, runs, carriedArgs(), writeSlot));
    for (auto [load, buffer] : llvm::zip(loads, buffers)) {
      Value own;
      Type loadType = load->getResult(0).getType();
      for (OpOperand &use : llvm::make_early_inc_range(load->getUses())) {
        Operation *user = use.getOwner();
        if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
          b.setInsertionPoint(convert);
          convert.replaceAllUsesWith(
              ReadTileOp::create(b, convert.getLoc(), convert.getType(), buffer,
                                 readSlot, nullptr, nullptr)
                  .getResult());
          convert.erase();
          continue;
        }
        if (readView(b, user, buffer, readSlot))
          continue;
        if (!own) {
          b.setInsertionPoint(load);
          own = ReadTileOp::create(b, load->getLoc(), loadType, buffer,
                                   readSlot, nullptr, nullptr);
        }
        use.set(own);
      }
      load->erase();
    }
    eraseDeadOps();

    b.setInsertionPointAfter(loop);
    if (hasThreadCopies())
      AsyncWaitOp::create(b, loc, threadCopyBuffers(), b.getI32IntegerAttr(0));
    if (bars) {
      // Every copy started was waited for in the loop: the barriers' bytes
      // may serve other buffers from here on.
      OpBuilder ib = threadZeroBlock(b, loc);
      for (int32_t s = 0; s < stages; ++s)
        MbarrierInvalOp::create(ib, loc, bars,
                                threads::i32Const(ib, loc, 8 * s));
    }
  }

  /// Registers mode: whether the loop's tiles — those it carries, those
  /// it uses from before it, and each loaded tile twice (this iteration's
  /// and the next one's) — fit in half of a thread's vector registers
  /// (256 at most), leaving the other half to the body's temporaries.
  /// Large tiles prefetched anyway spill (attention with 128-wide heads
  /// and 128-row blocks) or keep more registers across the loop than the
  /// target has (the variant is then dropped).
  bool fitsRegisters() {
    auto regs = [](Type t) -> int64_t {
      auto tile = dyn_cast<RankedTensorType>(t);
      if (!tile || !getLayout(tile))
        return 0;
      int64_t elems = getLinearLayout(tile).getInDimSize(dims::kRegister);
      Type e = tile.getElementType();
      int64_t bits = isa<kiln::PointerType>(e) ? 64
                     : e.isIntOrFloat()         ? e.getIntOrFloatBitWidth()
                                                : 32;
      return (elems * bits + 31) / 32;
    };
    int64_t live = 0;
    for (Value arg : loop.getRegionIterArgs())
      live += regs(arg.getType());
    llvm::SetVector<Value> outside;
    loop.getBody()->walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
          outside.insert(v);
    });
    for (Value v : outside)
      live += regs(v.getType());
    for (Operation *load : loads)
      live += 2 * regs(load->getResult(0).getType());
    return live <= std::min<int64_t>(c.target->maxRegistersPerThread, 256) / 2;
  }

  /// Registers mode (targets without asynchronous copies): the loads run
  /// one iteration ahead, their tiles carried by the loop,
  ///
  ///   x' = x;  t = load(pa(lb, x')) masked by lb < ub;  x' = next(x')
  ///   for i (x = x', t) {
  ///     t' = load(pa(i + step, x)) masked by i + step < ub;  x = next(x)
  ///     ...dot(t..)
  ///     yield t'
  ///   }
  ///
  /// so that the next tile's loads are in flight while this one's products
  /// run. (One iteration ahead whatever `stages` says: each tile ahead
  /// costs its registers.)
  void rewriteRegisters() {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto [iv0, runs0] = iterationAhead(b, loc, loop.getLowerBound(), 0);
    SmallVector<Value> first;
    DenseMap<unsigned, Value> carriedValues =
        issue(b, iv0, runs0, carriedInits(), Value(), &first);
    IRRewriter rewriter(b);
    rewriter.setInsertionPoint(loop);
    unsigned numIter = loop.getNumRegionIterArgs();
    FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
        rewriter, first, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>(args.begin(), args.end());
        });
    assert(succeeded(replaced) && "scf.for takes more iter args");
    loop = cast<scf::ForOp>(replaced->getOperation());
    Block *body = loop.getBody();
    b.setInsertionPointToStart(body);
    auto [iv, runs] = iterationAhead(b, loc, loop.getInductionVar(), 1);
    SmallVector<Value> next;
    carryAhead(carriedValues,
               issue(b, iv, runs, carriedArgs(), Value(), &next));
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    for (auto [i, load] : llvm::enumerate(loads)) {
      yield->setOperand(numIter + i, next[i]);
      load->getResult(0).replaceAllUsesWith(body->getArgument(numIter + 1 + i));
      load->erase();
    }
    eraseDeadOps();
  }

  /// A load whose only use goes through reshapes, then at most one
  /// transposition (and a layout conversion), into anything else —
  /// attention's K^T and V, whose last op already has the dot operand's
  /// layout: the chain becomes one read of that view of the slot, straight
  /// into the chain's final layout (no second trip through shared memory).
  /// False, changing nothing, for any other shape of use.
  bool readView(OpBuilder &b, Operation *first, Value buffer, Value slot) {
    SmallVector<Operation *> chain;
    ArrayRef<int32_t> order;
    for (Operation *op = first;;) {
      if (auto trans = dyn_cast<kiln::TransOp>(op)) {
        if (!order.empty())
          return false;
        order = trans.getOrder();
      } else if (isa<kiln::ReshapeOp>(op)) {
        if (!order.empty())
          return false; // a reshape after the transposition: not one view
      } else if (!isa<ConvertLayoutOp>(op) || chain.empty()) {
        break;
      }
      chain.push_back(op);
      if (isa<ConvertLayoutOp>(op) || !op->getResult(0).hasOneUse())
        break;
      op = *op->getResult(0).getUsers().begin();
    }
    if (chain.empty())
      return false;
    Operation *last = chain.back();
    auto tileType = cast<RankedTensorType>(first->getOperand(0).getType());
    b.setInsertionPoint(last);
    Value read = ReadTileOp::create(
        b, last->getLoc(), last->getResult(0).getType(), buffer, slot,
        b.getDenseI64ArrayAttr(tileType.getShape()),
        order.empty() ? DenseI32ArrayAttr() : b.getDenseI32ArrayAttr(order));
    last->getResult(0).replaceAllUsesWith(read);
    for (Operation *dead : llvm::reverse(chain))
      dead->erase();
    return true;
  }

  /// Whether the body has a product of a warpgroup matrix instruction that
  /// may stay in flight across iterations: both operands come from loads
  /// this loop pipelines, and it only carries the loop's accumulator
  /// (ThreadWarpgroup.cpp, markInFlightProducts, decides the same on the
  /// slots' reads).
  bool hasInFlightProduct() {
    auto pipelined = [&](Value v) {
      while (Operation *def = v.getDefiningOp()) {
        if (!isa<ConvertLayoutOp, kiln::ReshapeOp, kiln::TransOp>(def))
          break;
        v = def->getOperand(0);
      }
      Operation *load = v.getDefiningOp();
      return load && llvm::is_contained(loads, load);
    };
    return llvm::any_of(
        loop.getBody()->getOps<kiln::DotOp>(), [&](kiln::DotOp dot) {
          return threads::isWarpgroupProduct(dot) && pipelined(dot.getA()) &&
                 pipelined(dot.getB()) && threads::carriesOnly(dot);
        });
  }

  scf::ForOp loop;
  int32_t stages;
  const threads::Context &c;
  /// No asynchronous copies on the target: loads run ahead into registers.
  bool registers = false;
  SmallVector<Operation *> loads;
  /// Per load: how tensor copies write it, or nullopt for the threads'
  /// asynchronous copies.
  SmallVector<std::optional<threads::TensorCopyPlan>> plans;
  SmallVector<Value> buffers;
  /// The slots' transaction barriers (with tensor copies).
  Value bars;
  SmallVector<Operation *> slice;
  llvm::SetVector<unsigned> carried;
};

struct PipelinePass
    : public kiln::gpu::impl::TileGPUPipelineBase<PipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, "", 0);
    if (failed(config))
      return signalPassFailure();
    int32_t depth = stages;
    if (depth <= 0) {
      depth = 2; // the language's default
      if (auto variant = module->getAttrOfType<DictionaryAttr>(
              KilnDialect::getVariantAttrName()))
        if (auto s = variant.getAs<IntegerAttr>("stages"))
          depth = int32_t(s.getInt());
    }
    if (depth >= 2) {
      AxisInfoAnalysis axis(module);
      threads::Context c{config->target, &axis, false};
      SmallVector<scf::ForOp> loops;
      module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        LoopPipeliner(loop, depth, c).run();
    }
    // Boxes no loop took for tensor copies load through their pointers.
    SmallVector<TensorBoxLoadOp> left;
    module.walk([&](TensorBoxLoadOp box) { left.push_back(box); });
    for (TensorBoxLoadOp box : left)
      replaceByPointerLoad(box);
    // Their maps are then unused (as is a map whose load folded away): the
    // image carries only those it reads.
    dropUnusedTensorMaps(module);
  }
};

} // namespace
