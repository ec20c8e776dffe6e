//===- Internal.h - Runtime internals shared by the library -----*- C++ -*-===//
//
// The driver interface (DeviceImpl: one implementation per device kind:
// the host, the CPU emulator, CUDA and HIP through dlopen), the parsed bundle, and the
// loaded module. Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

#include "Expr.h"
#include "kiln/runtime.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

namespace kiln::rt::detail {

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//

/// An image's tensor map (ImageInfo::TensorMaps) with its expressions
/// parsed.
struct TensorMapExprs {
  unsigned Param = 0;     ///< index into KernelInfo::Params (a pointer)
  unsigned ElemBytes = 0; ///< 1, 2, 4 or 8
  ScalarType Type = ScalarType::U8;
  std::vector<Expr> Sizes, Strides; ///< outermost first; strides in elements
  std::vector<int64_t> Box;         ///< outermost first
  int32_t Swizzle = 0;              ///< bytes: 0, 32, 64, 128
};

/// The expressions of a kernel, parsed with its names resolved.
struct KernelExprs {
  std::vector<Expr> Grid;
  std::vector<Expr> Conditions;
  /// Each image's "assumes.holds", by variant, then image (parallel to
  /// KernelInfo::Variants and their Images).
  std::vector<std::vector<std::vector<Expr>>> Holds;
  /// Each image's "tensor_maps", by variant, then image (likewise).
  std::vector<std::vector<std::vector<TensorMapExprs>>> TensorMaps;
};

/// The most dimensions of a tensor map (TMA's limit).
constexpr unsigned kMaxTensorMapRank = 5;

/// A tensor map of one launch: its expressions evaluated for the
/// arguments, and checked against TMA's requirements (docs/bundle.md,
/// "tensor_maps"). Arrays are outermost first; entries past Rank are 0.
struct TensorMap {
  uint64_t Base = 0; ///< the device address of element (0, ..., 0)
  unsigned Rank = 0;
  unsigned ElemBytes = 0;
  ScalarType Type = ScalarType::U8;
  int64_t Sizes[kMaxTensorMapRank] = {};
  int64_t Strides[kMaxTensorMapRank] = {}; ///< bytes; the innermost ElemBytes
  int32_t Box[kMaxTensorMapRank] = {};
  int32_t Swizzle = 0; ///< bytes
};

/// Evaluates an image's tensor maps for a launch (`Args`, the runtime
/// params' integer values `Values` and the variant's const values) and
/// checks TMA's requirements: the base 16-byte aligned, every size in
/// [1, 2^32], the innermost stride 1 and the others positive multiples of
/// 16 bytes under 2^40 bytes, the box's rows a multiple of 16 bytes and
/// no wider than the swizzle. The error (no prefix) says which map broke
/// which requirement: "tensor map 0 (a): its base 0x1004 is not 16-byte
/// aligned".
Expected<std::vector<TensorMap>>
evaluateTensorMaps(const KernelInfo &K, const std::vector<TensorMapExprs> &Maps,
                   const std::vector<Arg> &Args,
                   const std::vector<int64_t> &Values,
                   const std::vector<int64_t> &Consts);

struct BundleData {
  std::string Name;
  std::string Source;
  std::string HostCpu;
  /// The manifest binary's kiln.format-version (checked before the
  /// manifest is parsed); the JSON's "version" must say the same.
  unsigned FormatVersion = 0;
  std::vector<uint8_t> Bytes;
  std::vector<KernelInfo> Kernels;
  std::vector<KernelExprs> Exprs; ///< parallel to Kernels
};

/// One offloading binary of the container, bounds-checked.
struct RawBinary {
  uint64_t Offset = 0; ///< of the binary in the bundle
  uint16_t ImageKind = 0;
  uint16_t OffloadKind = 0;
  uint32_t Flags = 0;
  std::vector<std::pair<std::string, std::string>> Strings;
  uint64_t ImageOffset = 0; ///< absolute, in the bundle
  uint64_t ImageSize = 0;

