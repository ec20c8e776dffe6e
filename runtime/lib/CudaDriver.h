//===- CudaDriver.h - The CUDA driver API, declared by hand ------*- C++ -*-===//
//
// The few types, enum values and entry points of the CUDA driver API
// (cuda.h) that the CUDA device uses, declared here so that the runtime
// builds without the CUDA SDK and links no CUDA library: the driver is
// opened with dlopen("libcuda.so.1") ($KILN_CUDA_DRIVER overrides the path)
// and every entry point is found with dlsym. The enum values are the real
// ones of cuda.h. Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDADRIVER_H
#define KILN_RUNTIME_CUDADRIVER_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt::detail::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

// CUresult values the runtime looks at.
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
constexpr CUresult CUDA_ERROR_ASSERT = 710;
constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

// CUdevice_attribute.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36; ///< kHz
constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37; ///< bits
constexpr int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUjit_option.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_LOG_VERBOSE = 12;

// CUfunction_attribute.
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// Flags.
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;

/// The driver's entry points, found with dlsym. Each member is named after
/// the function it calls; the symbol may carry a version suffix (_v2).
struct Driver {
  CUresult (*cuInit)(unsigned Flags);
  CUresult (*cuDriverGetVersion)(int *Version);
  CUresult (*cuGetErrorName)(CUresult Error, const char **Name);
  CUresult (*cuDeviceGetCount)(int *Count);
  CUresult (*cuDeviceGet)(CUdevice *Device, int Ordinal);
  CUresult (*cuDeviceGetName)(char *Name, int Length, CUdevice Device);
  CUresult (*cuDeviceGetAttribute)(int *Value, int Attribute,
                                   CUdevice Device);
  CUresult (*cuDeviceTotalMem)(size_t *Bytes, CUdevice Device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *Context, CUdevice Device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice Device);
  CUresult (*cuCtxPushCurrent)(CUcontext Context);
  CUresult (*cuCtxPopCurrent)(CUcontext *Context);
  CUresult (*cuMemAlloc)(CUdeviceptr *Ptr, size_t Bytes);
  CUresult (*cuMemFree)(CUdeviceptr Ptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr Dst, const void *Src,
                                size_t Bytes, CUstream Stream);
  CUresult (*cuMemcpyDtoHAsync)(void *Dst, CUdeviceptr Src, size_t Bytes,
                                CUstream Stream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr Dst, CUdeviceptr Src,
                                size_t Bytes, CUstream Stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr Dst, unsigned char Value,
                              size_t Count, CUstream Stream);
  CUresult (*cuStreamCreate)(CUstream *Stream, unsigned Flags);
  CUresult (*cuStreamDestroy)(CUstream Stream);
  CUresult (*cuStreamSynchronize)(CUstream Stream);
  CUresult (*cuEventCreate)(CUevent *Event, unsigned Flags);
  CUresult (*cuEventRecord)(CUevent Event, CUstream Stream);
  CUresult (*cuEventSynchronize)(CUevent Event);
  CUresult (*cuEventElapsedTime)(float *Milliseconds, CUevent Start,
                                 CUevent End);
  CUresult (*cuEventDestroy)(CUevent Event);
  CUresult (*cuModuleLoadDataEx)(CUmodule *Module, const void *Image,
                                 unsigned NumOptions, int *Options,
                                 void **OptionValues);
  CUresult (*cuModuleGetFunction)(CUfunction *Function, CUmodule Module,
                                  const char *Name);
  CUresult (*cuModuleUnload)(CUmodule Module);
  CUresult (*cuFuncGetAttribute)(int *Value, int Attribute,
                                 CUfunction Function);
  CUresult (*cuFuncSetAttribute)(CUfunction Function, int Attribute,
                                 int Value);
  CUresult (*cuLaunchKernel)(CUfunction Function, unsigned GridX,
                             unsigned GridY, unsigned GridZ, unsigned BlockX,
                             unsigned BlockY, unsigned BlockZ,
                             unsigned SharedBytes, CUstream Stream,
                             void **KernelParams, void **Extra);

  std::string Path; ///< what was dlopen'ed

  /// "CUDA_ERROR_INVALID_PTX" (cuGetErrorName), or "CUDA error 218" if the
  /// driver does not know the code.
  std::string errorName(CUresult R) const;
  /// "<Call> failed: <error name>", the driver failure message.
  std::string failure(const char *Call, CUresult R) const;
};

/// Loads the driver (once per path; the library stays loaded): the path is
/// $KILN_CUDA_DRIVER if set, else libcuda.so.1. Errors (ErrorCode::Driver):
/// "libcuda.so.1 could not be loaded (<dlerror>)", "the CUDA driver
/// <path> does not export cuMemAlloc_v2".
Expected<const Driver *> loadDriver();

} // namespace kiln::rt::detail::cuda

#endif // KILN_RUNTIME_CUDADRIVER_H
