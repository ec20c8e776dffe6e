//===- HostDevice.h - The host CPU device, internals ------------*- C++ -*-===//
//
// What the host device needs besides the DeviceImpl interface: which code
// objects this CPU runs (HostTarget) and how one is loaded (HostImage:
// the ELF shared object is written to a memfd, or a private temporary file
// where memfds are unavailable, and dlopen'ed RTLD_LOCAL).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HOSTDEVICE_H
#define KILN_RUNTIME_HOSTDEVICE_H

#include "Internal.h"
#include "kiln/host_abi.h"

#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt::detail {

/// What this process runs (docs/runtime.md, "The host device").
struct HostTarget {
  std::string Triple;     ///< e.g. x86_64-unknown-linux-gnu
  std::string TripleArch; ///< e.g. x86_64
  /// The arch names that images without "requires" are matched by, best
  /// first: $KILN_HOST_CPU, the CPU's own name where __builtin_cpu_is tells
  /// it, the x86-64-vN levels it has, x86-64, generic.
  std::vector<std::string> Names;
  /// LLVM's names of the CPU's features, sorted.
  std::vector<std::string> Features;

  /// 0 if this process cannot run the image, else its rank: 1 + the number
  /// of features it may use (or, for an image matched by its CPU's name,
  /// 1 + the CPU's feature count).
  int rank(const ImageInfo &Image) const;
  /// "lacks avx512fp16, amx-tile" for an image this CPU cannot run.
  std::string whyNot(const ImageInfo &Image) const;
  /// "x86_64-unknown-linux-gnu: znver3, x86-64-v3, ...; 57 CPU features".
  std::string describe() const;
  /// True if the CPU has `Feature` (or it restricts nothing, like evex512).
  bool has(std::string_view Feature) const;
  /// The features of `Needed` the CPU lacks.
  std::vector<std::string> missing(const std::vector<std::string> &Needed) const;
  /// The image is an ELF object for this machine's architecture (and Linux).
  bool matchesTriple(const ImageInfo &Image) const;
};

/// Computed once: see computeHostTarget.
const HostTarget &hostTarget();
/// This process's HostTarget: the CPU's features, its names, the levels.
HostTarget computeHostTarget();

/// The LLVM names of the features this CPU has, detected without LLVM the
/// way llvm::sys::getHostCPUFeatures does (cpuid and xgetbv on x86-64,
/// getauxval on aarch64), sorted.
std::vector<std::string> detectHostFeatures();
/// True if the runtime can tell whether a CPU has `Feature`: it detects it,
/// or the feature does not restrict where code runs (evex512, retpoline-*).
/// An image that needs an unknown feature never runs.
bool isKnownHostFeature(std::string_view Feature);
/// The features of an x86-64 level ("x86-64", "x86-64-v2" ... "-v4";
/// "generic": none), or null if `Cpu` is not one.
const std::vector<std::string> *levelFeatures(std::string_view Cpu);

/// What the host and emulator devices share: device memory is host memory
/// (64-byte aligned, every allocation remembered for checked accesses),
/// streams run each operation before returning, events are steady-clock
/// timestamps, print lines go to the handler or stdout.
class HostMemoryDevice : public DeviceImpl {
public:
  Expected<void *> allocate(size_t Bytes) override;
  void release(void *Ptr) override;
  /// True if [Address, Address + Bytes) lies inside one live allocation
  /// (the checked mode's notion of valid memory).
  bool isAllocated(uintptr_t Address, uint64_t Bytes);
  std::optional<std::pair<uintptr_t, size_t>>
  allocationOf(const void *Address) override;

  Expected<std::unique_ptr<StreamImpl>> createStream() override;
  Expected<std::unique_ptr<EventImpl>> createEvent() override;
  Error copy(StreamImpl &S, void *Dst, const void *Src, size_t Bytes,
             CopyKind Kind) override;
  Error fill(StreamImpl &S, void *Dst, uint8_t Value, size_t Bytes) override;
  Error record(StreamImpl &S, EventImpl &E) override;
  Error synchronize(StreamImpl &S) override;
  Error synchronize(EventImpl &E) override;
  Expected<double> elapsedMilliseconds(EventImpl &Start,
                                       EventImpl &End) override;

  void setPrintHandler(PrintHandler H) override;
  /// One printed line, to the handler or stdout.
  void emitPrint(const std::string &Line);

  static uint64_t physicalMemoryBytes();

private:
  PrintSink Prints;
  AllocationMap Allocations;
};

class HostImage : public LoadedImage {
public:
  /// Loads an image and looks up its entry. `Label` names it in messages
  /// ("softmax_v3").
  static Expected<std::unique_ptr<HostImage>>
  load(const ImageInfo &Image, const uint8_t *Bytes, const std::string &Label);
  ~HostImage() override;

  KilnHostEntry entry() const { return Entry; }

private:
  HostImage() = default;
  void *Handle = nullptr;
  int Fd = -1;
  std::string Path;
  KilnHostEntry Entry = nullptr;
};

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_HOSTDEVICE_H
