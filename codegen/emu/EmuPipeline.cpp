//===- EmuPipeline.cpp - From a variant module to emulated host code ------===//

#include "codegen/emu/EmuPasses.h"

#include "codegen/host/HostPasses.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"

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

void kiln::emu::addEmuLoweringPasses(OpPassManager &pm) {
  pm.addPass(createConvertKilnGPUToEmu());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // bf16 values carried as i16 (LLVM would promote them through float and
  // call libgcc's missing __truncsfbf2).
  kiln::KilnHostHalfAsI16Options halves;
  halves.bf16Only = true;
  pm.addPass(kiln::createKilnHostHalfAsI16(halves));
  pm.addPass(createCanonicalizerPass());
}

