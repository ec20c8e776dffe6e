//===- StageUtils.cpp - Shared helpers of the GPU stage's passes ----------===//

#include "compiler/GPU/StageUtils.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace kiln::gpu;

FailureOr<StageConfig> kiln::gpu::getStageConfig(ModuleOp module,
                                                 StringRef targetOption,
                                                 int32_t warpsOption) {
  StageConfig config;
  std::string arch = targetOption.str();
  if (arch.empty())
    if (auto a = module->getAttrOfType<StringAttr>(
            KilnGPUDialect::getTargetAttrName()))
      arch = a.getValue().str();
  if (arch.empty())
    return module.emitError("the GPU stage needs a target (pass option "
                            "`target=<arch>` or the module attribute "
                            "`kiln_gpu.target`)");
  config.target = lookupGPUTarget(arch);
  if (!config.target)
    return module.emitError("unknown GPU target '")
           << arch << "'; known: "
           << llvm::join(getGPUTargetNames(), ", ");
  if (warpsOption > 0) {
    config.warps = warpsOption;
  } else if (auto w = module->getAttrOfType<IntegerAttr>(
                 KilnGPUDialect::getWarpsAttrName())) {
    config.warps = w.getInt();
  } else if (auto variant = module->getAttrOfType<DictionaryAttr>(
                 kiln::KilnDialect::getVariantAttrName())) {
    if (auto w = variant.getAs<IntegerAttr>("warps"))
      config.warps = w.getInt();
  }
  if (config.warps <= 0 || !llvm::isPowerOf2_32(config.warps) ||
      config.warps * config.target->warpSize >
          config.target->maxThreadsPerBlock)
    return module.emitError("warps = ")
           << config.warps << " is not a power of two of at most "
           << config.target->maxThreadsPerBlock / config.target->warpSize
           << " for " << arch;
  Builder b(module.getContext());
  module->setAttr(KilnGPUDialect::getTargetAttrName(), b.getStringAttr(arch));
  module->setAttr(KilnGPUDialect::getWarpsAttrName(),
                  b.getI32IntegerAttr(config.warps));
  return config;
}

bool kiln::gpu::computesInAnyLayout(Operation *op) {
  if (isa<kiln::SplatOp, kiln::ArangeOp, kiln::AddPtrOp, arith::ConstantOp,
          arith::SelectOp, arith::CmpIOp, arith::CmpFOp>(op))
    return true;
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::Elementwise>() && isMemoryEffectFree(op);
}

int64_t kiln::gpu::getElementBytes(Type type) {
  if (isa<kiln::PointerType>(type))
    return 8;
  unsigned bits = type.getIntOrFloatBitWidth();
  return std::max<int64_t>(1, bits / 8);
}

void kiln::gpu::buildGPUStagePipeline(OpPassManager &pm, StringRef arch) {
  pm.addPass(createTileGPULowerViews());
  TileGPUAssignLayoutsOptions assign;
  assign.target = arch.str();
  pm.addPass(createTileGPUAssignLayouts(assign));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createTileGPURemoveConversions());
  pm.addPass(createCSEPass());
  pm.addPass(createTileGPUPipeline());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertTileToGPUThreads());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Over the shared-memory limit: the backend drops the variant.
  TileGPUAllocateSharedOptions allocate;
  allocate.recordOnly = true;
  pm.addPass(createTileGPUAllocateShared(allocate));
  pm.addPass(createTileGPUInsertBarriers());
}
