//===- Internal.h - Runtime internals shared by the library -----*- C++ -*-===//
//
// The driver interface (DeviceImpl: one implementation per device kind,
// host today; CUDA and HIP through dlopen later), the parsed bundle, and
// the loaded module. Nothing here is installed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

#include "Expr.h"
#include "kiln/runtime.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt::detail {

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//

/// The expressions of a kernel, parsed with its names resolved.
struct KernelExprs {
  std::vector<Expr> Grid;
  std::vector<Expr> Conditions;
};

struct BundleData {
  std::string Name;
  std::string Source;
  std::string HostCpu;
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

/// The one format version this runtime reads.
constexpr unsigned kFormatVersion = 1;
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

/// The driver interface: one implementation per device kind.
class DeviceImpl {
public:
  virtual ~DeviceImpl();

  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;

  virtual Expected<void *> allocate(size_t Bytes) = 0;
  virtual void release(void *Ptr) = 0;

  virtual Expected<std::unique_ptr<StreamImpl>> createStream() = 0;
  virtual Expected<std::unique_ptr<EventImpl>> createEvent() = 0;
  /// Copies between host and device memory or within a device, in stream
  /// order (either pointer may be a host or a device address).
  virtual Error copy(StreamImpl &S, void *Dst, const void *Src,
                     size_t Bytes) = 0;
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
  /// What this device runs, for "no image" messages:
  /// "host (x86_64-unknown-linux-gnu: x86-64-v3, x86-64-v2, generic)".
  virtual std::string targetDescription() const = 0;
  virtual Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) = 0;
  /// The largest extent of a grid axis.
  virtual int64_t maxGridAxis(unsigned Axis) const = 0;
  /// Runs every program of `Grid` (no axis is 0). `Args[i]` points to the
  /// i-th argument's value, as the host ABI wants it.
  virtual Error launch(StreamImpl &S, LoadedImage &Image, void **Args,
                       const GridDims &Grid) = 0;

  virtual void setPrintHandler(PrintHandler Handler) = 0;
};

Expected<std::shared_ptr<DeviceImpl>> openHostDevice();

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

struct VariantState {
  int Image = -1; ///< index into VariantInfo::Images; -1: none runs here
  std::unique_ptr<LoadedImage> Loaded;
  Error LoadError; ///< set once a load failed; not retried
};

struct KernelState {
  std::vector<VariantState> Variants;
  /// Why no variant can run here (empty if one can).
  std::string NoImageMessage;
};

class ModuleImpl {
public:
  std::shared_ptr<DeviceImpl> Device;
  Bundle TheBundle;
  std::vector<KernelState> Kernels;
  std::mutex LoadMutex;

  ModuleImpl(std::shared_ptr<DeviceImpl> Device, Bundle B)
      : Device(std::move(Device)), TheBundle(std::move(B)) {}

  /// Loads (once) the code object of a variant.
  Expected<LoadedImage *> loadVariant(unsigned Kernel, unsigned Variant);
};

/// "a, b, c".
std::string joinNames(const std::vector<std::string> &Names);

/// The whole contents of the file at `Path` (IO / OutOfMemory errors name
/// the path).
Expected<std::vector<uint8_t>> readWholeFile(const std::string &Path);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_INTERNAL_H
