//===- Bundle.h - The contents of a .kpack bundle --------------*- C++ -*-===//
//
// Plain data for the bundle writer and reader (docs/bundle.md is the
// contract): the launch metadata of every kernel and its variants, and one
// image per (kernel, variant, target). No MLIR here: the driver fills these
// from the AST and the specialized module (KernelMetadata.h), backends
// provide the images.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_BUNDLE_BUNDLE_H
#define KILN_COMPILER_BUNDLE_BUNDLE_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::bundle {

/// The bundle format versions this compiler reads: kMinFormatVersion to
/// kFormatVersion. A new version comes whenever a reader of the previous
/// one would misread a new bundle. The writer writes the oldest version
/// that holds the bundle: 4 when an image has tensor maps, else 3.
constexpr unsigned kMinFormatVersion = 3;
constexpr unsigned kFormatVersion = 4;
/// The version that added images' `tensor_maps`.
constexpr unsigned kTensorMapsFormatVersion = 4;
/// `kiln.format` of the manifest binary and `format` of its JSON.
constexpr const char *kFormatName = "kiln-bundle";

/// A runtime parameter as the language declares it. The MLIR types lose
/// signedness and bool-ness, so the type is the language's spelling.
struct ParamSignature {
  std::string name;
  std::string type;  ///< "*f32", "i32", "u64", "bool", "f16", ...
  int64_t align = 0; ///< @align(N) on a pointer; 0 without one.
  int64_t div = 0;   ///< @div(N) on an integer; 0 without one.
};

struct KernelSignature {
  std::string name;
  std::vector<ParamSignature> params; ///< In declaration order.
  /// Const params in declaration order, then `warps` and `stages`.
  std::vector<std::string> constParams;
};

struct VariantMetadata {
  int64_t index = 0;
  /// One value per const param, in KernelSignature::constParams order.
  std::vector<std::pair<std::string, int64_t>> constValues;
};

struct KernelMetadata {
  KernelSignature signature;
  std::vector<std::string> grid;             ///< Prefix form, one per axis.
  std::vector<std::string> key;              ///< Names of params.
  /// Per key param, "pow2" or "exact"; empty: every key is "pow2".
  std::vector<std::string> keyBuckets;
  std::vector<std::string> launchConditions; ///< Prefix form.
  std::vector<VariantMetadata> variants;     ///< By increasing index.
  /// The pointer params that some variant may write through (a store, an
  /// atomic), in declaration order: what the runtime tuner saves and
  /// restores (docs/tuning.md).
  std::vector<std::string> writes;
  /// The kernel's content hash (16 hex digits; empty: not computed): the
  /// tuning database's key for its measurements. It covers the kernel's
  /// code and the checked mode, not its tune space, so that adding a
  /// variant keeps the other variants' measurements.
  std::string hash;
  /// A shipped tuning table's choices for this kernel (kiln compile
  /// --tuned): which variant to launch on a device in a key bucket.
  struct TunedChoice {
    std::string device, bucket, variant;
  };
  std::vector<TunedChoice> tuned;
};

/// One code object of one (kernel, variant, target).
struct Image {
  std::string kernel;
  int64_t variant = 0;
  std::string target;        ///< As requested: "host", "sm_90a", ...
  std::string triple;
  std::string arch;
  std::string entry;         ///< The symbol to call, e.g. "softmax_v3".
  uint16_t imageKind = 0;    ///< llvm::object::ImageKind
  uint16_t offloadKind = 0;  ///< llvm::object::OffloadKind
  std::string resourcesJson = "{}"; ///< A JSON object.
  std::string requiresJson = "{}";  ///< A JSON object; "{}": not written.
  std::string assumesJson = "{}";   ///< A JSON object; "{}": not written.
  /// A JSON array of tensor maps (docs/bundle.md, "tensor_maps"); "[]":
  /// none, not written.
  std::string tensorMapsJson = "[]";
  std::string bytes;
  /// Reader only: the manifest index of the image whose code object this
  /// one shares (its bytes are copied here); -1 for its own. The writer
  /// decides sharing itself: identical code objects are stored once.
  int64_t shares = -1;
};

struct Bundle {
  std::string source;  ///< Base name of the compiled file.
  std::string hostCpu; ///< Arch of the `host` target's images; may be empty.
  std::vector<KernelMetadata> kernels; ///< In source order.
  std::vector<Image> images;           ///< Any order for the writer.
};

} // namespace kiln::bundle

#endif // KILN_COMPILER_BUNDLE_BUNDLE_H
