//===- AMDGPUTargets.cpp - AMD archs of the GPU stage ---------------------===//
//
// The target descriptions of the AMD archs: plain data, as NVPTXTargets.cpp.
// The matrix instructions' per-lane layouts follow AMD's ISA documents (the
// CDNA2/CDNA3 and RDNA3/RDNA4 guides, as the AMD Matrix Instruction
// Calculator prints them). In a wave, lane l holds, for its element r
// (elements counted, packed low half first; E elements of A and B per lane):
//
//   MFMA 32x32xK   A[i][k]: i = l % 32, k = E (l / 32) + r     (B the same,
//                  with j for i); D (16 per lane): j = l % 32,
//                  i = 8 (r / 4) + 4 (l / 32) + r % 4
//   MFMA 16x16xK   A[i][k]: i = l % 16, k = E (l / 16) + r;
//                  D (4 per lane): j = l % 16, i = 4 (l / 16) + r
//   WMMA gfx11     A[i][k]: i = l % 16, k = r (16 per lane); lanes 16-31
//   (wave32)       hold copies of lanes 0-15 (for B too);
//                  D (8 per lane): j = l % 16, i = 2 r + l / 16
//   WMMA gfx12     A[i][k] 16-bit: i = l % 16, k = 4 (l / 16) + 8 (r / 4) +
//   (wave32)       r % 4; 8-bit: k = 8 (l / 16) + r (8 per lane);
//                  D (8 per lane): j = l % 16, i = 8 (l / 16) + r
//
// Every one of these is linear in the bits of (r, l): a LinearLayout.
//
//===----------------------------------------------------------------------===//

#include "codegen/amdgpu/AMDGPUTargets.h"

#include "compiler/GPU/TargetDesc.h"

#include "llvm/Support/MathExtras.h"

#include <mutex>

using namespace kiln::gpu;

