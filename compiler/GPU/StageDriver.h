//===- StageDriver.h - A variant through the GPU stage ----------*- C++ -*-===//
//
// What every GPU backend (codegen/nvptx, codegen/amdgpu, codegen/emu)
// does with a variant before its own lowering: clone it, name its kernel,
// check the threads per program against the target, run the GPU stage,
// read the warps and shared memory it decided and check those too (a
// kiln::ResourceLimitError, which the driver turns into a dropped variant),
// then run the backend's passes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_STAGEDRIVER_H
#define KILN_COMPILER_GPU_STAGEDRIVER_H

#include "compiler/Target/TargetBackend.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln {
struct CodeObject;
}

namespace kiln::gpu {

struct GPUTarget;
struct FastPathAssumptions;

/// A variant after the GPU stage (and the backend's passes).
struct StagedVariant {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  const GPUTarget *target = nullptr;
  int64_t warps = 4;       ///< warps per program
  int64_t sharedBytes = 0; ///< the program's shared memory
  /// The recipes of the tensor maps the code reads (a JSON array,
  /// docs/bundle.md "tensor_maps"); "" when none.
  std::string tensorMaps;
};

/// How a backend names its lowering in failure messages: `what`
/// ("NVIDIA", "emulated") and the target (`sm_90a`, `emu:sm_90a`).
struct StageNames {
  std::string what, target;
  /// The stage's phase in `kiln compile --time-report`.
  const char *phase = "GPU stage";
};

/// A backend's lowering after the GPU stage: its name in failure
/// messages, the dialects it creates and translates to LLVM IR, its passes
/// (from the per-thread form to the LLVM dialect).
struct BackendLowering {
  const char *what;
  void (*registerDialects)(mlir::DialectRegistry &);
  void (*addPasses)(mlir::OpPassManager &);

