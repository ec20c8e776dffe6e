//===- HipDevice.cpp - The HIP device -------------------------------------===//
//
// An AMD GPU driven through HIP's module API, opened at run time with
// dlopen (HipDriver.h): nothing of ROCm is needed to build the runtime, and
// a machine without ROCm or without an AMD GPU simply has no HIP device.
// Memory, streams, events and launches are shared with the CUDA device
// (GpuDevice.cpp): HIP's module API has the driver API's shape.
//
// HIP keeps a current device per thread instead of a context stack: every
// call first makes this device current and afterwards restores the
// caller's (ROCm 7 refuses a stream of another device than the current
// one). Code objects are hsaco files (ELF) for one processor; the image
// for the device's processor whose target features (xnack, sramecc) agree
// with the device's is loaded with hipModuleLoadData. A launch runs grid
// (x, y, z) workgroups of `threads` work-items (warps x wavefront size,
// the image's resources) with `shared_bytes` of dynamic LDS.
//
// Every failure names the call and the hipError_t ("hipModuleLoadData
// failed: hipErrorNoBinaryForGpu"); nothing aborts here (HIP itself ends
// the process when a kernel traps, in most ROCm releases).
//
//===----------------------------------------------------------------------===//

#include "HipDevice.h"
#include "GpuDevice.h"
#include "HipDriver.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::rt::detail::hip;

//===----------------------------------------------------------------------===//
// The runtime library
//===----------------------------------------------------------------------===//

std::string Driver::errorName(hipError_t R) const {
  if (hipGetErrorName)
    if (const char *Name = hipGetErrorName(R);
        Name && std::strncmp(Name, "hip", 3) == 0)
      return Name;
  return "HIP error " + std::to_string(R);
}

namespace {

std::unique_ptr<gpu::Api> bindHip(void *H, std::string &Missing) {
  auto D = std::make_unique<Driver>();
  gpu::Binder Bind(H);
  Bind(D->Init, {"hipInit"});
  Bind(D->DriverGetVersion, {"hipDriverGetVersion"});
  Bind(D->hipGetErrorName, {"hipGetErrorName"});
  Bind(D->DeviceGetCount, {"hipGetDeviceCount"});
  Bind(D->DeviceGet, {"hipDeviceGet"});
  Bind(D->DeviceGetName, {"hipDeviceGetName"});
  Bind(D->DeviceGetAttribute, {"hipDeviceGetAttribute"});
  Bind(D->DeviceTotalMem, {"hipDeviceTotalMem"});
  Bind(D->GetDeviceProperties,
       {"hipGetDeviceProperties", "hipGetDevicePropertiesR0600"});
  Bind(D->hipSetDevice, {"hipSetDevice"});
  Bind(D->hipGetDevice, {"hipGetDevice"});
  Bind(D->MemAlloc, {"hipMalloc"});
  Bind(D->MemFree, {"hipFree"});
  Bind(D->MemcpyHtoDAsync, {"hipMemcpyHtoDAsync"});
  Bind(D->MemcpyDtoHAsync, {"hipMemcpyDtoHAsync"});
  Bind(D->MemcpyDtoDAsync, {"hipMemcpyDtoDAsync"});
  Bind(D->MemsetD8Async, {"hipMemsetD8Async"});
  Bind(D->StreamCreate, {"hipStreamCreateWithFlags"});
  Bind(D->StreamDestroy, {"hipStreamDestroy"});
  Bind(D->StreamSynchronize, {"hipStreamSynchronize"});
  Bind(D->EventCreate, {"hipEventCreateWithFlags"});
  Bind(D->EventRecord, {"hipEventRecord"});
  Bind(D->EventSynchronize, {"hipEventSynchronize"});
  Bind(D->EventElapsedTime, {"hipEventElapsedTime"});
  Bind(D->EventDestroy, {"hipEventDestroy"});
  Bind(D->hipModuleLoadData, {"hipModuleLoadData"});
  Bind(D->ModuleGetFunction, {"hipModuleGetFunction"});
  Bind(D->ModuleUnload, {"hipModuleUnload"});
  Bind(D->LaunchKernel, {"hipModuleLaunchKernel"});
  Missing = Bind.missing();
  return D;
}

} // namespace

