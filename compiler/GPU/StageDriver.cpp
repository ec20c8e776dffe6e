//===- StageDriver.cpp - A variant through the GPU stage ------------------===//

#include "compiler/GPU/StageDriver.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/TargetBackend.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {
llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}
} // namespace

llvm::Expected<kiln::gpu::StagedVariant> kiln::gpu::runGPUStage(
    ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
    llvm::StringRef what, llvm::StringRef targetName,
    llvm::function_ref<void(OpPassManager &)> addBackendPasses) {
  StagedVariant result;
  result.target = lookupGPUTarget(arch);
  if (!result.target)
    return makeError("unknown GPU arch '" + arch + "' for " + targetName);
  const GPUTarget &target = *result.target;

  OwningOpRef<ModuleOp> module(cast<ModuleOp>(variant->clone()));
  (*module)->removeAttr("sym_name");
  func::FuncOp kernel;
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn->hasAttr("kiln.kernel"))
      kernel = fn;
  if (!kernel)
    return makeError("variant module has no kernel");
  kernel.setSymName(entry);

  if (auto v = variant->getAttrOfType<DictionaryAttr>("kiln.variant"))
    if (auto w = v.getAs<IntegerAttr>("warps"))
      result.warps = w.getInt();
  if (result.warps * target.warpSize > target.maxThreadsPerBlock)
    return llvm::make_error<ResourceLimitError>(
        "needs " + std::to_string(result.warps * target.warpSize) +
        " threads per program; " + arch.str() + " has at most " +
        std::to_string(target.maxThreadsPerBlock));

  auto failure = [&] {
    return makeError(what + " lowering of '" + entry + "' for " + targetName +
                     " failed");
  };
  MLIRContext *ctx = variant.getContext();
  PassManager stage(ctx);
  buildGPUStagePipeline(stage, arch);
  if (failed(stage.run(*module)))
    return failure();
  if (auto w = (*module)->getAttrOfType<IntegerAttr>(
          KilnGPUDialect::getWarpsAttrName()))
    result.warps = w.getInt();
  if (auto maps = (*module)->getAttrOfType<StringAttr>(kTensorMapsAttr))
    result.tensorMaps = maps.getValue().str();
  module->walk([&](Operation *op) {
    if (auto s = op->getAttrOfType<IntegerAttr>(
            KilnGPUDialect::getSharedBytesAttrName()))
      result.sharedBytes = std::max(result.sharedBytes, s.getInt());
  });
  if (result.sharedBytes > target.maxSharedBytes)
    return llvm::make_error<ResourceLimitError>(
        "needs " + std::to_string(result.sharedBytes) +
        " bytes of shared memory; " + arch.str() + " has at most " +
        std::to_string(target.maxSharedBytes));
  // Tiles a loop carries (accumulators above all) stay in registers across
  // its iterations: a loop that carries more than the register file holds
  // spills every iteration (and makes register allocation crawl: a 128x256
  // f32 accumulator over 128 lanes is 256 registers each).
  int64_t carried = 0;
  module->walk([&](scf::ForOp loop) {
    int64_t regs = 0;
    for (Value arg : loop.getRegionIterArgs())
      if (auto vt = dyn_cast<VectorType>(arg.getType()))
        regs += (vt.getNumElements() * vt.getElementTypeBitWidth() + 31) / 32;
    carried = std::max(carried, regs);
  });
  if (carried > target.maxRegistersPerThread)
    return llvm::make_error<ResourceLimitError>(
        "keeps " + std::to_string(carried) +
        " registers per thread live across a loop (the tiles it carries); " +
        arch.str() + " has " + std::to_string(target.maxRegistersPerThread));
  if (addBackendPasses) {
    PassManager backend(ctx);
    addBackendPasses(backend);
    if (failed(backend.run(*module)))
      return failure();
  }
  result.module = std::move(module);
  return result;
}

std::string kiln::gpu::perThreadCode(ModuleOp module, llvm::StringRef arch) {
  llvm::Expected<kiln::gpu::StagedVariant> staged = kiln::gpu::runGPUStage(
      module, arch, "kiln_fast_path", "fast-path", arch, nullptr);
  if (!staged) {
    llvm::consumeError(staged.takeError());
    return "";
  }
  for (auto fn : staged->module->getOps<func::FuncOp>())
    fn.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  std::string text;
  llvm::raw_string_ostream os(text);
  staged->module->print(os);
  return text;
}

