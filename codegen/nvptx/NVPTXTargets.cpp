//===- NVPTXTargets.cpp - NVIDIA archs of the GPU stage -------------------===//
//
// The target descriptions of the NVIDIA archs: plain data (IREE's known-
// target tables are the model), with the `mma.sync` fragment layouts
// written from the PTX ISA's "Matrix Fragments for mma.m16n8k*" figures:
// groupID = lane / 4 and threadID_in_group = lane % 4 pick rows and
// columns; registers count elements (a .f16x2 register holds two).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/NVPTXTargets.h"

#include "compiler/GPU/TargetDesc.h"

#include <mutex>
#include <string>

using namespace kiln::gpu;

namespace {

using Bases = llvm::SmallVector<LinearLayout::Basis, 8>;


// Lanes of every m16n8 accumulator: threadID_in_group picks column pairs,
// groupID the row.
const Bases kAccLanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
LinearLayout accumulator() {
  // c0..c3: row = groupID (+8 for c2, c3), col = 2 * tig + (i & 1).
  return fragmentLayout({{0, 1}, {8, 0}}, kAccLanes, 16, 8);
}

MatrixInstr mma16816(const char *name, const char *type) {
  MatrixInstr i;
  i.name = name;
  i.m = 16, i.n = 8, i.k = 16;
  i.aType = i.bType = type;
  i.accType = "f32";
  // a0..a7: row = groupID (+8 for a2, a3, a6, a7),
  //         col = 2 * tig + (i & 1) (+8 for a4..a7).
  i.aLayout = fragmentLayout({{0, 1}, {8, 0}, {0, 8}}, kAccLanes, 16, 16);
  // b0..b3: row = 2 * tig + (i & 1) (+8 for b2, b3), col = groupID.
  i.bLayout = fragmentLayout({{1, 0}, {8, 0}},
                       {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}, 16, 8);
  i.cLayout = accumulator();
  return i;
}

MatrixInstr mma1688tf32() {
  MatrixInstr i;
  i.name = "nv.mma.m16n8k8.tf32";
  i.m = 16, i.n = 8, i.k = 8;
  i.aType = i.bType = "f32";
  i.accType = "f32";
  i.tf32 = true;
  // a0..a3: row = groupID (+8 for a1, a3), col = tig (+4 for a2, a3).
  i.aLayout = fragmentLayout({{8, 0}, {0, 4}},
                       {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}}, 16, 8);
  // b0, b1: row = tig (+4 for b1), col = groupID.
  i.bLayout = fragmentLayout({{4, 0}}, {{1, 0}, {2, 0}, {0, 1}, {0, 2}, {0, 4}}, 8,
                       8);
  i.cLayout = accumulator();
  return i;
}

/// The A fragment of 16 x 32 8-bit elements (mma.m16n8k32's, and one
/// warp's share of wgmma.m64nNk32's): a0..a15: row = groupID (+8 for
/// a4..a7, a12..a15), col = 4 * tig + (i & 3) (+16 for a8..a15).
LinearLayout byteOperandA() {
  return fragmentLayout({{0, 1}, {0, 2}, {8, 0}, {0, 16}},
                        {{0, 4}, {0, 8}, {1, 0}, {2, 0}, {4, 0}}, 16, 32);
}

/// m16n8k32 with 8-bit operands (s8, e4m3, e5m2; fp8 A and B may differ:
/// `bType`, when given).
MatrixInstr mma16832(const char *name, const char *type, const char *acc,
                     const char *bType = nullptr) {
  MatrixInstr i;
  i.name = name;
  i.m = 16, i.n = 8, i.k = 32;
  i.aType = type;
  i.bType = bType ? bType : type;
  i.accType = acc;
  i.aLayout = byteOperandA();
  // b0..b7: row = 4 * tig + (i & 3) (+16 for b4..b7), col = groupID.
  i.bLayout = fragmentLayout({{1, 0}, {2, 0}, {16, 0}},
                       {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}}, 32, 8);
  i.cLayout = accumulator();
  return i;
}

/// wgmma.mma_async.m64nNk16 (sm_90a), issued by a warpgroup of 4 warps;
/// one warp's share is 16 rows (PTX ISA, "Register fragments and shared
/// memory matrix layouts" of wgmma): D like mma.m16n8's accumulator
/// repeated every 8 columns (d[4j + i]: row groupID + 8 [i >= 2], col
/// 8j + 2 tig + (i & 1)); A from registers like mma.m16n8k16's A. B is
/// read from shared memory; its register layout here (mma.m16n8k16's B
/// repeated every 8 columns) is where the stage takes it from when it has
/// to store B there itself.
MatrixInstr wgmma(const char *type, int32_t n) {
  MatrixInstr i;
  i.name = std::string("nv.wgmma.m64n") + std::to_string(n) + "k16." + type;
  i.m = 16, i.n = n, i.k = 16;
  i.aType = i.bType = type;
  i.accType = "f32";
  i.groupWarps = 4;
  Bases accRegs = {{0, 1}, {8, 0}}, bRegs = {{1, 0}, {8, 0}};
  for (int32_t c = 8; c < n; c *= 2) {
    accRegs.push_back({0, c});
    bRegs.push_back({0, c});
  }
  i.aLayout = fragmentLayout({{0, 1}, {8, 0}, {0, 8}}, kAccLanes, 16, 16);
  i.bLayout = fragmentLayout(bRegs, {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}},
                             16, n);
  i.cLayout = fragmentLayout(accRegs, kAccLanes, 16, n);
  i.sharedMNMajor = true;
  return i;
}

} // namespace

