//===- GpuDevice.h - A GPU driven through a CUDA-shaped driver --*- C++ -*-===//
//
// What the CUDA and HIP devices share (GpuDriver.h has the entry points):
// memory, streams, events, timing, launches, the checks of an image's
// threads and shared memory against the device, and how driver failures
// become errors. Each vendor derives from DriverDevice and supplies how its
// device is made current for a call (a context push, a current device),
// which results mean a kernel faulted, which images it runs, and how a code
// object is loaded.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_GPUDEVICE_H
#define KILN_RUNTIME_GPUDEVICE_H

#include "GpuDriver.h"
#include "Internal.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>
#include <memory>
#include <string>

namespace kiln::rt::detail::gpu {

class DriverDevice;

class GpuStream : public StreamImpl {
public:
  GpuStream(DriverDevice &Dev, Stream S) : Dev(Dev), S(S) {}
  ~GpuStream() override;
  DriverDevice &Dev;
  Stream S;
  /// Kiln's print buffer of this stream (device memory, made by the first
  /// launch of a kernel that prints): {u64 reserved bytes, u64 capacity,
  /// records[capacity bytes], u64 trap}; 0 until then. A kernel whose
  /// assertion failed sets the trap word to 1 + the offset of its message's
  /// record (~0 when the record did not fit) and ends its wave.
  DevPtr Print = 0;
  /// The kernel argument that passes it, and its initial header.
  uint64_t PrintArg = 0;
  uint64_t PrintHeader[2] = {};
  /// A kernel that prints ran since the last drain.
  bool PrintPending = false;
};

class GpuEvent : public EventImpl {
public:
  GpuEvent(DriverDevice &Dev, Event E) : Dev(Dev), E(E) {}
  ~GpuEvent() override;
  DriverDevice &Dev;
  Event E;
  bool Recorded = false;
};

/// A loaded code object and its entry. Streams, events and images never
/// outlive their device (the public handles hold the device).
class GpuImage : public LoadedImage {
public:
  explicit GpuImage(DriverDevice &Dev) : Dev(Dev) {}
  ~GpuImage() override;
  DriverDevice &Dev;
  Module M = nullptr;
  Function F = nullptr;
  unsigned Threads = 0;
  unsigned SharedBytes = 0;
  /// The kernel prints: it takes the stream's print buffer as a hidden
  /// last argument (its resources list "print_formats").
  bool Prints = false;
  std::string Label; ///< "vadd_v0", for messages
};

class DriverDevice : public DeviceImpl {
public:
  /// `Prefix` names the devices ("cuda", "hip"); `Units` their compute
  /// units ("SMs", "CUs"); `MaxGrid` the grid limits (0: 65535).
  DriverDevice(const Api &A, const char *Prefix, const char *Units,
               int Ordinal, DeviceProperties Props, const int MaxGrid[3]);

  /// Makes the device current for the calling thread while it lives.
  class Scope {
  public:
    explicit Scope(DriverDevice &D);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    /// The failure to make the device current, if any.
    Error error() const;

  private:
    DriverDevice &D;
    uintptr_t Saved = 0;
    Result R;
  };

  const Api &api() const { return A; }

  std::string name() const override;
  /// "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB, 3352 GB/s,
  /// CUDA 12.4)".
  std::string description() const override;
  DeviceProperties properties() const override { return Props; }

  Expected<void *> allocate(size_t Bytes) override;
  void release(void *Ptr) override;
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
  int64_t maxGridAxis(unsigned Axis) const override;
  Error launch(StreamImpl &S, LoadedImage &Image, void **Args,
               const GridDims &Grid,
               const std::vector<TensorMap> &Maps) override;
  /// Where the lines drained from print buffers go.
  void setPrintHandler(PrintHandler H) override { Prints.set(std::move(H)); }
  std::optional<std::pair<uintptr_t, size_t>>
  allocationOf(const void *Address) override;

protected:
  /// Makes the device current; `Saved` keeps what `leave` restores.
  virtual Result enter(uintptr_t &Saved) = 0;
  virtual void leave(uintptr_t Saved) = 0;
  /// The symbol `enter` calls, for its failure message.
  virtual const char *enterSymbol() const = 0;
  /// True for the results a faulting kernel leaves behind (a trap, a bad
  /// access): the device cannot be used afterwards.
  virtual bool isKernelFault(Result R) const = 0;
  /// "CUDA 12.4", for descriptions.
  virtual std::string versionText() const = 0;
  /// "the CUDA context of cuda:0", what a fault makes unusable.
  virtual std::string faultVictim() const = 0;

