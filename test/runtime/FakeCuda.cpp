//===- FakeCuda.cpp - Test doubles of the CUDA driver and of HIP ----------===//
//
// See FakeCuda.h. Built twice: as libfakecuda.so (the CUDA driver API) and,
// with KILN_FAKE_HIP defined, as libfakehip.so (HIP's module API, which
// has the same shape: API(cu, hip) picks each entry point's name). The
// types are those of the real APIs, by value (results and devices are int,
// handles are pointers, device pointers 64-bit); the enum values are
// cuda.h's and hip_runtime_api.h's.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#define EXPORT extern "C" __attribute__((visibility("default")))

#ifdef KILN_FAKE_HIP
#define API(Cuda, Hip) Hip
#define FAKE_ENV(Suffix) ("KILN_FAKE_HIP" Suffix)
#else
#define API(Cuda, Hip) Cuda
#define FAKE_ENV(Suffix) ("KILN_FAKE_CUDA" Suffix)
#endif

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidContext = 201;
[[maybe_unused]] constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;
constexpr CUresult kLaunchOutOfResources = 701;
#ifdef KILN_FAKE_HIP
constexpr CUresult kNoBinaryForGpu = 209;
/// HIP: what a trap leaves (when HIP does not end the process).
constexpr CUresult kTrapped = 719; // hipErrorLaunchFailure
#else
constexpr CUresult kTrapped = 710; // CUDA_ERROR_ASSERT
#endif

/// The format of the records action=print and action=assert write.
constexpr const char *kPrintFormat = "fake print: n = %d, half = %g\n";
/// The format of the failed assertion's record action=assert writes.
constexpr const char *kAssertFormat =
    "k.tile:3:5: assertion failed: boom (in program %d, %d, %d)\n";

/// Appends a record {FNV-1a of Format, slot count, Slots} to Kiln's print
/// buffer at Header (runtime/lib/GpuDevice.h) as a kernel does; returns its
/// offset, or -1 when it did not fit.
int64_t writeRecord(uint64_t *Header, const char *Format,
                    const std::vector<uint64_t> &Slots) {
  uint64_t Bytes = 8 * (1 + Slots.size());
  uint64_t Offset = Header[0];
  Header[0] += Bytes;
  if (Offset + Bytes > Header[1])
    return -1;
  uint64_t *Record = Header + 2 + Offset / 8;
  uint32_t Hash = 2166136261u;
  for (const char *C = Format; *C; ++C)
    Hash = (Hash ^ (unsigned char)*C) * 16777619u;
  Record[0] = Hash | (uint64_t(Slots.size()) << 32);
  for (size_t I = 0; I < Slots.size(); ++I)
    Record[1 + I] = Slots[I];
  return int64_t(Offset);
}

struct Function {
  std::string Name;
  unsigned Params = 0;
  unsigned TensorMaps = 0; ///< after the params
  std::string Action;
  int MaxThreads = 1024;
  int MaxDynamicShared = API(48, 64) * 1024; // the default limit
};

struct Module {
  std::vector<Function *> Functions;
};

/// Streams and events belong to the device current when they were made.
struct Stream {
  int Device = 0;
};
struct Event {
  int Device = 0;
  bool Recorded = false;
  std::chrono::steady_clock::time_point Time;
};
struct Context {
  int Device;
};

std::mutex Mutex;
bool Initialized = false;
std::map<uintptr_t, size_t> Allocations;
std::set<Stream *> Streams;
std::set<Event *> Events;
std::set<Module *> Modules;
[[maybe_unused]] Context Contexts[2] = {{0}, {1}};
int Retained[2] = {0, 0};
CUresult Sticky = kSuccess;
int LaunchCount = 0;
KilnFakeLaunch Last = {};
/// cuTensorMapEncodeTiled's calls.
std::vector<KilnFakeTensorMap> TensorMaps;
thread_local std::vector<Context *> CurrentStack;
/// HIP: the thread's current device (hipSetDevice).
[[maybe_unused]] thread_local int CurrentDevice = 0;

