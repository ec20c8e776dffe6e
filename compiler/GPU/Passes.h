//===- Passes.h - Passes of the GPU stage -----------------------*- C++ -*-===//
#ifndef KILN_COMPILER_GPU_PASSES_H
#define KILN_COMPILER_GPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"

namespace kiln::gpu {

#define GEN_PASS_DECL
#include "compiler/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/GPU/Passes.h.inc"

/// The GPU stage, from a specialized variant module to the per-thread form
/// for `arch` (a registered target): views, layouts, conversion removal,
/// pipelining, the per-thread conversion, shared-memory allocation (the
/// total recorded; the caller checks the limit) and barriers. Every
/// backend and the emulator run exactly this.
void buildGPUStagePipeline(mlir::OpPassManager &pm, llvm::StringRef arch);

/// The same passes in two parts, buildGPUStagePipeline being both in
/// order: 0 views, layouts, conversion removal and pipelining; 1 the
/// per-thread conversion and what follows. A fast-path trial compares its
/// module with the reference's between them and stops there when they
/// differ (addUsefulFastPathAssumptions).
constexpr unsigned kGPUStageParts = 2;
void buildGPUStagePart(mlir::OpPassManager &pm, llvm::StringRef arch,
                       unsigned part);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_PASSES_H