  /// The value of a string key, or null.
  const std::string *lookup(std::string_view Key) const;
};

/// Splits a bundle into its offloading binaries (docs/bundle.md).
Expected<std::vector<RawBinary>> readContainer(const uint8_t *Data,
                                               size_t Size,
                                               const std::string &Name);

/// Fills Data.Kernels and Data.Exprs from the manifest JSON; images get
/// their triple/arch/entry but no offsets yet.
Error parseManifest(std::string_view Json, BundleData &Data);

/// Reads an integer of an image's "resources" JSON ("threads"), if it is
/// there and a non-negative integer.
std::optional<int64_t> resourceInt(const std::string &ResourcesJson,
                                   const char *Key);

/// True if an image's "resources" JSON has `Key` set to true
/// ("check_bounds").
bool resourceFlag(const std::string &ResourcesJson, const char *Key);

/// The same parameters assumed aligned and divisible (in any order).
bool sameAssumptions(const ImageAssumptions &A, const ImageAssumptions &B);

/// The format versions this runtime reads: kMinFormatVersion to
/// kFormatVersion (4: images may have tensor maps).
constexpr unsigned kMinFormatVersion = 3;
constexpr unsigned kFormatVersion = 4;
/// "(this runtime reads versions 3 and 4)".
std::string supportedFormatVersions();
constexpr unsigned kContainerVersion = 1;

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

class StreamImpl {
public:
  virtual ~StreamImpl();
};

class EventImpl {
public:
  virtual ~EventImpl();
};

/// A code object loaded on a device, ready to launch.
class LoadedImage {
public:
  virtual ~LoadedImage();
};

/// The evaluated grid of a launch.
struct GridDims {
  int64_t X = 1, Y = 1, Z = 1;
};

/// Which way a copy goes.
enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// The driver interface: one implementation per device kind.
class DeviceImpl {
public:
  virtual ~DeviceImpl();

  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual DeviceProperties properties() const = 0;

  virtual Expected<void *> allocate(size_t Bytes) = 0;
  virtual void release(void *Ptr) = 0;

  virtual Expected<std::unique_ptr<StreamImpl>> createStream() = 0;
  virtual Expected<std::unique_ptr<EventImpl>> createEvent() = 0;
  /// Copies between host and device memory or within a device, in stream
  /// order; `Kind` says which of the pointers are device addresses (on the
  /// host device, all are host addresses).
  virtual Error copy(StreamImpl &S, void *Dst, const void *Src, size_t Bytes,
                     CopyKind Kind) = 0;
  virtual Error fill(StreamImpl &S, void *Dst, uint8_t Value,
                     size_t Bytes) = 0;
  virtual Error record(StreamImpl &S, EventImpl &E) = 0;
  virtual Error synchronize(StreamImpl &S) = 0;
  virtual Error synchronize(EventImpl &E) = 0;
  virtual Expected<double> elapsedMilliseconds(EventImpl &Start,
                                               EventImpl &End) = 0;

  /// How well this device runs `Image`: 0 if it cannot, else higher is
  /// better (e.g. a native CPU image over a portable one).
  virtual int rankImage(const ImageInfo &Image) const = 0;
  /// Why this device cannot run `Image` (rank 0), in a few words for "no
  /// image" messages ("lacks avx512fp16", "needs sm_100"); "" if there is
  /// nothing more to say than its arch.
  virtual std::string whyNot(const ImageInfo &Image) const { return ""; }
  /// What this device runs, for "no image" messages:
  /// "host (x86_64-unknown-linux-gnu: x86-64-v3, x86-64-v2, generic)".
  virtual std::string targetDescription() const = 0;
  virtual Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) = 0;
  /// The largest extent of a grid axis.
  virtual int64_t maxGridAxis(unsigned Axis) const = 0;
  /// Runs every program of `Grid` (no axis is 0). `Args[i]` points to the
  /// i-th argument's value (8 bytes of storage; pointers are 8-byte device
  /// addresses, scalars in their natural size, bool one byte), as the host
  /// ABI and cuLaunchKernel's kernelParams want it. The image's tensor maps
  /// `Maps` (evaluated and checked: evaluateTensorMaps) come next, one null
  /// slot each after the arguments, which the device fills with its form
  /// of the map (a device that runs no image with tensor maps refuses
  /// them). One more slot follows, null, for a device to fill with a hidden
  /// argument (the GPU devices' print buffer).
  virtual Error launch(StreamImpl &S, LoadedImage &Image, void **Args,
                       const GridDims &Grid,
                       const std::vector<TensorMap> &Maps) = 0;

  virtual void setPrintHandler(PrintHandler Handler) = 0;

  /// The allocation of this device that holds `Address`: its base and
  /// size; nullopt if the device does not know one (a raw host address).
  virtual std::optional<std::pair<uintptr_t, size_t>>
  allocationOf(const void *Address) {
    return std::nullopt;
  }
};

