//===- AMDGPUTargets.h - AMD archs of the GPU stage -------------*- C++ -*-===//
#ifndef KILN_CODEGEN_AMDGPU_AMDGPUTARGETS_H
#define KILN_CODEGEN_AMDGPU_AMDGPUTARGETS_H

namespace kiln::amdgpu {

/// Registers gfx90a, gfx942, gfx950 (CDNA, wave64, MFMA) and gfx1100,
/// gfx1201 (RDNA, wave32, WMMA) with the GPU stage
/// (compiler/GPU/TargetDesc.h). Idempotent.
void registerAMDGPUTargets();

} // namespace kiln::amdgpu

#endif // KILN_CODEGEN_AMDGPU_AMDGPUTARGETS_H
