//===- CudaDevice.cpp - The CUDA device -----------------------------------===//
//
// A CUDA GPU driven through the driver API, opened at run time with
// dlopen (CudaDriver.h): nothing of CUDA is needed to build the runtime,
// and a machine without a driver simply has no CUDA device. What it shares
// with the HIP device (memory, streams, events, launches) is in
// GpuDevice.cpp.
//
// Each device uses its GPU's primary context, made current (pushed and
// popped) around every driver call, so that the runtime works from any
// thread and leaves the caller's own current context alone. Streams are
// non-blocking CUDA streams; events time with the GPU's clock. Code
// objects are cubins or PTX (JIT-compiled by the driver, whose error log
// ends up in the message when that fails). A launch runs grid (x, y, z)
// blocks of `threads` threads (the image's resources) with `shared_bytes`
// of dynamic shared memory.
//
// Every driver failure names the call and the CUresult
// ("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"); nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "CudaDriver.h"
#include "GpuDevice.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::rt::detail::cuda;

//===----------------------------------------------------------------------===//
// The driver library
//===----------------------------------------------------------------------===//

std::string Driver::errorName(CUresult R) const {
  const char *Name = nullptr;
  if (cuGetErrorName && cuGetErrorName(R, &Name) == CUDA_SUCCESS && Name)
    return Name;
  return "CUDA error " + std::to_string(R);
}

