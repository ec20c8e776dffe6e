//===- kiln/runtime.h - The Kiln runtime C++ API ----------------*- C++ -*-===//
//
// libkiln_runtime loads a Kiln bundle (.kpack, docs/bundle.md) and launches
// its kernels on a device. It links no LLVM, MLIR or vendor SDK.
//
//   auto Dev = kiln::rt::Device::open("auto");        // a GPU, else the host
//   auto Mod = Dev->loadModuleFile("softmax.kpack");
//   auto K = Mod->kernel("softmax");
//   auto S = Dev->createStream();
//   auto X = Dev->allocate(Bytes);
//   S->copyToDevice(*X, 0, Host, Bytes);
//   auto Plan = K->launch(*S, {Arg::pointer(*X), Arg::pointer(*Y),
//                              Arg::i32(Rows), Arg::i32(Cols),
//                              Arg::i32(Stride)});
//
// Errors are values: every fallible call returns an Error or an Expected<T>
// carrying a one-line message and an ErrorCode; nothing throws out of this
// API and nothing aborts. Handles (Device, Module, Kernel, Bundle) are
// cheap to copy and keep what they refer to alive; Buffer, Stream and Event
// are move-only owners. docs/runtime.md describes the whole API.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// What kind of failure an Error is. The values are those of `kiln_status`
/// in runtime_c.h.
enum class ErrorCode : int {
  Success = 0,
  InvalidArgument = 1,   ///< a bad value passed to the API or the tool
  NotFound = 2,          ///< no kernel / variant / const param of that name
  InvalidBundle = 3,     ///< truncated, corrupt or inconsistent bundle
  UnsupportedVersion = 4,///< a bundle format this runtime does not read
  NoImage = 5,           ///< the bundle has no code object for this device
  LaunchRefused = 6,     ///< argument checks, promises, conditions, grid
  KernelTrapped = 7,     ///< a kernel called trap (failed assert)
  UnsupportedDevice = 8, ///< a device kind this build cannot drive
  IO = 9,                ///< a file cannot be read or written
  Driver = 10,           ///< the driver or the loader failed (dlopen, ...)
  OutOfMemory = 11,
};

/// The outcome of an operation: success, or a code and a one-line message.
/// Like llvm::Error, it converts to true when it holds a failure.
class [[nodiscard]] Error {
public:
  Error() = default;
  Error(ErrorCode Code, std::string Message)
      : Code(Code), Message(std::move(Message)) {}
  static Error success() { return Error(); }

  explicit operator bool() const { return Code != ErrorCode::Success; }
  ErrorCode code() const { return Code; }
  const std::string &message() const { return Message; }

private:
  ErrorCode Code = ErrorCode::Success;
  std::string Message;
};

/// A T or the Error that prevented it.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Value(std::move(Value)) {}
  Expected(Error E) : Err(std::move(E)) {
    assert(Err && "an Expected<T> needs a value or a failure");
  }

  explicit operator bool() const { return Value.has_value(); }
  T &operator*() { return *Value; }
  const T &operator*() const { return *Value; }
  T *operator->() { return &*Value; }
  const T *operator->() const { return &*Value; }

  /// The failure (or success, if this holds a value).
  const Error &error() const { return Err; }
  Error takeError() { return std::move(Err); }

private:
  std::optional<T> Value;
  Error Err;
};

//===----------------------------------------------------------------------===//
// Types and values
//===----------------------------------------------------------------------===//

/// The language's scalar types; same order and values as KilnScalarKind in
/// kiln/host_abi.h.
enum class ScalarType : uint8_t {
  Bool = 0, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64,
  F8E4M3, F8E5M2
};

/// "bool", "i32", "bf16", ...
std::string_view typeName(ScalarType T);
/// Size in bytes of a value of T in memory (bool: 1).
size_t typeSize(ScalarType T);
bool isIntegerType(ScalarType T);
bool isSignedType(ScalarType T);
bool isFloatType(ScalarType T);
/// f8e4m3 or f8e5m2.
bool isFp8(ScalarType T);
/// Parses a scalar type name ("f32"); nullopt if it is none.
std::optional<ScalarType> parseScalarType(std::string_view Name);

