//===- StageDriver.cpp - A variant through the GPU stage ------------------===//

#include "compiler/GPU/StageDriver.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/TargetBackend.h"

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
  if (addBackendPasses) {
    PassManager backend(ctx);
    addBackendPasses(backend);
    if (failed(backend.run(*module)))
      return failure();
  }
  result.module = std::move(module);
  return result;
}