std::string mode() {
  const char *M = std::getenv(FAKE_ENV(""));
  return M && *M ? M : "one";
}

int deviceCount() {
  std::string M = mode();
  return M == "nodevice" ? 0 : M == "two" ? 2 : 1;
}

#ifdef KILN_FAKE_HIP
bool current() { return true; }
int currentDevice() { return CurrentDevice; }
#else
bool current() { return !CurrentStack.empty(); }
int currentDevice() {
  return CurrentStack.empty() ? -1 : CurrentStack.back()->Device;
}
#endif

/// A stream of the current device (ROCm 7 and CUDA refuse others).
bool usable(Stream *S) {
  return Streams.count(S) && S->Device == currentDevice();
}

/// True if [P, P + Bytes) lies in one live allocation.
bool isDeviceRange(CUdeviceptr P, size_t Bytes) {
  auto It = Allocations.upper_bound(uintptr_t(P));
  if (It == Allocations.begin())
    return false;
  --It;
  return P >= It->first && Bytes <= It->second &&
         P - It->first <= It->second - Bytes;
}

#define NEED_CONTEXT()                                                         \
  std::lock_guard<std::mutex> Lock(Mutex);                                     \
  if (!Initialized)                                                            \
    return kNotInitialized;                                                    \
  if (!current())                                                              \
    return kInvalidContext;

} // namespace

EXPORT CUresult API(cuInit, hipInit)(unsigned Flags) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Flags != 0)
    return kInvalidValue;
  // ROCm 5.2 on a machine without an AMD GPU: hipInit fails with
  // hipErrorInvalidDevice (and hipGetDeviceCount with hipErrorNoDevice).
  if (mode() == "nodevice")
    return API(kNoDevice, kInvalidDevice);
#ifdef KILN_FAKE_HIP
  // HIP has no context to release: each hipInit (each device open) starts
  // afresh instead, so that one test's trap does not leak into the next.
  Sticky = kSuccess;
#endif
  Initialized = true;
  return kSuccess;
}

EXPORT CUresult API(cuDriverGetVersion, hipDriverGetVersion)(int *Version) {
  if (!Version)
    return kInvalidValue;
  const char *V = std::getenv(FAKE_ENV("_DRIVER_VERSION"));
#ifdef KILN_FAKE_CUDA_NO_TMA
  *Version = V && *V ? std::atoi(V) : 11080;
#else
  *Version = V && *V ? std::atoi(V) : API(12040, 60241134);
#endif
  return kSuccess;
}

#ifdef KILN_FAKE_HIP
EXPORT const char *hipGetErrorName(CUresult Error) {
  static const std::map<int, const char *> Names = {
      {0, "hipSuccess"},
      {1, "hipErrorInvalidValue"},
      {2, "hipErrorOutOfMemory"},
      {3, "hipErrorNotInitialized"},
      {100, "hipErrorNoDevice"},
      {101, "hipErrorInvalidDevice"},
      {209, "hipErrorNoBinaryForGpu"},
      {400, "hipErrorInvalidHandle"},
      {500, "hipErrorNotFound"},
      {701, "hipErrorLaunchOutOfResources"},
      {719, "hipErrorLaunchFailure"}};
  auto It = Names.find(Error);
  // HIP names unknown codes like this.
  return It == Names.end() ? "hipErrorUnknown" : It->second;
}

EXPORT CUresult hipSetDevice(int Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  CurrentDevice = Device;
  return kSuccess;
}

EXPORT CUresult hipGetDevice(int *Device) {
  if (!deviceCount())
    return kNoDevice;
  *Device = CurrentDevice;
  return kSuccess;
}