/// A kernel parameter's language type: a scalar or a pointer to one.
struct ParamType {
  bool IsPointer = false;
  ScalarType Element = ScalarType::I32;
  /// "*f32", "i32".
  std::string str() const;
};

/// IEEE binary16 / bfloat16 conversions (round to nearest even; overflow
/// gives infinity; a NaN stays a NaN, made quiet, with its sign).
uint16_t floatToBF16(float Value);
float bf16ToFloat(uint16_t Bits);
uint16_t floatToHalf(float Value);
float halfToFloat(uint16_t Bits);

/// OCP fp8 conversions, as kernels convert (docs/language.md, "Conversions"):
/// round to nearest even; finite values beyond the largest finite value
/// (448 for E4M3, 57344 for E5M2) saturate to it; E5M2 keeps infinities,
/// E4M3 (which has none) saturates them; a NaN becomes the NaN 0x7f with
/// its sign. The decoders are exact.
uint8_t floatToF8E4M3(float Value);
float f8e4m3ToFloat(uint8_t Bits);
uint8_t floatToF8E5M2(float Value);
float f8e5m2ToFloat(uint8_t Bits);

/// Any float type T: the value of its bits (the low typeSize(T) bytes of
/// `Bits`), exactly; and the bits of `Value` in T (f64 exactly, the others
/// from float(Value) by the conversions above).
double floatValue(ScalarType T, uint64_t Bits);
uint64_t toFloatBits(ScalarType T, double Value);

class Buffer;

/// One launch argument: a pointer (a device buffer or a raw device address)
/// or a scalar of a language type, held in its natural C representation
/// (bool: one byte 0/1; f16/bf16: the 16-bit pattern).
class Arg {
public:
  /// A device buffer. Without an element type the pointee type is not
  /// checked against the parameter.
  static Arg pointer(const Buffer &B,
                     std::optional<ScalarType> Element = std::nullopt);
  /// A raw device address (host device: a host address).
  static Arg pointer(const void *Address,
                     std::optional<ScalarType> Element = std::nullopt);
  /// A scalar from its raw bits (the low typeSize(T) bytes are used).
  static Arg scalarBits(ScalarType T, uint64_t Bits);

  static Arg boolean(bool V) { return scalarBits(ScalarType::Bool, V ? 1 : 0); }
  static Arg i8(int8_t V) { return scalarBits(ScalarType::I8, uint8_t(V)); }
  static Arg i16(int16_t V) { return scalarBits(ScalarType::I16, uint16_t(V)); }
  static Arg i32(int32_t V) { return scalarBits(ScalarType::I32, uint32_t(V)); }
  static Arg i64(int64_t V) { return scalarBits(ScalarType::I64, uint64_t(V)); }
  static Arg u8(uint8_t V) { return scalarBits(ScalarType::U8, V); }
  static Arg u16(uint16_t V) { return scalarBits(ScalarType::U16, V); }
  static Arg u32(uint32_t V) { return scalarBits(ScalarType::U32, V); }
  static Arg u64(uint64_t V) { return scalarBits(ScalarType::U64, V); }
  static Arg f16Bits(uint16_t V) { return scalarBits(ScalarType::F16, V); }
  static Arg bf16Bits(uint16_t V) { return scalarBits(ScalarType::BF16, V); }
  static Arg f8e4m3Bits(uint8_t V) { return scalarBits(ScalarType::F8E4M3, V); }
  static Arg f8e5m2Bits(uint8_t V) { return scalarBits(ScalarType::F8E5M2, V); }
  static Arg f8e4m3(float V) { return f8e4m3Bits(floatToF8E4M3(V)); }
  static Arg f8e5m2(float V) { return f8e5m2Bits(floatToF8E5M2(V)); }
  static Arg f16(float V) { return f16Bits(floatToHalf(V)); }
  static Arg bf16(float V) { return bf16Bits(floatToBF16(V)); }
  static Arg f32(float V);
  static Arg f64(double V);

