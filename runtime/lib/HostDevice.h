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

#include <string>
#include <utility>
#include <vector>

namespace kiln::rt::detail {

/// The triple and CPU names this process can run, best first.
struct HostTarget {
  std::string Triple;     ///< e.g. x86_64-unknown-linux-gnu
  std::string TripleArch; ///< e.g. x86_64
  /// Accepted `arch` strings with their rank (higher is preferred).
  std::vector<std::pair<std::string, int>> Archs;

  /// 0 if this process cannot run the image, else its rank.
  int rank(const ImageInfo &Image) const;
  /// "x86_64-unknown-linux-gnu: znver3, x86-64-v3, x86-64-v2, generic".
  std::string describe() const;
};

/// Computed once: the CPU's features (x86-64-v2/v3/v4 levels via
/// __builtin_cpu_supports), its name where the compiler can tell
/// (__builtin_cpu_is), and $KILN_HOST_CPU if set.
const HostTarget &hostTarget();

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
