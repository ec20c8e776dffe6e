//===- RemoveConversions.cpp - Recompute instead of converting ------------===//
//
// tile-gpu-remove-conversions: a `kiln_gpu.convert_layout` moves data
// between threads, often through shared memory with barriers. When the
// converted value is cheap to compute — aranges, splats, constants and
// elementwise arithmetic on them, broadcasts and expand_dims (an index or a
// mask, typically) — computing it again directly in the wanted layout costs
// a few instructions per register and no data movement. This pass does
// that for every conversion whose source is such a chain (of at most
// `kMaxChain` ops, without memory accesses), then lets CSE merge the
// copies. Conversions of loaded data, reductions and matrix products stay.
// Then a conversion feeding a narrowing cast moves after it (fewer bytes
// to move), and a loop-carried tile that its loop computes from values
// converted in from one layout moves to that layout unless it would hold
// many more registers per thread there (retypeLoopCarried), and a
// reduction of converted inputs reads them in their own layout, its result
// converted instead (reduceInSourceLayout). The same conversion in both
// branches of an `scf.if` is made once before it (hoistCommonConversions).
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUREMOVECONVERSIONS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

constexpr unsigned kMaxChain = 16;
/// Registers per thread a loop-carried tile may take in a new layout
/// whatever it took before (an eighth of a thread's register file).
constexpr int32_t kFewRegisters = 32;

/// What can be computed again in another layout: ops that compute in any
/// layout, and the shape ops and conversions between them.
bool isRecomputable(Operation *op) {
  return computesInAnyLayout(op) ||
         isa<kiln::BroadcastOp, kiln::ExpandDimsOp, ConvertLayoutOp>(op);
}

class Rematerializer {
public:
  explicit Rematerializer(OpBuilder &b) : b(b) {}

  /// Whether `v` can be computed again in another layout, within budget.
  /// Below a broadcast (`narrowed`), a value that cannot be recomputed is
  /// converted instead: the same data movement on fewer elements (a row
  /// statistic converted before it is broadcast over the rows, not after).
  bool canRecompute(Value v, unsigned &budget, bool narrowed = false) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return true; // scalars are used as they are
    if (budget == 0)
      return false;
    --budget;
    Operation *def = v.getDefiningOp();
    if (!def || !isRecomputable(def))
      return narrowed && getLayout(type);
    if (isa<arith::ConstantOp>(def))
      return isa<SplatElementsAttr>(cast<arith::ConstantOp>(def).getValue());
    if (auto convert = dyn_cast<ConvertLayoutOp>(def)) {
      // A conversion of a conversion: the first source converted once.
      Operation *srcDef = convert.getSrc().getDefiningOp();
      return canRecompute(convert.getSrc(), budget,
                          narrowed || !srcDef || !isRecomputable(srcDef));
    }
    if (auto broadcast = dyn_cast<kiln::BroadcastOp>(def)) {
      auto src = cast<RankedTensorType>(broadcast.getSrc().getType());
      return canRecompute(broadcast.getSrc(), budget,
                          narrowed ||
                              src.getNumElements() < type.getNumElements());
    }
    for (Value operand : def->getOperands())
      if (!canRecompute(operand, budget, narrowed))
        return false;
    return true;
  }

  /// `v` computed in `layout` (a distributed layout for v's shape).
  Value recompute(Value v, Attribute layout) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getEncoding() == layout)
      return v;
    auto key = std::make_pair(v, layout);
    if (auto it = done.find(key); it != done.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    RankedTensorType newType = withLayout(type, layout);
    Value result;
    if (!def || !isRecomputable(def)) {
      // A leaf below a broadcast (canRecompute): converted.
      result = ConvertLayoutOp::create(b, v.getLoc(), newType, v);
    } else if (auto convert = dyn_cast<ConvertLayoutOp>(def)) {
      result = recompute(convert.getSrc(), layout);
    } else if (auto c = dyn_cast<arith::ConstantOp>(def)) {
      auto splat = cast<SplatElementsAttr>(c.getValue());
      result = arith::ConstantOp::create(
          b, c.getLoc(), newType,
          SplatElementsAttr::get(newType, splat.getSplatValue<Attribute>()));
    } else if (auto expand = dyn_cast<kiln::ExpandDimsOp>(def)) {
      auto dist = cast<DistributedLayoutAttr>(layout);
      Value src = recompute(expand.getSrc(),
                            SliceAttr::get(b.getContext(), expand.getAxis(),
                                           dist));
      result = kiln::ExpandDimsOp::create(b, expand.getLoc(), newType, src,
                                          expand.getAxisAttr());
    } else {
      IRMapping map;
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          map.map(operand, recompute(operand, layout));
      Operation *clone = b.clone(*def, map);
      clone->getResult(0).setType(newType);
      result = clone->getResult(0);
    }
    done[key] = result;
    return result;
  }