  bool isPointer() const { return Pointer; }
  /// The scalar's type, or the pointee type of a typed pointer.
  ScalarType type() const { return Type; }
  bool hasElementType() const { return Typed; }
  const void *address() const { return Address; }
  /// The scalar's bits, zero-extended.
  uint64_t bits() const { return Bits; }
  /// The scalar as a 64-bit integer (sign-extended for signed types).
  int64_t asInt64() const;
  /// Where the value lives, as the host ABI's `args[i]` wants it.
  const void *storage() const;
  /// The device a buffer argument belongs to (null for raw addresses).
  const void *deviceTag() const { return DeviceTag; }
  /// The bytes from address() to the end of the buffer (0 for raw
  /// addresses: the device may know them, Kernel::tune asks it).
  size_t bufferBytes() const { return BufferBytes; }
  /// "i32 5", "*f32 0x7f...".
  std::string str() const;
  /// A pointer argument `Bytes` further on (within the same buffer: the
  /// bytes left shrink; past the end, none are left). A scalar is returned
  /// unchanged.
  Arg advanced(size_t Bytes) const;

private:
  bool Pointer = false;
  bool Typed = false;
  ScalarType Type = ScalarType::I32;
  const void *Address = nullptr;
  const void *DeviceTag = nullptr;
  size_t BufferBytes = 0;
  uint64_t Bits = 0;
  unsigned char Storage[8] = {};
};

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

struct ParamInfo {
  std::string Name;
  ParamType Type;
  int64_t Div = 0;   ///< @div(N), 0 when absent
  int64_t Align = 0; ///< @align(N), 0 when absent
  /// A pointer param the kernel may write through (the manifest's
  /// "writes"; every pointer param when a bundle does not say): what the
  /// tuner saves and restores.
  bool Written = false;
};

/// What a device must have to run an image: the manifest's "requires"
/// (docs/bundle.md). Keys the manifest leaves out keep their defaults.
struct ImageRequirements {
  bool Present = false; ///< the manifest has a "requires" object
  /// Host: the CPU the image was compiled for ("znver4", "x86-64-v3").
  std::string Cpu;
  /// Host: LLVM's names of the CPU features it needs ("avx2", "fma").
  std::vector<std::string> Features;
  /// NVIDIA: the compute capability x 10 (90 for sm_90 and sm_90a); 0 when
  /// absent (the arch string says it then).
  unsigned Sm = 0;
  /// NVIDIA: an arch-specific image ("sm_90a") runs only on exactly Sm.
  bool ArchSpecific = false;
  /// NVIDIA PTX: the PTX ISA version x 10 (8.0 -> 80); 0 when absent.
  unsigned PtxIsa = 0;
  /// AMD: the processor ("gfx942"); the arch string may add target-ID
  /// features ("gfx90a:xnack+").
  std::string Gfx;
  /// AMD: the wavefront size the code was compiled for (32 or 64); 0 when
  /// absent.
  unsigned WaveSize = 0;
  /// AMD: the code object version (4 or 5); 0 when absent.
  unsigned CodeObject = 0;
  /// Emulated images: the GPU arch they emulate ("sm_80"); only the
  /// emulator device for that arch runs them (docs/emulator.md).
  std::string Emu;
};

/// What an image assumes of the arguments beyond the kernel's declared
/// promises: the manifest's "assumes". A launch uses the image only when
/// every assumption holds for its arguments.
struct ImageAssumptions {
  std::vector<std::string> Align16; ///< pointer params 16-byte aligned
  std::vector<std::string> Div16;   ///< integer params divisible by 16
  /// Conditions over the integer params, in the prefix form of launch
  /// conditions (docs/bundle.md), that hold (are non-zero).
  std::vector<std::string> Holds;
  size_t count() const { return Align16.size() + Div16.size() + Holds.size(); }
};

