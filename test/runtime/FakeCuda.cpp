//===- FakeCuda.cpp - A test double of the CUDA driver (libfakecuda.so) ---===//
//
// See FakeCuda.h. The types are those of the real driver API, by value
// (CUresult and CUdevice are int, handles are pointers, CUdeviceptr is
// unsigned long long); the enum values are cuda.h's.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

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
constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;
constexpr CUresult kLaunchOutOfResources = 701;
constexpr CUresult kAssert = 710;

struct Function {
  std::string Name;
  unsigned Params = 0;
  std::string Action;
  int MaxThreads = 1024;
  int MaxDynamicShared = 48 * 1024;
};

struct Module {
  std::vector<Function *> Functions;
};

struct Stream {};
struct Event {
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
Context Contexts[2] = {{0}, {1}};
int Retained[2] = {0, 0};
CUresult Sticky = kSuccess;
int LaunchCount = 0;
KilnFakeLaunch Last = {};
thread_local std::vector<Context *> CurrentStack;

std::string mode() {
  const char *M = std::getenv("KILN_FAKE_CUDA");
  return M && *M ? M : "one";
}

int deviceCount() {
  std::string M = mode();
  return M == "nodevice" ? 0 : M == "two" ? 2 : 1;
}

bool current() { return !CurrentStack.empty(); }

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

EXPORT CUresult cuInit(unsigned Flags) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Flags != 0)
    return kInvalidValue;
  if (mode() == "nodevice")
    return kNoDevice;
  Initialized = true;
  return kSuccess;
}

EXPORT CUresult cuDriverGetVersion(int *Version) {
  if (!Version)
    return kInvalidValue;
  const char *V = std::getenv("KILN_FAKE_CUDA_DRIVER_VERSION");
  *Version = V && *V ? std::atoi(V) : 12040;
  return kSuccess;
}

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

EXPORT CUresult cuDeviceGetCount(int *Count) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Initialized)
    return kNotInitialized;
  *Count = deviceCount();
  return kSuccess;
}

EXPORT CUresult cuDeviceGet(CUdevice *Device, int Ordinal) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Initialized)
    return kNotInitialized;
  if (Ordinal < 0 || Ordinal >= deviceCount())
    return kInvalidDevice;
  *Device = Ordinal;
  return kSuccess;
}

EXPORT CUresult cuDeviceGetName(char *Name, int Length, CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  std::snprintf(Name, size_t(Length), "%s", "Kiln Fake GPU");
  return kSuccess;
}

EXPORT CUresult cuDeviceGetAttribute(int *Value, int Attribute,
                                     CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  bool Second = Device == 1;
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

EXPORT CUresult cuDeviceTotalMem_v2(size_t *Bytes, CUdevice Device) {
  if (Device < 0 || Device >= deviceCount())
    return kInvalidDevice;
  *Bytes = Device == 1 ? size_t(24) << 30 : size_t(80) << 30;
  return kSuccess;
}

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

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *Ptr, size_t Bytes) {
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

EXPORT CUresult cuMemFree_v2(CUdeviceptr Ptr) {
  NEED_CONTEXT();
  auto It = Allocations.find(uintptr_t(Ptr));
  if (It == Allocations.end())
    return kInvalidValue;
  std::free(reinterpret_cast<void *>(uintptr_t(Ptr)));
  Allocations.erase(It);
  return kSuccess;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr Dst, const void *Src,
                                     size_t Bytes, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!Streams.count(S) || !isDeviceRange(Dst, Bytes) ||
      isDeviceRange(CUdeviceptr(uintptr_t(Src)), 1))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(uintptr_t(Dst)), Src, Bytes);
  return kSuccess;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *Dst, CUdeviceptr Src, size_t Bytes,
                                     Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!Streams.count(S) || !isDeviceRange(Src, Bytes) ||
      isDeviceRange(CUdeviceptr(uintptr_t(Dst)), 1))
    return kInvalidValue;
  std::memmove(Dst, reinterpret_cast<void *>(uintptr_t(Src)), Bytes);
  return kSuccess;
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr Dst, CUdeviceptr Src,
                                     size_t Bytes, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!Streams.count(S) || !isDeviceRange(Dst, Bytes) ||
      !isDeviceRange(Src, Bytes))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(uintptr_t(Dst)),
               reinterpret_cast<void *>(uintptr_t(Src)), Bytes);
  return kSuccess;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr Dst, unsigned char Value,
                                size_t Count, Stream *S) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!Streams.count(S) || !isDeviceRange(Dst, Count))
    return kInvalidValue;
  std::memset(reinterpret_cast<void *>(uintptr_t(Dst)), Value, Count);
  return kSuccess;
}