/// hipDeviceProp_t in the layout of hipGetDeviceProperties: only
/// gcnArchName (at byte 396) is filled.
EXPORT CUresult hipGetDeviceProperties(void *Props, int Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  const char *Env = std::getenv(Device == 1 ? "KILN_FAKE_HIP_ARCH1"
                                            : "KILN_FAKE_HIP_ARCH");
  const char *Arch = Env && *Env ? Env
                     : Device == 1 ? "gfx1100"
                                   : "gfx942:sramecc+:xnack-";
  std::memset(Props, 0, 792);
  std::snprintf(static_cast<char *>(Props) + 396, 256, "%s", Arch);
  return kSuccess;
}
#else
EXPORT CUresult cuGetErrorName(CUresult Error, const char **Name) {
  static const std::map<int, const char *> Names = {
      {0, "CUDA_SUCCESS"},
      {1, "CUDA_ERROR_INVALID_VALUE"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {3, "CUDA_ERROR_NOT_INITIALIZED"},
      {100, "CUDA_ERROR_NO_DEVICE"},
      {101, "CUDA_ERROR_INVALID_DEVICE"},
      {201, "CUDA_ERROR_INVALID_CONTEXT"},
      {218, "CUDA_ERROR_INVALID_PTX"},
      {400, "CUDA_ERROR_INVALID_HANDLE"},
      {500, "CUDA_ERROR_NOT_FOUND"},
      {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
      {710, "CUDA_ERROR_ASSERT"}};
  auto It = Names.find(Error);
  if (!Name || It == Names.end())
    return kInvalidValue;
  *Name = It->second;
  return kSuccess;
}
#endif

EXPORT CUresult API(cuDeviceGetCount, hipGetDeviceCount)(int *Count) {
  std::lock_guard<std::mutex> Lock(Mutex);
#ifdef KILN_FAKE_HIP
  // HIP counts without hipInit; no GPU: hipErrorNoDevice and a count of 0.
  *Count = deviceCount();
  return *Count ? kSuccess : kNoDevice;
#else
  if (!Initialized)
    return kNotInitialized;
  *Count = deviceCount();
  return kSuccess;
#endif
}

EXPORT CUresult API(cuDeviceGet, hipDeviceGet)(CUdevice *Device, int Ordinal) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Initialized)
    return kNotInitialized;
  if (Ordinal < 0 || Ordinal >= deviceCount())
    return kInvalidDevice;
  *Device = Ordinal;
  return kSuccess;
}

EXPORT CUresult API(cuDeviceGetName, hipDeviceGetName)(char *Name, int Length, CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  std::snprintf(Name, size_t(Length), "%s", "Kiln Fake GPU");
  return kSuccess;
}

EXPORT CUresult API(cuDeviceGetAttribute, hipDeviceGetAttribute)(
    int *Value, int Attribute, CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  bool Second = Device == 1;
#ifdef KILN_FAKE_HIP
  // An MI300X-like gfx942 and a Radeon-like gfx1100 (wave32).
  switch (Attribute) {
  case 29: *Value = 2147483647; break;             // max grid x
  case 30: case 31: *Value = 65536; break;         // max grid y, z
  case 56: *Value = 1024; break;                   // max threads per block
  case 59: *Value = Second ? 384 : 8192; break;    // bus width, bits
  case 60: *Value = Second ? 1249000 : 1300000; break; // memory clock, kHz
  case 63: *Value = Second ? 96 : 304; break;      // CUs
  case 74: *Value = 64 * 1024; break;              // LDS per workgroup
  case 87: // wavefront size
    *Value = std::getenv("KILN_FAKE_HIP_WAVE")
                 ? std::atoi(std::getenv("KILN_FAKE_HIP_WAVE"))
                 : Second ? 32 : 64;
    break;
  default: return kInvalidValue; // 75 (opt-in) among them: CUDA's
  }
  return kSuccess;
#endif
  switch (Attribute) {
  case 1: *Value = 1024; break;                  // max threads per block
  case 5: *Value = 2147483647; break;            // max grid x
  case 6: case 7: *Value = 65535; break;         // max grid y, z
  case 8: *Value = 48 * 1024; break;             // shared per block
  case 16: *Value = Second ? 84 : 132; break;    // SMs
  case 36: *Value = Second ? 0 : 2619000; break; // memory clock, kHz
  case 37: *Value = Second ? 0 : 5120; break;    // bus width, bits
  case 41: *Value = 1; break;                    // unified addressing
  case 75: *Value = Second ? 8 : 9; break;       // compute capability
  case 76: *Value = Second ? 6 : 0; break;
  case 97: *Value = Second ? 101376 : 232448; break; // opt-in shared
  default: return kInvalidValue;
  }
  return kSuccess;
}

