//===- NVPTXPipeline.cpp - From a variant module to NVVM ------------------===//

#include "codegen/nvptx/NVPTXPasses.h"

#include "codegen/nvptx/NVPTXTargets.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::nvptx::registerNVPTXDialects(DialectRegistry &registry) {
  registerNVPTXTargets();
  registry.insert<LLVM::LLVMDialect, NVVM::NVVMDialect, cf::ControlFlowDialect,
                  gpu::KilnGPUDialect, vector::VectorDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void kiln::nvptx::addNVVMLoweringPasses(OpPassManager &pm) {
  pm.addPass(createConvertKilnGPUToNVVM());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}