/// The live allocations of a device (base -> requested bytes), for the
/// checked mode's bounds and the tuner's saving of written buffers.
class AllocationMap {
public:
  void add(uintptr_t Base, size_t Bytes) {
    std::unique_lock<std::shared_mutex> Lock(Mutex);
    Map[Base] = Bytes;
  }
  void remove(uintptr_t Base) {
    std::unique_lock<std::shared_mutex> Lock(Mutex);
    Map.erase(Base);
  }
  /// True if [Address, Address + Bytes) lies inside one allocation (an
  /// empty range may sit at its end).
  bool contains(uintptr_t Address, uint64_t Bytes) const {
    std::shared_lock<std::shared_mutex> Lock(Mutex);
    auto It = Map.upper_bound(Address);
    if (It == Map.begin())
      return false;
    --It;
    return Address >= It->first && Bytes <= It->second &&
           Address - It->first <= It->second - Bytes;
  }
  /// The allocation holding `Address`: its base and size.
  std::optional<std::pair<uintptr_t, size_t>> find(uintptr_t Address) const {
    std::shared_lock<std::shared_mutex> Lock(Mutex);
    auto It = Map.upper_bound(Address);
    if (It == Map.begin())
      return std::nullopt;
    --It;
    if (Address - It->first >= It->second)
      return std::nullopt;
    return *It;
  }

private:
  mutable std::shared_mutex Mutex;
  std::map<uintptr_t, size_t> Map;
};

/// Where a device's kernel `print` lines go: the handler set with
/// Device::setPrintHandler, else standard output.
class PrintSink {
public:
  void set(PrintHandler H);
  /// One line, without its newline.
  void emit(const std::string &Line);

private:
  std::mutex Mutex;
  PrintHandler Handler;
};

Expected<std::shared_ptr<DeviceImpl>> openHostDevice();

/// Opens CUDA device `Ordinal` through the driver library (libcuda.so.1,
/// or $KILN_CUDA_DRIVER). `Spec` is what the user asked for ("cuda:1"),
/// for messages.
Expected<std::shared_ptr<DeviceImpl>> openCudaDevice(int Ordinal,
                                                     const std::string &Spec);
/// True if a CUDA driver can be loaded and has at least one device (what
/// "auto" prefers).
bool cudaDeviceAvailable();
/// Opens HIP device `Ordinal` through libamdhip64 (or $KILN_HIP_RUNTIME).
Expected<std::shared_ptr<DeviceImpl>> openHipDevice(int Ordinal,
                                                    const std::string &Spec);
/// True if HIP can be loaded and has at least one AMD GPU ("auto" takes
/// it when there is no CUDA device).
bool hipDeviceAvailable();

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

/// A code object of a variant that the device runs.
struct ImageState {
  unsigned Index = 0; ///< into VariantInfo::Images
  int Rank = 0;       ///< DeviceImpl::rankImage
  /// The params it assumes 16-byte aligned / divisible by 16 (indices into
  /// KernelInfo::Params), and the conditions it assumes hold.
  std::vector<unsigned> Align16, Div16;
  const std::vector<Expr> *Holds = nullptr;
  /// Its tensor maps (empty for most images); their requirements count as
  /// assumptions.
  const std::vector<TensorMapExprs> *Maps = nullptr;
  size_t assumptions() const {
    return Align16.size() + Div16.size() + (Holds ? Holds->size() : 0) +
           (Maps ? Maps->size() : 0);
  }
  /// Once loaded. A load that failed is tried again by the next launch
  /// (a driver that ran out of memory may do better then).
  std::unique_ptr<LoadedImage> Loaded;
};

struct VariantState {
  /// The images this device runs, in order of preference: best rank
  /// first, then most assumptions, then manifest order. A launch takes the
  /// first whose assumptions hold for its arguments.
  std::vector<ImageState> Images;
  bool runnable() const { return !Images.empty(); }
};

struct KernelState {
  std::vector<VariantState> Variants;
  /// Why no variant can run here (empty if one can).
  std::string NoImageMessage;
};

