//===- AssignLayouts.cpp - Give every tile a distributed layout -----------===//
//
// tile-gpu-assign-layouts: the layout assignment of the GPU stage.
//
// 1. Anchors. Memory accesses want a coalesced blocked layout: the
//    dimension of largest contiguity (axis analysis) fastest, as many
//    consecutive elements per thread as the alignment, the mask and the
//    target's widest access allow, lanes then warps over the rest. `dot`
//    wants the matrix instruction's accumulator and operand layouts.
// 2. Backward propagation. Each anchor's layout flows to the producers of
//    its operands through ops that can compute in any layout (elementwise
//    arithmetic, splats, aranges, broadcasts, expand_dims as a slice), so
//    that address and mask computations happen where the access needs
//    them; the first anchor to reach a value wins.
// 3. Forward completion. What is left takes the layout of its operands
//    (a reduction: the slice of its input's), else the default blocked
//    layout for its shape.
// 4. Rewrite. Every tile type gets its layout; `kiln_gpu.convert_layout`
//    goes wherever an operand's layout is not the one its user needs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUASSIGNLAYOUTS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

/// Ops whose result may take any layout, with every tile operand in it
/// (a broadcast too: its source takes the result's layout).
bool isLayoutTransparent(Operation *op) {
  return computesInAnyLayout(op) || isa<kiln::BroadcastOp>(op);
}

class Assigner {
public:
  Assigner(func::FuncOp fn, const GPUTarget &target, int32_t warps)
      : fn(fn), ctx(fn.getContext()), target(target), warps(warps),
        axis(fn) {}

  LogicalResult run() {
    // Loads first (their results must keep their pointers' layout), then
    // the matrix products (so that accumulators carried by loops get the
    // instruction's layout before any later use claims them), then stores.
    for (AnchorKind kind : {AnchorKind::Load, AnchorKind::Dot,
                            AnchorKind::Store}) {
      collectAnchors(kind);
      propagateBackward();
    }
    if (failed(completeForward()))
      return failure();
    rewrite();
    return success();
  }

private:
  Attribute defaultLayout(RankedTensorType type) {
    return getDefaultBlockedLayout(ctx, type.getShape(), target.warpSize,
                                   warps);
  }

  /// The accumulator layout of a product on scalar FMAs. Each thread reads
  /// all of K for each of its rows of A and its columns of B, so it holds a
  /// block of rows by `c` consecutive columns with `c` chosen to make rows
  /// plus columns fewest (ties: the widest `c` up to 4, a 16-byte f32
  /// store). The default layout, lanes across the columns, gave a 32x32
  /// result on 64 threads 16 rows by 1 column: 1024 values of A for K = 64
  /// (a compile of minutes), where 4 by 4 reads 256 of each operand.
  BlockedAttr fmaAccumulatorLayout(RankedTensorType type) {
    ArrayRef<int64_t> shape = type.getShape();
    BlockedAttr best;
    int64_t bestCost = std::numeric_limits<int64_t>::max();
    for (int64_t c = 1; c <= shape[1]; c *= 2) {
      BlockedAttr l = getCoalescedLayout(ctx, shape, {1, 0}, int32_t(c),
                                         target.warpSize, warps);
      int64_t rows = std::max<int64_t>(
          1, shape[0] / (l.getThreadsPerWarp()[0] * l.getWarpsPerBlock()[0]));
      int64_t cols = std::max<int64_t>(
          l.getSizePerThread()[1],
          shape[1] / (l.getThreadsPerWarp()[1] * l.getWarpsPerBlock()[1]));
      int64_t cost = rows + cols;
      if (cost < bestCost || (cost == bestCost && c <= 4))
        best = l, bestCost = cost;
    }
    return best;
  }

