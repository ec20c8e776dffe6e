//===- AMDGPUPipeline.cpp - From a variant module to AMDGPU LLVM ----------===//

#include "codegen/amdgpu/AMDGPUPasses.h"

#include "codegen/amdgpu/AMDGPUTargets.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::amdgpu::registerAMDGPUDialects(DialectRegistry &registry) {
  registerAMDGPUTargets();
  registry.insert<LLVM::LLVMDialect, ROCDL::ROCDLDialect,
                  cf::ControlFlowDialect, gpu::KilnGPUDialect,
                  vector::VectorDialect, math::MathDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
}

void kiln::amdgpu::addROCDLLoweringPasses(OpPassManager &pm) {
  pm.addPass(createConvertKilnGPUToROCDL());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}