Expected<const Driver *> kiln::rt::detail::hip::loadDriver() {
  Expected<const gpu::Api *> A = gpu::loadLibrary(
      "KILN_HIP_RUNTIME",
      {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
       "libamdhip64.so.5"},
      "HIP runtime", bindHip);
  if (!A)
    return A.takeError();
  return static_cast<const Driver *>(*A);
}

//===----------------------------------------------------------------------===//
// Which code objects a device runs
//===----------------------------------------------------------------------===//

std::optional<bool> AmdTargetId::feature(std::string_view Name) const {
  for (const auto &[F, On] : Features)
    if (F == Name)
      return On;
  return std::nullopt;
}



std::optional<AmdTargetId>
kiln::rt::detail::parseAmdTargetId(std::string_view Id) {
  AmdTargetId T;
  size_t Colon = Id.find(':');
  T.Processor = std::string(Id.substr(0, Colon));
  if (T.Processor.size() < 4 || T.Processor.rfind("gfx", 0) != 0 ||
      !std::all_of(T.Processor.begin() + 3, T.Processor.end(),
                   [](char C) { return std::isalnum((unsigned char)C); }))
    return std::nullopt;
  while (Colon != std::string_view::npos) {
    size_t Next = Id.find(':', Colon + 1);
    std::string_view F = Id.substr(Colon + 1, Next == std::string_view::npos
                                                  ? std::string_view::npos
                                                  : Next - Colon - 1);
    if (F.size() < 2 || (F.back() != '+' && F.back() != '-'))
      return std::nullopt;
    std::string Name(F.substr(0, F.size() - 1));
    if (!std::all_of(Name.begin(), Name.end(),
                     [](char C) { return std::isalnum((unsigned char)C); }))
      return std::nullopt;
    T.Features.emplace_back(std::move(Name), F.back() == '+');
    Colon = Next;
  }
  return T;
}

std::string kiln::rt::detail::hipVersionString(int Version) {
  return std::to_string(Version / 10000000) + "." +
         std::to_string(Version / 100000 % 100);
}

namespace {

/// The target an AMD image is for: its arch's target ID, with the
/// processor of "requires" if it says.
std::optional<AmdTargetId> imageTarget(const ImageInfo &Image) {
  if (Image.Triple.rfind("amdgcn", 0) != 0 || Image.ImageKind != kImageObject)
    return std::nullopt;
  std::optional<AmdTargetId> Id = parseAmdTargetId(Image.Arch);
  if (!Id && Image.Requires.Gfx.empty())
    return std::nullopt;
  if (!Id)
    Id = AmdTargetId();
  if (!Image.Requires.Gfx.empty())
    Id->Processor = Image.Requires.Gfx;
  return Id;
}

/// "xnack+".
std::string featureText(const std::string &Name, bool On) {
  return Name + (On ? "+" : "-");
}

} // namespace

std::string AmdTargetId::str() const {
  std::string Out = Processor;
  for (const auto &[Name, On] : Features)
    Out += ":" + featureText(Name, On);
  return Out;
}

int kiln::rt::detail::rankHipImage(const ImageInfo &Image,
                                   const HipTarget &T) {
  std::optional<AmdTargetId> Id = imageTarget(Image);
  // Tensor maps are Hopper's (TMA): an AMD image with them is a mistake.
  if (!Id || Id->Processor != T.Id.Processor || !Image.TensorMaps.empty())
    return 0;
  int Rank = 1000;
  for (const auto &[Name, On] : Id->Features) {
    std::optional<bool> Dev = T.Id.feature(Name);
    if (!Dev || *Dev != On)
      return 0;
    ++Rank; // a code object made for exactly this setting
  }
  return Rank;
}

std::string kiln::rt::detail::whyNotHip(const ImageInfo &Image,
                                        const HipTarget &T) {
  std::optional<AmdTargetId> Id = imageTarget(Image);
  if (!Id || Id->Processor != T.Id.Processor || rankHipImage(Image, T) > 0)
    return "";
  if (!Image.TensorMaps.empty())
    return "takes TMA tensor maps, which only NVIDIA GPUs run";
  for (const auto &[Name, On] : Id->Features) {
    std::optional<bool> Dev = T.Id.feature(Name);
    if (!Dev)
      return "built for " + featureText(Name, On) + ", which " +
             T.Id.Processor + " does not have";
    if (*Dev != On)
      return "built for " + featureText(Name, On) + "; the device runs " +
             featureText(Name, *Dev);
  }
  return "";
}