  /// A driver failure as an error: the call and the result's name; a
  /// kernel fault is ErrorCode::KernelTrapped, out of memory OutOfMemory.
  Error fail(const char *Call, Result R, const std::string &Detail = "");
  /// The start of every loadImage: a new image with the threads and
  /// shared memory `Image` asks for (its resources), checked against the
  /// device's limits. `What` begins each message ("cannot load ...").
  Expected<std::unique_ptr<GpuImage>> newImage(const ImageInfo &Image,
                                               const std::string &What);
  /// Finds the image's entry in its loaded module (within a Scope).
  Error findEntry(GpuImage &Loaded, const ImageInfo &Image,
                  const std::string &What);

  /// Reads a stream's print buffer (after the stream synchronized), sends
  /// its lines to the print sink and empties it. A failed assertion's
  /// record is not printed: it is the message of the KernelTrapped error
  /// returned ("kernel trapped: k.tile:3:5: assertion failed: ...").
  Error drainPrints(GpuStream &S);
  /// The address of a stream's trap word (after the records).
  static DevPtr trapWord(const GpuStream &S);

  const Api &A;
  PrintSink Prints;
  /// What this device allocated (the tuner saves written buffers by it).
  AllocationMap Allocations;
  std::mutex FormatsMutex;
  /// The print formats of every image loaded, by printFormatHash.
  std::map<uint32_t, std::string> PrintFormats;
  const char *Prefix;
  const char *Units;
  int Ordinal;
  DeviceProperties Props;
  int64_t MaxGrid[3] = {};
};

/// How a vendor's devices are named in messages, and which results of its
/// init and count calls mean "no device here".
struct VendorNames {
  const char *Devices;  ///< "CUDA device": "cuda:3: only 1 CUDA device"
  const char *NoDevice; ///< "no CUDA device", "no AMD GPU"
  std::vector<Result> NoDeviceResults;
};

/// Initializes a loaded driver and counts its devices. Errors
/// (ErrorCode::Driver): "no CUDA device (cuInit failed: ...)" when the init
/// says there is none, "no AMD GPU" when the count does (or is 0), else the
/// failing call.
Expected<int> countDevices(const Api &A, const VendorNames &V);

/// The first steps of opening device `Ordinal` (`Spec`, "cuda:1") of a
/// loaded driver: the driver initialized, the ordinal checked against the
/// count ("cuda:3: only 1 CUDA device"), its device handle. Other errors
/// start "cannot open <Spec>: ".
Expected<int> openOrdinal(const Api &A, int Ordinal, const std::string &Spec,
                          const VendorNames &V);

/// Reads what both vendors report the same way into `P`: the model name,
/// the `Wanted` attributes (an error names the first that fails), the
/// memory clock (kHz) and bus width (bits) and the peak bandwidth they give
/// (0 when not reported), the memory size and the driver version.
Error readProperties(const Api &A, int Device, DeviceProperties &P,
                     std::initializer_list<std::pair<int, int *>> Wanted,
                     int MemoryClockAttr, int BusWidthAttr);

/// The bytes of data a stream's print buffer holds (1 MiB).
constexpr uint64_t kPrintBufferBytes = uint64_t(1) << 20;

/// What a print record names its format by: FNV-1a (32-bit) of the
/// format's bytes, computed the same way by the compiler.
uint32_t printFormatHash(std::string_view Format);

/// A print record as text: `Format` (C printf conversions: d, i, u, x, X,
/// o, c with any flags, width, precision and length; e, f, g, a and their
/// capitals) with `Slots` (8 bytes each: integers as i64, floats as f64
/// bits). A conversion without a slot, or one it does not take (%s), is
/// kept as written.
std::string formatPrintRecord(std::string_view Format, const uint64_t *Slots,
                              unsigned Count);

/// "79.1 GiB".
std::string gib(uint64_t Bytes);

} // namespace kiln::rt::detail::gpu

#endif // KILN_RUNTIME_GPUDEVICE_H
