//===- AMDGPUPasses.h - Passes of the AMD backend ---------------*- C++ -*-===//
#ifndef KILN_CODEGEN_AMDGPU_AMDGPUPASSES_H
#define KILN_CODEGEN_AMDGPU_AMDGPUPASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace kiln::amdgpu {

#define GEN_PASS_DECL
#include "codegen/amdgpu/AMDGPUPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/amdgpu/AMDGPUPasses.h.inc"

/// Dialects and translations the AMD pipeline needs.
void registerAMDGPUDialects(mlir::DialectRegistry &registry);

/// The AMD lowering after the GPU stage (compiler/GPU/StageDriver.h): the
/// per-thread form to the LLVM dialect (convert-kiln-gpu-to-rocdl).
void addROCDLLoweringPasses(mlir::OpPassManager &pm);

} // namespace kiln::amdgpu

#endif // KILN_CODEGEN_AMDGPU_AMDGPUPASSES_H
