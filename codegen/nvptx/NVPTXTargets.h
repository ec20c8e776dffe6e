//===- NVPTXTargets.h - NVIDIA archs of the GPU stage -----------*- C++ -*-===//
#ifndef KILN_CODEGEN_NVPTX_NVPTXTARGETS_H
#define KILN_CODEGEN_NVPTX_NVPTXTARGETS_H

namespace kiln::nvptx {

/// Registers sm_80, sm_86, sm_89, sm_90, sm_90a and sm_100 with the GPU
/// stage (compiler/GPU/TargetDesc.h). Idempotent.
void registerNVPTXTargets();

} // namespace kiln::nvptx

#endif // KILN_CODEGEN_NVPTX_NVPTXTARGETS_H
