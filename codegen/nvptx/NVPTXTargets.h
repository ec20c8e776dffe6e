//===- NVPTXTargets.h - NVIDIA archs of the GPU stage -----------*- C++ -*-===//
#ifndef KILN_CODEGEN_NVPTX_NVPTXTARGETS_H
#define KILN_CODEGEN_NVPTX_NVPTXTARGETS_H

#include "llvm/ADT/StringRef.h"

namespace kiln::nvptx {

/// PTX's name ("e4m3", "e5m2") of an fp8 operand type of the target
/// descriptions ("f8E4M3FN", "f8E5M2"); empty for any other type.
llvm::StringRef ptxFp8Name(llvm::StringRef mlirType);

/// Registers sm_80, sm_86, sm_89, sm_90, sm_90a and sm_100 with the GPU
/// stage (compiler/GPU/TargetDesc.h). Idempotent.
void registerNVPTXTargets();

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_NVPTXTARGETS_H