EXPORT CUresult API(cuDeviceTotalMem_v2, hipDeviceTotalMem)(size_t *Bytes,
                                                          CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  *Bytes = Device == 1 ? size_t(24) << 30 : size_t(80) << 30;
  return kSuccess;
}

#ifndef KILN_FAKE_HIP
EXPORT CUresult cuDevicePrimaryCtxRetain(void **Ctx, CUdevice Device) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Initialized)
    return kNotInitialized;
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  ++Retained[Device];
  *Ctx = &Contexts[Device];
  return kSuccess;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice Device) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Device < 0 || Device > 1 || Retained[Device] == 0)
    return kInvalidDevice;
  // The last release destroys the context, and its sticky error.
  if (--Retained[Device] == 0 && Retained[1 - Device] == 0)
    Sticky = kSuccess;
  return kSuccess;
}

EXPORT CUresult cuCtxPushCurrent_v2(void *Ctx) {
  if (!Ctx)
    return kInvalidContext;
  CurrentStack.push_back(static_cast<Context *>(Ctx));
  return kSuccess;
}

EXPORT CUresult cuCtxPopCurrent_v2(void **Ctx) {
  if (CurrentStack.empty())
    return kInvalidContext;
  if (Ctx)
    *Ctx = CurrentStack.back();
  CurrentStack.pop_back();
  return kSuccess;
}

#endif

EXPORT CUresult API(cuMemAlloc_v2, hipMalloc)(CUdeviceptr *Ptr, size_t Bytes) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (Bytes == 0)
    return kInvalidValue;
  if (Bytes > (size_t(1) << 40))
    return kOutOfMemory;
  void *P = std::malloc(Bytes);
  if (!P)
    return kOutOfMemory;
  Allocations[uintptr_t(P)] = Bytes;
  *Ptr = CUdeviceptr(uintptr_t(P));
  return kSuccess;
}

EXPORT CUresult API(cuMemFree_v2, hipFree)(CUdeviceptr Ptr) {
  NEED_CONTEXT();
  auto It = Allocations.find(uintptr_t(Ptr));
  if (It == Allocations.end())
    return kInvalidValue;
  std::free(reinterpret_cast<void *>(uintptr_t(Ptr)));
  Allocations.erase(It);
  return kSuccess;
}

EXPORT CUresult API(cuMemcpyHtoDAsync_v2, hipMemcpyHtoDAsync)(
    CUdeviceptr Dst, const void *Src, size_t Bytes, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!usable(S) || !isDeviceRange(Dst, Bytes) ||
      isDeviceRange(CUdeviceptr(uintptr_t(Src)), 1))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(uintptr_t(Dst)), Src, Bytes);
  return kSuccess;
}

EXPORT CUresult API(cuMemcpyDtoHAsync_v2, hipMemcpyDtoHAsync)(
    void *Dst, CUdeviceptr Src, size_t Bytes, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!usable(S) || !isDeviceRange(Src, Bytes) ||
      isDeviceRange(CUdeviceptr(uintptr_t(Dst)), 1))
    return kInvalidValue;
  std::memmove(Dst, reinterpret_cast<void *>(uintptr_t(Src)), Bytes);
  return kSuccess;
}

EXPORT CUresult API(cuMemcpyDtoDAsync_v2, hipMemcpyDtoDAsync)(
    CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!usable(S) || !isDeviceRange(Dst, Bytes) ||
      !isDeviceRange(Src, Bytes))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(uintptr_t(Dst)),
               reinterpret_cast<void *>(uintptr_t(Src)), Bytes);
  return kSuccess;
}

