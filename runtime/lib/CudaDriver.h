//===- CudaDriver.h - The CUDA driver API, declared by hand ------*- C++ -*-===//
//
// The few types, enum values and entry points of the CUDA driver API
// (cuda.h) that the CUDA device uses (those HIP shares are in GpuDriver.h), declared here so that the runtime
// builds without the CUDA SDK and links no CUDA library: the driver is
// opened with dlopen("libcuda.so.1") ($KILN_CUDA_DRIVER overrides the path)
// and every entry point is found with dlsym. The enum values are the real
// ones of cuda.h. Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDADRIVER_H
#define KILN_RUNTIME_CUDADRIVER_H

#include "GpuDriver.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt::detail::cuda {

using CUresult = gpu::Result;
using CUdevice = int;
using CUdeviceptr = gpu::DevPtr;
using CUcontext = struct CUctx_st *;
using CUmodule = gpu::Module;
using CUfunction = gpu::Function;
using CUstream = gpu::Stream;
using CUevent = gpu::Event;

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

// Tensor maps (cuTensorMapEncodeTiled, CUDA 12.0): an opaque 128-byte,
// 64-byte-aligned descriptor, passed to a kernel by value.
struct alignas(64) CUtensorMap {
  uint64_t Opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;
// CUtensorMapDataType: the runtime passes the unsigned type of the
// element's size (a plain copy: no conversion, and out-of-bounds elements
// are zeros whatever the type).
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4;
// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
// CUtensorMapFloatOOBfill.
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;

/// The driver's entry points: those HIP shares (gpu::Api) and CUDA's own.
struct Driver : gpu::Api {
  CUresult (*cuGetErrorName)(CUresult Error, const char **Name) = nullptr;
  gpu::Entry<CUresult(CUcontext *Context, CUdevice Device)>
      cuDevicePrimaryCtxRetain;
  gpu::ReleaseEntry<CUresult(CUdevice Device)> cuDevicePrimaryCtxRelease;
  gpu::Entry<CUresult(CUcontext Context)> cuCtxPushCurrent;
  gpu::ReleaseEntry<CUresult(CUcontext *Context)> cuCtxPopCurrent;
  gpu::Entry<CUresult(CUmodule *Module, const void *Image,
                      unsigned NumOptions, int *Options,
                      void **OptionValues)>
      cuModuleLoadDataEx;
  gpu::Entry<CUresult(int *Value, int Attribute, CUfunction Function)>
      cuFuncGetAttribute;
  gpu::Entry<CUresult(CUfunction Function, int Attribute, int Value)>
      cuFuncSetAttribute;
  /// Optional: drivers before CUDA 12 lack it (Call stays null); then no
  /// image with tensor maps runs on their devices. Dimensions innermost
  /// first; `GlobalStrides` has Rank - 1 entries (bytes, of dimensions 1
  /// and up); the enums are C ints.
  gpu::Entry<CUresult(CUtensorMap *Map, int DataType, cuuint32_t Rank,
                      void *GlobalAddress, const cuuint64_t *GlobalDim,
                      const cuuint64_t *GlobalStrides,
                      const cuuint32_t *BoxDim,
                      const cuuint32_t *ElementStrides, int Interleave,
                      int Swizzle, int L2Promotion, int OobFill)>
      cuTensorMapEncodeTiled;

  /// "CUDA_ERROR_INVALID_PTX" (cuGetErrorName), or "CUDA error 218" if the
  /// driver does not know the code.
  std::string errorName(CUresult R) const override;
};

/// Loads the driver (once per path; the library stays loaded): the path is
/// $KILN_CUDA_DRIVER if set, else libcuda.so.1. Errors (ErrorCode::Driver):
/// "libcuda.so.1 could not be loaded (<dlerror>)", "the CUDA driver
/// <path> does not export cuMemAlloc_v2".
Expected<const Driver *> loadDriver();

} // namespace kiln::rt::detail::cuda

#endif // KILN_RUNTIME_CUDADRIVER_H
