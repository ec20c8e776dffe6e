//===- ComputeOncePerRun.cpp - Marked results computed once per group ----===//
//
// tile-gpu-compute-once-per-run: the per-thread conversion marks an
// integer elementwise op whose result is constant over runs of a thread's
// registers with `kiln_gpu.equal_runs` (the group of each register). Here
// such an op is computed on each group's first register and the results
// are spread back:
//
//   %m = arith.cmpi slt, %offs, %n {kiln_gpu.equal_runs = array<i32: 0, 0,
//          0, 0, 1, 1, 1, 1>} : vector<8xi32>
// becomes
//   %a = vector.shuffle %offs, %offs [0, 4]
//   %b = vector.shuffle %n, %n [0, 4]
//   %c = arith.cmpi slt, %a, %b : vector<2xi32>
//   %m = vector.shuffle %c, %c [0, 0, 0, 0, 1, 1, 1, 1]
//
// The stage marks instead of narrowing because the fast-path trials
// compare per-thread code: a narrowing that depends on a divisibility
// assumption (a mask bound's) would make that assumption look useful and
// keep it as a launch condition. moduleCode leaves the marks out; this
// pass runs in lowerStagedVariant, after every trial.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUCOMPUTEONCEPERRUN
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

/// Each group's first register, when `groups` is a grouping of `op`'s
/// registers the pass can apply; else an error on `op`.
FailureOr<SmallVector<int64_t>> firstRegisters(Operation *op,
                                               ArrayRef<int32_t> groups) {
  auto vt = op->getNumResults() == 1
                ? dyn_cast<VectorType>(op->getResult(0).getType())
                : VectorType();
  if (!vt || vt.getRank() != 1 || vt.isScalable() ||
      vt.getNumElements() != int64_t(groups.size()))
    return op->emitOpError()
           << "has a " << KilnGPUDialect::getEqualRunsAttrName() << " mark of "
           << groups.size()
           << " registers; it needs one result, a one-dimensional vector of "
              "as many";
  for (Value v : op->getOperands()) {
    auto ot = dyn_cast<VectorType>(v.getType());
    if (!ot || ot.getRank() != 1 || ot.getNumElements() != vt.getNumElements())
      return op->emitOpError()
             << "has a " << KilnGPUDialect::getEqualRunsAttrName()
             << " mark but an operand of type " << v.getType()
             << " (every operand a vector of " << vt.getNumElements()
             << " registers)";
  }
  SmallVector<int64_t> first;
  for (auto [r, g] : llvm::enumerate(groups)) {
    if (g < 0 || g > int32_t(first.size()))
      return op->emitOpError()
             << "has a " << KilnGPUDialect::getEqualRunsAttrName()
             << " mark whose groups are not numbered in order of first "
                "appearance (register "
             << r << " is in group " << g << ")";
    if (g == int32_t(first.size()))
      first.push_back(r);
  }
  return first;
}

struct ComputeOncePerRunPass
    : kiln::gpu::impl::TileGPUComputeOncePerRunBase<ComputeOncePerRunPass> {
  void runOnOperation() override {
    StringRef name = KilnGPUDialect::getEqualRunsAttrName();
    SmallVector<Operation *> marked;
    getOperation()->walk([&](Operation *op) {
      if (op->hasAttr(name))
        marked.push_back(op);
    });
    for (Operation *op : marked) {
      auto groups = op->getAttrOfType<DenseI32ArrayAttr>(name);
      if (!groups) {
        op->emitOpError() << "has a " << name
                          << " mark that is not an array of i32";
        return signalPassFailure();
      }
      FailureOr<SmallVector<int64_t>> first =
          firstRegisters(op, groups.asArrayRef());
      if (failed(first))
        return signalPassFailure();
      op->removeAttr(name);
      if (first->size() == groups.size())
        continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto vt = cast<VectorType>(op->getResult(0).getType());
      SmallVector<Value> picked;
      for (Value v : op->getOperands())
        picked.push_back(vector::ShuffleOp::create(b, loc, v, v, *first));
      OperationState state(
          loc, op->getName(), picked,
          {VectorType::get({int64_t(first->size())}, vt.getElementType())},
          op->getAttrs());
      Value once = b.create(state)->getResult(0);
      SmallVector<int64_t> spread(groups.asArrayRef());
      Value all = vector::ShuffleOp::create(b, loc, once, once, spread);
      op->getResult(0).replaceAllUsesWith(all);
      op->erase();
    }
  }
};

} // namespace