  /// The coalesced layout for an access through the tile of pointers
  /// `ptr` (masked by `mask`, may be null).
  Attribute accessLayout(Value ptr, Value mask) {
    auto type = cast<RankedTensorType>(ptr.getType());
    AxisInfo info = axis.lookup(ptr);
    unsigned rank = type.getRank();
    SmallVector<unsigned, 3> order;
    for (unsigned d = rank; d-- > 0;)
      order.push_back(d);
    // Largest contiguity first (insertion sort: stable, and rank <= 3).
    for (unsigned i = 1; i < order.size(); ++i)
      for (unsigned j = i; j > 0 && info.contiguity[order[j]] >
                                        info.contiguity[order[j - 1]];
           --j)
        std::swap(order[j], order[j - 1]);
    int64_t elemBytes = getElementBytes(getPointeeType(type));
    int64_t vector = axis.getVectorizableElements(ptr, order[0], mask);
    vector = std::min<int64_t>(vector, target.maxVectorBytes / elemBytes);
    // Do not spread fewer elements than threads over wider vectors.
    int64_t perThread =
        std::max<int64_t>(1, type.getNumElements() / (warps * target.warpSize));
    vector = std::max<int64_t>(1, std::min(vector, perThread));
    return getCoalescedLayout(ctx, type.getShape(), order, int32_t(vector),
                              target.warpSize, warps);
  }

  void anchor(Value v, Attribute layout) {
    if (!isa<RankedTensorType>(v.getType()) || layouts.count(v))
      return;
    // A reduction's result is the slice of its input's layout: users that
    // want another convert it.
    if (v.getDefiningOp<kiln::ReduceOp>())
      return;
    // A dot's result is the accumulator layout its own anchor chooses.
    if (v.getDefiningOp<kiln::DotOp>() && phase != AnchorKind::Dot)
      return;
    // A loop-carried value takes the layout its loop already gave it.
    if (Value twin = loopTwin(v))
      if (Attribute existing = lookup(twin))
        layout = existing;
    layouts[v] = layout;
    worklist.push_back(v);
  }

  /// For a loop result its iteration argument, and the other way around.
  static Value loopTwin(Value v) {
    if (auto forOp = v.getDefiningOp<scf::ForOp>())
      return forOp.getRegionIterArgs()[cast<OpResult>(v).getResultNumber()];
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
        if (arg.getArgNumber() >= forOp.getNumInductionVars())
          return forOp.getResult(arg.getArgNumber() -
                                 forOp.getNumInductionVars());
    return {};
  }

  enum class AnchorKind { Load, Dot, Store };

  void collectAnchors(AnchorKind kind) {
    phase = kind;
    fn.walk([&](Operation *op) {
      Value ptr, mask, other;
      if (auto load = dyn_cast<kiln::LoadOp>(op))
        ptr = load.getPtr(), mask = load.getMask(), other = load.getOther();
      // A box tensor copies may take is the load of its pointer form.
      if (auto box = dyn_cast<TensorBoxLoadOp>(op))
        ptr = box.getPtrs(), mask = box.getMask(), other = box.getOther();
      if (ptr) {
        if (kind != AnchorKind::Load || !isa<RankedTensorType>(ptr.getType()))
          return;
        Attribute l = accessLayout(ptr, mask);
        required[op] = l;
        anchor(ptr, l);
        anchor(op->getResult(0), l);
        if (mask)
          anchor(mask, l);
        if (other)
          anchor(other, l);
      } else if (isa<kiln::AtomicRMWOp, kiln::AtomicCASOp>(op)) {
        // Atomics read and write: anchored with the loads, every operand
        // and the result in the access layout.
        Value ptr = op->getOperand(0);
        if (kind != AnchorKind::Load || !isa<RankedTensorType>(ptr.getType()))
          return;
        Value mask;
        if (auto rmw = dyn_cast<kiln::AtomicRMWOp>(op))
          mask = rmw.getMask();
        Attribute l = accessLayout(ptr, mask);
        required[op] = l;
        for (Value operand : op->getOperands())
          anchor(operand, l);
        anchor(op->getResult(0), l);
      } else if (auto dot = dyn_cast<kiln::DotOp>(op)) {
        if (kind != AnchorKind::Dot)
          return;
        if (MmaAttr mma = chooseMma(dot)) {
          anchor(dot.getResult(), mma);
          anchor(dot.getAcc(), mma);
          anchor(dot.getA(), OperandAttr::get(ctx, 0, mma));
          anchor(dot.getB(), OperandAttr::get(ctx, 1, mma));
          return;
        }
        // No matrix instruction for these types (or this shape): scalar
        // FMAs over a blocked accumulator.
        BlockedAttr acc = fmaAccumulatorLayout(dot.getType());
        anchor(dot.getResult(), acc);
        anchor(dot.getAcc(), acc);
        anchor(dot.getA(), DotOperandAttr::get(ctx, 0, acc));
        anchor(dot.getB(), DotOperandAttr::get(ctx, 1, acc));
      } else if (auto store = dyn_cast<kiln::StoreOp>(op)) {
        if (kind != AnchorKind::Store ||
            !isa<RankedTensorType>(store.getPtr().getType()))
          return;
        Attribute l = accessLayout(store.getPtr(), store.getMask());
        required[op] = l;
        anchor(store.getPtr(), l);
        if (store.getMask())
          anchor(store.getMask(), l);
        anchor(store.getValue(), l);
      }
    });
  }

