//===- HipDriver.h - The HIP runtime API, declared by hand -------*- C++ -*-===//
//
// The few types, enum values and entry points of HIP (hip_runtime_api.h)
// that the HIP device uses beyond those it shares with CUDA (GpuDriver.h),
// declared here so that the runtime builds without ROCm and links no ROCm
// library: libamdhip64 is opened with dlopen ($KILN_HIP_RUNTIME, else
// libamdhip64.so, .so.7, .so.6, .so.5) and every entry point is found with
// dlsym. The values are those of ROCm 5.2 to 7.x, which agree (checked
// against their headers, and against Debian's libamdhip64-5 on a machine
// without an AMD GPU). Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HIPDRIVER_H
#define KILN_RUNTIME_HIPDRIVER_H

#include "GpuDriver.h"

#include <cstddef>
#include <string>

namespace kiln::rt::detail::hip {

using hipError_t = gpu::Result;

// hipError_t values the runtime looks at.
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNotInitialized = 3;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorInvalidKernelFile = 218;
constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
constexpr hipError_t hipErrorIllegalAddress = 700;
constexpr hipError_t hipErrorLaunchTimeOut = 702;
constexpr hipError_t hipErrorAssert = 710;
constexpr hipError_t hipErrorLaunchFailure = 719;

// hipDeviceAttribute_t (the CUDA-compatible range, then AMD's from 10000).
constexpr int hipDeviceAttributeMaxGridDimX = 29;
constexpr int hipDeviceAttributeMaxGridDimY = 30;
constexpr int hipDeviceAttributeMaxGridDimZ = 31;
constexpr int hipDeviceAttributeMaxThreadsPerBlock = 56;
constexpr int hipDeviceAttributeMemoryBusWidth = 59;  ///< bits
constexpr int hipDeviceAttributeMemoryClockRate = 60; ///< kHz
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
constexpr int hipDeviceAttributeSharedMemPerBlockOptin = 75;
constexpr int hipDeviceAttributeWarpSize = 87;

/// hipDeviceProp_t is read into a zeroed buffer this large (the struct is
/// 792 bytes in the layout of hipGetDeviceProperties, 1472 in that of
/// hipGetDevicePropertiesR0600), and only its `gcnArchName` (char[256]:
/// "gfx942:sramecc+:xnack-") is read, at this offset in each layout.
constexpr size_t kDevicePropBytes = 4096;
constexpr size_t kGcnArchNameOffset = 396;
constexpr size_t kGcnArchNameOffsetR0600 = 1160;
constexpr size_t kGcnArchNameBytes = 256;

/// HIP's entry points: those CUDA shares (gpu::Api) and HIP's own.
struct Driver : gpu::Api {
  const char *(*hipGetErrorName)(hipError_t Error) = nullptr;
  gpu::Entry<hipError_t(int Device)> hipSetDevice;
  gpu::Entry<hipError_t(int *Device)> hipGetDevice;
  /// hipGetDeviceProperties, or hipGetDevicePropertiesR0600 (the symbol
  /// says which layout it fills).
  gpu::Entry<hipError_t(void *Props, int Device)> GetDeviceProperties;
  gpu::Entry<hipError_t(gpu::Module *Module, const void *Image)>
      hipModuleLoadData;

  /// "hipErrorNoBinaryForGpu" (hipGetErrorName), or "HIP error 209" if
  /// HIP does not know the code.
  std::string errorName(hipError_t R) const override;
};

/// Loads the HIP runtime library (once per path; it stays loaded): the
/// path is $KILN_HIP_RUNTIME if set, else the first of libamdhip64.so,
/// libamdhip64.so.7, .so.6 and .so.5 that dlopen takes. Errors
/// (ErrorCode::Driver): "none of libamdhip64.so, ... could be loaded
/// (<dlerror>)", "the HIP runtime <path> does not export hipMalloc".
Expected<const Driver *> loadDriver();

} // namespace kiln::rt::detail::hip

#endif // KILN_RUNTIME_HIPDRIVER_H
