//===- TargetBackend.h - The one interface backends implement --*- C++ -*-===//
//
// Vendor code lives under codegen/; the driver and the bundle writer see a
// backend only through this interface (STYLE.md habit 6). A backend turns
// one specialized variant module (a `builtin.module` holding one kernel
// `func.func` with static shapes, as `tile-specialize` produces) into code
// objects for one architecture.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_TARGETBACKEND_H
#define KILN_COMPILER_TARGET_TARGETBACKEND_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// One code object for one (kernel, variant, target).
struct CodeObject {
  std::string triple;        ///< e.g. "x86_64-unknown-linux-gnu"
  std::string arch;          ///< e.g. "x86-64-v2", "sm_90a", "gfx942"
  std::string entry;         ///< symbol the runtime calls, e.g. "softmax_v3"
  uint16_t imageKind = 0;    ///< llvm::object::ImageKind
  uint16_t offloadKind = 0;  ///< llvm::object::OffloadKind
  std::string bytes;         ///< the image
  std::string resourcesJson = "{}"; ///< registers, shared memory, spills...
  /// What a device must have to run it (docs/bundle.md, "requires"): host
  /// {"cpu", "features"}, NVIDIA {"sm", "arch_specific", "ptx_isa"}.
  std::string requiresJson = "{}";
  /// What it assumes of the arguments (docs/bundle.md, "assumes"):
  /// {"align16": [pointer params], "div16": [integer params],
  /// "holds": [conditions over the integer params]}.
  std::string assumesJson = "{}";
  /// The tensor maps the image takes after the params (docs/bundle.md,
  /// "tensor_maps"): a JSON array; "[]": none.
  std::string tensorMapsJson = "[]";
  /// What identifies its code within one compile (CodeCache.h: the key of
  /// the build that made it and its position there); "": none. Not
  /// written to bundles.
  std::string codeKey;
};

/// A variant that does not fit the target (shared memory, threads): the
/// driver drops it with a note instead of failing, and fails only when no
/// variant of a kernel is left for the target.
class ResourceLimitError : public llvm::ErrorInfo<ResourceLimitError> {
public:
  static char ID;
  explicit ResourceLimitError(std::string message)
      : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  const std::string &getMessage() const { return message; }

private:
  std::string message;
};

/// Which of a variant's images compileImages builds. A GPU variant has a
/// generic image (any arguments) and, where the fast path's assumptions
/// change its code, a fast-path image; `kiln compile --generic-images`
/// decides which variants get both (docs/codegen-gpu.md, "Which variants
/// get a generic image").
enum class ImageSet {
  All,      ///< the generic image and the fast path's
  FastPath, ///< the fast path's; the generic one where it is the only image
  Generic,  ///< the generic image alone
};

class TargetBackend {
public:
  virtual ~TargetBackend();
  /// "host", "nvptx" or "amdgpu".
  virtual llvm::StringRef getName() const = 0;
  /// True if this backend compiles for `arch` ("host", "native",
  /// "sm_90a", "gfx942", ...).
  virtual bool handlesArch(llvm::StringRef arch) const = 0;
  /// True when every variant's code object names its entry by the kernel
  /// alone ("softmax", not "softmax_v3"): each variant is a code object of
  /// its own, so variants whose code is the same (the host's, differing
  /// only in warps or stages) give the same bytes, which a bundle stores
  /// once.
  virtual bool kernelNamedEntries() const { return false; }
  /// Compiles one specialized variant module. `entry` is the symbol name
  /// the code object must export for the kernel. User errors in the module
  /// (e.g. something the target cannot express) are emitted as MLIR
  /// diagnostics and returned as an error; environment failures (linker,
  /// assembler) are returned as llvm::Error.
  virtual llvm::Expected<CodeObject> compile(mlir::ModuleOp variant,
                                             llvm::StringRef arch,
                                             llvm::StringRef entry) = 0;
  /// Every code object of one variant for `arch`: by default the one of
  /// compile(); a GPU backend adds, e.g., a cubin beside the PTX and a
  /// fast-path image that assumes 16-byte alignment (its `assumesJson`
  /// says what), which the runtime picks from the actual arguments; `set`
  /// says which of them (a backend without fast paths has one image,
  /// generic, for every set).
  virtual llvm::Expected<std::vector<CodeObject>>
  compileImages(mlir::ModuleOp variant, llvm::StringRef arch,
                llvm::StringRef entry, ImageSet set = ImageSet::All);
  /// The stages this backend can show (`kiln compile --emit=STAGE`), e.g.
  /// {"gpu", "llvm", "ptx", "cubin"}; binary stages are listed by
  /// isBinaryStage.
  virtual std::vector<std::string> getStages() const { return {}; }
  virtual bool isBinaryStage(llvm::StringRef stage) const { return false; }
  /// Turns `variant` into its fast-path image's module for `arch` (what
  /// compileImages compiles as the second image; `kiln compile --emit=STAGE
  /// --fast-path` shows it), returning false when the variant has none.
  virtual bool makeFastPath(mlir::ModuleOp variant, llvm::StringRef arch) {
    return false;
  }
  /// Makes equal in `variant` what this backend's code for `arch` does not
  /// depend on (the AMD targets pipeline any `stages` from 2 up alike: it
  /// becomes 2), so that variants whose modules then print the same are
  /// compiled once for `arch` (the driver gives the later ones the first
  /// one's code objects; it keeps apart variants whose launch conditions
  /// read different const-param values, which tile-gpu-bind-launch-
  /// conditions builds into the code). By default nothing.
  virtual void canonicalizeVariant(mlir::ModuleOp variant,
                                   llvm::StringRef arch) {}
  /// One variant at `stage` (text or bytes). User errors are diagnostics;
  /// a missing tool (e.g. ptxas for a cubin) is an llvm::Error.
  virtual llvm::Expected<std::string> emitStage(mlir::ModuleOp variant,
                                                llvm::StringRef arch,
                                                llvm::StringRef entry,
                                                llvm::StringRef stage);
  /// A backend-specific option for the compiles that follow (the AMD
  /// backend's "code-object" version, from --amdgpu-code-object). An
  /// option the backend does not have, or a value it refuses, is an error
  /// that says which values it takes.
  virtual llvm::Error setOption(llvm::StringRef name, llvm::StringRef value);
};

/// Backends built into this binary (those whose KILN_ENABLE_* option is
/// on), registered at start-up by registerBuiltinBackends().
void registerBackend(std::unique_ptr<TargetBackend> backend);
TargetBackend *lookupBackendForArch(llvm::StringRef arch);
std::vector<TargetBackend *> getRegisteredBackends();

} // namespace kiln

#endif // KILN_COMPILER_TARGET_TARGETBACKEND_H
