//===- GpuDriver.h - What the CUDA and HIP driver APIs share ----*- C++ -*-===//
//
// The CUDA driver API (libcuda.so.1) and HIP's module API (libamdhip64.so)
// have the same shape: int result codes, opaque handles, 64-bit device
// addresses, and the same argument order for memory, streams, events,
// modules and launches. `gpu::Api` holds those shared entry points, typed
// once, each with the symbol it was bound to (for messages: "cuMemAlloc_v2
// failed: ...", "hipMalloc failed: ..."); each vendor's driver struct
// derives from it and adds its own (contexts, JIT options, properties).
//
// A HIP handle or device pointer (`hipDeviceptr_t` is `void *`) and CUDA's
// (`CUdeviceptr` is an unsigned 64-bit integer) travel in the same register
// on the platforms Kiln supports (x86-64 and AArch64 Linux), so one typed
// pointer serves both. Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_GPUDRIVER_H
#define KILN_RUNTIME_GPUDRIVER_H

#include "Fault.h"
#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt::detail::gpu {

static_assert(sizeof(void *) == sizeof(unsigned long long),
              "device pointers and handles are 64-bit");

using Result = int;
using DevPtr = unsigned long long;
using Module = struct ModuleOpaque *;
using Function = struct FunctionOpaque *;
using Stream = struct StreamOpaque *;
using Event = struct EventOpaque *;

constexpr Result kSuccess = 0;
/// Both APIs: 2 is out of memory (CUDA_ERROR_OUT_OF_MEMORY,
/// hipErrorOutOfMemory).
constexpr Result kOutOfMemory = 2;
/// Both APIs: 999 is an unknown error (CUDA_ERROR_UNKNOWN,
/// hipErrorUnknown); what an injected fault returns (Fault.h).
constexpr Result kUnknownError = 999;

/// One entry point: the function and the symbol it was found under. Every
/// call is a fault-injection point (Fault.h) unless `Injectable` is false:
/// the releases (free, destroy, unload), whose failure nothing could act on.
template <typename Fn, bool Injectable = true> struct Entry {
  Fn *Call = nullptr;
  const char *Symbol = "";
  template <typename... Args> Result operator()(Args &&...A) const {
    if constexpr (Injectable)
      if (fault::inject(fault::Point::DriverCall, Symbol))
        return kUnknownError;
    return Call(static_cast<Args &&>(A)...);
  }
};
/// An entry point that releases something.
template <typename Fn> using ReleaseEntry = Entry<Fn, false>;

/// The entry points both vendors have, by what they do.
struct Api {
  virtual ~Api();

  Entry<Result(unsigned Flags)> Init;
  Entry<Result(int *Version)> DriverGetVersion;
  Entry<Result(int *Count)> DeviceGetCount;
  Entry<Result(int *Device, int Ordinal)> DeviceGet;
  Entry<Result(char *Name, int Length, int Device)> DeviceGetName;
  Entry<Result(int *Value, int Attribute, int Device)> DeviceGetAttribute;
  Entry<Result(size_t *Bytes, int Device)> DeviceTotalMem;
  Entry<Result(DevPtr *Ptr, size_t Bytes)> MemAlloc;
  ReleaseEntry<Result(DevPtr Ptr)> MemFree;
  Entry<Result(DevPtr Dst, const void *Src, size_t Bytes, Stream S)>
      MemcpyHtoDAsync;
  Entry<Result(void *Dst, DevPtr Src, size_t Bytes, Stream S)>
      MemcpyDtoHAsync;
  Entry<Result(DevPtr Dst, DevPtr Src, size_t Bytes, Stream S)>
      MemcpyDtoDAsync;
  Entry<Result(DevPtr Dst, unsigned char Value, size_t Count, Stream S)>
      MemsetD8Async;
  Entry<Result(Stream *S, unsigned Flags)> StreamCreate;
  ReleaseEntry<Result(Stream S)> StreamDestroy;
  Entry<Result(Stream S)> StreamSynchronize;
  Entry<Result(Event *E, unsigned Flags)> EventCreate;
  Entry<Result(Event E, Stream S)> EventRecord;
  Entry<Result(Event E)> EventSynchronize;
  Entry<Result(float *Milliseconds, Event Start, Event End)> EventElapsedTime;
  ReleaseEntry<Result(Event E)> EventDestroy;
  Entry<Result(Function *F, Module M, const char *Name)> ModuleGetFunction;
  ReleaseEntry<Result(Module M)> ModuleUnload;
  Entry<Result(Function F, unsigned GridX, unsigned GridY, unsigned GridZ,
               unsigned BlockX, unsigned BlockY, unsigned BlockZ,
               unsigned SharedBytes, Stream S, void **Params, void **Extra)>
      LaunchKernel;

  std::string Path; ///< what was dlopen'ed

  /// The result's name ("CUDA_ERROR_INVALID_PTX", "hipErrorNoDevice"), or
  /// "<vendor> error N" when the driver does not know it.
  virtual std::string errorName(Result R) const = 0;
  /// "<Call> failed: <error name>".
  std::string failure(const char *Call, Result R) const;
};

/// Finds entry points in a dlopen'ed library, each under the first of its
/// names that the library exports; remembers the first entry it could not
/// find at all.
class Binder {
public:
  explicit Binder(void *Handle) : Handle(Handle) {}
  template <typename Fn, bool Injectable>
  void operator()(Entry<Fn, Injectable> &E,
                  std::initializer_list<const char *> Names) {
    if (void *Sym = find(Names, E.Symbol))
      E.Call = reinterpret_cast<Fn *>(Sym);
  }
  /// An entry point that older drivers lack: left null (and not missing)
  /// when the library does not export it; its users check.
  template <typename Fn, bool Injectable>
  void optional(Entry<Fn, Injectable> &E,
                std::initializer_list<const char *> Names) {
    if (void *Sym = find(Names, E.Symbol, /*Required=*/false))
      E.Call = reinterpret_cast<Fn *>(Sym);
  }
  /// A plain function pointer (an entry whose result is not a Result).
  template <typename Fn>
  void operator()(Fn *&Slot, std::initializer_list<const char *> Names) {
    const char *Symbol = "";
    if (void *Sym = find(Names, Symbol))
      Slot = reinterpret_cast<Fn *>(Sym);
  }
  /// The first name of the first entry that was not found; "" if none.
  const std::string &missing() const { return Missing; }

private:
  void *find(std::initializer_list<const char *> Names, const char *&Symbol,
             bool Required = true);
  void *Handle;
  std::string Missing;
};

/// Loads a driver library once per path for the life of the process (the
/// runtime never unloads drivers, and tests switch between fake drivers by
/// path): the first of `Candidates` that dlopen takes, or only $`EnvVar`
/// when it is set. `Bind` fills a new driver from the handle. Errors
/// (ErrorCode::Driver): "libcuda.so.1 could not be loaded (<dlerror>)",
/// "none of libamdhip64.so, libamdhip64.so.7, ... could be loaded (...)",
/// "the HIP runtime <path> does not export hipMalloc".
Expected<const Api *>
loadLibrary(const char *EnvVar, const std::vector<std::string> &Candidates,
            const std::string &What,
            std::unique_ptr<Api> (*Make)(void *Handle, std::string &Missing));

} // namespace kiln::rt::detail::gpu

#endif // KILN_RUNTIME_GPUDRIVER_H