/// The fp8 types: PTX's name and MLIR's.
struct Fp8Type {
  const char *ptx, *mlir;
};
static constexpr Fp8Type kFp8Types[] = {{"e4m3", "f8E4M3FN"},
                                        {"e5m2", "f8E5M2"}};

llvm::StringRef kiln::nvptx::ptxFp8Name(llvm::StringRef mlirType) {
  for (const Fp8Type &t : kFp8Types)
    if (mlirType == t.mlir)
      return t.ptx;
  return "";
}

namespace {

/// wgmma.mma_async.m64nNk32 with fp8 operands (e4m3, e5m2, either for A
/// and B; sm_90a): D as above; A from registers like mma.m16n8k32's A
/// (four bytes of K in each 32-bit register); B's register layout
/// mma.m16n8k32's B repeated every 8 columns. Both shared operands must be
/// K-major: the instruction has no transposes for 8-bit types. Named
/// "nv.wgmma.m64nNk32.<a>" when A and B are alike, ".<a>.<b>" otherwise.
MatrixInstr wgmmaFp8(Fp8Type a, Fp8Type b, int32_t n) {
  MatrixInstr i;
  i.name = std::string("nv.wgmma.m64n") + std::to_string(n) + "k32." + a.ptx;
  if (std::string(a.ptx) != b.ptx)
    i.name += std::string(".") + b.ptx;
  i.m = 16, i.n = n, i.k = 32;
  i.aType = a.mlir;
  i.bType = b.mlir;
  i.accType = "f32";
  i.groupWarps = 4;
  Bases accRegs = {{0, 1}, {8, 0}}, bRegs = {{1, 0}, {2, 0}, {16, 0}};
  for (int32_t c = 8; c < n; c *= 2) {
    accRegs.push_back({0, c});
    bRegs.push_back({0, c});
  }
  i.aLayout = byteOperandA();
  i.bLayout = fragmentLayout(bRegs, {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}},
                             32, n);
  i.cLayout = fragmentLayout(accRegs, kAccLanes, 16, n);
  i.sharedMNMajor = false;
  return i;
}

GPUTarget nvidia(const char *arch, int64_t maxShared, bool fp8,
                 double bandwidth, double tflops) {
  GPUTarget t;
  t.arch = arch;
  t.backend = "nvptx";
  t.warpSize = 32;
  t.maxThreadsPerBlock = 1024;
  t.maxRegistersPerThread = 255;
  t.registersPerBlock = 65536;
  t.maxSharedBytes = maxShared;
  t.sharedBanks = 32;
  t.sharedBankBytes = 4;
  t.maxVectorBytes = 16;
  t.hasAsyncCopy = true;
  t.hasMatrixLoad = true;
  // sm_90a's warpgroup instructions first (the stage takes them where a
  // product has 4 warps along 64 rows or more), widest first.
  // TMA: sm_90a only (sm_90 has it too, but its images keep the paths
  // the hardware checks have covered; sm_100 images are PTX for later).
  t.hasTensorCopy = std::string(arch) == "sm_90a";
  if (std::string(arch) == "sm_90a") {
    for (const char *type : {"f16", "bf16"})
      for (int32_t n : {256, 128, 64, 32, 16, 8})
        t.matrixInstrs.push_back(wgmma(type, n));
    for (Fp8Type a : kFp8Types)
      for (Fp8Type b : kFp8Types)
        for (int32_t n : {256, 128, 64, 32, 16, 8})
          t.matrixInstrs.push_back(wgmmaFp8(a, b, n));
  }
  for (MatrixInstr i : {mma16816("nv.mma.m16n8k16.f16", "f16"),
                        mma16816("nv.mma.m16n8k16.bf16", "bf16"),
                        mma1688tf32(),
                        mma16832("nv.mma.m16n8k32.s8", "i8", "i32")})
    t.matrixInstrs.push_back(std::move(i));
  if (fp8) {
    t.matrixInstrs.push_back(
        mma16832("nv.mma.m16n8k32.e4m3", "f8E4M3FN", "f32"));
    t.matrixInstrs.push_back(mma16832("nv.mma.m16n8k32.e5m2", "f8E5M2", "f32"));
    // A and B of different fp8 types (the ISA's .e4m3.e5m2 and .e5m2.e4m3).
    t.matrixInstrs.push_back(mma16832("nv.mma.m16n8k32.e4m3.e5m2", "f8E4M3FN",
                                      "f32", "f8E5M2"));
    t.matrixInstrs.push_back(mma16832("nv.mma.m16n8k32.e5m2.e4m3", "f8E5M2",
                                      "f32", "f8E4M3FN"));
  }
  // Peaks of the flagship part of each arch, for `--bench` shares when the
  // device cannot tell (the runtime prefers what the device reports).
  t.peakBandwidthGBs = bandwidth;
  t.peakTflopsF16 = tflops;
  return t;
}

} // namespace

void kiln::nvptx::registerNVPTXTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Shared memory: the opt-in maximum per block.
    registerGPUTarget(nvidia("sm_80", 166912, false, 2039, 312));
    registerGPUTarget(nvidia("sm_86", 101376, false, 936, 142));
    registerGPUTarget(nvidia("sm_89", 101376, true, 864, 362));
    registerGPUTarget(nvidia("sm_90", 232448, true, 3350, 989));
    registerGPUTarget(nvidia("sm_90a", 232448, true, 3350, 989));
    registerGPUTarget(nvidia("sm_100", 232448, true, 8000, 2250));
  });
}
