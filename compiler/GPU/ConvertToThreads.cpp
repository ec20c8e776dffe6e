//===- ConvertToThreads.cpp - Tiles with layouts to per-thread code -------===//
//
// convert-tile-to-gpu-threads: the last pass of the GPU stage. Each tile
// (a ranked tensor with a distributed layout) becomes the vector of the
// registers one thread holds; pointers become i64 byte addresses. Every
// data movement — broadcasts, expand_dims, transposes, reshapes, layout
// conversions — is derived from the two linear layouts involved: registers
// permuted within the thread when the layouts agree on lanes and warps,
// else a round trip through shared memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"


namespace kiln::gpu {
#define GEN_PASS_DEF_CONVERTTILETOGPUTHREADS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

namespace {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type scalarType(Type t) {
  if (isa<kiln::PointerType>(t))
    return IntegerType::get(t.getContext(), 64);
  return t;
}

class ThreadTypeConverter : public TypeConverter {
public:
  ThreadTypeConverter() {
    addConversion([](Type t) { return t; });
    addConversion([](kiln::PointerType t) -> Type {
      return IntegerType::get(t.getContext(), 64);
    });
    addConversion([](RankedTensorType t) -> std::optional<Type> {
      if (!getLayout(t))
        return std::nullopt;
      return VectorType::get({getRegistersPerThread(t)},
                             scalarType(t.getElementType()));
    });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                   Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs)
          .getResult(0);
    };
    addSourceMaterialization(cast);
    addTargetMaterialization(cast);
  }
};

bool isLegalType(Type t) {
  return !isa<RankedTensorType, kiln::PointerType>(t);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertToThreadsPass
    : public kiln::gpu::impl::ConvertTileToGPUThreadsBase<ConvertToThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, "", 0);
    if (failed(config))
      return signalPassFailure();
    AxisInfoAnalysis axis(module);
    Context c{config->target, &axis, module->hasAttr("kiln.check_bounds")};

    // Ops the stage does not lower yet: a clear error, not a crash.
    WalkResult unsupported = module.walk([&](Operation *op) {
      if (isa<kiln::MakeViewOp, kiln::ViewLoadOp, kiln::ViewStoreOp>(op)) {
        op->emitError("'") << op->getName()
                           << "' is not lowered by the GPU stage yet (target "
                           << config->target->arch << ")";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    threads::dropWarpgroupOperandConversions(module);
    threads::markInFlightProducts(module);

    MLIRContext *ctx = &getContext();
    ThreadTypeConverter tc;
    ConversionTarget target(*ctx);
    target.addLegalDialect<KilnGPUDialect, vector::VectorDialect>();
    target.addIllegalOp<ConvertLayoutOp, AsyncCopyTileOp, ReadTileOp,
                        kiln::PrintOp, kiln::AssertOp>();
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      if (auto fn = dyn_cast<func::FuncOp>(op))
        return llvm::all_of(fn.getArgumentTypes(), isLegalType) &&
               llvm::all_of(fn.getResultTypes(), isLegalType);
      return llvm::all_of(op->getOperandTypes(), isLegalType) &&
             llvm::all_of(op->getResultTypes(), isLegalType);
    });
    RewritePatternSet patterns(ctx);
    threads::populateDataMovementPatterns(tc, patterns, c);
    threads::populateMemoryPatterns(tc, patterns, c);
    threads::populateReductionPatterns(tc, patterns, c);
    threads::populateDotPatterns(tc, patterns, c);
    threads::populateElementwisePatterns(tc, patterns, c);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   tc);
    populateReturnOpTypeConversionPattern(patterns, tc);
    scf::populateSCFStructuralTypeConversions(tc, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    threads::hoistAccumulatorScaling(module);
    threads::finishInFlightProducts(module);
    // Pointer arguments are i64 addresses now: their promises move to the
    // kiln_gpu names (the kiln dialect allows `kiln.align` on pointers).
    module.walk([&](func::FuncOp fn) {
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (auto a = fn.getArgAttr(i, KilnDialect::getAlignAttrName())) {
          fn.removeArgAttr(i, KilnDialect::getAlignAttrName());
          fn.setArgAttr(i, "kiln_gpu.align", a);
        }
    });
  }
};

} // namespace
