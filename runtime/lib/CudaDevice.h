//===- CudaDevice.h - The CUDA device, internals ----------------*- C++ -*-===//
//
// Which NVIDIA code objects a device runs (the ranking rules of
// docs/runtime.md, "The CUDA device"), as plain functions of an ImageInfo
// and the device's compute capability and driver, so that tests can check
// them without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDADEVICE_H
#define KILN_RUNTIME_CUDADEVICE_H

#include "Internal.h"

#include <optional>
#include <string>
#include <string_view>

namespace kiln::rt::detail {

constexpr uint16_t kImageCubin = 3; ///< llvm::object::IMG_Cubin
constexpr uint16_t kImagePtx = 5;   ///< llvm::object::IMG_PTX

/// What a CUDA device runs.
struct CudaTarget {
  unsigned Sm = 0;       ///< compute capability x 10: 90 for 9.0
  int DriverVersion = 0; ///< cuDriverGetVersion: 12040 for CUDA 12.4
  /// The driver exports cuTensorMapEncodeTiled (CUDA 12): images with
  /// tensor maps run.
  bool TensorMaps = false;
};

/// An NVIDIA arch string: "sm_90" -> {90, false}, "sm_90a" -> {90, true};
/// "sm_100f" (family-specific) -> {100, false, Family}.
struct SmArch {
  unsigned Sm = 0;
  bool ArchSpecific = false; ///< "a": only exactly this capability
  bool FamilySpecific = false; ///< "f": only this major version
};
std::optional<SmArch> parseSmArch(std::string_view Arch);

/// The highest PTX ISA version (x 10) that a driver JIT-compiles, or 0 if
/// the driver is newer than this runtime knows (it takes any).
unsigned maxPtxIsa(int DriverVersion);
/// "12.4" for 12040.
std::string cudaVersionString(int DriverVersion);
/// "8.4" for 84.
std::string ptxIsaString(unsigned Isa);
/// The ISA version (x 10) of a PTX text's `.version X.Y` directive.
std::optional<unsigned> ptxIsaOf(std::string_view Ptx);
/// "PTX ISA 9.4 needs a newer driver: this driver (CUDA 12.4) takes PTX ISA
/// up to 8.4", or "" if the driver takes `Isa`.
std::string ptxIsaProblem(unsigned Isa, int DriverVersion);

/// How well a device runs an image: 0 if it cannot; an exact cubin beats
/// a compatible one (same major version, lower minor), which beats PTX
/// (JIT-compiled), the PTX for the closest capability first. An image with
/// tensor maps needs sm_90 or newer and a driver that encodes them.
int rankCudaImage(const ImageInfo &Image, const CudaTarget &T);
/// Why not, for "no image" messages ("needs sm_100"); "" if it runs or is
/// no NVIDIA image.
std::string whyNotCuda(const ImageInfo &Image, const CudaTarget &T);
/// "sm_90: cubin sm_90a, sm_90; PTX for sm_90 and below up to ISA 8.4".
std::string describeCudaTarget(const CudaTarget &T);

/// The arguments of cuTensorMapEncodeTiled for a tensor map (TensorMap.cpp
/// checked it): dimensions innermost first.
struct CudaTensorMapArgs {
  int DataType = 0; ///< CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32/64 by size
  uint32_t Rank = 0;
  uint64_t GlobalDim[kMaxTensorMapRank] = {};
  uint64_t GlobalStrides[kMaxTensorMapRank - 1] = {}; ///< bytes, dims 1..
  uint32_t BoxDim[kMaxTensorMapRank] = {};
  uint32_t ElementStrides[kMaxTensorMapRank] = {}; ///< all 1
  int Swizzle = 0; ///< CU_TENSOR_MAP_SWIZZLE_*
};
CudaTensorMapArgs cudaTensorMapArgs(const TensorMap &M);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_CUDADEVICE_H