namespace {

std::unique_ptr<gpu::Api> bindCuda(void *H, std::string &Missing) {
  auto D = std::make_unique<Driver>();
  gpu::Binder Bind(H);
  Bind(D->Init, {"cuInit"});
  Bind(D->DriverGetVersion, {"cuDriverGetVersion"});
  Bind(D->cuGetErrorName, {"cuGetErrorName"});
  Bind(D->DeviceGetCount, {"cuDeviceGetCount"});
  Bind(D->DeviceGet, {"cuDeviceGet"});
  Bind(D->DeviceGetName, {"cuDeviceGetName"});
  Bind(D->DeviceGetAttribute, {"cuDeviceGetAttribute"});
  Bind(D->DeviceTotalMem, {"cuDeviceTotalMem_v2"});
  Bind(D->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  Bind(D->cuDevicePrimaryCtxRelease,
       {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  Bind(D->cuCtxPushCurrent, {"cuCtxPushCurrent_v2"});
  Bind(D->cuCtxPopCurrent, {"cuCtxPopCurrent_v2"});
  Bind(D->MemAlloc, {"cuMemAlloc_v2"});
  Bind(D->MemFree, {"cuMemFree_v2"});
  Bind(D->MemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"});
  Bind(D->MemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"});
  Bind(D->MemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"});
  Bind(D->MemsetD8Async, {"cuMemsetD8Async"});
  Bind(D->StreamCreate, {"cuStreamCreate"});
  Bind(D->StreamDestroy, {"cuStreamDestroy_v2"});
  Bind(D->StreamSynchronize, {"cuStreamSynchronize"});
  Bind(D->EventCreate, {"cuEventCreate"});
  Bind(D->EventRecord, {"cuEventRecord"});
  Bind(D->EventSynchronize, {"cuEventSynchronize"});
  Bind(D->EventElapsedTime, {"cuEventElapsedTime"});
  Bind(D->EventDestroy, {"cuEventDestroy_v2"});
  Bind(D->cuModuleLoadDataEx, {"cuModuleLoadDataEx"});
  Bind(D->ModuleGetFunction, {"cuModuleGetFunction"});
  Bind(D->ModuleUnload, {"cuModuleUnload"});
  Bind(D->cuFuncGetAttribute, {"cuFuncGetAttribute"});
  Bind(D->cuFuncSetAttribute, {"cuFuncSetAttribute"});
  Bind(D->LaunchKernel, {"cuLaunchKernel"});
  Bind.optional(D->cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"});
  Missing = Bind.missing();
  return D;
}

} // namespace

Expected<const Driver *> kiln::rt::detail::cuda::loadDriver() {
  Expected<const gpu::Api *> A = gpu::loadLibrary(
      "KILN_CUDA_DRIVER", {"libcuda.so.1"}, "CUDA driver", bindCuda);
  if (!A)
    return A.takeError();
  return static_cast<const Driver *>(*A);
}

//===----------------------------------------------------------------------===//
// Which code objects a device runs
//===----------------------------------------------------------------------===//

std::optional<SmArch> kiln::rt::detail::parseSmArch(std::string_view Arch) {
  if (Arch.substr(0, 3) != "sm_" && Arch.substr(0, 8) != "compute_")
    return std::nullopt;
  std::string_view Rest = Arch.substr(Arch[0] == 's' ? 3 : 8);
  SmArch A;
  size_t Digits = 0;
  while (Digits < Rest.size() && Digits < 4 &&
         std::isdigit((unsigned char)Rest[Digits]))
    A.Sm = A.Sm * 10 + unsigned(Rest[Digits++] - '0');
  if (Digits < 2)
    return std::nullopt;
  std::string_view Suffix = Rest.substr(Digits);
  if (Suffix == "a")
    A.ArchSpecific = true;
  else if (Suffix == "f")
    A.FamilySpecific = true;
  else if (!Suffix.empty())
    return std::nullopt;
  return A;
}

unsigned kiln::rt::detail::maxPtxIsa(int DriverVersion) {
  // CUDA driver version -> the newest PTX ISA it JIT-compiles.
  static const std::pair<int, unsigned> Table[] = {
      {10000, 63}, {10010, 64}, {10020, 65}, {11000, 70}, {11010, 71},
      {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76},
      {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82},
      {12030, 83}, {12040, 84}, {12050, 85}, {12060, 85}, {12080, 87},
      {12090, 88}, {13000, 90}};
  constexpr int NewestKnown = 13000;
  if (DriverVersion > NewestKnown)
    return 0; // newer than this runtime: assume it takes everything
  unsigned Isa = 60;
  for (const auto &[Version, Max] : Table)
    if (DriverVersion >= Version)
      Isa = Max;
  return Isa;
}

std::string kiln::rt::detail::cudaVersionString(int V) {
  return std::to_string(V / 1000) + "." + std::to_string((V % 1000) / 10);
}

std::string kiln::rt::detail::ptxIsaString(unsigned Isa) {
  return std::to_string(Isa / 10) + "." + std::to_string(Isa % 10);
}

std::optional<unsigned> kiln::rt::detail::ptxIsaOf(std::string_view Ptx) {
  // `.version 8.4`, the first directive (comments may come before it).
  size_t Pos = 0;
  while ((Pos = Ptx.find(".version", Pos)) != std::string_view::npos) {
    bool LineStart = Pos == 0 || Ptx[Pos - 1] == '\n' || Ptx[Pos - 1] == ' ' ||
                     Ptx[Pos - 1] == '\t';
    Pos += 8;
    if (!LineStart)
      continue;
    while (Pos < Ptx.size() && (Ptx[Pos] == ' ' || Ptx[Pos] == '\t'))
      ++Pos;
    unsigned Major = 0, Minor = 0;
    size_t Start = Pos;
    while (Pos < Ptx.size() && std::isdigit((unsigned char)Ptx[Pos]) &&
           Pos - Start < 3)
      Major = Major * 10 + unsigned(Ptx[Pos++] - '0');
    if (Pos == Start || Pos >= Ptx.size() || Ptx[Pos] != '.')
      return std::nullopt;
    ++Pos;
    if (Pos >= Ptx.size() || !std::isdigit((unsigned char)Ptx[Pos]))
      return std::nullopt;
    Minor = unsigned(Ptx[Pos] - '0');
    return Major * 10 + Minor;
  }
  return std::nullopt;
}

std::string kiln::rt::detail::ptxIsaProblem(unsigned Isa, int DriverVersion) {
  unsigned Max = maxPtxIsa(DriverVersion);
  if (!Max || Isa <= Max)
    return "";
  return "PTX ISA " + ptxIsaString(Isa) +
         " needs a newer driver: this driver (CUDA " +
         cudaVersionString(DriverVersion) + ") takes PTX ISA up to " +
         ptxIsaString(Max);
}

namespace {

/// The capability an NVIDIA image is for: "requires" if it says, else
/// its arch string.
std::optional<SmArch> imageSm(const ImageInfo &Image) {
  if (Image.Triple.rfind("nvptx", 0) != 0 ||
      (Image.ImageKind != kImageCubin && Image.ImageKind != kImagePtx))
    return std::nullopt;
  std::optional<SmArch> FromArch = parseSmArch(Image.Arch);
  if (Image.Requires.Present && Image.Requires.Sm) {
    SmArch A;
    A.Sm = Image.Requires.Sm;
    A.ArchSpecific = Image.Requires.ArchSpecific;
    A.FamilySpecific = FromArch && FromArch->FamilySpecific;
    return A;
  }
  return FromArch;
}

std::string smName(unsigned Sm) { return "sm_" + std::to_string(Sm); }

} // namespace

int kiln::rt::detail::rankCudaImage(const ImageInfo &Image,
                                    const CudaTarget &T) {
  std::optional<SmArch> A = imageSm(Image);
  if (!A || !T.Sm)
    return 0;
  // Tensor maps (TMA): Hopper and newer, and a driver that encodes them.
  if (!Image.TensorMaps.empty() && (T.Sm < 90 || !T.TensorMaps))
    return 0;
  unsigned Major = A->Sm / 10, Minor = A->Sm % 10;
  unsigned DevMajor = T.Sm / 10, DevMinor = T.Sm % 10;
  if (Image.ImageKind == kImageCubin) {
    // SASS runs on its own major version, on minors from its own up;
    // arch-specific SASS only on exactly its capability.
    if (A->ArchSpecific)
      return A->Sm == T.Sm ? 1001 : 0;
    if (Major != DevMajor || Minor > DevMinor)
      return 0;
    return A->Sm == T.Sm ? 1000 : 900 + int(Minor);
  }
  // PTX is JIT-compiled for any capability from its own up (arch-specific
  // PTX: exactly its own; family-specific: its major version), if the
  // driver takes its ISA.
  if (A->ArchSpecific ? A->Sm != T.Sm : A->Sm > T.Sm)
    return 0;
  if (A->FamilySpecific && Major != DevMajor)
    return 0;
  if (Image.Requires.PtxIsa &&
      !ptxIsaProblem(Image.Requires.PtxIsa, T.DriverVersion).empty())
    return 0;
  return 100 + 2 * int(A->Sm) + (A->ArchSpecific ? 1 : 0);
}

std::string kiln::rt::detail::whyNotCuda(const ImageInfo &Image,
                                         const CudaTarget &T) {
  std::optional<SmArch> A = imageSm(Image);
  if (!A || rankCudaImage(Image, T) > 0)
    return "";
  bool Cubin = Image.ImageKind == kImageCubin;
  if (A->ArchSpecific && A->Sm != T.Sm)
    return "runs only on " + smName(A->Sm);
  if (Cubin && A->Sm / 10 != T.Sm / 10)
    return "a cubin for another major version";
  if (A->Sm > T.Sm)
    return "needs " + smName(A->Sm);
  if (!Cubin && A->FamilySpecific)
    return "PTX for another family";
  if (!Cubin && Image.Requires.PtxIsa &&
      !ptxIsaProblem(Image.Requires.PtxIsa, T.DriverVersion).empty())
    return ptxIsaProblem(Image.Requires.PtxIsa, T.DriverVersion);
  if (!Image.TensorMaps.empty() && T.Sm < 90)
    return "takes TMA tensor maps, which need sm_90";
  if (!Image.TensorMaps.empty() && !T.TensorMaps)
    return "takes TMA tensor maps, which this driver (CUDA " +
           cudaVersionString(T.DriverVersion) +
           ") cannot encode: cuTensorMapEncodeTiled needs CUDA 12";
  return "";
}

CudaTensorMapArgs kiln::rt::detail::cudaTensorMapArgs(const TensorMap &M) {
  CudaTensorMapArgs A;
  switch (M.ElemBytes) {
  case 1: A.DataType = cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
  case 2: A.DataType = cuda::CU_TENSOR_MAP_DATA_TYPE_UINT16; break;
  case 4: A.DataType = cuda::CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
  default: A.DataType = cuda::CU_TENSOR_MAP_DATA_TYPE_UINT64; break;
  }
  A.Rank = M.Rank;
  // CUDA counts dimensions innermost first; the manifest outermost first.
  for (unsigned D = 0; D < M.Rank; ++D) {
    unsigned From = M.Rank - 1 - D;
    A.GlobalDim[D] = uint64_t(M.Sizes[From]);
    A.BoxDim[D] = uint32_t(M.Box[From]);
    A.ElementStrides[D] = 1;
    if (D > 0)
      A.GlobalStrides[D - 1] = uint64_t(M.Strides[From]);
  }
  switch (M.Swizzle) {
  case 32: A.Swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_32B; break;
  case 64: A.Swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_64B; break;
  case 128: A.Swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_128B; break;
  default: A.Swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_NONE; break;
  }
  return A;
}

std::string kiln::rt::detail::describeCudaTarget(const CudaTarget &T) {
  std::string Sm = smName(T.Sm);
  std::string Out = Sm + ": cubin " + Sm + "a, ";
  if (T.Sm % 10 == 0)
    Out += Sm;
  else
    Out += smName(T.Sm / 10 * 10) + " to " + Sm;
  Out += "; PTX for " + Sm + " and below";
  unsigned Max = maxPtxIsa(T.DriverVersion);
  Out += Max ? ", ISA up to " + ptxIsaString(Max) : ", any ISA";
  return Out;
}

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

namespace {

constexpr unsigned kDefaultSharedLimit = 48 * 1024;
constexpr size_t kJitLogBytes = 16 * 1024;

/// Trims a JIT log to one line's worth: its lines joined with "; ".
std::string oneLine(const char *Log, size_t Max = 2000) {
  std::string Out;
  for (const char *P = Log; *P && Out.size() < Max; ++P) {
    if (*P == '\n') {
      if (!Out.empty() && P[1])
        Out += "; ";
      continue;
    }
    if (*P != '\r')
      Out += *P;
  }
  while (!Out.empty() && (Out.back() == ' ' || Out.back() == ';'))
    Out.pop_back();
  return Out;
}

class CudaDevice : public gpu::DriverDevice {
public:
  CudaDevice(const Driver &D, int Ordinal, CUdevice Dev, CUcontext Ctx,
             DeviceProperties Props, int MaxGrid[3])
      : DriverDevice(D, "cuda", "SMs", Ordinal, std::move(Props), MaxGrid),
        D(D), Dev(Dev), Ctx(Ctx) {
    Target.Sm = unsigned(std::atoi(this->Props.Arch.c_str() + 3));
    Target.DriverVersion = this->Props.DriverVersion;
    Target.TensorMaps = D.cuTensorMapEncodeTiled.Call != nullptr;
  }
  ~CudaDevice() override { D.cuDevicePrimaryCtxRelease(Dev); }

  DeviceKind kind() const override { return DeviceKind::Cuda; }

  int rankImage(const ImageInfo &Image) const override {
    return rankCudaImage(Image, Target);
  }
  std::string whyNot(const ImageInfo &Image) const override {
    return whyNotCuda(Image, Target);
  }
  std::string targetDescription() const override {
    return name() + " (" + Props.Model + ", " + describeCudaTarget(Target) +
           ")";
  }

  Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) override;

  Error launch(StreamImpl &S, LoadedImage &Image, void **Args,
               const GridDims &Grid,
               const std::vector<TensorMap> &Maps) override;

protected:
  // The device's primary context is pushed around every driver call, so
  // that the runtime works from any thread and leaves the caller's own
  // current context alone.
  gpu::Result enter(uintptr_t &) override { return D.cuCtxPushCurrent(Ctx); }
  void leave(uintptr_t) override {
    CUcontext Popped;
    D.cuCtxPopCurrent(&Popped);
  }
  const char *enterSymbol() const override { return "cuCtxPushCurrent_v2"; }
  bool isKernelFault(gpu::Result R) const override {
    switch (R) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return true;
    default:
      return false;
    }
  }
  std::string versionText() const override {
    return "CUDA " + cudaVersionString(Props.DriverVersion);
  }
  std::string faultVictim() const override {
    return "the CUDA context of " + name();
  }

private:
  const Driver &D;
  CUdevice Dev;
  CUcontext Ctx;
  CudaTarget Target;
};

Expected<std::unique_ptr<LoadedImage>>
CudaDevice::loadImage(const ImageInfo &Image, const uint8_t *Bytes) {
  std::string What = "cannot load the CUDA code object of " + Image.Entry +
                     " (" + Image.Arch +
                     (Image.ImageKind == kImagePtx ? " PTX" : " cubin") + ")";
  if (Image.ImageKind != kImageCubin && Image.ImageKind != kImagePtx)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it is neither a cubin nor PTX");

  // PTX is text without a terminator: the driver wants a C string.
  std::string Ptx;
  const void *Data = Bytes;
  if (Image.ImageKind == kImagePtx) {
    Ptx.assign(reinterpret_cast<const char *>(Bytes), Image.Size);
    if (Ptx.find('\0') != std::string::npos)
      Ptx.resize(Ptx.find('\0'));
    Data = Ptx.c_str();
    unsigned Isa = Image.Requires.PtxIsa;
    if (!Isa)
      Isa = ptxIsaOf(Ptx).value_or(0);
    std::string Problem = Isa ? ptxIsaProblem(Isa, Props.DriverVersion) : "";
    if (!Problem.empty())
      return Error(ErrorCode::Driver, What + ": " + Problem);
  }

  Expected<std::unique_ptr<gpu::GpuImage>> Loaded = newImage(Image, What);
  if (!Loaded)
    return Loaded.takeError();
  gpu::GpuImage &I = **Loaded;

  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  std::vector<char> InfoLog(kJitLogBytes, '\0'), ErrorLog(kJitLogBytes, '\0');
  int Options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void *Values[] = {InfoLog.data(),
                    reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1)),
                    ErrorLog.data(),
                    reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1)),
                    reinterpret_cast<void *>(uintptr_t(0))};
  CUresult R = D.cuModuleLoadDataEx(&I.M, Data, 5, Options, Values);
  if (R != CUDA_SUCCESS) {
    I.M = nullptr;
    ErrorLog.back() = '\0';
    std::string Log = oneLine(ErrorLog.data());
    bool BadImage = R == CUDA_ERROR_INVALID_PTX ||
                    R == CUDA_ERROR_INVALID_IMAGE ||
                    R == CUDA_ERROR_NO_BINARY_FOR_GPU;
    return Error(BadImage ? ErrorCode::InvalidBundle : ErrorCode::Driver,
                 What + ": " + D.failure("cuModuleLoadDataEx", R) +
                     (Log.empty() ? "" : " (JIT log: " + Log + ")"));
  }
  if (Error E = findEntry(I, Image, What))
    return E;
  // The registers a kernel uses may allow fewer threads than it asks for.
  int FunctionMax = 0;
  if (D.cuFuncGetAttribute(&FunctionMax, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           I.F) == CUDA_SUCCESS &&
      FunctionMax > 0 && unsigned(FunctionMax) < I.Threads)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it asks for " + std::to_string(I.Threads) +
                     " threads per block, but its registers allow only " +
                     std::to_string(FunctionMax));
  // Above 48 KiB, dynamic shared memory must be asked for.
  if (I.SharedBytes > kDefaultSharedLimit) {
    R = D.cuFuncSetAttribute(I.F,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(I.SharedBytes));
    if (R != CUDA_SUCCESS)
      return Error(ErrorCode::Driver,
                   What + ": " + D.failure("cuFuncSetAttribute", R) +
                       " (max dynamic shared memory " +
                       std::to_string(I.SharedBytes) + " bytes)");
  }
  return std::unique_ptr<LoadedImage>(std::move(*Loaded));
}

/// "f16 dims [64, 128] strides [256] box [64, 128] swizzle 128B" (CUDA's
/// order, innermost first), for a failed encode's message.
std::string describeEncode(const TensorMap &M, const CudaTensorMapArgs &A) {
  auto List = [](auto *Values, unsigned N) {
    std::string Out = "[";
    for (unsigned I = 0; I < N; ++I)
      Out += (I ? ", " : "") + std::to_string(Values[I]);
    return Out + "]";
  };
  return std::string(typeName(M.Type)) + " dims " + List(A.GlobalDim, A.Rank) +
         " strides " + List(A.GlobalStrides, A.Rank - 1) + " box " +
         List(A.BoxDim, A.Rank) + " swizzle " +
         (M.Swizzle ? std::to_string(M.Swizzle) + "B" : std::string("none"));
}

Error CudaDevice::launch(StreamImpl &S, LoadedImage &Image, void **Args,
                         const GridDims &Grid,
                         const std::vector<TensorMap> &Maps) {
  if (Maps.empty())
    return DriverDevice::launch(S, Image, Args, Grid, Maps);
  if (!D.cuTensorMapEncodeTiled.Call) // rankImage rules such images out
    return Error(ErrorCode::Driver,
                 "the CUDA driver " + D.Path +
                     " does not export cuTensorMapEncodeTiled");
  // Each map is a kernel argument by value: 128 bytes, 64-byte aligned,
  // alive until cuLaunchKernel returns. Their slots follow the arguments.
  std::vector<CUtensorMap> Encoded(Maps.size());
  size_t Slot = 0;
  while (Args[Slot])
    ++Slot;
  {
    Scope Sc(*this);
    if (Error E = Sc.error())
      return E;
    for (size_t I = 0; I < Maps.size(); ++I) {
      const TensorMap &M = Maps[I];
      CudaTensorMapArgs A = cudaTensorMapArgs(M);
      CUresult R = D.cuTensorMapEncodeTiled(
          &Encoded[I], A.DataType, A.Rank,
          reinterpret_cast<void *>(uintptr_t(M.Base)), A.GlobalDim,
          A.GlobalStrides, A.BoxDim, A.ElementStrides,
          CU_TENSOR_MAP_INTERLEAVE_NONE, A.Swizzle,
          CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      // A map the encoder rejects (CUDA_ERROR_INVALID_VALUE) is refused,
      // not a driver failure: launchPlanned runs the next image whose
      // assumptions hold (the generic one). Other results are failures.
      std::string What = " (tensor map " + std::to_string(I) + " of " +
                         static_cast<gpu::GpuImage &>(Image).Label + ": " +
                         describeEncode(M, A) + ")";
      if (R == CUDA_ERROR_INVALID_VALUE)
        return Error(ErrorCode::LaunchRefused,
                     D.failure(D.cuTensorMapEncodeTiled.Symbol, R) + What);
      if (R != CUDA_SUCCESS)
        return fail(D.cuTensorMapEncodeTiled.Symbol, R, What);
      Args[Slot + I] = &Encoded[I];
    }
  }
  return DriverDevice::launch(S, Image, Args, Grid, {});
}

const gpu::VendorNames kCuda{"CUDA device", "no CUDA device",
                             {CUDA_ERROR_NO_DEVICE}};

} // namespace

bool kiln::rt::detail::cudaDeviceAvailable() {
  Expected<const Driver *> D = loadDriver();
  return D && bool(gpu::countDevices(**D, kCuda));
}

Expected<std::shared_ptr<DeviceImpl>>
kiln::rt::detail::openCudaDevice(int Ordinal, const std::string &Spec) {
  auto Fail = [&](ErrorCode Code, const std::string &Why) {
    return Error(Code, "cannot open " + Spec + ": " + Why);
  };
  Expected<const Driver *> Load = loadDriver();
  if (!Load)
    return Fail(Load.error().code(), Load.error().message());
  const Driver &D = **Load;
  Expected<int> Dev = gpu::openOrdinal(D, Ordinal, Spec, kCuda);
  if (!Dev)
    return Dev.takeError();
  DeviceProperties P;
  P.Kind = DeviceKind::Cuda;
  int Major, Minor, Sms, Optin, PerBlock, MaxThreads;
  int MaxGrid[3];
  if (Error E = gpu::readProperties(
          D, *Dev, P,
          {{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &Major},
           {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &Minor},
           {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &Sms},
           {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &Optin},
           {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &PerBlock},
           {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &MaxThreads},
           {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &MaxGrid[0]},
           {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &MaxGrid[1]},
           {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &MaxGrid[2]}},
          CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
          CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH))
    return Fail(E.code(), E.message());
  if (Major <= 0 || Major > 99 || Minor < 0 || Minor > 9)
    return Fail(ErrorCode::Driver, "unexpected compute capability " +
                                       std::to_string(Major) + "." +
                                       std::to_string(Minor));
  P.Arch = "sm_" + std::to_string(Major * 10 + Minor);
  P.ComputeUnits = unsigned(std::max(Sms, 0));
  P.MaxSharedBytesPerBlock = uint64_t(std::max(Optin, PerBlock));
  P.MaxThreadsPerBlock = unsigned(std::max(MaxThreads, 1));
  P.WarpSize = 32;

  CUcontext Ctx = nullptr;
  if (CUresult R = D.cuDevicePrimaryCtxRetain(&Ctx, *Dev))
    return Fail(ErrorCode::Driver, D.failure("cuDevicePrimaryCtxRetain", R));
  return std::shared_ptr<DeviceImpl>(
      std::make_shared<CudaDevice>(D, Ordinal, *Dev, Ctx, std::move(P),
                                   MaxGrid));
}