EXPORT CUresult API(cuMemsetD8Async, hipMemsetD8Async)(
    CUdeviceptr Dst, unsigned char Value, size_t Count, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!usable(S) || !isDeviceRange(Dst, Count))
    return kInvalidValue;
  std::memset(reinterpret_cast<void *>(uintptr_t(Dst)), Value, Count);
  return kSuccess;
}

EXPORT CUresult API(cuStreamCreate, hipStreamCreateWithFlags)(Stream **S,
                                                             unsigned Flags) {
  NEED_CONTEXT();
  *S = new Stream();
  (*S)->Device = currentDevice();
  Streams.insert(*S);
  return kSuccess;
}

EXPORT CUresult API(cuStreamDestroy_v2, hipStreamDestroy)(Stream *S) {
  NEED_CONTEXT();
  if (!Streams.erase(S))
    return kInvalidHandle;
  delete S;
  return kSuccess;
}

EXPORT CUresult API(cuStreamSynchronize, hipStreamSynchronize)(Stream *S) {
  NEED_CONTEXT();
  if (!usable(S))
    return kInvalidHandle;
  return Sticky;
}

EXPORT CUresult API(cuEventCreate, hipEventCreateWithFlags)(Event **E,
                                                           unsigned Flags) {
  NEED_CONTEXT();
  *E = new Event();
  (*E)->Device = currentDevice();
  Events.insert(*E);
  return kSuccess;
}

EXPORT CUresult API(cuEventRecord, hipEventRecord)(Event *E, Stream *S) {
  NEED_CONTEXT();
  if (!Events.count(E) || !usable(S) || E->Device != S->Device)
    return kInvalidHandle;
  E->Recorded = true;
  E->Time = std::chrono::steady_clock::now();
  return kSuccess;
}

EXPORT CUresult API(cuEventSynchronize, hipEventSynchronize)(Event *E) {
  NEED_CONTEXT();
  if (!Events.count(E))
    return kInvalidHandle;
  return Sticky;
}

EXPORT CUresult API(cuEventElapsedTime, hipEventElapsedTime)(float *Ms,
                                                            Event *Start,
                                                            Event *End) {
  NEED_CONTEXT();
  if (!Events.count(Start) || !Events.count(End))
    return kInvalidHandle;
  if (!Start->Recorded || !End->Recorded)
    return kInvalidHandle;
  *Ms = std::chrono::duration<float, std::milli>(End->Time - Start->Time)
            .count();
  return kSuccess;
}

EXPORT CUresult API(cuEventDestroy_v2, hipEventDestroy)(Event *E) {
  NEED_CONTEXT();
  if (!Events.erase(E))
    return kInvalidHandle;
  delete E;
  return kSuccess;
}

#ifdef KILN_FAKE_HIP
Module *parseModule(const char *Text);

/// A code object is an ELF file: "\x7f" "ELF" then the fake's text.
EXPORT CUresult hipModuleLoadData(Module **M, const void *Image) {
  NEED_CONTEXT();
  const char *Text = static_cast<const char *>(Image);
  if (std::strncmp(Text, "\x7f" "ELF" "KILNFAKE", 12) != 0)
    return kNoBinaryForGpu;
  *M = parseModule(Text + 4);
  return kSuccess;
}

