//===- TestAxisInfo.cpp - tile-gpu-test-axis-info ------------------------===//
//
// Prints the axis analysis as remarks, for lit tests: one remark per
// integer or pointer value (scalar or tile), on the op that defines it:
//
//   contiguity = [1, 64], divisibility = [1, 16], constancy = [64, 1]
//
// followed by `, constant = N` when every element is N. On an op with
// several results each remark starts with `result #i: `; the arguments of
// an op's regions (a function's parameters, an scf.for's induction variable
// and iter_args) are reported on the op as `argument #i: `. A load or a
// store through a tile of pointers also gets the number of elements that
// one access may cover along each dimension (getVectorizableElements, with
// its mask):
//
//   vectorizable = [1, 8]
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/Passes.h"

#include "compiler/Dialect/KilnDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUTESTAXISINFO
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

/// Integer, index and pointer scalars and tiles.
bool isReported(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    type = tile.getElementType();
  return isa<IntegerType, IndexType, PointerType>(type);
}

/// The pointers and the mask of a load or store.
std::optional<std::pair<Value, Value>> getAccess(Operation *op) {
  using R = std::optional<std::pair<Value, Value>>;
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case<LoadOp, StoreOp>([](auto access) -> R {
        return std::make_pair(access.getPtr(), access.getMask());
      })
      .Default([](Operation *) -> R { return std::nullopt; });
}

void printFact(InFlightDiagnostic &diag, const AxisInfo &info) {
  diag << "contiguity = [" << llvm::interleaved(info.contiguity)
       << "], divisibility = [" << llvm::interleaved(info.divisibility)
       << "], constancy = [" << llvm::interleaved(info.constancy) << "]";
  if (info.constantValue)
    diag << ", constant = " << *info.constantValue;
}

struct TestAxisInfoPass
    : public kiln::gpu::impl::TileGPUTestAxisInfoBase<TestAxisInfoPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    AxisInfoAnalysis analysis(fn);
    fn->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions()) {
        if (region.empty())
          continue;
        for (BlockArgument arg : region.front().getArguments()) {
          if (!isReported(arg.getType()))
            continue;
          InFlightDiagnostic diag = op->emitRemark();
          diag << "argument #" << arg.getArgNumber() << ": ";
          printFact(diag, analysis.lookup(arg));
        }
      }
      for (OpResult result : op->getResults()) {
        if (!isReported(result.getType()))
          continue;
        InFlightDiagnostic diag = op->emitRemark();
        if (op->getNumResults() > 1)
          diag << "result #" << result.getResultNumber() << ": ";
        printFact(diag, analysis.lookup(result));
      }
      std::optional<std::pair<Value, Value>> access = getAccess(op);
      if (!access || !isa<RankedTensorType>(access->first.getType()))
        return;
      auto [ptr, mask] = *access;
      SmallVector<int64_t, 3> widths;
      for (unsigned d = 0; d < cast<RankedTensorType>(ptr.getType()).getRank();
           ++d)
        widths.push_back(analysis.getVectorizableElements(ptr, d, mask));
      op->emitRemark() << "vectorizable = [" << llvm::interleaved(widths)
                       << "]";
    });
  }
};

} // namespace
