//===- CudaDevice.cpp - The CUDA device -----------------------------------===//
//
// A CUDA GPU driven through the driver API, opened at run time with
// dlopen (CudaDriver.h): nothing of CUDA is needed to build the runtime,
// and a machine without a driver simply has no CUDA device.
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

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
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

std::string Driver::failure(const char *Call, CUresult R) const {
  return std::string(Call) + " failed: " + errorName(R);
}

namespace {

template <typename Fn>
bool bind(void *Handle, Fn &Slot, std::initializer_list<const char *> Names) {
  for (const char *Name : Names)
    if (void *Sym = dlsym(Handle, Name)) {
      Slot = reinterpret_cast<Fn>(Sym);
      return true;
    }
  return false;
}

/// Binds every entry point; the name of the first one missing, or "".
std::string bindAll(void *H, Driver &D) {
#define KILN_BIND(Member, ...)                                                 \
  if (!bind(H, D.Member, {__VA_ARGS__}))                                       \
    return std::initializer_list<const char *>{__VA_ARGS__}.begin()[0];
  KILN_BIND(cuInit, "cuInit")
  KILN_BIND(cuDriverGetVersion, "cuDriverGetVersion")
  KILN_BIND(cuGetErrorName, "cuGetErrorName")
  KILN_BIND(cuDeviceGetCount, "cuDeviceGetCount")
  KILN_BIND(cuDeviceGet, "cuDeviceGet")
  KILN_BIND(cuDeviceGetName, "cuDeviceGetName")
  KILN_BIND(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  KILN_BIND(cuDeviceTotalMem, "cuDeviceTotalMem_v2")
  KILN_BIND(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  KILN_BIND(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
            "cuDevicePrimaryCtxRelease")
  KILN_BIND(cuCtxPushCurrent, "cuCtxPushCurrent_v2")
  KILN_BIND(cuCtxPopCurrent, "cuCtxPopCurrent_v2")
  KILN_BIND(cuMemAlloc, "cuMemAlloc_v2")
  KILN_BIND(cuMemFree, "cuMemFree_v2")
  KILN_BIND(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
  KILN_BIND(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
  KILN_BIND(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
  KILN_BIND(cuMemsetD8Async, "cuMemsetD8Async")
  KILN_BIND(cuStreamCreate, "cuStreamCreate")
  KILN_BIND(cuStreamDestroy, "cuStreamDestroy_v2")
  KILN_BIND(cuStreamSynchronize, "cuStreamSynchronize")
  KILN_BIND(cuEventCreate, "cuEventCreate")
  KILN_BIND(cuEventRecord, "cuEventRecord")
  KILN_BIND(cuEventSynchronize, "cuEventSynchronize")
  KILN_BIND(cuEventElapsedTime, "cuEventElapsedTime")
  KILN_BIND(cuEventDestroy, "cuEventDestroy_v2")
  KILN_BIND(cuModuleLoadDataEx, "cuModuleLoadDataEx")
  KILN_BIND(cuModuleGetFunction, "cuModuleGetFunction")
  KILN_BIND(cuModuleUnload, "cuModuleUnload")
  KILN_BIND(cuFuncGetAttribute, "cuFuncGetAttribute")
  KILN_BIND(cuFuncSetAttribute, "cuFuncSetAttribute")
  KILN_BIND(cuLaunchKernel, "cuLaunchKernel")
#undef KILN_BIND
  return "";
}

} // namespace

Expected<const Driver *> kiln::rt::detail::cuda::loadDriver() {
  // One Driver per path, kept for the life of the process: drivers are not
  // unloaded, and tests switch between fake drivers by path.
  static std::mutex Mutex;
  static std::map<std::string, std::unique_ptr<Driver>> Loaded;
  const char *Env = std::getenv("KILN_CUDA_DRIVER");
  std::string Path = Env && *Env ? Env : "libcuda.so.1";
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Loaded.find(Path);
  if (It != Loaded.end())
    return const_cast<const Driver *>(It->second.get());
  dlerror();
  void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!H) {
    const char *Why = dlerror();
    return Error(ErrorCode::Driver, Path + " could not be loaded (" +
                                        (Why ? Why : "unknown error") + ")");
  }
  auto D = std::make_unique<Driver>(); // value-initialized: null pointers
  D->Path = Path;
  std::string Missing = bindAll(H, *D);
  if (!Missing.empty()) {
    dlclose(H);
    return Error(ErrorCode::Driver, "the CUDA driver " + Path +
                                        " does not export " + Missing);
  }
  const Driver *Result = D.get();
  Loaded.emplace(Path, std::move(D));
  return Result;
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
  if (!Cubin && Image.Requires.PtxIsa)
    return ptxIsaProblem(Image.Requires.PtxIsa, T.DriverVersion);
  return "";
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

constexpr unsigned kDefaultThreads = 128;
constexpr unsigned kDefaultSharedLimit = 48 * 1024;
constexpr size_t kJitLogBytes = 16 * 1024;

class CudaDevice;

/// Makes the device's primary context current for its lifetime.
class ScopedContext {
public:
  ScopedContext(const Driver &D, CUcontext Ctx) : D(D) {
    R = D.cuCtxPushCurrent(Ctx);
  }
  ~ScopedContext() {
    if (R == CUDA_SUCCESS) {
      CUcontext Popped;
      D.cuCtxPopCurrent(&Popped);
    }
  }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

  /// The failure to make the context current, if any.
  Error error() const {
    if (R == CUDA_SUCCESS)
      return Error::success();
    return Error(ErrorCode::Driver, D.failure("cuCtxPushCurrent_v2", R));
  }

private:
  const Driver &D;
  CUresult R;
};

class CudaStream : public StreamImpl {
public:
  CudaStream(const Driver &D, CUcontext Ctx, CUstream S)
      : D(D), Ctx(Ctx), S(S) {}
  ~CudaStream() override {
    ScopedContext Scope(D, Ctx);
    D.cuStreamDestroy(S);
  }
  const Driver &D;
  CUcontext Ctx;
  CUstream S;
};

class CudaEvent : public EventImpl {
public:
  CudaEvent(const Driver &D, CUcontext Ctx, CUevent E) : D(D), Ctx(Ctx), E(E) {}
  ~CudaEvent() override {
    ScopedContext Scope(D, Ctx);
    D.cuEventDestroy(E);
  }
  const Driver &D;
  CUcontext Ctx;
  CUevent E;
  bool Recorded = false;
};

class CudaImage : public LoadedImage {
public:
  CudaImage(const Driver &D, CUcontext Ctx) : D(D), Ctx(Ctx) {}
  ~CudaImage() override {
    if (!Module)
      return;
    ScopedContext Scope(D, Ctx);
    D.cuModuleUnload(Module);
  }
  const Driver &D;
  CUcontext Ctx;
  CUmodule Module = nullptr;
  CUfunction Function = nullptr;
  unsigned Threads = kDefaultThreads;
  unsigned SharedBytes = 0;
  std::string Label; ///< "vadd_v0", for messages
};

/// Errors a kernel leaves behind (a trap, an assert, a bad access): the
/// context is unusable afterwards.
bool isKernelFault(CUresult R) {
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

std::string gib(uint64_t Bytes) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f GiB", double(Bytes) / double(1 << 30));
  return Buf;
}

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

class CudaDevice : public DeviceImpl {
public:
  CudaDevice(const Driver &D, int Ordinal, CUdevice Dev, CUcontext Ctx,
             DeviceProperties Props, int MaxGrid[3])
      : D(D), Ordinal(Ordinal), Dev(Dev), Ctx(Ctx), Props(std::move(Props)) {
    for (int I = 0; I < 3; ++I)
      this->MaxGrid[I] = MaxGrid[I] > 0 ? MaxGrid[I] : 65535;
    Target.Sm = unsigned(std::atoi(this->Props.Arch.c_str() + 3));
    Target.DriverVersion = this->Props.DriverVersion;
  }
  ~CudaDevice() override { D.cuDevicePrimaryCtxRelease(Dev); }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  std::string name() const override {
    return "cuda:" + std::to_string(Ordinal);
  }
  std::string description() const override {
    std::string Out = name() + " (" + Props.Model + ", " + Props.Arch + ", " +
                      std::to_string(Props.ComputeUnits) + " SMs, " +
                      gib(Props.MemoryBytes);
    if (Props.PeakBandwidthGBs > 0)
      Out += ", " + std::to_string(int64_t(Props.PeakBandwidthGBs + 0.5)) +
             " GB/s";
    return Out + ", CUDA " + cudaVersionString(Props.DriverVersion) + ")";
  }
  DeviceProperties properties() const override { return Props; }

  Expected<void *> allocate(size_t Bytes) override {
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    CUdeviceptr P = 0;
    // Zero-byte buffers still get an address of their own.
    CUresult R = D.cuMemAlloc(&P, std::max<size_t>(Bytes, 1));
    if (R != CUDA_SUCCESS)
      return Error(R == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::OutOfMemory
                                                 : ErrorCode::Driver,
                   "cannot allocate " + std::to_string(Bytes) +
                       " bytes on " + name() + ": " +
                       D.failure("cuMemAlloc_v2", R));
    return reinterpret_cast<void *>(uintptr_t(P));
  }

  void release(void *Ptr) override {
    ScopedContext Scope(D, Ctx);
    D.cuMemFree(CUdeviceptr(uintptr_t(Ptr)));
  }

  Expected<std::unique_ptr<StreamImpl>> createStream() override {
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    CUstream S = nullptr;
    if (CUresult R = D.cuStreamCreate(&S, CU_STREAM_NON_BLOCKING))
      return fail("cuStreamCreate", R);
    return std::unique_ptr<StreamImpl>(new CudaStream(D, Ctx, S));
  }

  Expected<std::unique_ptr<EventImpl>> createEvent() override {
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    CUevent Ev = nullptr;
    if (CUresult R = D.cuEventCreate(&Ev, CU_EVENT_DEFAULT))
      return fail("cuEventCreate", R);
    return std::unique_ptr<EventImpl>(new CudaEvent(D, Ctx, Ev));
  }

  Error copy(StreamImpl &S, void *Dst, const void *Src, size_t Bytes,
             CopyKind Kind) override {
    if (!Bytes)
      return Error::success();
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    CUstream Str = static_cast<CudaStream &>(S).S;
    CUdeviceptr DstDev = CUdeviceptr(uintptr_t(Dst));
    CUdeviceptr SrcDev = CUdeviceptr(uintptr_t(Src));
    switch (Kind) {
    case CopyKind::HostToDevice:
      if (CUresult R = D.cuMemcpyHtoDAsync(DstDev, Src, Bytes, Str))
        return fail("cuMemcpyHtoDAsync_v2", R);
      break;
    case CopyKind::DeviceToHost:
      if (CUresult R = D.cuMemcpyDtoHAsync(Dst, SrcDev, Bytes, Str))
        return fail("cuMemcpyDtoHAsync_v2", R);
      break;
    case CopyKind::DeviceToDevice:
      if (CUresult R = D.cuMemcpyDtoDAsync(DstDev, SrcDev, Bytes, Str))
        return fail("cuMemcpyDtoDAsync_v2", R);
      break;
    }
    return Error::success();
  }

  Error fill(StreamImpl &S, void *Dst, uint8_t Value, size_t Bytes) override {
    if (!Bytes)
      return Error::success();
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    if (CUresult R = D.cuMemsetD8Async(CUdeviceptr(uintptr_t(Dst)), Value,
                                       Bytes, static_cast<CudaStream &>(S).S))
      return fail("cuMemsetD8Async", R);
    return Error::success();
  }

  Error record(StreamImpl &S, EventImpl &E) override {
    ScopedContext Scope(D, Ctx);
    if (Error Err = Scope.error())
      return Err;
    auto &CE = static_cast<CudaEvent &>(E);
    if (CUresult R = D.cuEventRecord(CE.E, static_cast<CudaStream &>(S).S))
      return fail("cuEventRecord", R);
    CE.Recorded = true;
    return Error::success();
  }

  Error synchronize(StreamImpl &S) override {
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    if (CUresult R = D.cuStreamSynchronize(static_cast<CudaStream &>(S).S))
      return fail("cuStreamSynchronize", R);
    return Error::success();
  }

  Error synchronize(EventImpl &E) override {
    auto &CE = static_cast<CudaEvent &>(E);
    if (!CE.Recorded)
      return Error(ErrorCode::InvalidArgument,
                   "the event has not been recorded");
    ScopedContext Scope(D, Ctx);
    if (Error Err = Scope.error())
      return Err;
    if (CUresult R = D.cuEventSynchronize(CE.E))
      return fail("cuEventSynchronize", R);
    return Error::success();
  }

  Expected<double> elapsedMilliseconds(EventImpl &Start,
                                       EventImpl &End) override {
    auto &S = static_cast<CudaEvent &>(Start);
    auto &E = static_cast<CudaEvent &>(End);
    if (!S.Recorded || !E.Recorded)
      return Error(ErrorCode::InvalidArgument,
                   "elapsed time of an event that has not been recorded");
    ScopedContext Scope(D, Ctx);
    if (Error Err = Scope.error())
      return Err;
    // Both must have completed; the end event comes last in its stream.
    if (CUresult R = D.cuEventSynchronize(E.E))
      return fail("cuEventSynchronize", R);
    if (CUresult R = D.cuEventSynchronize(S.E))
      return fail("cuEventSynchronize", R);
    float Ms = 0;
    if (CUresult R = D.cuEventElapsedTime(&Ms, S.E, E.E))
      return fail("cuEventElapsedTime", R);
    return double(Ms);
  }

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

  int64_t maxGridAxis(unsigned Axis) const override {
    return Axis < 3 ? MaxGrid[Axis] : 1;
  }

  Error launch(StreamImpl &S, LoadedImage &Image, void **Args,
               const GridDims &Grid) override {
    auto &I = static_cast<CudaImage &>(Image);
    ScopedContext Scope(D, Ctx);
    if (Error E = Scope.error())
      return E;
    CUresult R = D.cuLaunchKernel(
        I.Function, unsigned(Grid.X), unsigned(Grid.Y), unsigned(Grid.Z),
        I.Threads, 1, 1, I.SharedBytes, static_cast<CudaStream &>(S).S, Args,
        nullptr);
    if (R != CUDA_SUCCESS)
      return fail("cuLaunchKernel", R,
                  " (" + I.Label + ": grid " + std::to_string(Grid.X) + "x" +
                      std::to_string(Grid.Y) + "x" + std::to_string(Grid.Z) +
                      ", " + std::to_string(I.Threads) + " threads, " +
                      std::to_string(I.SharedBytes) + " bytes of shared "
                      "memory)");
    return Error::success();
  }

  // Kernel `print` on the GPU is not supported yet: GPU code objects do not
  // call back into the runtime, so there is nothing to route. (A device-side
  // printf buffer would be drained here.)
  void setPrintHandler(PrintHandler) override {}

private:
  /// A driver failure: the call and the CUresult's name. A fault a kernel
  /// left behind is a trap (and the context is lost from then on).
  Error fail(const char *Call, CUresult R, const std::string &Detail = "") {
    std::string Message = D.failure(Call, R) + Detail;
    if (isKernelFault(R))
      return Error(ErrorCode::KernelTrapped,
                   "kernel trapped: " + Message +
                       " (the CUDA context of " + name() +
                       " cannot be used any more)");
    if (R == CUDA_ERROR_OUT_OF_MEMORY)
      return Error(ErrorCode::OutOfMemory, Message);
    return Error(ErrorCode::Driver, Message);
  }

  const Driver &D;
  int Ordinal;
  CUdevice Dev;
  CUcontext Ctx;
  DeviceProperties Props;
  int64_t MaxGrid[3] = {};
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

  auto Loaded = std::make_unique<CudaImage>(D, Ctx);
  Loaded->Label = Image.Entry;
  int64_t Threads =
      resourceInt(Image.Resources, "threads").value_or(kDefaultThreads);
  int64_t Shared = resourceInt(Image.Resources, "shared_bytes").value_or(0);
  if (Threads < 1 || Threads > int64_t(Props.MaxThreadsPerBlock))
    return Error(ErrorCode::InvalidBundle,
                 What + ": it asks for " + std::to_string(Threads) +
                     " threads per block; " + name() + " allows 1 to " +
                     std::to_string(Props.MaxThreadsPerBlock));
  if (uint64_t(Shared) > Props.MaxSharedBytesPerBlock)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it needs " + std::to_string(Shared) +
                     " bytes of shared memory; " + name() + " has " +
                     std::to_string(Props.MaxSharedBytesPerBlock) +
                     " per block");
  Loaded->Threads = unsigned(Threads);
  Loaded->SharedBytes = unsigned(Shared);

  ScopedContext Scope(D, Ctx);
  if (Error E = Scope.error())
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
  CUresult R = D.cuModuleLoadDataEx(&Loaded->Module, Data, 5, Options, Values);
  if (R != CUDA_SUCCESS) {
    Loaded->Module = nullptr;
    ErrorLog.back() = '\0';
    std::string Log = oneLine(ErrorLog.data());
    bool BadImage = R == CUDA_ERROR_INVALID_PTX ||
                    R == CUDA_ERROR_INVALID_IMAGE ||
                    R == CUDA_ERROR_NO_BINARY_FOR_GPU;
    return Error(BadImage ? ErrorCode::InvalidBundle : ErrorCode::Driver,
                 What + ": " + D.failure("cuModuleLoadDataEx", R) +
                     (Log.empty() ? "" : " (JIT log: " + Log + ")"));
  }
  R = D.cuModuleGetFunction(&Loaded->Function, Loaded->Module,
                            Image.Entry.c_str());
  if (R != CUDA_SUCCESS)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it does not define the entry '" + Image.Entry +
                     "' (" + D.failure("cuModuleGetFunction", R) + ")");
  // The registers a kernel uses may allow fewer threads than it asks for.
  int FunctionMax = 0;
  if (D.cuFuncGetAttribute(&FunctionMax, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           Loaded->Function) == CUDA_SUCCESS &&
      FunctionMax > 0 && unsigned(FunctionMax) < Loaded->Threads)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it asks for " + std::to_string(Loaded->Threads) +
                     " threads per block, but its registers allow only " +
                     std::to_string(FunctionMax));
  // Above 48 KiB, dynamic shared memory must be asked for.
  if (Loaded->SharedBytes > kDefaultSharedLimit) {
    R = D.cuFuncSetAttribute(Loaded->Function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(Loaded->SharedBytes));
    if (R != CUDA_SUCCESS)
      return Error(ErrorCode::Driver,
                   What + ": " + D.failure("cuFuncSetAttribute", R) +
                       " (max dynamic shared memory " +
                       std::to_string(Loaded->SharedBytes) + " bytes)");
  }
  return std::unique_ptr<LoadedImage>(std::move(Loaded));
}

/// The driver, initialized, and its device count.
Expected<std::pair<const Driver *, int>> initDriver() {
  Expected<const Driver *> D = loadDriver();
  if (!D)
    return D.takeError();
  const Driver &Drv = **D;
  CUresult R = Drv.cuInit(0);
  if (R == CUDA_ERROR_NO_DEVICE)
    return Error(ErrorCode::Driver,
                 "no CUDA device (" + Drv.failure("cuInit", R) + ")");
  if (R != CUDA_SUCCESS)
    return Error(ErrorCode::Driver, Drv.failure("cuInit", R));
  int Count = 0;
  R = Drv.cuDeviceGetCount(&Count);
  if (R != CUDA_SUCCESS)
    return Error(ErrorCode::Driver, Drv.failure("cuDeviceGetCount", R));
  if (Count <= 0)
    return Error(ErrorCode::Driver, "no CUDA device");
  return std::make_pair(*D, Count);
}

} // namespace

bool kiln::rt::detail::cudaDeviceAvailable() {
  return bool(initDriver());
}

Expected<std::shared_ptr<DeviceImpl>>
kiln::rt::detail::openCudaDevice(int Ordinal, const std::string &Spec) {
  auto Fail = [&](ErrorCode Code, const std::string &Why) {
    return Error(Code, "cannot open " + Spec + ": " + Why);
  };
  Expected<std::pair<const Driver *, int>> Init = initDriver();
  if (!Init)
    return Fail(Init.error().code(), Init.error().message());
  const Driver &D = *Init->first;
  int Count = Init->second;
  if (Ordinal >= Count)
    return Error(ErrorCode::Driver,
                 Spec + ": only " + std::to_string(Count) + " CUDA device" +
                     (Count == 1 ? "" : "s"));

  CUdevice Dev = 0;
  if (CUresult R = D.cuDeviceGet(&Dev, Ordinal))
    return Fail(ErrorCode::Driver, D.failure("cuDeviceGet", R));
  auto Attribute = [&](int Attr, int &Out) -> Error {
    Out = 0;
    if (CUresult R = D.cuDeviceGetAttribute(&Out, Attr, Dev))
      return Fail(ErrorCode::Driver,
                  D.failure("cuDeviceGetAttribute", R) + " (attribute " +
                      std::to_string(Attr) + ")");
    return Error::success();
  };
  DeviceProperties P;
  P.Kind = DeviceKind::Cuda;
  char Name[256] = {};
  if (CUresult R = D.cuDeviceGetName(Name, int(sizeof(Name) - 1), Dev))
    return Fail(ErrorCode::Driver, D.failure("cuDeviceGetName", R));
  P.Model = Name;
  int Major, Minor, Sms, Optin, PerBlock, MaxThreads, MemClock, Bus;
  int MaxGrid[3];
  const std::pair<int, int *> Wanted[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &Major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &Minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &Sms},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &Optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &PerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &MaxThreads},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &MaxGrid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &MaxGrid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &MaxGrid[2]}};
  for (const auto &[Attr, Out] : Wanted)
    if (Error E = Attribute(Attr, *Out))
      return E;
  // Not every device reports its memory clock and bus (then 0).
  if (D.cuDeviceGetAttribute(&MemClock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                             Dev) != CUDA_SUCCESS)
    MemClock = 0;
  if (D.cuDeviceGetAttribute(&Bus, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                             Dev) != CUDA_SUCCESS)
    Bus = 0;
  size_t Total = 0;
  if (CUresult R = D.cuDeviceTotalMem(&Total, Dev))
    return Fail(ErrorCode::Driver, D.failure("cuDeviceTotalMem_v2", R));
  int Version = 0;
  if (CUresult R = D.cuDriverGetVersion(&Version))
    return Fail(ErrorCode::Driver, D.failure("cuDriverGetVersion", R));
  if (Major <= 0 || Major > 99 || Minor < 0 || Minor > 9)
    return Fail(ErrorCode::Driver, "unexpected compute capability " +
                                       std::to_string(Major) + "." +
                                       std::to_string(Minor));
  P.Arch = "sm_" + std::to_string(Major * 10 + Minor);
  P.ComputeUnits = unsigned(std::max(Sms, 0));
  P.MemoryBytes = Total;
  P.MaxSharedBytesPerBlock = uint64_t(std::max(Optin, PerBlock));
  P.MaxThreadsPerBlock = unsigned(std::max(MaxThreads, 1));
  P.MemoryClockKHz = uint64_t(std::max(MemClock, 0));
  P.MemoryBusBits = unsigned(std::max(Bus, 0));
  P.PeakBandwidthGBs =
      2.0 * double(P.MemoryClockKHz) * 1e3 * double(P.MemoryBusBits) / 8 / 1e9;
  P.DriverVersion = Version;

  CUcontext Ctx = nullptr;
  if (CUresult R = D.cuDevicePrimaryCtxRetain(&Ctx, Dev))
    return Fail(ErrorCode::Driver, D.failure("cuDevicePrimaryCtxRetain", R));
  return std::shared_ptr<DeviceImpl>(
      std::make_shared<CudaDevice>(D, Ordinal, Dev, Ctx, std::move(P),
                                   MaxGrid));
}