Module *parseModule(const char *Text) {
#else
Module *parseModule(const char *Text);

EXPORT CUresult cuModuleLoadDataEx(Module **M, const void *Image,
                                   unsigned NumOptions, int *Options,
                                   void **Values) {
  NEED_CONTEXT();
  const char *Text = static_cast<const char *>(Image);
  if (std::strncmp(Text, "KILNFAKE", 8) != 0) {
    const char *Log = "ptxas application ptx input, line 1; fatal   : "
                      "Parsing error near 'garbage': syntax error\n"
                      "ptxas fatal   : Ptx assembly aborted due to errors\n";
    for (unsigned I = 0; I + 1 < NumOptions; ++I)
      if (Options[I] == 5 && Options[I + 1] == 6) { // error log, its size
        size_t Size = size_t(uintptr_t(Values[I + 1]));
        std::snprintf(static_cast<char *>(Values[I]), Size, "%s", Log);
        Values[I + 1] = reinterpret_cast<void *>(uintptr_t(std::strlen(Log)));
      }
    return kInvalidPtx;
  }
  *M = parseModule(Text);
  return kSuccess;
}

Module *parseModule(const char *Text) {
#endif
  // Lines up to "END" (a cubin is not terminated: its end is found).
  std::string Body;
  for (size_t I = 0; I < 65536; ++I) {
    Body += Text[I];
    if (Body.size() >= 4 && Body.compare(Body.size() - 4, 4, "END\n") == 0)
      break;
    if (Text[I] == '\0')
      break;
  }
  auto *Mod = new Module();
  std::istringstream Lines(Body);
  std::string Line;
  std::getline(Lines, Line); // KILNFAKE
  while (std::getline(Lines, Line) && Line != "END") {
    std::istringstream Words(Line);
    auto *F = new Function();
    Words >> F->Name;
    std::string Word;
    while (Words >> Word) {
      if (Word.rfind("params=", 0) == 0)
        F->Params = unsigned(std::atoi(Word.c_str() + 7));
      else if (Word.rfind("tmaps=", 0) == 0)
        F->TensorMaps = unsigned(std::atoi(Word.c_str() + 6));
      else if (Word.rfind("action=", 0) == 0)
        F->Action = Word.substr(7);
      else if (Word.rfind("maxthreads=", 0) == 0)
        F->MaxThreads = std::atoi(Word.c_str() + 11);
    }
    if (F->Name.empty())
      delete F;
    else
      Mod->Functions.push_back(F);
  }
  Modules.insert(Mod);
  return Mod;
}

EXPORT CUresult API(cuModuleGetFunction, hipModuleGetFunction)(Function **F, Module *M, const char *Name) {
  NEED_CONTEXT();
  if (!Modules.count(M))
    return kInvalidHandle;
  for (Function *Fn : M->Functions)
    if (Fn->Name == Name) {
      *F = Fn;
      return kSuccess;
    }
  return kNotFound;
}

EXPORT CUresult API(cuModuleUnload, hipModuleUnload)(Module *M) {
  NEED_CONTEXT();
  if (!Modules.erase(M))
    return kInvalidHandle;
  for (Function *F : M->Functions)
    delete F;
  delete M;
  return kSuccess;
}

#if !defined(KILN_FAKE_HIP) && !defined(KILN_FAKE_CUDA_NO_TMA)
/// Checks what the real driver checks of the arguments the runtime
/// passes (cuda.h's documentation of cuTensorMapEncodeTiled), records
/// them and writes "KTMP" and the call's index into the map.
EXPORT CUresult cuTensorMapEncodeTiled(
    void *Map, int DataType, unsigned Rank, void *Address,
    const unsigned long long *Dims, const unsigned long long *Strides,
    const unsigned *Box, const unsigned *ElementStrides, int Interleave,
    int Swizzle, int L2Promotion, int OobFill) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Map || uintptr_t(Map) % 64 || Rank < 1 || Rank > 5 ||
      uintptr_t(Address) % 16 || !Dims || (Rank > 1 && !Strides) || !Box ||
      !ElementStrides || DataType < 0 || DataType > 12 || Interleave != 0 ||
      Swizzle < 0 || Swizzle > 3 || L2Promotion < 0 || L2Promotion > 3 ||
      OobFill < 0 || OobFill > 1)
    return kInvalidValue;
  for (unsigned I = 0; I < Rank; ++I)
    if (!Dims[I] || Dims[I] > (1ull << 32) || !Box[I] || Box[I] > 256 ||
        ElementStrides[I] != 1 ||
        (I > 0 && (Strides[I - 1] % 16 || Strides[I - 1] >= (1ull << 40))))
      return kInvalidValue;
  if (std::getenv("KILN_FAKE_CUDA_TMAP_FAIL"))
    return kInvalidValue;
  KilnFakeTensorMap R = {};
  R.DataType = DataType;
  R.Rank = Rank;
  R.Address = uintptr_t(Address);
  for (unsigned I = 0; I < Rank; ++I) {
    R.Dims[I] = Dims[I];
    R.Box[I] = Box[I];
    R.ElementStrides[I] = ElementStrides[I];
    if (I > 0)
      R.Strides[I - 1] = Strides[I - 1];
  }
  R.Interleave = Interleave;
  R.Swizzle = Swizzle;
  R.L2Promotion = L2Promotion;
  R.OobFill = OobFill;
  uint32_t Index = uint32_t(TensorMaps.size());
  TensorMaps.push_back(R);
  std::memset(Map, 0, 128);
  std::memcpy(Map, "KTMP", 4);
  std::memcpy(static_cast<char *>(Map) + 4, &Index, 4);
  return kSuccess;
}
#endif