/// A TMA tensor map that an image's code object takes after the kernel's
/// parameters (the manifest's "tensor_maps", docs/bundle.md): a view of
/// the global memory a pointer param points to, that the image loads in
/// boxes with Hopper's tensor memory accelerator. The runtime evaluates it
/// from each launch's arguments; an image whose maps break TMA's
/// requirements for them is not used, as if its assumptions broke.
struct TensorMapInfo {
  std::string Param;                ///< the pointer param (the base)
  ScalarType Type = ScalarType::U8; ///< the element type
  /// One expression per dimension, outermost first (launch-condition
  /// prefix form); strides in elements, the innermost one 1.
  std::vector<std::string> Sizes, Strides;
  std::vector<int64_t> Box; ///< elements per dimension, outermost first
  int64_t Swizzle = 0;      ///< 0, 32, 64 or 128 (bytes)
};

struct ImageInfo {
  std::string Target; ///< "host", "native", "sm_90a": the --targets name
  std::string Triple;
  std::string Arch;
  std::string Entry;
  uint16_t ImageKind = 0;   ///< llvm::object::ImageKind
  uint16_t OffloadKind = 0; ///< llvm::object::OffloadKind
  uint64_t Offset = 0;      ///< of the code object in the bundle's bytes
  uint64_t Size = 0;
  std::string Resources;    ///< the manifest's "resources" object, as JSON
  ImageRequirements Requires;
  ImageAssumptions Assumes;
  /// Its tensor maps (sm_90a fast paths), in the order of the extra
  /// arguments.
  std::vector<TensorMapInfo> TensorMaps;
  /// The manifest index (every image of the manifest, in order) of the
  /// earlier image whose code object this one shares (identical code
  /// objects are stored once); -1 for its own.
  int64_t Shares = -1;
};

struct VariantInfo {
  unsigned Index = 0;
  /// One value per KernelInfo::ConstParams entry, in that order.
  std::vector<int64_t> ConstValues;
  std::vector<ImageInfo> Images;
};

struct KernelInfo {
  std::string Name;
  std::vector<ParamInfo> Params;
  std::vector<std::string> ConstParams;
  /// Per const param: true if it is a bool flag (values 0/1).
  std::vector<bool> ConstIsBool;
  /// Grid and launch conditions in the manifest's prefix form.
  std::vector<std::string> Grid;
  std::vector<std::string> Key;
  /// Per Key entry: true when its values are used exactly (`key (n:
  /// exact)`), false when bucketed to the next power of two.
  std::vector<bool> KeyExact;
  std::vector<std::string> LaunchConditions;
  std::vector<VariantInfo> Variants;
  /// The kernel's content hash (16 hex digits): its code and checked mode,
  /// not its tune space. The tuning database's key (docs/tuning.md).
  std::string Hash;
  /// A shipped tuning table (kiln compile --tuned): on a device (its
  /// TuneResult::DeviceKey), in a key bucket, launch this variant config.
  struct TunedChoice {
    std::string Device, Bucket, Variant;
  };
  std::vector<TunedChoice> Tuned;

  /// "softmax_v3".
  std::string variantName(const VariantInfo &V) const;
  /// "BLOCK=1024, warps=4, stages=2".
  std::string variantConfig(const VariantInfo &V) const;
};

namespace detail {
struct BundleData;
class DeviceImpl;
class StreamImpl;
class EventImpl;
class ModuleImpl;
} // namespace detail

/// What the runtime accepts from a bundle or a .npy file (docs/runtime.md,
/// "Limits"). Input over a limit is refused with an error naming it,
/// before anything of the size it claims is allocated.
namespace limits {
/// A bundle, in a file or in memory: 2 GiB.
constexpr uint64_t kMaxBundleBytes = uint64_t(1) << 31;
/// The manifest's JSON text: 16 MiB.
constexpr uint64_t kMaxManifestBytes = uint64_t(1) << 24;
/// Kernels in one bundle.
constexpr size_t kMaxKernels = 4096;
/// Variants of one kernel.
constexpr size_t kMaxVariants = 65536;
/// Code objects of one variant.
constexpr size_t kMaxImagesPerVariant = 256;
/// Runtime parameters of one kernel.
constexpr size_t kMaxParams = 256;
/// Strings of one offloading binary of the container.
constexpr uint64_t kMaxBinaryStrings = 4096;
/// A grid, key or condition expression: its text, and its nesting.
constexpr size_t kMaxExprBytes = size_t(1) << 16;
constexpr unsigned kMaxExprDepth = 128;
/// A .npy file's header (numpy writes under 200 bytes; numpy itself
/// refuses headers over 10000 bytes unless told otherwise).
constexpr size_t kMaxNpyHeaderBytes = 65536;
/// Dimensions of a .npy array (numpy 2's own limit).
constexpr size_t kMaxNpyRank = 64;
} // namespace limits