EXPORT CUresult cuStreamCreate(Stream **S, unsigned Flags) {
  NEED_CONTEXT();
  *S = new Stream();
  Streams.insert(*S);
  return kSuccess;
}

EXPORT CUresult cuStreamDestroy_v2(Stream *S) {
  NEED_CONTEXT();
  if (!Streams.erase(S))
    return kInvalidHandle;
  delete S;
  return kSuccess;
}

EXPORT CUresult cuStreamSynchronize(Stream *S) {
  NEED_CONTEXT();
  if (!Streams.count(S))
    return kInvalidHandle;
  return Sticky;
}

EXPORT CUresult cuEventCreate(Event **E, unsigned Flags) {
  NEED_CONTEXT();
  *E = new Event();
  Events.insert(*E);
  return kSuccess;
}

EXPORT CUresult cuEventRecord(Event *E, Stream *S) {
  NEED_CONTEXT();
  if (!Events.count(E) || !Streams.count(S))
    return kInvalidHandle;
  E->Recorded = true;
  E->Time = std::chrono::steady_clock::now();
  return kSuccess;
}

EXPORT CUresult cuEventSynchronize(Event *E) {
  NEED_CONTEXT();
  if (!Events.count(E))
    return kInvalidHandle;
  return Sticky;
}

EXPORT CUresult cuEventElapsedTime(float *Ms, Event *Start, Event *End) {
  NEED_CONTEXT();
  if (!Events.count(Start) || !Events.count(End))
    return kInvalidHandle;
  if (!Start->Recorded || !End->Recorded)
    return kInvalidHandle;
  *Ms = std::chrono::duration<float, std::milli>(End->Time - Start->Time)
            .count();
  return kSuccess;
}

EXPORT CUresult cuEventDestroy_v2(Event *E) {
  NEED_CONTEXT();
  if (!Events.erase(E))
    return kInvalidHandle;
  delete E;
  return kSuccess;
}

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
  *M = Mod;
  return kSuccess;
}

EXPORT CUresult cuModuleGetFunction(Function **F, Module *M, const char *Name) {
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

EXPORT CUresult cuModuleUnload(Module *M) {
  NEED_CONTEXT();
  if (!Modules.erase(M))
    return kInvalidHandle;
  for (Function *F : M->Functions)
    delete F;
  delete M;
  return kSuccess;
}

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

EXPORT CUresult cuLaunchKernel(Function *F, unsigned GX, unsigned GY,
                               unsigned GZ, unsigned BX, unsigned BY,
                               unsigned BZ, unsigned Shared, Stream *S,
                               void **Params, void **Extra) {
  NEED_CONTEXT();
  if (Sticky)
    return Sticky;
  if (!F || !Streams.count(S) || !GX || !GY || !GZ || GY > 65535 ||
      GZ > 65535 || !BX || !BY || !BZ || BX * BY * BZ > unsigned(F->MaxThreads) ||
      int(Shared) > F->MaxDynamicShared || (F->Params && !Params) || Extra)
    return kInvalidValue;
  if (F->Action == "fail")
    return kLaunchOutOfResources;
  ++LaunchCount;
  Last = KilnFakeLaunch();
  std::snprintf(Last.Function, sizeof(Last.Function), "%s", F->Name.c_str());
  Last.Grid[0] = GX, Last.Grid[1] = GY, Last.Grid[2] = GZ;
  Last.Block[0] = BX, Last.Block[1] = BY, Last.Block[2] = BZ;
  Last.SharedBytes = Shared;
  Last.MaxDynamicShared = F->MaxDynamicShared;
  Last.NumParams = F->Params < 16 ? F->Params : 16;
  for (unsigned I = 0; I < Last.NumParams; ++I)
    std::memcpy(&Last.Params[I], Params[I], 8); // the runtime's 8-byte slots
  if (const char *LogPath = std::getenv("KILN_FAKE_CUDA_LOG"))
    if (std::FILE *Log = std::fopen(LogPath, "a")) {
      std::fprintf(Log, "launch %s grid=%u,%u,%u block=%u,%u,%u shared=%u\n",
                   F->Name.c_str(), GX, GY, GZ, BX, BY, BZ, Shared);
      std::fclose(Log);
    }
  if (F->Action == "trap")
    Sticky = kAssert;
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
