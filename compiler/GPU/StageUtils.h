//===- StageUtils.h - Shared helpers of the GPU stage's passes --*- C++ -*-===//
#ifndef KILN_COMPILER_GPU_STAGEUTILS_H
#define KILN_COMPILER_GPU_STAGEUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// The fast path of a variant for `target` (FastPath.cpp,
/// docs/codegen-gpu.md): marks the kernel's pointer parameters without
/// `@align` `kiln.align = 16` and its integer parameters (32 and 64 bits)
/// without `@div` `kiln.div = 16`, as Triton specializes at launch; on
/// targets with range-checked accesses bounds the runtime strides of view
/// boxes; on targets with tensor copies chooses the view loads they take
/// (each map a new kernel argument). `assumes`: the image's JSON
/// ({"align16": [...], "div16": [...], "holds": [conditions]}), `tensorMaps`
/// its "tensor_maps" array; both "" when it assumes nothing (no fast path).
/// `params`: the parameters in align16 and div16. The parameters named in
/// `exclude` get no such assumption (those addUsefulFastPathAssumptions
/// found do not change the code).
struct FastPathAssumptions {
  std::string assumes;
  std::string tensorMaps;
  std::vector<std::string> params;
};
FastPathAssumptions
addFastPathAssumptions(mlir::ModuleOp module, const GPUTarget &target,
                       llvm::ArrayRef<std::string> exclude = {});

/// The attribute on a view load that tensor copies take and on the kernel
/// argument of its tensor map: the map's index.
inline constexpr llvm::StringLiteral kTensorMapAttr = "kiln_gpu.tensor_map";
/// The module attribute that holds the recipes of the kernel's tensor maps
/// (a JSON array, docs/bundle.md "tensor_maps"; absent: none), set by
/// addFastPathAssumptions and kept by the stage in step with the kernel's
/// map arguments.
inline constexpr llvm::StringLiteral kTensorMapsAttr = "kiln_gpu.tensor_maps";

/// Drops the tensor-map arguments that no tensor copy uses (their loads
/// were not pipelined) from the kernels of `module`, renumbers the others
/// in order and keeps only their recipes in kTensorMapsAttr: the runtime
/// encodes, and checks against TMA's rules, only the maps the code reads.
void dropUnusedTensorMaps(mlir::ModuleOp module);

/// For Kiln's own negative tests of the emulator (docs/emulator.md): the
/// value of fault `name` in $KILN_TEST_FAULT ("drop-barrier=0",
/// "swap-mma-lanes"; comma-separated), or nullopt. A fault makes the GPU
/// stage miscompile on purpose: drop-barrier=N leaves out the Nth barrier
/// that tile-gpu-insert-barriers would insert; swap-mma-lanes exchanges
/// lanes 0 and 1's A registers before each matrix instruction;
/// misalign-shared moves every vector shared access one element off its
/// alignment.
std::optional<int> getTestFault(llvm::StringRef name);

/// How far, in elements of `element`, a view box's lanes may reach past
/// its origin for the offset form (2^31 bytes, less room for the widest
/// access past the last element's offset): what tile-gpu-lower-views and
/// the fast path's stride bounds plan with. Nullopt for elements that are
/// not a whole number of bytes (no offset form).
std::optional<int64_t> getOffsetReachBudget(mlir::Type element);

/// M such that every element of the integer tile or scalar `v` lies in
/// [0, M], or nullopt: constants, aranges, and what sums, products,
/// masks, unsigned minima, remainders, quotients, shifts, extensions,
/// selects and minima and maxima of bounded values keep bounded (through
/// splats, broadcasts, reshapes and layout conversions). Never more than
/// 2^40 (no overflow in the arithmetic). `depth`: the recursion's.
std::optional<int64_t> getNonNegativeBound(mlir::Value v, int depth = 0);

/// The shared memory `fn` needs as tile-gpu-allocate-shared would place
/// its buffers now (liveness in program order, first fit), without
/// placing them.
int64_t getSharedBytesNeeded(mlir::func::FuncOp fn);

/// Bytes of one element of `type` (i1 counts as one byte; pointers 8).
int64_t getElementBytes(mlir::Type type);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_STAGEUTILS_H