/// A parsed, validated bundle (docs/bundle.md): the container, the
/// manifest and the code objects. Immutable; copies share the data.
class Bundle {
public:
  /// Reads and validates a bundle file.
  static Expected<Bundle> readFile(const std::string &Path);
  /// Validates a bundle held in memory (the bytes are copied). `Name` is
  /// used in messages.
  static Expected<Bundle> readMemory(const void *Data, size_t Size,
                                     std::string Name = "<memory>");

  const std::string &name() const;
  const std::string &source() const;
  const std::vector<KernelInfo> &kernels() const;
  /// Null if the bundle has no kernel of that name.
  const KernelInfo *findKernel(std::string_view Name) const;
  /// The bytes of a code object.
  const uint8_t *imageData(const ImageInfo &Image) const;

  const std::shared_ptr<const detail::BundleData> &data() const { return Data; }

private:
  static Expected<Bundle> readOwned(std::vector<uint8_t> Bytes,
                                    std::string Name);
  explicit Bundle(std::shared_ptr<const detail::BundleData> Data)
      : Data(std::move(Data)) {}
  std::shared_ptr<const detail::BundleData> Data;
};

//===----------------------------------------------------------------------===//
// Devices, memory, streams, events
//===----------------------------------------------------------------------===//

enum class DeviceKind { Host, Cuda, Hip, Emulator };

/// What a device is and has (Device::properties()); 0 where unknown.
struct DeviceProperties {
  DeviceKind Kind = DeviceKind::Host;
  /// "NVIDIA H100 80GB HBM3"; the host: "host".
  std::string Model;
  /// "sm_90"; AMD: the target ID ("gfx942:sramecc+:xnack-"); the host:
  /// the best arch name it runs ("znver3", "generic").
  std::string Arch;
  unsigned ComputeUnits = 0;       ///< SMs, CUs; the host: worker threads
  uint64_t MemoryBytes = 0;        ///< device memory; host: physical memory
  uint64_t MaxSharedBytesPerBlock = 0; ///< GPUs (CUDA: the opt-in maximum)
  unsigned MaxThreadsPerBlock = 0; ///< GPUs
  unsigned WarpSize = 0;           ///< GPUs: 32, or AMD's wavefront size
  uint64_t MemoryClockKHz = 0;     ///< GPUs: peak memory clock
  unsigned MemoryBusBits = 0;      ///< GPUs: memory bus width
  /// GPUs: 2 x memory clock x bus width / 8, in GB/s (10^9 bytes).
  double PeakBandwidthGBs = 0;
  /// CUDA: cuDriverGetVersion (12040 for 12.4); HIP: hipDriverGetVersion
  /// (60241134 for 6.2).
  int DriverVersion = 0;
};

class Device;

/// Device memory, freed when the Buffer is destroyed.
class Buffer {
public:
  Buffer() = default;
  Buffer(Buffer &&Other) noexcept;
  Buffer &operator=(Buffer &&Other) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer();

  /// The device address (for the host device, a host address). On a GPU
  /// it must not be dereferenced on the host: move data with a Stream.
  void *data() const { return Ptr; }
  size_t size() const { return Size; }
  const void *deviceTag() const { return Dev.get(); }

private:
  friend class Device;
  std::shared_ptr<detail::DeviceImpl> Dev;
  void *Ptr = nullptr;
  size_t Size = 0;
};

class Event;

/// An in-order queue of copies, fills, launches and event records. On the
/// host device every operation completes before the call returns; code
/// written against the API must still synchronize before reading results
/// on the host, as it must on a GPU.
class Stream {
public:
  Stream();
  Stream(Stream &&) noexcept;
  Stream &operator=(Stream &&) noexcept;
  ~Stream();

