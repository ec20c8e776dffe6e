//===- StageUtils.h - Shared helpers of the GPU stage's passes --*- C++ -*-===//
#ifndef KILN_COMPILER_GPU_STAGEUTILS_H
#define KILN_COMPILER_GPU_STAGEUTILS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln::gpu {

struct GPUTarget;

/// What every pass of the stage needs to know of the variant it compiles.
struct StageConfig {
  const GPUTarget *target = nullptr;
  int32_t warps = 4;
};

/// The target and warp count of a variant module: `targetOption` (a pass
/// option; empty: the module's `kiln_gpu.target` attribute) and
/// `warpsOption` (> 0; else `kiln_gpu.warps`, else the `warps` of the
/// module's `kiln.variant`, else 4). Records both on the module. Emits an
/// error naming the registered archs when the target is unknown.
mlir::FailureOr<StageConfig> getStageConfig(mlir::ModuleOp module,
                                            llvm::StringRef targetOption,
                                            int32_t warpsOption);

/// Ops that compute their result in any layout, with every tile operand in
/// that same layout: splats, aranges, splat constants, pointer offsets,
/// comparisons, selects and other side-effect-free elementwise ops. Layout
/// assignment pushes layouts through them; conversion removal recomputes
/// them.
bool computesInAnyLayout(mlir::Operation *op);

/// The fast path of a variant (docs/codegen-gpu.md): marks the kernel's
/// pointer parameters without `@align` `kiln.align = 16` and its integer
/// parameters (32 and 64 bits) without `@div` `kiln.div = 16`, as Triton
/// specializes at launch. Returns the image's `assumes` JSON naming them
/// ({"align16": [...], "div16": [...]}), or "" when every parameter has a
/// promise (no fast path).
std::string addFastPathAssumptions(mlir::ModuleOp module);

/// For Kiln's own negative tests of the emulator (docs/emulator.md): the
/// value of fault `name` in $KILN_TEST_FAULT ("drop-barrier=0",
/// "swap-mma-lanes"; comma-separated), or nullopt. A fault makes the GPU
/// stage miscompile on purpose: drop-barrier=N leaves out the Nth barrier
/// that tile-gpu-insert-barriers would insert; swap-mma-lanes exchanges
/// lanes 0 and 1's A registers before each matrix instruction.
std::optional<int> getTestFault(llvm::StringRef name);

/// Bytes of one element of `type` (i1 counts as one byte; pointers 8).
int64_t getElementBytes(mlir::Type type);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_STAGEUTILS_H