#ifndef KILN_FAKE_HIP
EXPORT CUresult cuFuncGetAttribute(int *Value, int Attribute, Function *F) {
  NEED_CONTEXT();
  switch (Attribute) {
  case 0: *Value = F->MaxThreads; return kSuccess;
  case 8: *Value = F->MaxDynamicShared; return kSuccess;
  default: return kInvalidValue;
  }
}

EXPORT CUresult cuFuncSetAttribute(Function *F, int Attribute, int Value) {
  NEED_CONTEXT();
  if (Attribute != 8 || Value < 0 || Value > 232448)
    return kInvalidValue;
  F->MaxDynamicShared = Value;
  return kSuccess;
}

#endif

EXPORT CUresult API(cuLaunchKernel, hipModuleLaunchKernel)(
    Function *F, unsigned GX, unsigned GY, unsigned GZ, unsigned BX,
    unsigned BY, unsigned BZ, unsigned Shared, Stream *S, void **Params,
    void **Extra) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!F || !usable(S) || !GX || !GY || !GZ || GY > 65535 ||
      GZ > 65535 || !BX || !BY || !BZ || BX * BY * BZ > unsigned(F->MaxThreads) ||
      int(Shared) > F->MaxDynamicShared || (F->Params && !Params) || Extra)
    return kInvalidValue;
  if (F->Action == "fail")
    return kLaunchOutOfResources;
  // Tensor maps: 128-byte maps by value, 64-byte aligned, as the encoder
  // wrote them.
  for (unsigned I = F->Params; I < F->Params + F->TensorMaps; ++I)
    if (!Params[I] || uintptr_t(Params[I]) % 64 ||
        std::memcmp(Params[I], "KTMP", 4) != 0)
      return kInvalidValue;
  ++LaunchCount;
  Last = KilnFakeLaunch();
  std::snprintf(Last.Function, sizeof(Last.Function), "%s", F->Name.c_str());
  Last.Grid[0] = GX, Last.Grid[1] = GY, Last.Grid[2] = GZ;
  Last.Block[0] = BX, Last.Block[1] = BY, Last.Block[2] = BZ;
  Last.SharedBytes = Shared;
  Last.MaxDynamicShared = F->MaxDynamicShared;
  Last.NumParams = std::min(F->Params + F->TensorMaps, 16u);
  for (unsigned I = 0; I < Last.NumParams; ++I)
    std::memcpy(&Last.Params[I], Params[I], 8); // the runtime's 8-byte slots
  if (const char *LogPath = std::getenv(FAKE_ENV("_LOG")))
    if (std::FILE *Log = std::fopen(LogPath, "a")) {
      std::fprintf(Log, "launch %s grid=%u,%u,%u block=%u,%u,%u shared=%u\n",
                   F->Name.c_str(), GX, GY, GZ, BX, BY, BZ, Shared);
      std::fclose(Log);
    }
  if (F->Action == "trap")
    Sticky = kTrapped;
  if (F->Action == "print" || F->Action == "assert") {
    // Kiln's print buffer (runtime/lib/GpuDevice.h): the hidden argument
    // after the N params. One record per launch: kPrintFormat with the
    // last param's low 32 bits as a signed integer, and half of it. An
    // assert then fails in program (N, 0, 0) as compiled code does: it
    // claims the trap word after the records, writes kAssertFormat's
    // record and stores its offset + 1 there.
    uint64_t Buffer;
    std::memcpy(&Buffer, Params[F->Params + F->TensorMaps], 8);
    auto *Header = reinterpret_cast<uint64_t *>(uintptr_t(Buffer));
    if (!isDeviceRange(Buffer, 16) ||
        !isDeviceRange(Buffer, 16 + Header[1] + 8))
      return kInvalidValue;
    int32_t N = 0;
    if (F->Params)
      std::memcpy(&N, Params[F->Params - 1], 4);
    double Half = N / 2.0;
    uint64_t HalfBits;
    std::memcpy(&HalfBits, &Half, 8);
    writeRecord(Header, kPrintFormat, {uint64_t(int64_t(N)), HalfBits});
    uint64_t &Trap = Header[2 + Header[1] / 8];
    if (F->Action == "assert" && Trap == 0) {
      // n >= 1000: as if the buffer were full (the message does not fit).
      Trap = ~uint64_t(0);
      int64_t At = N >= 1000 ? -1
                         : writeRecord(Header, kAssertFormat,
                                       {uint64_t(int64_t(N)), 0, 0});
      if (At >= 0)
        Trap = uint64_t(At) + 1;
    }
  }
  if (F->Action == "vadd" && Last.NumParams >= 4) {
    auto *X = reinterpret_cast<const float *>(uintptr_t(Last.Params[0]));
    auto *Y = reinterpret_cast<const float *>(uintptr_t(Last.Params[1]));
    auto *Z = reinterpret_cast<float *>(uintptr_t(Last.Params[2]));
    int32_t N;
    std::memcpy(&N, &Last.Params[3], 4);
    if (N > 0 && (!isDeviceRange(CUdeviceptr(uintptr_t(X)), 4 * size_t(N)) ||
                  !isDeviceRange(CUdeviceptr(uintptr_t(Y)), 4 * size_t(N)) ||
                  !isDeviceRange(CUdeviceptr(uintptr_t(Z)), 4 * size_t(N)))) {
      Sticky = 700; // CUDA_ERROR_ILLEGAL_ADDRESS
      return kSuccess;
    }
    for (int32_t I = 0; I < N; ++I)
      Z[I] = X[I] + Y[I];
  }
  return kSuccess;
}

EXPORT int kiln_fake_cuda_last_launch(KilnFakeLaunch *Out) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!LaunchCount)
    return 0;
  *Out = Last;
  return 1;
}

EXPORT int kiln_fake_cuda_tensor_map_count(void) {
  std::lock_guard<std::mutex> Lock(Mutex);
  return int(TensorMaps.size());
}

EXPORT int kiln_fake_cuda_tensor_map(int Index, KilnFakeTensorMap *Out) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Index < 0 || size_t(Index) >= TensorMaps.size())
    return 0;
  *Out = TensorMaps[size_t(Index)];
  return 1;
}

EXPORT int kiln_fake_cuda_launch_count(void) {
  std::lock_guard<std::mutex> Lock(Mutex);
  return LaunchCount;
}

EXPORT void kiln_fake_cuda_live(int *A, int *S, int *E, int *M, int *C) {
  std::lock_guard<std::mutex> Lock(Mutex);
  *A = int(Allocations.size());
  *S = int(Streams.size());
  *E = int(Events.size());
  *M = int(Modules.size());
  *C = Retained[0] + Retained[1];
}