  Error copyToDevice(Buffer &Dst, size_t DstOffset, const void *Src,
                     size_t Bytes);
  Error copyToHost(void *Dst, const Buffer &Src, size_t SrcOffset,
                   size_t Bytes);
  Error copy(Buffer &Dst, size_t DstOffset, const Buffer &Src,
             size_t SrcOffset, size_t Bytes);
  /// Sets `Bytes` bytes from `Offset` to `Value` (memset).
  Error fill(Buffer &Dst, size_t Offset, uint8_t Value, size_t Bytes);
  Error record(Event &E);
  Error synchronize();
  /// The device the stream belongs to (an error for an empty Stream).
  Expected<Device> device() const;

  detail::StreamImpl *impl() const { return Impl.get(); }
  const void *deviceTag() const { return Dev.get(); }

private:
  friend class Device;
  std::shared_ptr<detail::DeviceImpl> Dev;
  std::unique_ptr<detail::StreamImpl> Impl;
};

/// A point in a stream, for synchronization and timing.
class Event {
public:
  Event();
  Event(Event &&) noexcept;
  Event &operator=(Event &&) noexcept;
  ~Event();

  /// Waits until the work recorded before the event is done.
  Error synchronize();
  /// Milliseconds between two recorded events of the same device.
  static Expected<double> elapsedMilliseconds(const Event &Start,
                                              const Event &End);

  detail::EventImpl *impl() const { return Impl.get(); }

private:
  friend class Device;
  friend class Stream;
  std::shared_ptr<detail::DeviceImpl> Dev;
  std::unique_ptr<detail::EventImpl> Impl;
};

class Module;

/// Receives one line of kernel `print` output (without the newline).
using PrintHandler = std::function<void(const std::string &Line)>;

/// A device: "host", "cuda[:N]" (through the CUDA driver, libcuda.so.1),
/// "hip[:N]" (through HIP, libamdhip64), "emu:<arch>" (the CPU emulator of a
/// GPU).
class Device {
public:
  /// Opens a device. `Spec` is "auto" (CUDA device 0 if a driver and a
  /// device are there, else HIP device 0 if HIP and an AMD GPU are there,
  /// else the host), "host", "cuda", "cuda:N", "hip", "hip:N" or
  /// "emu:<arch>".
  static Expected<Device> open(std::string_view Spec = "auto");

  DeviceKind kind() const;
  /// "host", "cuda:0", "hip:0".
  std::string name() const;
  /// "host (16 threads)", "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs,
  /// 79.1 GiB, CUDA 12.4)", "hip:0 (AMD Instinct MI300X,
  /// gfx942:sramecc+:xnack-, 304 CUs, 192.0 GiB, 5300 GB/s, HIP 6.2)".
  std::string description() const;
  DeviceProperties properties() const;

  Expected<Buffer> allocate(size_t Bytes);
  Expected<Stream> createStream();
  Expected<Event> createEvent();

  /// Loads the code objects of a bundle that this device can run.
  Expected<Module> loadModule(const Bundle &B);
  Expected<Module> loadModuleFile(const std::string &Path);
  Expected<Module> loadModuleMemory(const void *Data, size_t Size,
                                    std::string Name = "<memory>");

  /// Where kernel `print` lines go (default: standard output). Set it
  /// before launching; it applies to later launches on this device.
  void setPrintHandler(PrintHandler Handler);

  const std::shared_ptr<detail::DeviceImpl> &impl() const { return Impl; }

private:
  friend class Module;
  friend class Stream;
  explicit Device(std::shared_ptr<detail::DeviceImpl> Impl)
      : Impl(std::move(Impl)) {}
  std::shared_ptr<detail::DeviceImpl> Impl;
};

//===----------------------------------------------------------------------===//
// Modules, kernels, launches
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Tuning (docs/tuning.md)
//===----------------------------------------------------------------------===//