  /// Whether the rows of `dot`'s result stay whole per warp downstream:
  /// its result (through elementwise ops, casts and broadcasts) is an
  /// operand A of another dot or is reduced along its last axis, or its own
  /// operand A is computed from another dot's result. Attention's two
  /// products are the case: with every warp on distinct rows, the softmax's
  /// row maxima and sums stay within a warp and the probabilities become
  /// the next product's operand in registers, with no shared memory.
  static bool keepsRowsInWarps(kiln::DotOp dot) {
    auto passesRows = [](Operation *op) {
      return op->getNumResults() == 1 &&
             (op->hasTrait<OpTrait::Elementwise>() ||
              isa<kiln::BroadcastOp, kiln::ExpandDimsOp, ConvertLayoutOp>(op));
    };
    // Forward from the result.
    SmallVector<Value> work{dot.getResult()};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second || seen.size() > 256)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto next = dyn_cast<kiln::DotOp>(user)) {
          if (use.getOperandNumber() == 0)
            return true;
          continue;
        }
        if (auto reduce = dyn_cast<kiln::ReduceOp>(user)) {
          auto t = cast<RankedTensorType>(v.getType());
          if (t.getRank() == 2 && reduce.getAxis() == 1)
            return true;
          continue;
        }
        if (passesRows(user))
          work.push_back(user->getResult(0));
        // A value yielded by an scf.if becomes the if's result.
        if (isa<scf::YieldOp>(user) && isa<scf::IfOp>(user->getParentOp()))
          work.push_back(user->getParentOp()->getResult(use.getOperandNumber()));
      }
    }
    // Backward from operand A.
    work = {dot.getA()};
    seen.clear();
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second || seen.size() > 256)
        continue;
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      if (isa<kiln::DotOp>(def))
        return true;
      if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
        unsigned i = cast<OpResult>(v).getResultNumber();
        for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
          if (!r->empty())
            work.push_back(r->front().getTerminator()->getOperand(i));
        continue;
      }
      if (passesRows(def))
        for (Value operand : def->getOperands())
          work.push_back(operand);
    }
    return false;
  }

  /// Whether, within one warp, a result of `shape` computed with `instr`
  /// (transposed or not) is operand A of a product with the same
  /// instruction (K = the result's columns) without data movement between
  /// lanes: a property of the instruction's fragments.
  bool resultIsOperandA(const MatrixInstr &instr, bool transposed,
                        ArrayRef<int64_t> shape) {
    auto mma = MmaAttr::get(ctx, instr.name, {1, 1}, transposed);
    return getRegisterPermutation(mma.toLinearLayout(shape),
                                  OperandAttr::get(ctx, 0, mma)
                                      .toLinearLayout(shape))
        .has_value();
  }

  /// A warpgroup instruction's accumulator layout for an m x n x k product,
  /// or null. Warps go along M (a group's warps must be consecutive there),
  /// as many as M has instruction rows, in whole groups; the rest along N;
  /// then the widest instruction whose N fits a warp's columns. Where M
  /// has fewer rows than one group covers, or the warps are no whole
  /// number of groups, the warp-level instructions are used.
  MmaAttr chooseGroupMma(StringRef ta, StringRef tb, StringRef acc, bool tf32,
                         int64_t m, int64_t n, int64_t k) {
    const MatrixInstr *any =
        target.findMatrixInstr(ta, tb, acc, tf32, m, n, k, /*groups=*/true);
    if (!any || any->groupWarps == 1)
      return {};
    int32_t group = any->groupWarps;
    if (warps % group || m < int64_t(group) * any->m)
      return {};
    int32_t wm = int32_t(std::min<int64_t>(warps, m / any->m));
    wm -= wm % group;
    int32_t wn = warps / wm;
    if (n % wn)
      return {};
    const MatrixInstr *instr = target.findMatrixInstr(
        ta, tb, acc, tf32, m / wm, n / wn, k, /*groups=*/true);
    if (!instr || instr->groupWarps != group)
      return {};
    return MmaAttr::get(ctx, instr->name, {wm, wn}, /*transposed=*/false);
  }

  /// The accumulator layout of the target's matrix instruction for `dot`
  /// (warps along M first, then N; as many along M as there are instruction
  /// rows when the rows should stay whole per warp), or null when there is
  /// none.
  MmaAttr chooseMma(kiln::DotOp dot) {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto c = cast<RankedTensorType>(dot.getAcc().getType());
    // Mixed operand types (fp8 E4M3 x E5M2 left unwidened): an instruction
    // that reads both, where the target has one; else the FMA path.
    std::string ta, tb, acc;
    llvm::raw_string_ostream(ta) << a.getElementType();
    llvm::raw_string_ostream(tb)
        << cast<RankedTensorType>(dot.getB().getType()).getElementType();
    llvm::raw_string_ostream(acc) << c.getElementType();
    bool mixed = ta != tb;
    int64_t m = c.getShape()[0], n = c.getShape()[1];
    bool tf32 = dot.getPrecision() == DotPrecision::tf32;
    if (MmaAttr group =
            chooseGroupMma(ta, tb, acc, tf32, m, n, a.getShape()[1]))
      return group;
    const MatrixInstr *instr =
        target.findMatrixInstr(ta, tb, acc, tf32, m, n, a.getShape()[1]);
    if (!instr)
      return {};
    int32_t wm = 1, wn = 1;
    if (keepsRowsInWarps(dot)) {
      // As many warps along M as there are instruction rows, the rest on N.
      auto rowsInWarps = [&](bool transposed) {
        int32_t rows = transposed ? instr->n : instr->m;
        int32_t rowsOfWarps = int32_t(std::min<int64_t>(warps, m / rows));
        return MmaAttr::get(ctx, instr->name,
                            {rowsOfWarps, warps / rowsOfWarps}, transposed);
      };
      // The result becomes the next product's operand A (or is reduced
      // along its rows). Where the instruction's accumulator fragment is
      // not already the A fragment (NVIDIA's is; AMD's MFMA and WMMA hold
      // a column per lane), compute the product transposed: a row per
      // lane, in the A operand's registers for MFMA. (Not with mixed
      // operand types: the transposed product feeds the instruction's A
      // from B, which the instruction would read as the other type.)
      auto transposes = [&](const MatrixInstr &i) {
        return !mixed && i.n <= m && i.m <= n &&
               !resultIsOperandA(i, false, c.getShape());
      };
      bool transposed = transposes(*instr);
      // More warps on rows where a shorter instruction of the same types
      // gives them, the most it can (the first, largest, among equals):
      // gfx942's 16x16x16 MFMA for 128 rows over 8 warps, where 32x32x8
      // leaves two warps on each row block, so that the softmax's rows
      // span warps and each warp holds half of K^T and V.
      auto rowsOf = [&](const MatrixInstr &i) {
        return transposed ? i.n : i.m;
      };
      auto rowWarps = [&](const MatrixInstr &i) {
        return std::min<int64_t>(warps, m / rowsOf(i));
      };
      for (const MatrixInstr &i : target.matrixInstrs)
        if (rowWarps(*instr) < warps && i.groupWarps == 1 &&
            i.aType == instr->aType && i.bType == instr->bType &&
            i.accType == instr->accType && i.tf32 == instr->tf32 &&
            i.m <= m && i.n <= n && i.k <= a.getShape()[1] &&
            rowWarps(i) > rowWarps(*instr) && transposes(i) == transposed)
          instr = &i;
      return rowsInWarps(transposed);
    }
    while (wm * wn < warps) {
      int64_t tilesM = m / (instr->m * wm), tilesN = n / (instr->n * wn);
      if (tilesM >= tilesN && tilesM > 1)
        wm *= 2;
      else if (tilesN > 1)
        wn *= 2;
      else
        wm *= 2; // more warps than tiles: copies along M
    }
    return MmaAttr::get(ctx, instr->name, {wm, wn}, /*transposed=*/false);
  }

  /// Pushes `layout` (wanted for `v`) to the operands of v's producer; a
  /// loop-carried value pulls its init, its yield and the loop's result
  /// along, so that an accumulator stays in its layout across iterations.
  void propagateBackward() {
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      Attribute layout = layouts[v];
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())) {
          if (arg.getArgNumber() >= forOp.getNumInductionVars()) {
            unsigned i = arg.getArgNumber() - forOp.getNumInductionVars();
            anchor(forOp.getInitArgs()[i], layout);
            anchor(forOp.getResult(i), layout);
            anchor(forOp.getBody()->getTerminator()->getOperand(i), layout);
          }
        }
        continue;
      }
      if (auto forOp = v.getDefiningOp<scf::ForOp>()) {
        unsigned i = cast<OpResult>(v).getResultNumber();
        anchor(forOp.getRegionIterArgs()[i], layout);
        continue;
      }
      if (auto ifOp = v.getDefiningOp<scf::IfOp>()) {
        // Each branch computes the result in the layout wanted of it (the
        // ragged-block mask of attention's scores is built in the
        // operand layout instead of converted twice).
        unsigned i = cast<OpResult>(v).getResultNumber();
        for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
          if (!r->empty())
            anchor(r->front().getTerminator()->getOperand(i), layout);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      if (isLayoutTransparent(def)) {
        for (Value operand : def->getOperands())
          anchor(operand, layout);
      } else if (auto expand = dyn_cast<kiln::ExpandDimsOp>(def)) {
        if (auto dist = dyn_cast<DistributedLayoutAttr>(layout))
          anchor(expand.getSrc(),
                 SliceAttr::get(ctx, expand.getAxis(), dist));
      }
    }
  }

  /// The blocked layout that holds the result of a transpose or of a
  /// reshape that only adds or drops unit dimensions in the registers,
  /// lanes and warps that held the operand's elements; null when the
  /// operand is not blocked or the reshape regroups elements.
  BlockedAttr relabelledBlocked(Operation *op) {
    auto src = dyn_cast_or_null<BlockedAttr>(lookup(op->getOperand(0)));
    if (!src)
      return {};
    ArrayRef<int32_t> spt = src.getSizePerThread(),
                      tpw = src.getThreadsPerWarp(),
                      wpb = src.getWarpsPerBlock(), order = src.getOrder();
    if (auto trans = dyn_cast<kiln::TransOp>(op)) {
      // Result dim i is source dim perm[i].
      ArrayRef<int32_t> perm = trans.getOrder();
      SmallVector<int32_t, 3> s2, t2, w2, o2, inverse(perm.size());
      for (auto [i, d] : llvm::enumerate(perm)) {
        s2.push_back(spt[d]);
        t2.push_back(tpw[d]);
        w2.push_back(wpb[d]);
        inverse[d] = int32_t(i);
      }
      for (int32_t d : order)
        o2.push_back(inverse[d]);
      return BlockedAttr::get(ctx, s2, t2, w2, o2);
    }
    // Reshape: the non-unit dimensions, in order, must stay the same.
    auto srcShape = cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
    auto dstShape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    SmallVector<int64_t, 3> srcDims, dstDims; // the non-unit dimensions
    for (auto [d, n] : llvm::enumerate(srcShape)) {
      if (n != 1)
        srcDims.push_back(int64_t(d));
      else if (tpw[d] != 1 || wpb[d] != 1)
        return {}; // lanes or warps hold copies along a dimension dropped
    }
    for (auto [d, n] : llvm::enumerate(dstShape))
      if (n != 1)
        dstDims.push_back(int64_t(d));
    if (srcDims.size() != dstDims.size())
      return {};
    SmallVector<int32_t, 3> s2(dstShape.size(), 1), t2(dstShape.size(), 1),
        w2(dstShape.size(), 1), srcOf(srcShape.size(), -1), o2;
    for (auto [sd, dd] : llvm::zip(srcDims, dstDims)) {
      if (srcShape[sd] != dstShape[dd])
        return {};
      s2[dd] = spt[sd];
      t2[dd] = tpw[sd];
      w2[dd] = wpb[sd];
      srcOf[sd] = int32_t(dd);
    }
    for (int32_t d : order)
      if (srcOf[d] >= 0)
        o2.push_back(srcOf[d]);
    for (auto [d, n] : llvm::enumerate(dstShape))
      if (n == 1)
        o2.push_back(int32_t(d));
    return BlockedAttr::get(ctx, s2, t2, w2, o2);
  }

  /// Layout of an already assigned tile value, else null.
  Attribute lookup(Value v) {
    auto it = layouts.find(v);
    return it == layouts.end() ? Attribute() : it->second;
  }

  void setIfUnset(Value v, Attribute layout) {
    if (isa<RankedTensorType>(v.getType()) && !layouts.count(v))
      layouts[v] = layout;
  }

  LogicalResult completeForward() {
    WalkResult r = fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        for (auto [init, arg, res] :
             llvm::zip(forOp.getInitArgs(), forOp.getRegionIterArgs(),
                       forOp.getResults())) {
          if (!isa<RankedTensorType>(arg.getType()))
            continue;
          Attribute l = lookup(arg);
          if (!l)
            l = lookup(res);
          if (!l)
            l = lookup(init);
          if (!l)
            l = defaultLayout(cast<RankedTensorType>(arg.getType()));
          setIfUnset(arg, l);
          setIfUnset(res, l);
        }
        return WalkResult::advance();
      }
      if (auto reduce = dyn_cast<kiln::ReduceOp>(op)) {
        // Every input in the layout of the first (argmax's values and
        // indices are combined register by register; neededLayout converts
        // the others), the results in its slice.
        Value first = reduce.getSrcs()[0];
        Attribute l = lookup(first);
        if (!l)
          setIfUnset(first, l = defaultLayout(cast<RankedTensorType>(first.getType())));
        for (Value res : reduce.getResults())
          if (isa<RankedTensorType>(res.getType()))
            setIfUnset(res, SliceAttr::get(ctx, reduce.getAxis(),
                                           cast<DistributedLayoutAttr>(l)));
        return WalkResult::advance();
      }
      if (auto scan = dyn_cast<kiln::ScanOp>(op)) {
        // Results in the layout of the (first) input; the others follow.
        Value first = scan.getSrcs()[0];
        Attribute l = lookup(first);
        if (!l)
          setIfUnset(first, l = defaultLayout(cast<RankedTensorType>(first.getType())));
        for (Value res : scan.getResults())
          setIfUnset(res, l);
        return WalkResult::advance();
      }
      if (auto expand = dyn_cast<kiln::ExpandDimsOp>(op)) {
        auto srcLayout = dyn_cast_or_null<SliceAttr>(lookup(expand.getSrc()));
        if (srcLayout && srcLayout.getDim() == expand.getAxis())
          setIfUnset(expand.getResult(), srcLayout.getParent());
        else
          setIfUnset(expand.getResult(),
                     defaultLayout(expand.getResult().getType()));
        return WalkResult::advance();
      }
      if (isa<kiln::DotOp>(op))
        return WalkResult::advance(); // anchored: every dot has a layout
      if (isa<kiln::ReshapeOp, kiln::TransOp>(op)) {
        // The same distribution of the elements, relabelled, where a
        // blocked layout can say it (no data moves); else the default.
        auto type = cast<RankedTensorType>(op->getResult(0).getType());
        Attribute l = relabelledBlocked(op);
        setIfUnset(op->getResult(0), l ? l : defaultLayout(type));
        return WalkResult::advance();
      }

      for (Value res : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(res.getType());
        if (!type || layouts.count(res))
          continue;
        Attribute l;
        if (isLayoutTransparent(op))
          for (Value operand : op->getOperands())
            if ((l = lookup(operand)))
              break;
        if (!l)
          l = defaultLayout(type);
        layouts[res] = l;
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// The layout `user` needs for its operand `index`, given the layouts
  /// already chosen; null when any layout will do.
  Attribute neededLayout(Operation *user, unsigned index) {
    auto it = required.find(user);
    if (it != required.end())
      return it->second;
    if (auto expand = dyn_cast<kiln::ExpandDimsOp>(user))
      return SliceAttr::get(ctx, expand.getAxis(),
                            cast<DistributedLayoutAttr>(
                                lookup(expand.getResult())));
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      Operation *parent = yield->getParentOp();
      if (isa<scf::ForOp, scf::IfOp>(parent))
        return lookup(parent->getResult(index));
      return {};
    }
    // A reduction's first input may have any layout, the others follow it.
    if (auto reduce = dyn_cast<kiln::ReduceOp>(user))
      return index == 0 ? Attribute() : lookup(reduce.getSrcs()[0]);
    // Reshapes and transposes relate two layouts of different shapes: any
    // layout of the operand will do (the per-thread form moves the data).
    if (isa<kiln::ReshapeOp, kiln::TransOp>(user))
      return {};
    if (auto scan = dyn_cast<kiln::ScanOp>(user))
      return lookup(scan.getResult(0));
    if (isa<kiln::PrintOp, kiln::AssertOp>(user))
      return {};
    if (auto dot = dyn_cast<kiln::DotOp>(user)) {
      Attribute acc = lookup(dot.getResult());
      if (index == 2)
        return acc;
      if (auto mma = dyn_cast<MmaAttr>(acc))
        return OperandAttr::get(ctx, index, mma);
      return DotOperandAttr::get(ctx, index, cast<BlockedAttr>(acc));
    }
    if (auto forOp = dyn_cast<scf::ForOp>(user)) {
      unsigned first = forOp.getNumControlOperands();
      if (index < first)
        return {};
      return lookup(forOp.getRegionIterArgs()[index - first]);
    }
    if (user->getNumResults() == 1 &&
        isa<RankedTensorType>(user->getResult(0).getType()))
      return lookup(user->getResult(0));
    return {};
  }

  void rewrite() {
    // Types first, then conversions where operands disagree.
    for (auto &[v, l] : layouts) {
      auto type = cast<RankedTensorType>(v.getType());
      v.setType(withLayout(type, l));
    }
    // Constants hold their value in a dense attribute typed without an
    // encoding: rebuild them with the encoded type.
    fn.walk([&](arith::ConstantOp c) {
      auto type = dyn_cast<RankedTensorType>(c.getType());
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (type && dense && dense.getType() != type)
        c.setValueAttr(dense.reshape(type));
    });
    fn.walk([&](Operation *user) {
      for (OpOperand &operand : user->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type)
          continue;
        Attribute needed = neededLayout(user, operand.getOperandNumber());
        if (!needed || needed == type.getEncoding())
          continue;
        OpBuilder b(user);
        Value converted = ConvertLayoutOp::create(
            b, operand.get().getLoc(), withLayout(type, needed),
            operand.get());
        operand.set(converted);
      }
    });
  }

  func::FuncOp fn;
  MLIRContext *ctx;
  const GPUTarget &target;
  int32_t warps;
  AxisInfoAnalysis axis;
  llvm::MapVector<Value, Attribute> layouts;
  DenseMap<Operation *, Attribute> required;
  AnchorKind phase = AnchorKind::Load;
  SmallVector<Value> worklist;
};

