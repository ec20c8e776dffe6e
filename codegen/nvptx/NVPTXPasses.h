//===- NVPTXPasses.h - Passes of the NVIDIA backend -------------*- C++ -*-===//
#ifndef KILN_CODEGEN_NVPTX_NVPTXPASSES_H
#define KILN_CODEGEN_NVPTX_NVPTXPASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace kiln::nvptx {

#define GEN_PASS_DECL
#include "codegen/nvptx/NVPTXPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/nvptx/NVPTXPasses.h.inc"

/// Module attribute (i32, e.g. 84 for ISA 8.4) set by the lowering where
/// the module uses PTX that needs at least that ISA version.
inline constexpr llvm::StringLiteral kMinPtxAttr = "kiln_nvptx.min_ptx";

/// Dialects and translations the NVIDIA pipeline needs.
void registerNVPTXDialects(mlir::DialectRegistry &registry);

/// The NVIDIA lowering after the GPU stage (compiler/GPU/StageDriver.h):
/// the per-thread form to the LLVM dialect (convert-kiln-gpu-to-nvvm).
void addNVVMLoweringPasses(mlir::OpPassManager &pm);

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_NVPTXPASSES_H