private:
  OpBuilder &b;
  DenseMap<std::pair<Value, Attribute>, Value> done;
};

/// A loop-carried tile kept in the layout its loop computes it in. An
/// iter arg that nothing anchored keeps its init's layout X (attention's
/// running row sum: a default blocked layout), while each iteration
/// computes it — through ops that compute in any layout — from values
/// converted in from another layout Y (the row slices of the products):
/// two round trips per iteration. When the iter arg's uses and the chain
/// from it to its yield are only such ops and conversions, the arg, the
/// chain and the loop's result move to Y; the conversions into the chain
/// go (or become conversions to Y), and X remains only before the loop
/// (the init, converted once) and after it (the result, converted once).
/// True if it changed the loop.
bool retypeLoopCarried(scf::ForOp loop, unsigned i) {
  Block *body = loop.getBody();
  BlockArgument arg = loop.getRegionIterArg(i);
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !getLayout(type))
    return false;
  Attribute x = type.getEncoding();
  Operation *yield = body->getTerminator();
  // The chain: any-layout ops of the body, in X, between the arg and the
  // yield; their other inputs must be conversions (or splat constants).
  SetVector<Operation *> chain;
  SmallVector<ConvertLayoutOp> inputs;
  SmallVector<Value> work{yield->getOperand(i)};
  DenseSet<Value> seen;
  bool reachesArg = false;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (v == arg) {
      reachesArg = true;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body)
      return false;
    if (auto c = dyn_cast<ConvertLayoutOp>(def)) {
      inputs.push_back(c);
      continue;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      if (!isa<SplatElementsAttr>(cst.getValue()))
        return false;
      chain.insert(def);
      continue;
    }
    if (!computesInAnyLayout(def) || def->getNumResults() != 1 ||
        def->getResult(0).getType() != type)
      return false;
    chain.insert(def);
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        work.push_back(operand);
  }
  if (!reachesArg || inputs.empty())
    return false;
  // Y: the layout most inputs convert from, among those holding no more
  // registers per thread than X or few (a row count in a reduction's slice
  // may take 2 instead of 1): a matrix operand's layout repeats B in every
  // warp along M, and a tile carried in it (`s += trans(x)` beside a
  // product of trans(x)) took 8 times the registers, 256, and dropped the
  // kernel's every variant.
  auto registers = [&](Attribute l) {
    return getLinearLayout(RankedTensorType::get(type.getShape(),
                                                 type.getElementType(), l))
        .getInDimSize(dims::kRegister);
  };
  auto affordable = [&](Attribute l) {
    int32_t n = registers(l);
    return n <= registers(x) || n <= kFewRegisters;
  };
  DenseMap<Attribute, unsigned> votes;
  for (ConvertLayoutOp c : inputs)
    ++votes[c.getSrc().getType().getEncoding()];
  Attribute y;
  unsigned best = 0;
  for (ConvertLayoutOp c : inputs) {
    Attribute l = c.getSrc().getType().getEncoding();
    if (l != x && votes[l] > best && affordable(l))
      y = l, best = votes[l];
  }
  if (!y)
    return false;
  // Every use of the arg and of the chain stays inside: the chain, the
  // yield (this operand only) or a conversion.
  auto usesStayInside = [&](Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (chain.contains(user) || isa<ConvertLayoutOp>(user))
        continue;
      if (user == yield && use.getOperandNumber() == i)
        continue;
      return false;
    }
    return true;
  };
  if (!usesStayInside(arg) ||
      llvm::any_of(chain, [&](Operation *op) {
        return !usesStayInside(op->getResult(0));
      }))
    return false;

  RankedTensorType newType = withLayout(type, y);
  OpBuilder b(loop);
  // Before the loop: the init, once.
  Value init = loop.getInitArgs()[i];
  loop.getInitArgsMutable()[i].set(
      ConvertLayoutOp::create(b, loop.getLoc(), newType, init));
  arg.setType(newType);
  // Each keeps its element type: the chain's ops have the carried type,
  // but a cast among them (sitofp of a converted count) reads another, and
  // so may a constant feeding it.
  for (Operation *op : chain) {
    auto opType = withLayout(
        cast<RankedTensorType>(op->getResult(0).getType()), y);
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto splat = cast<SplatElementsAttr>(cst.getValue());
      cst.setValueAttr(
          SplatElementsAttr::get(opType, splat.getSplatValue<Attribute>()));
    }
    op->getResult(0).setType(opType);
  }
  // The conversions into the chain now convert to Y (nothing, from Y).
  for (ConvertLayoutOp c : inputs) {
    if (c->use_empty())
      continue;
    OpBuilder cb(c);
    Value src = c.getSrc();
    RankedTensorType toYType = withLayout(c.getType(), y);
    Value toY = src.getType() == toYType
                    ? src
                    : ConvertLayoutOp::create(cb, c.getLoc(), toYType, src)
                          .getResult();
    c.getResult().replaceUsesWithIf(toY, [&](OpOperand &use) {
      return chain.contains(use.getOwner()) ||
             (use.getOwner() == yield && use.getOperandNumber() == i);
    });
    if (c->use_empty())
      c.erase();
  }
  // After the loop: the result, once, in X for its users.
  Value result = loop.getResult(i);
  result.setType(newType);
  b.setInsertionPointAfter(loop);
  auto back = ConvertLayoutOp::create(b, loop.getLoc(), type, result);
  result.replaceAllUsesExcept(back.getResult(), back);
  return true;
}