kiln::gpu::FastPathAssumptions
kiln::gpu::addUsefulFastPathAssumptions(ModuleOp module, llvm::StringRef arch,
                                        const GPUTarget &target) {
  std::vector<std::string> exclude;
  OwningOpRef<ModuleOp> full(cast<ModuleOp>(module->clone()));
  FastPathAssumptions all = addFastPathAssumptions(*full, target);
  std::string reference =
      all.params.empty() ? std::string() : perThreadCode(*full, arch);
  if (!reference.empty()) {
    for (const std::string &param : all.params) {
      exclude.push_back(param);
      OwningOpRef<ModuleOp> trial(cast<ModuleOp>(module->clone()));
      (void)addFastPathAssumptions(*trial, target, exclude);
      if (perThreadCode(*trial, arch) != reference)
        exclude.pop_back();
    }
  }
  return addFastPathAssumptions(module, target, exclude);
}

llvm::Expected<std::vector<kiln::CodeObject>>
kiln::gpu::compileWithFastPath(ModuleOp variant, llvm::StringRef arch,
                               llvm::StringRef entry, CompileOneFn compileOne,
                               bool comparePerThread) {
  const GPUTarget *target = lookupGPUTarget(arch);
  if (!target)
    return makeError("unknown GPU arch '" + arch + "'");
  OwningOpRef<ModuleOp> fast(cast<ModuleOp>(variant->clone()));
  FastPathAssumptions fastPath =
      addUsefulFastPathAssumptions(*fast, arch, *target);
  std::string assumes = fastPath.assumes;
  std::string fastEntry = (entry + "_a16").str();
  // Same code but for the name: the assumptions bought nothing.
  auto sameCode = [&](std::string genericCode, std::string fastCode) {
    for (size_t pos = 0;
         (pos = fastCode.find(fastEntry, pos)) != std::string::npos;)
      fastCode.replace(pos, fastEntry.size(), entry.str());
    return fastCode == genericCode;
  };
  // The per-thread forms (argument attributes left out, one kernel name):
  // equal ones make equal code, and the fast path need not be compiled.
  if (!assumes.empty() && comparePerThread) {
    std::string fastCode = perThreadCode(*fast, arch);
    if (!fastCode.empty() && fastCode == perThreadCode(variant, arch))
      assumes.clear();
  }
  llvm::Expected<VariantImages> generic = compileOne(variant, entry);
  if (!generic)
    return generic.takeError();
  std::vector<CodeObject> images = std::move(generic->images);
  if (assumes.empty())
    return images;
  llvm::Expected<VariantImages> fastImages = compileOne(*fast, fastEntry);
  if (!fastImages)
    return fastImages.takeError();
  // The images carry the maps their code reads (the stage drops those of
  // loads it did not pipeline): a fast path left with none may be the
  // generic code again.
  bool readsMaps = llvm::any_of(fastImages->images, [](const CodeObject &o) {
    return o.tensorMapsJson != "[]";
  });
  if (!comparePerThread && !readsMaps &&
      sameCode(generic->code, fastImages->code))
    return images;
  for (CodeObject &o : fastImages->images) {
    o.assumesJson = assumes;
    images.push_back(std::move(o));
  }
  return images;
}

bool kiln::gpu::GPUBackend::makeFastPath(ModuleOp variant,
                                        llvm::StringRef arch) {
  registerTargets();
  const GPUTarget *target = lookupGPUTarget(arch);
  if (!target)
    return false;
  FastPathAssumptions a = addUsefulFastPathAssumptions(variant, arch, *target);
  return !a.assumes.empty() || !a.tensorMaps.empty();
}

bool kiln::gpu::GPUBackend::handlesArch(llvm::StringRef arch) const {
  registerTargets();
  const GPUTarget *t = lookupGPUTarget(arch);
  return t && t->backend == getName();
}

llvm::Expected<kiln::CodeObject>
kiln::gpu::GPUBackend::compile(ModuleOp variant, llvm::StringRef arch,
                               llvm::StringRef entry) {
  llvm::Expected<VariantImages> images = compileOne(variant, arch, entry);
  if (!images)
    return images.takeError();
  return std::move(images->images.front());
}

llvm::Expected<std::vector<kiln::CodeObject>>
kiln::gpu::GPUBackend::compileImages(ModuleOp variant, llvm::StringRef arch,
                                     llvm::StringRef entry) {
  return compileWithFastPath(variant, arch, entry,
                             [&](ModuleOp m, llvm::StringRef e) {
                               return compileOne(m, arch, e);
                             });
}
