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

/// Runs a copy of `variant` through buildGPUStagePipeline(arch) with its
/// kernel named `entry`, then the passes `addBackendPasses` adds (none when
/// null). `what` ("NVIDIA", "emulated") and `targetName` name the lowering
/// in failure messages; limits are reported against `arch`.
llvm::Expected<StagedVariant> runGPUStage(
    mlir::ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
    llvm::StringRef what, llvm::StringRef targetName,
    llvm::function_ref<void(mlir::OpPassManager &)> addBackendPasses);

/// addFastPathAssumptions(module, target) less the align16/div16
/// assumptions that leave the per-thread code of the GPU stage for `arch`
/// as it is (each tried without, in turn, against the full set): the fast
/// path then runs for more arguments (a flag that only selects a branch,
/// a batch size that only bounds a view's outer dimension) at the same
/// speed. Costs one GPU stage per assumed parameter.
FastPathAssumptions addUsefulFastPathAssumptions(mlir::ModuleOp module,
                                                 llvm::StringRef arch,
                                                 const GPUTarget &target);

/// One variant's images, and text that identifies their code up to the
/// kernel's name (PTX, AMDGCN assembly, the per-thread form).
struct VariantImages {
  std::vector<CodeObject> images;
  std::string code;
};

/// The images of `variant` (entry `entry`) and, unless the fast path's
/// assumptions for `arch` (addFastPathAssumptions: 16-byte aligned
/// pointers, integers multiples of 16, bounded view strides) leave its code
/// unchanged, those of its fast path (entry
/// `entry_a16`), marked with the assumptions: what every GPU backend's
/// compileImages does, with its own `compileOne`. The code compared is the
/// per-thread form's (perThreadCode) with `comparePerThread` (cheaper than
/// compiling: the fast path is then compiled only when it differs), else
/// compileOne's `code`.
using CompileOneFn = llvm::function_ref<llvm::Expected<VariantImages>(
    mlir::ModuleOp, llvm::StringRef)>;
llvm::Expected<std::vector<CodeObject>>
compileWithFastPath(mlir::ModuleOp variant, llvm::StringRef arch,
                    llvm::StringRef entry, CompileOneFn compileOne,
                    bool comparePerThread = false);

/// The per-thread form of `module` after the GPU stage for `arch` (its
/// kernel named alike whatever `module` names it; the kernels' argument
/// attributes, the promises, left out), or "" when the stage fails: equal
/// texts make equal code on every backend (none reads the attributes).
std::string perThreadCode(mlir::ModuleOp module, llvm::StringRef arch);

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
                llvm::StringRef entry) override;
  bool makeFastPath(mlir::ModuleOp variant, llvm::StringRef arch) override;

protected:
  /// Registers the backend's target descriptions (once).
  virtual void registerTargets() const = 0;
  /// The images of `variant` for `arch` with its kernel named `entry`, and
  /// the text that identifies their code.
  virtual llvm::Expected<VariantImages>
  compileOne(mlir::ModuleOp variant, llvm::StringRef arch,
             llvm::StringRef entry) = 0;
};

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_STAGEDRIVER_H