/// What a module knows of one kernel's tuning (Tuner.cpp): the times read
/// from the database or measured, by key bucket and variant config.
struct KernelTuning {
  std::mutex Mutex; ///< held while a bucket is looked up or measured
  std::map<std::string, std::map<std::string, VariantTiming>> Known;
  std::set<std::string> Loaded; ///< buckets read from the database
  /// (bucket, config) pairs that failed to load or launch here.
  std::set<std::pair<std::string, std::string>> Failed;
  /// Buckets whose arguments cannot be saved (raw addresses): looked up,
  /// never measured again.
  std::set<std::string> Unmeasurable;
};

class ModuleImpl {
public:
  std::shared_ptr<DeviceImpl> Device;
  Bundle TheBundle;
  std::vector<KernelState> Kernels;
  std::vector<std::unique_ptr<KernelTuning>> Tuning; ///< parallel to Kernels
  /// The device as the tuning database names it (tuningDeviceKey).
  std::string TuningDeviceKey;
  std::mutex LoadMutex;

  ModuleImpl(std::shared_ptr<DeviceImpl> Device, Bundle B)
      : Device(std::move(Device)), TheBundle(std::move(B)) {}

  /// Loads (once) a code object of a variant: `Slot` indexes
  /// VariantState::Images.
  Expected<LoadedImage *> loadImage(unsigned Kernel, unsigned Variant,
                                    size_t Slot);
};

/// A candidate of a launch: a variant (its position in
/// KernelInfo::Variants) and the code object it would run (a slot of its
/// VariantState::Images).
struct Candidate {
  size_t Position = 0;
  size_t Slot = 0;
};

/// Kernel::plan's work: also reports the chosen position and slot, and,
/// when `Candidates` is given, every candidate in variant order.
Expected<LaunchPlan> planLaunch(const ModuleImpl &M, unsigned Kernel,
                                const std::vector<Arg> &Args,
                                const LaunchOptions &Options, size_t &Position,
                                size_t &Slot,
                                std::vector<Candidate> *Candidates = nullptr);
/// Launches a planned variant (loading its code object first). A device
/// that refuses the image's tensor maps (LaunchRefused: a driver's encoder
/// stricter than the runtime's checks) gets the next image of the variant
/// whose assumptions hold; `Launched`, when given, receives the index
/// (VariantInfo::Images) of the image that ran.
Error launchPlanned(ModuleImpl &M, unsigned Kernel, StreamImpl &S,
                    const Candidate &C, const std::vector<Arg> &Args,
                    const LaunchPlan &Plan, unsigned *Launched = nullptr);

/// What the tuner chose for a launch (Tuner.cpp).
struct TuningChoice {
  size_t Position = 0;
  ChoiceSource Source = ChoiceSource::Default;
  std::string Bucket;
  unsigned Measured = 0;
  double Seconds = 0;
};
/// Chooses among `Candidates` (at least two) by the tuning database, and
/// in Full mode measures the missing ones first. On failure, `Fatal` says
/// that buffers may have changed (the launch must fail, not fall back).
Expected<TuningChoice> chooseByTuning(ModuleImpl &M, unsigned Kernel,
                                      StreamImpl &S,
                                      const std::vector<Arg> &Args,
                                      const std::vector<Candidate> &Candidates,
                                      TuningMode Mode, bool &Fatal);
/// The device as the tuning database names it: "NVIDIA H100 80GB HBM3 /
/// sm_90 / driver 13000", "host / znver4 / 32 threads".
std::string tuningDeviceKey(const DeviceImpl &D);
/// Kernel::tune's work.
Expected<TuneResult> tuneKernel(ModuleImpl &M, unsigned Kernel, StreamImpl &S,
                                const std::vector<Arg> &Args,
                                const std::vector<Candidate> &Candidates,
                                const TuneOptions &Options);
/// Sends a warning to the handler (setWarningHandler) or standard error.
void warn(const std::string &Message);

/// "a, b, c".
std::string joinNames(const std::vector<std::string> &Names);

/// The whole contents of the file at `Path` (IO / OutOfMemory errors name
/// the path). A file over `Limit` bytes is refused before it is read
/// (InvalidArgument: "cannot read 'x.kpack': it is 3 GiB, over the limit of
/// 2 GiB for a bundle"), `What` naming the kind of file.
Expected<std::vector<uint8_t>>
readWholeFile(const std::string &Path, uint64_t Limit = UINT64_MAX,
              const char *What = "file");
/// "2 GiB", "16 MiB", "300 bytes": a limit or a size for messages.
std::string byteSize(uint64_t Bytes);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_INTERNAL_H