/// A reduction reads its inputs in any layout (they only have to agree):
/// when every input is a conversion from one layout X used by nothing else,
/// the reduction reads the sources in X instead, and a result tile that
/// was the slice of the converted layout is converted after it — the
/// reduced tile, a factor of the reduced dimension smaller; a full
/// reduction's scalar needs nothing. (A loop-carried accumulator retyped
/// to its loads' layout left such a conversion before `sum(acc, 0)`: a
/// trip of the whole tile through shared memory for one number.)
bool reduceInSourceLayout(kiln::ReduceOp reduce) {
  Attribute from;
  SmallVector<Value> sources;
  for (Value src : reduce.getSrcs()) {
    auto convert = src.getDefiningOp<ConvertLayoutOp>();
    if (!convert || !convert->hasOneUse())
      return false;
    Attribute l = convert.getSrc().getType().getEncoding();
    if (from && l != from)
      return false;
    from = l;
    sources.push_back(convert.getSrc());
  }
  // Not from a matrix operand's layout (registers arranged for the
  // instruction, copies along K dropped).
  auto parent = dyn_cast_or_null<DistributedLayoutAttr>(from);
  if (!parent || isa<OperandAttr, DotOperandAttr>(from))
    return false;
  SmallVector<Value> converts(reduce.getSrcs());
  reduce->setOperands(sources);
  for (Value c : converts)
    c.getDefiningOp()->erase();
  OpBuilder b(reduce);
  b.setInsertionPointAfter(reduce);
  for (Value res : reduce.getResults()) {
    auto type = dyn_cast<RankedTensorType>(res.getType());
    if (!type)
      continue;
    res.setType(withLayout(
        type, SliceAttr::get(b.getContext(), reduce.getAxis(), parent)));
    // Users that convert anyway convert from the new layout.
    if (llvm::all_of(res.getUsers(),
                     [](Operation *u) { return isa<ConvertLayoutOp>(u); }))
      continue;
    auto back = ConvertLayoutOp::create(b, reduce.getLoc(), type, res);
    res.replaceAllUsesExcept(back.getResult(), back);
  }
  return true;
}

