//===- StageUtils.cpp - Shared helpers of the GPU stage's passes ----------===//

#include "compiler/GPU/StageUtils.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdlib>

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
  for (unsigned part = 0; part < kGPUStageParts; ++part)
    buildGPUStagePart(pm, arch, part);
}

void kiln::gpu::buildGPUStagePart(OpPassManager &pm, StringRef arch,
                                  unsigned part) {
  switch (part) {
  case 0: {
    pm.addPass(createTileGPUBindLaunchConditions());
    TileGPULowerViewsOptions views;
    if (const GPUTarget *target = lookupGPUTarget(arch))
      views.relativeOffsets = target->hasRangeCheckedAccess;
    pm.addPass(createTileGPULowerViews(views));
    TileGPUAssignLayoutsOptions assign;
    assign.target = arch.str();
    pm.addPass(createTileGPUAssignLayouts(assign));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createTileGPURemoveConversions());
    pm.addPass(createCSEPass());
    pm.addPass(createTileGPUPipeline());
    pm.addPass(createCSEPass());
    return;
  }
  default: {
    pm.addPass(createConvertTileToGPUThreads());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(createTileGPUSinkSharedLoads());
    // Over the shared-memory limit: the backend drops the variant.
    TileGPUAllocateSharedOptions allocate;
    allocate.recordOnly = true;
    pm.addPass(createTileGPUAllocateShared(allocate));
    pm.addPass(createTileGPUInsertBarriers());
    // Conversions from and to fp8 on bit patterns, here rather than in
    // each backend so that the emulator runs what the GPUs run.
    kiln::TileExpandFp8Options fp8;
    fp8.asI8 = true;
    pm.addPass(kiln::createTileExpandFp8(fp8));
    return;
  }
  }
}

std::optional<int64_t> kiln::gpu::getNonNegativeBound(Value v, int depth) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  if (depth > 16)
    return std::nullopt;
  auto bounded = [&](int64_t m) -> std::optional<int64_t> {
    if (m < 0 || m > kLimit)
      return std::nullopt;
    return m;
  };
  auto constant = [](Value x) -> std::optional<int64_t> {
    APInt value;
    if (matchPattern(x, m_ConstantInt(&value)))
      return value.getSExtValue();
    return std::nullopt;
  };
  if (std::optional<int64_t> k = constant(v))
    return bounded(*k);
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseIntElementsAttr>(cst.getValue());
    if (!dense)
      return std::nullopt;
    int64_t m = 0;
    for (const APInt &e : dense.getValues<APInt>()) {
      if (e.isNegative() || e.getActiveBits() > 40)
        return std::nullopt;
      m = std::max(m, int64_t(e.getZExtValue()));
    }
    return m;
  }
  auto of = [&](Value x) { return getNonNegativeBound(x, depth + 1); };
  if (auto range = dyn_cast<kiln::ArangeOp>(def)) {
    std::optional<int64_t> lo = constant(range.getLo());
    std::optional<int64_t> hi = constant(range.getHi());
    if (!lo || !hi || *lo < 0 || *hi <= *lo)
      return std::nullopt;
    return bounded(*hi - 1);
  }
  if (isa<kiln::SplatOp, kiln::BroadcastOp, kiln::ExpandDimsOp,
          kiln::ReshapeOp, kiln::TransOp, ConvertLayoutOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return of(def->getOperand(0));
  if (isa<arith::TruncIOp>(def)) {
    std::optional<int64_t> m = of(def->getOperand(0));
    unsigned bits = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
    if (!m || bits < 2 || (bits <= 40 && *m >= (int64_t(1) << (bits - 1))))
      return std::nullopt;
    return m;
  }
  if (auto sel = dyn_cast<arith::SelectOp>(def)) {
    std::optional<int64_t> a = of(sel.getTrueValue());
    std::optional<int64_t> b = of(sel.getFalseValue());
    if (!a || !b)
      return std::nullopt;
    return std::max(*a, *b);
  }
  if (def->getNumOperands() != 2)
    return std::nullopt;
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  std::optional<int64_t> a = of(lhs);
  std::optional<int64_t> b = of(rhs);
  if (isa<arith::AddIOp>(def) && a && b)
    return bounded(*a + *b);
  if (isa<arith::MulIOp>(def) && a && b)
    return (*a == 0 || *b <= kLimit / *a) ? bounded(*a * *b) : std::nullopt;
  // An unsigned minimum is at most either operand, as an and is: one
  // bounded operand bounds it (the fast path's clamped strides).
  if (isa<arith::AndIOp, arith::MinUIOp>(def) && (a || b))
    return std::min(a.value_or(kLimit), b.value_or(kLimit));
  if (isa<arith::MinSIOp>(def) && a && b)
    return std::min(*a, *b);
  if (isa<arith::MaxSIOp, arith::MaxUIOp>(def) && a && b)
    return std::max(*a, *b);
  std::optional<int64_t> k = constant(rhs);
  if (!k || *k <= 0)
    return std::nullopt;
  if (isa<arith::RemUIOp>(def) || (isa<arith::RemSIOp>(def) && a))
    return std::min(*k - 1, a.value_or(kLimit));
  if (isa<arith::DivUIOp, arith::DivSIOp>(def) && a)
    return *a / *k;
  if (isa<arith::ShRUIOp, arith::ShRSIOp>(def) && a && *k < 63)
    return *a >> *k;
  if (isa<arith::ShLIOp>(def) && a && *k < 40)
    return bounded(*a << *k);
  return std::nullopt;
}

std::optional<int64_t> kiln::gpu::getOffsetReachBudget(Type element) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  constexpr int64_t kMargin = 64; // elements: the widest access's
  return (int64_t(1) << 31) / getElementBytes(element) - kMargin;
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
