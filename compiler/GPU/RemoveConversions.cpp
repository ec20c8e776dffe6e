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
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUREMOVECONVERSIONS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

constexpr unsigned kMaxChain = 16;

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
  bool canRecompute(Value v, unsigned &budget) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return true; // scalars are used as they are
    Operation *def = v.getDefiningOp();
    if (!def || !isRecomputable(def) || budget == 0)
      return false;
    --budget;
    if (isa<arith::ConstantOp>(def))
      return isa<SplatElementsAttr>(cast<arith::ConstantOp>(def).getValue());
    if (isa<kiln::ExpandDimsOp>(def) || isa<kiln::BroadcastOp>(def))
      return canRecompute(def->getOperand(0), budget);
    for (Value operand : def->getOperands())
      if (!canRecompute(operand, budget))
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
    if (auto convert = dyn_cast<ConvertLayoutOp>(def)) {
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

struct RemoveConversionsPass
    : public kiln::gpu::impl::TileGPURemoveConversionsBase<
          RemoveConversionsPass> {
  void runOnOperation() override {
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