namespace {

using Bases = llvm::SmallVector<LinearLayout::Basis, 8>;


/// Bases stepping `dim` (0 rows, 1 columns) by 1, 2, 4, ... `count` times,
/// starting at `first`.
Bases steps(int dim, int32_t first, int count) {
  Bases b;
  for (int i = 0; i < count; ++i) {
    LinearLayout::Basis v = {0, 0};
    v[dim] = first << i;
    b.push_back(v);
  }
  return b;
}

Bases concat(Bases a, const Bases &b) {
  a.append(b.begin(), b.end());
  return a;
}

/// An MFMA of m x m x k (m = 32 or 16) with `e` operand elements per lane.
MatrixInstr mfma(std::string name, int32_t m, int32_t k, const char *ab,
                 const char *acc, bool tf32 = false) {
  MatrixInstr i;
  i.name = std::move(name);
  i.m = i.n = m, i.k = k;
  i.aType = i.bType = ab;
  i.accType = acc;
  i.tf32 = tf32;
  int32_t e = k * m / 64; // operand elements per lane
  int eBits = llvm::Log2_32(e), mBits = llvm::Log2_32(m);
  int groupBits = 6 - mBits; // lane bits above the row: 1 (32) or 2 (16)
  // A (m x k): the element steps k, the low lane bits step i, the high
  // ones step k by e.
  i.aLayout = fragmentLayout(steps(1, 1, eBits),
                       concat(steps(0, 1, mBits), steps(1, e, groupBits)), m,
                       k);
  i.bLayout = fragmentLayout(steps(0, 1, eBits),
                       concat(steps(1, 1, mBits), steps(0, e, groupBits)), k,
                       m);
  // D (m x m): the low lane bits step j; element bits 0-1 step i by 1, 2;
  // the high lane bits step i by 4 (and 8 for 16x16); for 32x32, element
  // bits 2-3 step i by 8, 16.
  if (m == 32)
    i.cLayout = fragmentLayout(concat(steps(0, 1, 2), steps(0, 8, 2)),
                         concat(steps(1, 1, 5), steps(0, 4, 1)), 32, 32);
  else
    i.cLayout = fragmentLayout(steps(0, 1, 2),
                         concat(steps(1, 1, 4), steps(0, 4, 2)), 16, 16);
  return i;
}

/// RDNA3's 16x16x16 WMMA (wave32): operands replicated in both half-waves.
MatrixInstr wmmaGfx11(const char *name, const char *ab, const char *acc) {
  MatrixInstr i;
  i.name = name;
  i.m = i.n = i.k = 16;
  i.aType = i.bType = ab;
  i.accType = acc;
  Bases copies = {{0, 0}}; // lane bit 4: the same elements again
  i.aLayout = fragmentLayout(steps(1, 1, 4), concat(steps(0, 1, 4), copies), 16, 16);
  i.bLayout = fragmentLayout(steps(0, 1, 4), concat(steps(1, 1, 4), copies), 16, 16);
  i.cLayout = fragmentLayout(steps(0, 2, 3), concat(steps(1, 1, 4), steps(0, 1, 1)),
                       16, 16);
  return i;
}

/// RDNA4's 16x16x16 WMMA (wave32): each half-wave holds half of K.
MatrixInstr wmmaGfx12(const char *name, const char *ab, const char *acc) {
  MatrixInstr i;
  i.name = name;
  i.m = i.n = i.k = 16;
  i.aType = i.bType = ab;
  i.accType = acc;
  bool bytes = llvm::StringRef(ab) == "i8";
  // k of element r and lane l: 16-bit: r bits 0-1 step 1, 2, r bit 2 steps
  // 8, lane bit 4 steps 4; 8-bit: r bits step 1, 2, 4, lane bit 4 steps 8.
  Bases kRegs = bytes ? steps(1, 1, 3) : concat(steps(1, 1, 2), steps(1, 8, 1));
  Bases kLane = bytes ? steps(1, 8, 1) : steps(1, 4, 1);
  i.aLayout = fragmentLayout(kRegs, concat(steps(0, 1, 4), kLane), 16, 16);
  auto transpose = [](Bases b) {
    for (LinearLayout::Basis &v : b)
      std::swap(v[0], v[1]);
    return b;
  };
  i.bLayout = fragmentLayout(transpose(kRegs),
                       concat(steps(1, 1, 4), transpose(kLane)), 16, 16);
  i.cLayout = fragmentLayout(steps(0, 1, 3), concat(steps(1, 1, 4), steps(0, 8, 1)),
                       16, 16);
  return i;
}

enum class Family { CDNA2, CDNA3, CDNA4, RDNA3, RDNA4 };

GPUTarget amd(const char *arch, Family family, double bandwidth,
              double tflops) {
  bool cdna = family == Family::CDNA2 || family == Family::CDNA3 ||
              family == Family::CDNA4;
  GPUTarget t;
  t.arch = arch;
  t.backend = "amdgpu";
  t.warpSize = cdna ? 64 : 32;
  t.maxThreadsPerBlock = 1024;
  // Per lane: 512 on CDNA (VGPRs and AGPRs, one file), 256 VGPRs on RDNA.
  t.maxRegistersPerThread = cdna ? 512 : 256;
  t.registersPerBlock = cdna ? 512 * 64 * 4 : 256 * 32 * 4;
  t.maxSharedBytes = family == Family::CDNA4 ? 160 * 1024 : 64 * 1024;
  t.sharedBanks = 32;
  t.sharedBankBytes = 4;
  t.maxVectorBytes = 16;
  // Global -> LDS loads exist on CDNA (4 bytes a lane before gfx950) but
  // complete in program order with other loads: not the stage's
  // asynchronous copies (yet).
  t.hasAsyncCopy = false;
  t.hasMatrixLoad = false;
  // Buffer loads and stores (raw buffer resources, stride 0).
  t.hasRangeCheckedAccess = true;
  switch (family) {
  case Family::CDNA2:
  case Family::CDNA3:
  case Family::CDNA4: {
    bool cdna3 = family != Family::CDNA2;
    if (family == Family::CDNA4) {
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x16.f16", 32, 16, "f16", "f32"));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x32.f16", 16, 32, "f16", "f32"));
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x16.bf16", 32, 16, "bf16", "f32"));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x32.bf16", 16, 32, "bf16", "f32"));
    }
    t.matrixInstrs.push_back(mfma("amd.mfma.32x32x8.f16", 32, 8, "f16", "f32"));
    t.matrixInstrs.push_back(mfma("amd.mfma.16x16x16.f16", 16, 16, "f16", "f32"));
    t.matrixInstrs.push_back(mfma("amd.mfma.32x32x8.bf16", 32, 8, "bf16", "f32"));
    t.matrixInstrs.push_back(mfma("amd.mfma.16x16x16.bf16", 16, 16, "bf16", "f32"));
    if (family == Family::CDNA3) {
      // xf32: tf32 products at twice the f32 rate (gfx942 only).
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x4.xf32", 32, 4, "f32", "f32", true));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x8.xf32", 16, 8, "f32", "f32", true));
    } else {
      // tf32 elsewhere: f32 products of operands the stage rounded to tf32
      // are exact, so the f32 instruction computes the tf32 result (its own
      // name: the stage rounds the operands of instructions marked tf32).
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x2.f32.tf32", 32, 2, "f32", "f32", true));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x4.f32.tf32", 16, 4, "f32", "f32", true));
    }
    t.matrixInstrs.push_back(mfma("amd.mfma.32x32x2.f32", 32, 2, "f32", "f32"));
    t.matrixInstrs.push_back(mfma("amd.mfma.16x16x4.f32", 16, 4, "f32", "f32"));
    if (cdna3) {
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x16.i8", 32, 16, "i8", "i32"));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x32.i8", 16, 32, "i8", "i32"));
    } else {
      t.matrixInstrs.push_back(mfma("amd.mfma.32x32x8.i8", 32, 8, "i8", "i32"));
      t.matrixInstrs.push_back(mfma("amd.mfma.16x16x16.i8", 16, 16, "i8", "i32"));
    }
    if (family == Family::CDNA3 || family == Family::CDNA4) {
      // fp8 (E4M3, "fp8") and bf8 (E5M2) for A and B, alike or mixed
      // ("amd.mfma.32x32x16.fp8_bf8": A fp8, B bf8). gfx950 reads OCP fp8,
      // the encodings of Kiln's f8 types; the same instructions read FNUZ
      // fp8 on gfx942 (".fnuz"): the stage feeds them OCP bytes re-encoded
      // to half their value (MatrixInstr::fnuzOperands).
      struct Fp8 {
        const char *isa, *mlir;
      };
      const Fp8 types[] = {{"fp8", "f8E4M3FN"}, {"bf8", "f8E5M2"}};
      bool fnuz = family == Family::CDNA3;
      for (auto [m, k] : {std::pair{32, 16}, std::pair{16, 32}})
        for (Fp8 a : types)
          for (Fp8 b : types) {
            std::string name = "amd.mfma." + std::to_string(m) + "x" +
                               std::to_string(m) + "x" + std::to_string(k) +
                               "." + a.isa;
            if (std::string(a.isa) != b.isa)
              name += std::string("_") + b.isa;
            MatrixInstr i = mfma(name + (fnuz ? ".fnuz" : ""), m, k, a.mlir,
                                 "f32");
            i.bType = b.mlir;
            i.fnuzOperands = fnuz;
            t.matrixInstrs.push_back(std::move(i));
          }
    }
    break;
  }
  case Family::RDNA3:
    t.matrixInstrs = {wmmaGfx11("amd.wmma.gfx11.f16", "f16", "f32"),
                      wmmaGfx11("amd.wmma.gfx11.bf16", "bf16", "f32"),
                      wmmaGfx11("amd.wmma.gfx11.i8", "i8", "i32")};
    break;
  case Family::RDNA4:
    t.matrixInstrs = {wmmaGfx12("amd.wmma.gfx12.f16", "f16", "f32"),
                      wmmaGfx12("amd.wmma.gfx12.bf16", "bf16", "f32"),
                      wmmaGfx12("amd.wmma.gfx12.i8", "i8", "i32")};
    break;
  }
  t.peakBandwidthGBs = bandwidth;
  t.peakTflopsF16 = tflops;
  return t;
}

} // namespace

void kiln::amdgpu::registerAMDGPUTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Peaks of each arch's flagship part (MI250X, MI300X, MI355X, RX 7900
    // XTX, RX 9070 XT), for `--bench` shares when the device cannot tell.
    registerGPUTarget(amd("gfx90a", Family::CDNA2, 3277, 383));
    registerGPUTarget(amd("gfx942", Family::CDNA3, 5300, 1307));
    registerGPUTarget(amd("gfx950", Family::CDNA4, 8000, 2300));
    registerGPUTarget(amd("gfx1100", Family::RDNA3, 960, 123));
    registerGPUTarget(amd("gfx1201", Family::RDNA4, 640, 195));
  });
}