/// How a launch chooses among its candidates (the variants that run on the
/// device and whose launch conditions hold) when there are several and the
/// launch does not name one.
enum class TuningMode {
  /// The default variant: the first candidate in variant order.
  Off,
  /// The fastest candidate the tuning database has a time for (for this
  /// kernel, device and key bucket); the default variant where it has
  /// none. Never measures.
  Cached,
  /// As Cached, but first measures every candidate the database lacks and
  /// records the times: the first launch of a new key bucket is slow.
  Full,
};

/// "off", "cached", "full".
std::string_view tuningModeName(TuningMode Mode);
/// Parses "off", "cached" or "full"; nullopt otherwise.
std::optional<TuningMode> parseTuningMode(std::string_view Text);

/// The process-wide mode: the last setTuningMode, else $KILN_TUNING (an
/// unknown value is warned about once and ignored), else Full.
TuningMode tuningMode();
void setTuningMode(TuningMode Mode);

/// The tuning database's file: the last setTuningDatabase, else
/// $KILN_CACHE_DIR/tuning.db, else $XDG_CACHE_HOME/kiln/tuning.db, else
/// $HOME/.cache/kiln/tuning.db. ":memory:" keeps measurements in this
/// process only; "" goes back to the default. A new path takes effect at
/// the next lookup.
std::string tuningDatabasePath();
void setTuningDatabase(std::string Path);

/// Receives the runtime's warnings (a variant that failed while being
/// measured, a corrupt database moved aside); the default writes
/// "kiln: warning: MESSAGE" to standard error. An empty handler restores
/// the default.
using WarningHandler = std::function<void(const std::string &Message)>;
void setWarningHandler(WarningHandler Handler);

/// One candidate's time in a tuning decision.
struct VariantTiming {
  unsigned Variant = 0;
  std::string Config;        ///< "BLOCK=1024, warps=4, stages=2"
  double Milliseconds = 0;   ///< the median of Repeats launches
  unsigned Repeats = 0;
  bool MeasuredNow = false;  ///< false: from the database
};

/// How a launch's variant was chosen.
enum class ChoiceSource {
  Only,     ///< one candidate: nothing to choose
  Pinned,   ///< LaunchOptions named it
  Default,  ///< tuning off, no time known (Cached), or Kernel::plan
  Database, ///< the fastest time in the tuning database
  Measured, ///< measured by this launch (Full), then the fastest
  Table,    ///< the bundle's shipped tuning table (kiln compile --tuned)
};
/// "only candidate", "pinned", "default", "tuning database", "measured",
/// "shipped table".
std::string_view choiceSourceName(ChoiceSource S);

/// A tuning decision: what Kernel::tune measured or found.
struct TuneResult {
  /// The key bucket: "cols=1024" (each key argument's next power of two),
  /// "" for a kernel without a key.
  std::string Bucket;
  /// The device as the database names it: "NVIDIA H100 80GB HBM3 / sm_90 /
  /// driver 13000".
  std::string DeviceKey;
  /// Every candidate with a time, fastest first.
  std::vector<VariantTiming> Timings;
  /// The candidates that failed to load or launch while being measured
  /// ("BLOCK=8192, warps=4: cannot load ...").
  std::vector<std::string> Failures;
  unsigned Candidates = 0;   ///< how many variants could run
  unsigned MeasuredNow = 0;  ///< how many were measured by this call
  double Seconds = 0;        ///< wall time of the call
};

/// How a launch picks its variant. Without an override, among several
/// candidates, the tuning mode decides (docs/tuning.md).
struct LaunchOptions {
  /// Const param values the variant must have ("BLOCK" = 1024, ...).
  std::vector<std::pair<std::string, int64_t>> Config;
  /// A variant index, instead of or on top of Config.
  std::optional<unsigned> Variant;
  /// This launch's tuning mode instead of the process-wide one.
  std::optional<TuningMode> Tuning;
};

/// What Kernel::tune measures.
struct TuneOptions {
  /// Measure every candidate again, even those the database has.
  bool Remeasure = false;
  /// Launches per measurement are chosen for about this much kernel time
  /// (at least 3, at most 50).
  double TargetMilliseconds = 10;
};

/// Parses "BLOCK=1024,warps=4" (bool values may be written true/false)
/// into LaunchOptions::Config.
Expected<std::vector<std::pair<std::string, int64_t>>>
parseConfig(std::string_view Text);

