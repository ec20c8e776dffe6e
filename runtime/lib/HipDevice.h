//===- HipDevice.h - The HIP device, internals ------------------*- C++ -*-===//
//
// Which AMD code objects a device runs (docs/runtime.md, "The HIP
// device"), as plain functions of an ImageInfo and the device's target ID,
// so that tests can check them without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HIPDEVICE_H
#define KILN_RUNTIME_HIPDEVICE_H

#include "Internal.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt::detail {

constexpr uint16_t kImageObject = 1; ///< llvm::object::IMG_Object

/// An AMDGPU target ID: a processor and target features with their
/// setting, "gfx942:sramecc+:xnack-" -> {"gfx942", {{"sramecc", true},
/// {"xnack", false}}}. A feature left out means "any".
struct AmdTargetId {
  std::string Processor;
  std::vector<std::pair<std::string, bool>> Features;
  /// The setting of a feature, if the ID names it.
  std::optional<bool> feature(std::string_view Name) const;
  /// "gfx942:sramecc+:xnack-".
  std::string str() const;
};
/// Parses "gfx942", "gfx90a:xnack+", "gfx942:sramecc+:xnack-"; nullopt if
/// it is not a gfx processor followed by name+ / name- features.
std::optional<AmdTargetId> parseAmdTargetId(std::string_view Id);

/// What a HIP device runs.
struct HipTarget {
  AmdTargetId Id;
  unsigned WaveSize = 64;
  int RuntimeVersion = 0; ///< hipDriverGetVersion: 60241134 for 6.2
};

/// "6.2" for 60241134 (major x 10^7 + minor x 10^5 + patch).
std::string hipVersionString(int Version);

/// How well a device runs an image: 0 if it cannot; an AMD code object
/// for the device's processor whose target features agree (a feature the
/// image leaves out is "any") runs, one that names more of the device's
/// features first.
int rankHipImage(const ImageInfo &Image, const HipTarget &T);
/// Why not, for "no image" messages ("built for xnack+"); "" if it runs,
/// is no AMD image, or is for another processor (its arch says so).
std::string whyNotHip(const ImageInfo &Image, const HipTarget &T);
/// "gfx942:sramecc+:xnack-: code objects for gfx942 (wave64)".
std::string describeHipTarget(const HipTarget &T);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_HIPDEVICE_H