std::string kiln::rt::detail::describeHipTarget(const HipTarget &T) {
  return T.Id.str() + " (wave" + std::to_string(T.WaveSize) +
         "): code objects for " + T.Id.Processor;
}

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

namespace {

class HipDevice : public gpu::DriverDevice {
public:
  HipDevice(const Driver &D, int Ordinal, DeviceProperties Props,
            HipTarget Target, int MaxGrid[3])
      : DriverDevice(D, "hip", "CUs", Ordinal, std::move(Props), MaxGrid),
        D(D), Target(std::move(Target)) {}

  DeviceKind kind() const override { return DeviceKind::Hip; }

  int rankImage(const ImageInfo &Image) const override {
    return rankHipImage(Image, Target);
  }
  std::string whyNot(const ImageInfo &Image) const override {
    return whyNotHip(Image, Target);
  }
  std::string targetDescription() const override {
    return name() + " (" + Props.Model + ", " + describeHipTarget(Target) +
           ")";
  }

  Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) override;

protected:
  gpu::Result enter(uintptr_t &Saved) override {
    int Current = -1;
    Saved = 0;
    if (D.hipGetDevice(&Current) == hipSuccess && Current == Ordinal)
      return hipSuccess;
    if (Current >= 0)
      Saved = uintptr_t(Current) + 1;
    return D.hipSetDevice(Ordinal);
  }
  void leave(uintptr_t Saved) override {
    if (Saved)
      D.hipSetDevice(int(Saved - 1));
  }
  const char *enterSymbol() const override { return "hipSetDevice"; }
  bool isKernelFault(gpu::Result R) const override {
    return R == hipErrorIllegalAddress || R == hipErrorAssert ||
           R == hipErrorLaunchFailure || R == hipErrorLaunchTimeOut;
  }
  std::string versionText() const override {
    return "HIP " + hipVersionString(Props.DriverVersion);
  }
  std::string faultVictim() const override { return "HIP device " + name(); }

private:
  const Driver &D;
  HipTarget Target;
};

Expected<std::unique_ptr<LoadedImage>>
HipDevice::loadImage(const ImageInfo &Image, const uint8_t *Bytes) {
  std::string What = "cannot load the AMD code object of " + Image.Entry +
                     " (" + Image.Arch + ")";
  if (Image.Size < 4 || std::memcmp(Bytes, "\x7f" "ELF", 4) != 0)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it is not an ELF file");
  Expected<std::unique_ptr<gpu::GpuImage>> Loaded = newImage(Image, What);
  if (!Loaded)
    return Loaded.takeError();
  gpu::GpuImage &I = **Loaded;

  // The loader reads the ELF headers in place: give it 8-byte alignment
  // (the bundle's bytes outlive the module either way).
  std::vector<uint64_t> Aligned;
  const void *Data = Bytes;
  if (uintptr_t(Bytes) % alignof(uint64_t)) {
    Aligned.resize((Image.Size + 7) / 8);
    std::memcpy(Aligned.data(), Bytes, Image.Size);
    Data = Aligned.data();
  }
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  hipError_t R = D.hipModuleLoadData(&I.M, Data);
  if (R != hipSuccess) {
    I.M = nullptr;
    bool BadImage = R == hipErrorInvalidImage || R == hipErrorNoBinaryForGpu ||
                    R == hipErrorInvalidKernelFile ||
                    R == hipErrorSharedObjectInitFailed;
    std::string Hint;
    // Code object v5 is what ROCm 6 and later load by default; an older
    // runtime may want v4.
    if (BadImage && Image.Requires.CodeObject >= 5 &&
        Props.DriverVersion / 10000000 < 6)
      Hint = " (this is code object v" +
             std::to_string(Image.Requires.CodeObject) + " and HIP " +
             hipVersionString(Props.DriverVersion) +
             " may predate it: compile with --amdgpu-code-object=4)";
    return Error(BadImage ? ErrorCode::InvalidBundle : ErrorCode::Driver,
                 What + ": " + D.failure("hipModuleLoadData", R) + Hint);
  }
  if (Error E = findEntry(I, Image, What))
    return E;
  return std::unique_ptr<LoadedImage>(std::move(*Loaded));
}

