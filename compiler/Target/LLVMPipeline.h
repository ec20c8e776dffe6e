//===- LLVMPipeline.h - LLVM's optimization pipeline for backends -*- C++ -*-===//
//
// Every backend that ends in LLVM IR runs LLVM's default module pipeline
// for its target machine before code generation; this is the one place
// that sets it up.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_LLVMPIPELINE_H
#define KILN_COMPILER_TARGET_LLVMPIPELINE_H

#include "llvm/Passes/OptimizationLevel.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// Runs LLVM's default per-module pipeline at `level`, with the analyses
/// of `tm` (target transform info, data layout).
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &tm,
                        llvm::OptimizationLevel level);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_LLVMPIPELINE_H
