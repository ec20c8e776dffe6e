//===- AMDGPUBackend.h - The AMD backend ------------------------*- C++ -*-===//
//
// The public entries of codegen/amdgpu: the backend factory and its
// registration (the archs: AMDGPUTargets.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_AMDGPU_AMDGPUBACKEND_H
#define KILN_CODEGEN_AMDGPU_AMDGPUBACKEND_H

#include <memory>

namespace kiln {
class TargetBackend;
namespace amdgpu {

/// The backend for gfx90a, gfx942, gfx950, gfx1100 and gfx1201.
std::unique_ptr<TargetBackend> createAMDGPUBackend();

/// Registers the backend with the TargetBackend registry.
void registerAMDGPUBackend();

} // namespace amdgpu
} // namespace kiln

#endif // KILN_CODEGEN_AMDGPU_AMDGPUBACKEND_H
