//===- EmuPasses.h - The emulator backend's passes --------------*- C++ -*-===//
#ifndef KILN_CODEGEN_EMU_EMUPASSES_H
#define KILN_CODEGEN_EMU_EMUPASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::emu {

#define GEN_PASS_DECL
#include "codegen/emu/EmuPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/emu/EmuPasses.h.inc"

/// The dialects an emulated variant passes through.
void registerEmuDialects(mlir::DialectRegistry &registry);

/// The emulator's lowering after the GPU stage
/// (compiler/GPU/StageDriver.h): the per-thread form to LLVM host code for
/// one thread (convert-kiln-gpu-to-emu), bf16 carried as i16.
void addEmuLoweringPasses(mlir::OpPassManager &pm);

/// Registers the emulator backend (archs "emu:<arch>" for every GPU arch
/// a backend registered).
void registerEmuBackend();

} // namespace kiln::emu

#endif // KILN_CODEGEN_EMU_EMUPASSES_H