/// "No AMD GPU" is what ROCm says in several ways: hipInit fails with
/// hipErrorNoDevice or hipErrorInvalidDevice, or the count is 0.
const gpu::VendorNames kHip{"HIP device", "no AMD GPU",
                            {hipErrorNoDevice, hipErrorInvalidDevice}};

/// The device's target ID ("gfx942:sramecc+:xnack-") from hipDeviceProp_t.
Expected<AmdTargetId> readTargetId(const Driver &D, int Dev) {
  std::vector<char> Props(kDevicePropBytes, '\0');
  if (hipError_t R = D.GetDeviceProperties(Props.data(), Dev))
    return Error(ErrorCode::Driver,
                 D.failure(D.GetDeviceProperties.Symbol, R));
  size_t Offset =
      std::strcmp(D.GetDeviceProperties.Symbol, "hipGetDevicePropertiesR0600")
          ? kGcnArchNameOffset
          : kGcnArchNameOffsetR0600;
  const char *Name = Props.data() + Offset;
  std::string Arch(Name, strnlen(Name, kGcnArchNameBytes));
  std::optional<AmdTargetId> Id = parseAmdTargetId(Arch);
  if (!Id)
    return Error(ErrorCode::Driver,
                 std::string(D.GetDeviceProperties.Symbol) +
                     " gave no AMD GPU name (gcnArchName '" +
                     Arch.substr(0, 64) + "')");
  return *Id;
}

} // namespace

bool kiln::rt::detail::hipDeviceAvailable() {
  Expected<const Driver *> D = loadDriver();
  return D && bool(gpu::countDevices(**D, kHip));
}

Expected<std::shared_ptr<DeviceImpl>>
kiln::rt::detail::openHipDevice(int Ordinal, const std::string &Spec) {
  auto Fail = [&](ErrorCode Code, const std::string &Why) {
    return Error(Code, "cannot open " + Spec + ": " + Why);
  };
  Expected<const Driver *> Load = loadDriver();
  if (!Load)
    return Fail(Load.error().code(), Load.error().message());
  const Driver &D = **Load;
  Expected<int> Handle = gpu::openOrdinal(D, Ordinal, Spec, kHip);
  if (!Handle)
    return Handle.takeError();
  int Dev = *Handle;
  DeviceProperties P;
  P.Kind = DeviceKind::Hip;
  int Cus, PerBlock, Optin, MaxThreads, Wave;
  int MaxGrid[3];
  if (Error E = gpu::readProperties(
          D, Dev, P,
          {{hipDeviceAttributeMultiprocessorCount, &Cus},
           {hipDeviceAttributeMaxSharedMemoryPerBlock, &PerBlock},
           {hipDeviceAttributeMaxThreadsPerBlock, &MaxThreads},
           {hipDeviceAttributeWarpSize, &Wave},
           {hipDeviceAttributeMaxGridDimX, &MaxGrid[0]},
           {hipDeviceAttributeMaxGridDimY, &MaxGrid[1]},
           {hipDeviceAttributeMaxGridDimZ, &MaxGrid[2]}},
          hipDeviceAttributeMemoryClockRate, hipDeviceAttributeMemoryBusWidth))
    return Fail(E.code(), E.message());
  // The opt-in maximum is CUDA's notion; HIP may not report it.
  if (D.DeviceGetAttribute(&Optin, hipDeviceAttributeSharedMemPerBlockOptin,
                           Dev) != hipSuccess)
    Optin = 0;
  Expected<AmdTargetId> Id = readTargetId(D, Dev);
  if (!Id)
    return Fail(Id.error().code(), Id.error().message());
  if (Wave != 32 && Wave != 64)
    return Fail(ErrorCode::Driver,
                "unexpected wavefront size " + std::to_string(Wave));
  HipTarget Target;
  Target.Id = *Id;
  Target.WaveSize = unsigned(Wave);
  Target.RuntimeVersion = P.DriverVersion;
  P.Arch = Target.Id.str();
  P.ComputeUnits = unsigned(std::max(Cus, 0));
  P.MaxSharedBytesPerBlock = uint64_t(std::max(Optin, PerBlock));
  P.MaxThreadsPerBlock = unsigned(std::max(MaxThreads, 1));
  P.WarpSize = unsigned(Wave);
  return std::shared_ptr<DeviceImpl>(std::make_shared<HipDevice>(
      D, Ordinal, std::move(P), std::move(Target), MaxGrid));
}
