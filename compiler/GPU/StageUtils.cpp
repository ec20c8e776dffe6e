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

#include <cstdlib>
#include "llvm/Support/JSON.h"

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
  pm.addPass(createTileGPUBindLaunchConditions());
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

std::string kiln::gpu::addFastPathAssumptions(ModuleOp module) {
  llvm::json::Array align, div;
  module.walk([&](func::FuncOp fn) {
    if (!fn->hasAttr("kiln.kernel"))
      return;
    Builder b(fn.getContext());
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto name = fn.getArgAttrOfType<StringAttr>(i, "kiln.name");
      if (!name)
        continue;
      Type t = fn.getArgumentTypes()[i];
      if (isa<kiln::PointerType>(t) && !fn.getArgAttr(i, "kiln.align")) {
        fn.setArgAttr(i, "kiln.align", b.getI64IntegerAttr(16));
        align.push_back(name.getValue().str());
      } else if (t.isSignlessInteger() && t.getIntOrFloatBitWidth() >= 32 &&
                 !fn.getArgAttr(i, "kiln.div")) {
        fn.setArgAttr(i, "kiln.div", b.getI64IntegerAttr(16));
        div.push_back(name.getValue().str());
      }
    }
  });
  if (align.empty() && div.empty())
    return "";
  llvm::json::Object j;
  if (!align.empty())
    j["align16"] = std::move(align);
  if (!div.empty())
    j["div16"] = std::move(div);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(j));
  return out;
}

std::optional<int> kiln::gpu::getTestFault(StringRef name) {
  const char *env = std::getenv("KILN_TEST_FAULT");
  if (!env)
    return std::nullopt;
  SmallVector<StringRef> faults;
  StringRef(env).split(faults, ',', -1, false);
  for (StringRef f : faults) {
    auto [key, value] = f.split('=');
    if (key.trim() != name)
      continue;
    int n = 0;
    if (value.trim().getAsInteger(10, n))
      n = 0;
    return n;
  }
  return std::nullopt;
}
