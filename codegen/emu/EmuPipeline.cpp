//===- EmuPipeline.cpp - From a variant module to emulated host code ------===//

#include "codegen/emu/EmuPasses.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::emu::registerEmuDialects(DialectRegistry &registry) {
  registry.insert<LLVM::LLVMDialect, cf::ControlFlowDialect,
                  gpu::KilnGPUDialect, vector::VectorDialect,
                  math::MathDialect, scf::SCFDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void kiln::emu::buildEmuPipeline(OpPassManager &pm, llvm::StringRef arch,
                                 bool gpuOnly) {
  gpu::buildGPUStagePipeline(pm, arch);
  if (gpuOnly)
    return;
  pm.addPass(createConvertKilnGPUToEmu());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

