//===- TargetDesc.h - What the GPU stage knows of an arch -------*- C++ -*-===//
//
// One GPUTarget per architecture: plain data that every pass of the GPU
// stage reads (warp size, limits, the matrix instructions with their
// per-lane operand layouts, the widest vector access). No pass names a
// vendor; the vendor backends (codegen/nvptx, codegen/amdgpu) register
// their archs here at start-up, and turn the stage's per-thread form into
// their intrinsics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_TARGETDESC_H
#define KILN_COMPILER_GPU_TARGETDESC_H

#include "compiler/GPU/LinearLayout.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln::gpu {

/// One warp-wide matrix instruction: D[m, n] = A[m, k] * B[k, n] + C[m, n].
/// The layouts say which (register, lane) of the warp holds which element
/// of each operand (outputs `dim0` = row, `dim1` = column); registers
/// count elements, whatever the hardware packs into one 32-bit register.
struct MatrixInstr {
  /// Unique across all targets, chosen by the backend ("nv.mma.m16n8k16.f16");
  /// the per-thread op `kiln_gpu.mma` names it and the backend maps it.
  std::string name;
  int32_t m = 0, n = 0, k = 0;
  /// Element types as MLIR prints them: "f16", "bf16", "f32", "i8",
  /// "f8E4M3FN", "f8E5M2"; `tf32` instructions take "f32" operands and set
  /// `tf32`.
  std::string aType, bType, accType;
  bool tf32 = false;
  /// The instruction reads fp8 operands in the FNUZ encodings (E4M3FNUZ,
  /// E5M2FNUZ: exponent bias one higher than OCP's, no infinity, no -0,
  /// one NaN, 0x80). Its `aType`/`bType` stay the OCP types Kiln has: the
  /// stage re-encodes each operand byte so it reads as half the OCP value
  /// (OCP's -0 as 0, its NaNs and infinities as the NaN) and divides the
  /// accumulator by 4 before and multiplies it by 4 after, which is exact
  /// (docs/codegen-gpu.md, "fp8").
  bool fnuzOperands = false;
  /// Consecutive warps that issue the instruction together (1: a warp's
  /// own instruction; 4: a Hopper warpgroup's `wgmma`). `m` and the
  /// fragment layouts are then one warp's share: warp w of the group holds
  /// rows [w m, (w + 1) m) of the group's `groupWarps` x m rows, so the
  /// group's warps must be consecutive along the rows. Such an instruction
  /// reads B (and A, unless A comes from registers) from shared memory
  /// through matrix descriptors, and runs asynchronously: the per-thread
  /// form is `kiln_gpu.warpgroup_mma` and `kiln_gpu.warpgroup_wait`
  /// (docs/codegen-gpu.md, "Warpgroup matrix instructions").
  int32_t groupWarps = 1;
  /// A warpgroup instruction that also reads MN-major shared operands
  /// (wgmma's transposes: f16 and bf16 only). Without it, an operand in
  /// shared memory must be K-major: one whose placement is MN-major (a
  /// row-major B) is first stored into a K-major buffer of the product's
  /// own.
  bool sharedMNMajor = false;
  LinearLayout aLayout, bLayout, cLayout;

  int32_t getARegisters() const { return aLayout.getInDimSize("register"); }
  int32_t getBRegisters() const { return bLayout.getInDimSize("register"); }
  int32_t getCRegisters() const { return cLayout.getInDimSize("register"); }
};

/// A per-warp fragment layout of a rows x cols operand: the bases of the
/// `register` and `lane` bits over (dim0 = row, dim1 = column), as the
/// backends' target descriptions write the vendors' fragment tables.
LinearLayout fragmentLayout(llvm::SmallVector<LinearLayout::Basis, 8> registers,
                            llvm::SmallVector<LinearLayout::Basis, 8> lanes,
                            int32_t rows, int32_t cols);

/// The architecture's numbers (per block unless said otherwise).
struct GPUTarget {
  std::string arch;     ///< "sm_90a", "gfx942", ...
  std::string backend;  ///< the backend that registered it ("nvptx")
  int32_t warpSize = 32;
  int32_t maxThreadsPerBlock = 1024;
  int32_t maxRegistersPerThread = 255;
  int32_t registersPerBlock = 65536;
  /// Largest shared memory one block may use (with opt-in), bytes.
  int64_t maxSharedBytes = 48 * 1024;
  /// Shared memory banks: count and width in bytes.
  int32_t sharedBanks = 32;
  int32_t sharedBankBytes = 4;
  /// Widest single global or shared access per thread, bytes.
  int32_t maxVectorBytes = 16;
  /// Asynchronous global -> shared copies (sizes 4, 8, 16 bytes).
  bool hasAsyncCopy = false;
  /// Warp-cooperative 8x8 (16-bit) shared -> register matrix loads
  /// (feeding the matrix instructions' operand layouts).
  bool hasMatrixLoad = false;
  /// Range-checked global accesses: a uniform 64-bit base plus a 32-bit
  /// per-thread offset, where an offset past the range reads zero and
  /// writes nothing (AMD's buffer instructions). Accesses whose offsets
  /// provably stay below 2^31 bytes take the `kiln_gpu.load`/`store`
  /// base + offset form, with no branch around masked ones.
  bool hasRangeCheckedAccess = false;
  /// Tensor copies: a box of a global tensor described by a tensor map
  /// (a kernel argument the runtime encodes) copied into shared memory by
  /// one thread, completing on a transaction barrier (Hopper's TMA,
  /// `cp.async.bulk.tensor`); swizzles of 32, 64 and 128 bytes.
  bool hasTensorCopy = false;
  /// Matrix instructions, best first for each type combination.
  std::vector<MatrixInstr> matrixInstrs;
  /// Peak numbers for `kiln run --bench` shares (0: unknown).
  double peakBandwidthGBs = 0;
  double peakTflopsF16 = 0;

  /// The best instruction for operand types `a` and `b` (the same but
  /// for fp8, whose instructions may mix E4M3 and E5M2) and accumulator
  /// `acc` (`tf32`: f32 operands rounded to tf32) that fits an m x n x k
  /// product (its own m, n, k at most those), or null.
  /// Instructions of several warps (`groupWarps` > 1) only with
  /// `groups`.
  const MatrixInstr *findMatrixInstr(llvm::StringRef a, llvm::StringRef b,
                                     llvm::StringRef acc, bool tf32,
                                     int64_t m, int64_t n, int64_t k,
                                     bool groups = false) const;
};

/// Registers an arch (a backend does it once at start-up); a second
/// registration of the same arch replaces the first.
void registerGPUTarget(GPUTarget target);
/// The registered arch, or null.
const GPUTarget *lookupGPUTarget(llvm::StringRef arch);
/// A registered matrix instruction by name (any target), or null.
const MatrixInstr *lookupMatrixInstr(llvm::StringRef name);
/// Every registered arch, sorted.
std::vector<std::string> getGPUTargetNames();

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_TARGETDESC_H