  StageNames names(llvm::StringRef target) const {
    return {what, target.str()};
  }
  /// Registers and loads the dialects in `ctx`.
  void loadDialects(mlir::MLIRContext &ctx) const;
  /// `variant` through the GPU stage for `arch` with its kernel named
  /// `entry` (runGPUStage), then, unless `gpuOnly`, through the passes.
  llvm::Expected<StagedVariant> lower(mlir::ModuleOp variant,
                                      llvm::StringRef arch,
                                      llvm::StringRef entry,
                                      llvm::StringRef target,
                                      bool gpuOnly) const;
};

/// A fast-path trial against its reference (addUsefulFastPathAssumptions):
/// the reference's stage records its module's code (moduleCode) after
/// pipelining, the first of the stage's two parts (buildGPUStagePart); a
/// trial's compares its own there and stops, failing, when it differs:
/// the rest of the stage then runs on a different input. (Equal there, a
/// trial runs to the end: the per-thread conversion reads the
/// assumptions too.)
struct StageCheckpoints {
  std::string *record = nullptr;
  const std::string *compare = nullptr;
};

/// Runs a copy of `variant` through buildGPUStagePipeline(arch) with its
/// kernel named `entry`, then the passes `addBackendPasses` adds (none when
/// null; see lowerStagedVariant). Limits are reported against `arch`.
llvm::Expected<StagedVariant> runGPUStage(
    mlir::ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
    const StageNames &names,
    llvm::function_ref<void(mlir::OpPassManager &)> addBackendPasses,
    StageCheckpoints checkpoints = {});

/// Names the kernel of a variant after the GPU stage `entry` and runs the
/// backend's passes on it.
llvm::Error
lowerStagedVariant(StagedVariant &staged, llvm::StringRef entry,
                   const StageNames &names,
                   llvm::function_ref<void(mlir::OpPassManager &)> addPasses);

/// addFastPathAssumptions(module, target) less the align16/div16
/// assumptions that leave the per-thread code of the GPU stage for `arch`
/// as it is (each tried without, in turn, against the full set): the fast
/// path then runs for more arguments (a flag that only selects a branch,
/// a batch size that only bounds a view's outer dimension) at the same
/// speed. Costs one GPU stage per assumed parameter, but none when the
/// full set makes the per-thread code `generic` (when given) already: then
/// no assumption is added. `staged`, when given, receives `module` through
/// the GPU stage with the assumptions kept (nothing with none, or when the
/// stage fails on the full set).
/// The generic form for addUsefulFastPathAssumptions when the caller has
/// not run it (compileWithFastPath for ImageSet::FastPath): `variant` goes
/// through the stage after the reference, as a trial, stopping after
/// pipelining where it differs (then the variant has a fast path and its
/// generic form is not needed); when it makes the reference's code instead,
/// `staged` receives it.
struct LazyGeneric {
  mlir::ModuleOp variant;
  StagedVariant *staged = nullptr;
};

FastPathAssumptions addUsefulFastPathAssumptions(
    mlir::ModuleOp module, llvm::StringRef arch, const GPUTarget &target,
    const std::string *generic = nullptr, StagedVariant *staged = nullptr,
    const LazyGeneric *lazyGeneric = nullptr);

/// The images of `variant` (entry `entry`) and, unless the fast path's
/// assumptions for `arch` (addFastPathAssumptions: 16-byte aligned
/// pointers, integers multiples of 16, bounded view strides) leave its
/// per-thread code unchanged, those of its fast path (entry `entry_a16`),
/// marked with the assumptions: what every GPU backend's compileImages
/// does, through its `lowering` (`target` names it in messages) and its
/// own `compileOne` (which takes a variant in the LLVM dialect). Each form
/// goes through the stage once (plus the trials of
/// addUsefulFastPathAssumptions), and equal code keys (CodeCache.h) drop a
/// fast path whose code came out the same after all. `set` narrows that:
/// ImageSet::Generic builds the generic image alone (no trials);
/// ImageSet::FastPath the fast path's alone, or the generic image where
/// the variant has no fast path (no assumption changes its code, or the
/// fast path is over a limit of `arch`).
using CompileOneFn = llvm::function_ref<llvm::Expected<
    std::vector<CodeObject>>(StagedVariant &, llvm::StringRef)>;
llvm::Expected<std::vector<CodeObject>>
compileWithFastPath(mlir::ModuleOp variant, llvm::StringRef arch,
                    llvm::StringRef entry, const BackendLowering &lowering,
                    llvm::StringRef target, CompileOneFn compileOne,
                    ImageSet set = ImageSet::All);

/// Adds the fast path's useful assumptions for `arch` to `variant`
/// (addUsefulFastPathAssumptions against its generic per-thread code);
/// false when there are none (every argument promised, or no assumption
/// changes the code).
bool makeFastPath(mlir::ModuleOp variant, llvm::StringRef arch,
                  const BackendLowering &lowering, llvm::StringRef target);

/// What GPUBackend::canonicalizeVariant does for `target`, for every GPU
/// backend: on a target without asynchronous or tensor copies
/// tile-gpu-pipeline runs the loads one iteration ahead through registers
/// whatever `stages` says from 2 up, so such a `stages` becomes 2.
void canonicalizeStages(mlir::ModuleOp variant, const GPUTarget &target);

/// The per-thread form of a variant after the GPU stage as text, its
/// kernel named alike whatever `staged` names it and the kernels'
/// argument attributes, the promises, left out: equal texts make equal
/// code on every backend (none reads the attributes).
std::string perThreadCode(const StagedVariant &staged);

/// The same text for a module at any point of the stage.
std::string moduleCode(mlir::ModuleOp module);

/// What the GPU backends that compile a variant to one code object per
/// entry share (codegen/nvptx, codegen/amdgpu): they handle the archs whose
/// target description names them as its backend, and compile a variant
/// through their compileOne, its fast path through compileWithFastPath.
class GPUBackend : public TargetBackend {
public:
  bool handlesArch(llvm::StringRef arch) const override;
  llvm::Expected<CodeObject> compile(mlir::ModuleOp variant,
                                     llvm::StringRef arch,
                                     llvm::StringRef entry) override;
  llvm::Expected<std::vector<CodeObject>>
  compileImages(mlir::ModuleOp variant, llvm::StringRef arch,
                llvm::StringRef entry, ImageSet set) override;
  bool makeFastPath(mlir::ModuleOp variant, llvm::StringRef arch) override;
  void canonicalizeVariant(mlir::ModuleOp variant,
                           llvm::StringRef arch) override;

protected:
  /// Registers the backend's target descriptions (once).
  virtual void registerTargets() const = 0;
  /// Its lowering after the GPU stage.
  virtual const BackendLowering &lowering() const = 0;
  /// The images of a variant in the LLVM dialect (after the GPU stage and
  /// lowering()'s passes) for `arch`, its kernel named `entry`, built
  /// through buildOnce (CodeCache.h).
  virtual llvm::Expected<std::vector<CodeObject>>
  compileOne(StagedVariant &lowered, llvm::StringRef arch,
             llvm::StringRef entry) = 0;
};

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_STAGEDRIVER_H