/// The same conversion of a value from above an `scf.if` in both of its
/// branches (the branches of attention's masking `if` both convert the
/// unmasked scores into the layout the `if` yields) is made once, before
/// the `if`: the same work on either path, and one copy of the code.
void hoistCommonConversions(scf::IfOp ifOp) {
  if (ifOp.getElseRegion().empty())
    return;
  auto fromAbove = [&](ConvertLayoutOp c) {
    return !ifOp->isAncestor(c.getSrc().getParentRegion()->getParentOp());
  };
  SmallVector<ConvertLayoutOp> elseConverts;
  for (auto c : ifOp.elseBlock()->getOps<ConvertLayoutOp>())
    if (fromAbove(c))
      elseConverts.push_back(c);
  for (auto c : llvm::make_early_inc_range(
           ifOp.thenBlock()->getOps<ConvertLayoutOp>())) {
    if (!fromAbove(c))
      continue;
    auto twin = llvm::find_if(elseConverts, [&](ConvertLayoutOp e) {
      return e && e.getSrc() == c.getSrc() && e.getType() == c.getType();
    });
    if (twin == elseConverts.end())
      continue;
    c->moveBefore(ifOp);
    twin->replaceAllUsesWith(c.getResult());
    twin->erase();
    *twin = nullptr;
  }
}

struct RemoveConversionsPass
    : public kiln::gpu::impl::TileGPURemoveConversionsBase<
          RemoveConversionsPass> {
  /// Every conversion of a value that can be computed again in the wanted
  /// layout is replaced by that computation.
  void rematerialize() {
    SmallVector<ConvertLayoutOp> converts;
    getOperation().walk([&](ConvertLayoutOp c) { converts.push_back(c); });
    for (ConvertLayoutOp convert : converts) {
      unsigned budget = kMaxChain;
      OpBuilder b(convert);
      Rematerializer remat(b);
      if (!remat.canRecompute(convert.getSrc(), budget))
        continue;
      Value v = remat.recompute(convert.getSrc(),
                                convert.getType().getEncoding());
      convert.replaceAllUsesWith(v);
      convert.erase();
    }
  }

  void runOnOperation() override {
    rematerialize();
    // Narrow before moving: a conversion whose only user is a narrowing
    // cast (a matmul's f32 accumulator converted for the store, then cast
    // to f16) converts the narrow values instead, half the bytes through
    // shared memory.
    SmallVector<ConvertLayoutOp> narrowable;
    getOperation().walk([&](ConvertLayoutOp c) {
      if (!c->hasOneUse())
        return;
      Operation *user = *c->getUsers().begin();
      if (!isa<arith::TruncFOp, arith::TruncIOp>(user) ||
          user->getNumResults() != 1)
        return;
      auto from = cast<RankedTensorType>(c.getType());
      auto to = cast<RankedTensorType>(user->getResult(0).getType());
      if (to.getElementTypeBitWidth() < from.getElementTypeBitWidth())
        narrowable.push_back(c);
    });
    for (ConvertLayoutOp c : narrowable) {
      Operation *narrowing = *c->getUsers().begin();
      OpBuilder b(narrowing);
      auto srcType = cast<RankedTensorType>(c.getSrc().getType());
      auto resultType = cast<RankedTensorType>(narrowing->getResult(0).getType());
      IRMapping map;
      map.map(c.getResult(), c.getSrc());
      Operation *narrow = b.clone(*narrowing, map);
      narrow->getResult(0).setType(
          withLayout(resultType, srcType.getEncoding()));
      Value moved = ConvertLayoutOp::create(b, c.getLoc(), resultType,
                                            narrow->getResult(0));
      narrowing->getResult(0).replaceAllUsesWith(moved);
      narrowing->erase();
      c.erase();
    }
    // Loop-carried tiles in the layout their loop computes them in.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    bool retyped = false;
    for (scf::ForOp loop : loops)
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        retyped |= retypeLoopCarried(loop, i);
    // The conversions of the retyped inits and results (a constant init
    // is built in the new layout instead).
    if (retyped)
      rematerialize();
    SmallVector<kiln::ReduceOp> reductions;
    getOperation().walk([&](kiln::ReduceOp r) { reductions.push_back(r); });
    for (kiln::ReduceOp r : reductions)
      reduceInSourceLayout(r);
    SmallVector<scf::IfOp> ifs;
    getOperation().walk([&](scf::IfOp i) { ifs.push_back(i); });
    for (scf::IfOp i : ifs)
      hoistCommonConversions(i);
    // Producers left without users go.
    bool changed = true;
    while (changed) {
      changed = false;
      getOperation().walk([&](Operation *op) {
        if (op->use_empty() && op->getNumResults() > 0 && isRecomputable(op) &&
            isMemoryEffectFree(op)) {
          op->erase();
          changed = true;
        }
      });
    }
  }
};

} // namespace