/// What a launch does (or did): the variant and the evaluated grid.
struct LaunchPlan {
  unsigned Variant = 0;
  /// The code object that runs: an index into the variant's
  /// VariantInfo::Images (the best one this device runs whose assumptions
  /// hold for the arguments). A launch's plan names the image that ran:
  /// where the driver refused to encode a tensor map of the planned one,
  /// the next whose assumptions hold (docs/runtime.md, "Tensor maps"); a
  /// plan from Kernel::plan names the one planned.
  unsigned Image = 0;
  std::string VariantName; ///< "softmax_v3"
  std::string Config;      ///< "BLOCK=1024, warps=4, stages=2"
  int64_t Grid[3] = {1, 1, 1};
  /// Grid[0] * Grid[1] * Grid[2].
  uint64_t programs() const;
  /// How the variant was chosen, the key bucket ("" without a key), and
  /// for ChoiceSource::Measured how many candidates this launch measured
  /// and the wall time it took.
  ChoiceSource Source = ChoiceSource::Only;
  std::string Bucket;
  unsigned Measured = 0;
  double TuningSeconds = 0;
};

/// A kernel of a loaded module.
class Kernel {
public:
  const KernelInfo &info() const;
  const std::string &name() const { return info().Name; }

  /// Checks the arguments against the parameters (count, kinds, types,
  /// @div and @align promises), selects the variant and evaluates its grid,
  /// without launching. It does not consult tuning: among several
  /// candidates it plans the default one (Source Default; Only or Pinned
  /// otherwise), which a launch may replace by tuning.
  Expected<LaunchPlan> plan(const std::vector<Arg> &Args,
                            const LaunchOptions &Options = {}) const;
  /// Loads the code objects of the variant with this index that this
  /// device runs now, so that a first launch of it (which would load the
  /// one it needs) is not slowed down.
  Error load(unsigned Variant) const;
  /// Loads the one code object that `Plan` (from plan()) runs.
  Error load(const LaunchPlan &Plan) const;
  /// plan() and then launches on `S` (nothing runs if a grid axis is 0).
  /// With several candidates and tuning not off, the variant comes from
  /// the tuning database, and in Full mode a new key bucket is measured
  /// first (as tune() does); the buffers the kernel may write are restored
  /// before the real launch, so the results are those of an untuned
  /// launch of the chosen variant.
  Expected<LaunchPlan> launch(Stream &S, const std::vector<Arg> &Args,
                              const LaunchOptions &Options = {}) const;
  /// Measures the candidates for these arguments that the tuning database
  /// lacks (all of them with Remeasure) and records their times, leaving
  /// every buffer as it was. Synchronizes `S`. Pointer arguments the
  /// kernel may write must be Buffers or addresses inside allocations the
  /// device knows (a raw host address is refused).
  Expected<TuneResult> tune(Stream &S, const std::vector<Arg> &Args,
                            const TuneOptions &Options = {}) const;

private:
  friend class Module;
  Kernel(std::shared_ptr<detail::ModuleImpl> M, unsigned Index)
      : M(std::move(M)), Index(Index) {}
  std::shared_ptr<detail::ModuleImpl> M;
  unsigned Index;
};

/// A bundle loaded on a device.
class Module {
public:
  /// The named kernel; an unknown name gives an error that lists the
  /// kernels and suggests the nearest one.
  Expected<Kernel> kernel(std::string_view Name) const;
  std::vector<std::string> kernelNames() const;
  const Bundle &bundle() const;
  Device device() const;

private:
  friend class Device;
  explicit Module(std::shared_ptr<detail::ModuleImpl> Impl)
      : Impl(std::move(Impl)) {}
  std::shared_ptr<detail::ModuleImpl> Impl;
};

/// The closest of `Candidates` to `Name` by edit distance, or "" if none is
/// close enough to suggest.
std::string nearestName(std::string_view Name,
                        const std::vector<std::string> &Candidates);

} // namespace kiln::rt

#endif // KILN_RUNTIME_H