/// fp8 products that the target's matrix unit does not take (no instruction
/// for the operand types, E4M3 x E5M2 mixed included) widen their operands
/// to f16 (exact: every fp8 value is an f16 value) when it has an f16
/// instruction for the shape; otherwise they stay for the FMA path.
void widenFp8Operands(func::FuncOp fn, const GPUTarget &target) {
  fn.walk([&](kiln::DotOp dot) {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    Type ea = a.getElementType();
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(ea))
      return;
    auto c = cast<RankedTensorType>(dot.getAcc().getType());
    int64_t m = c.getShape()[0], n = c.getShape()[1], k = a.getShape()[1];
    Type eb = b.getElementType();
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(eb))
      return;
    std::string nameA, nameB;
    llvm::raw_string_ostream(nameA) << ea;
    llvm::raw_string_ostream(nameB) << eb;
    if (target.findMatrixInstr(nameA, nameB, "f32", false, m, n, k))
      return;
    if (!target.findMatrixInstr("f16", "f16", "f32", false, m, n, k))
      return;
    OpBuilder builder(dot);
    auto widen = [&](Value v) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      return arith::ExtFOp::create(builder, dot.getLoc(),
                                   t.clone(builder.getF16Type()), v);
    };
    dot.getAMutable().assign(widen(dot.getA()));
    dot.getBMutable().assign(widen(dot.getB()));
  });
}

struct AssignLayoutsPass
    : public kiln::gpu::impl::TileGPUAssignLayoutsBase<AssignLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, target, warps);
    if (failed(config))
      return signalPassFailure();
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(KilnDialect::getKernelAttrName()))
        continue;
      widenFp8Operands(fn, *config->target);
      Assigner a(fn, *config->target, config->warps);
      if (failed(a.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
