//===- MatrixLayoutTest.cpp - Compiler fragments against the emulator -----===//
//
// Every matrix instruction of every registered arch (codegen/nvptx and
// codegen/amdgpu target descriptions) is fed through the emulator's own
// implementation (runtime/lib/EmuMatrix.cpp, written separately from the
// vendors' ISA documents): small-integer A, B and C are spread over the
// lanes as the *compiler's* fragment layouts say, the emulator runs the
// instruction, and D, gathered by the compiler's accumulator layout, must
// be A B + C exactly. The two descriptions of each layout must agree.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/EmuDevice.h"
#include "../runtime/MatrixTestValues.h"

#include "codegen/amdgpu/AMDGPUTargets.h"
#include "codegen/nvptx/NVPTXTargets.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/GPU/ThreadLowering.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace kiln::gpu;
using namespace kiln::test;

namespace {

struct Named {
  const MatrixInstr *instr;
  int32_t lanes;
  std::string arch;
};

/// Every warp-level matrix instruction of every arch, once per name
/// (warpgroup instructions read shared memory: WarpgroupMatrixTest.cpp).
std::vector<Named> allInstrs() {
  kiln::nvptx::registerNVPTXTargets();
  kiln::amdgpu::registerAMDGPUTargets();
  std::vector<Named> out;
  std::set<std::string> seen;
  for (const std::string &arch : getGPUTargetNames()) {
    const GPUTarget *t = lookupGPUTarget(arch);
    for (const MatrixInstr &i : t->matrixInstrs)
      if (i.groupWarps == 1 && seen.insert(i.name).second)
        out.push_back({&i, t->warpSize, arch});
  }
  return out;
}

/// The operand kind of `mi` (FNUZ fp8 where the instruction reads it).
Kind kindOf(const MatrixInstr &mi, bool operandB = false) {
  const std::string &type = operandB ? mi.bType : mi.aType;
  if (type == "f16")
    return Kind::F16;
  if (type == "bf16")
    return Kind::BF16;
  if (type == "i8")
    return Kind::S8;
  if (type == "f8E4M3FN")
    return mi.fnuzOperands ? Kind::E4M3Fnuz : Kind::E4M3;
  if (type == "f8E5M2")
    return mi.fnuzOperands ? Kind::E5M2Fnuz : Kind::E5M2;
  return Kind::TF32; // f32 bits
}

std::pair<int32_t, int32_t> at(const LinearLayout &l, int32_t reg,
                               int32_t lane) {
  auto c = l.apply({{"register", reg}, {"lane", lane}});
  return {c[0], c[1]};
}

using Lanes = std::vector<std::vector<uint8_t>>;

/// Runs instruction `name` in the emulator on per-lane register bytes (A
/// and B exchanged when `swap`), D into `d`.
bool emulate(const std::string &name, int32_t lanes, Lanes &a, Lanes &b,
             Lanes &c, Lanes &d, bool swap, std::string &message) {
  std::vector<const void *> pa, pb, pc;
  std::vector<void *> pd;
  for (int32_t l = 0; l < lanes; ++l) {
    pa.push_back(a[size_t(l)].data());
    pb.push_back(b[size_t(l)].data());
    pc.push_back(c[size_t(l)].data());
    pd.push_back(d[size_t(l)].data());
  }
  if (swap)
    std::swap(pa, pb);
  return kiln::rt::detail::emulateMatrixInstr(name, lanes, pa.data(),
                                              pb.data(), pc.data(),
                                              pd.data(), message);
}

/// A (M x K), B (K x N) and C (M x N) of small integers spread over the
/// lanes by `fa`, `fb`, `fc` (the fragments of one instruction tile of a
/// product, over (row, column) of each operand), the instruction run by
/// the emulator — with its operands exchanged when `swapOperands` (a
/// transposed product feeds the instruction's A from B) — and D gathered
/// by `fc`: it must be A B + C exactly.
void checkProduct(const Named &n, const LinearLayout &fa,
                  const LinearLayout &fb, const LinearLayout &fc,
                  bool swapOperands, std::mt19937 &rng) {
  const MatrixInstr &mi = *n.instr;
  std::uniform_int_distribution<int> small(-4, 4);
  // fp8 instructions may read A and B in different types; a swapped
  // product feeds the instruction's A from fb, its B from fa.
  Kind kind = kindOf(mi, swapOperands), kindB = kindOf(mi, !swapOperands);
  bool isInt = mi.accType == "i32";
  int32_t m = fc.getOutDims()[0].size, nn = fc.getOutDims()[1].size,
          k = mi.k, lanes = n.lanes;
  ASSERT_EQ(fa.getInDimSize("lane"), lanes);
  std::vector<int> a(size_t(m * k)), b(size_t(k * nn)), c(size_t(m * nn));
  for (int &v : a)
    v = small(rng);
  for (int &v : b)
    v = small(rng);
  for (int &v : c)
    v = small(rng) * 8;
  size_t eb = elemBytes(kind);
  int32_t aRegs = fa.getInDimSize("register"),
          bRegs = fb.getInDimSize("register"),
          cRegs = fc.getInDimSize("register");
  Lanes la(size_t(lanes), std::vector<uint8_t>(size_t(aRegs) * eb)),
      lb(size_t(lanes), std::vector<uint8_t>(size_t(bRegs) * eb)),
      lc(size_t(lanes), std::vector<uint8_t>(size_t(cRegs) * 4)),
      ld(size_t(lanes), std::vector<uint8_t>(size_t(cRegs) * 4, 0xAB));
  // Every element of each operand is held by some (lane, register).
  std::set<std::pair<int32_t, int32_t>> coveredA, coveredB, coveredC;
  for (int32_t l = 0; l < lanes; ++l) {
    for (int32_t r = 0; r < aRegs; ++r) {
      auto [i, kk] = at(fa, r, l);
      coveredA.insert({i, kk});
      encode(kind, a[size_t(i * k + kk)], &la[size_t(l)][size_t(r) * eb]);
    }
    for (int32_t r = 0; r < bRegs; ++r) {
      auto [kk, j] = at(fb, r, l);
      coveredB.insert({kk, j});
      encode(kindB, b[size_t(kk * nn + j)], &lb[size_t(l)][size_t(r) * eb]);
    }
    for (int32_t r = 0; r < cRegs; ++r) {
      auto [i, j] = at(fc, r, l);
      coveredC.insert({i, j});
      if (isInt) {
        int32_t v = c[size_t(i * nn + j)];
        std::memcpy(&lc[size_t(l)][size_t(r) * 4], &v, 4);
      } else {
        float v = float(c[size_t(i * nn + j)]);
        std::memcpy(&lc[size_t(l)][size_t(r) * 4], &v, 4);
      }
    }
  }
  EXPECT_EQ(coveredA.size(), size_t(m * k));
  EXPECT_EQ(coveredB.size(), size_t(k * nn));
  ASSERT_EQ(coveredC.size(), size_t(m * nn)) << "accumulator not a bijection";
  std::string message;
  ASSERT_TRUE(emulate(mi.name, lanes, la, lb, lc, ld, swapOperands, message))
      << message;
  int wrong = 0;
  for (int32_t l = 0; l < lanes; ++l)
    for (int32_t r = 0; r < cRegs; ++r) {
      auto [i, j] = at(fc, r, l);
      long want = c[size_t(i * nn + j)];
      for (int32_t kk = 0; kk < k; ++kk)
        want += long(a[size_t(i * k + kk)]) * b[size_t(kk * nn + j)];
      double got;
      if (isInt) {
        int32_t v;
        std::memcpy(&v, &ld[size_t(l)][size_t(r) * 4], 4);
        got = v;
      } else {
        float v;
        std::memcpy(&v, &ld[size_t(l)][size_t(r) * 4], 4);
        got = v;
      }
      if (got != double(want) && wrong++ < 3)
        ADD_FAILURE() << "D[" << i << ", " << j << "] (lane " << l
                      << ", register " << r << ") = " << got << ", want "
                      << want;
    }
  EXPECT_EQ(wrong, 0);
}

TEST(MatrixLayouts, CompilerAndEmulatorAgree) {
  std::vector<Named> instrs = allInstrs();
  ASSERT_GE(instrs.size(), 20u);
  std::mt19937 rng(7);
  for (const Named &n : instrs) {
    const MatrixInstr &mi = *n.instr;
    SCOPED_TRACE(mi.name + " (" + n.arch + ")");
    checkProduct(n, mi.aLayout, mi.bLayout, mi.cLayout, false, rng);
  }
}

// The transposed accumulator layout (`#kiln_gpu.mma<..., transposed =
// true>`: D^T = B^T A^T, the instruction's A operand fed from B) as the
// compiler describes it — MmaAttr::getFragment — computes A B + C too, for
// every instruction of every arch.
TEST(MatrixLayouts, TransposedProductsAgree) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnGPUDialect>();
  std::mt19937 rng(11);
  for (const Named &n : allInstrs()) {
    SCOPED_TRACE(n.instr->name + " transposed (" + n.arch + ")");
    // (Layout assignment never transposes a product of mixed operand
    // types; the encodings above follow the operands either way.)
    auto mma = MmaAttr::get(&ctx, n.instr->name, {1, 1}, true);
    EXPECT_EQ(mma.getTileRows(), n.instr->n);
    EXPECT_EQ(mma.getTileCols(), n.instr->m);
    checkProduct(n, mma.getFragment(0), mma.getFragment(1),
                 mma.getFragment(2), true, rng);
  }
}

// Why AMD's chained products are transposed: MFMA's transposed
// accumulator holds, lane for lane, the registers of the next MFMA's A
// operand (a layout conversion that moves nothing between lanes), and its
// plain accumulator does not; NVIDIA's mma.sync accumulator already is the
// A fragment.
TEST(MatrixLayouts, TransposedAccumulatorIsOperandA) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnGPUDialect>();
  allInstrs();
  auto isOperandA = [&](const char *name, bool transposed) {
    auto mma = MmaAttr::get(&ctx, name, {4, 1}, transposed);
    std::vector<int64_t> shape{128, 64};
    return getRegisterPermutation(
               mma.toLinearLayout(shape),
               OperandAttr::get(&ctx, 0, mma).toLinearLayout(shape))
        .has_value();
  };
  EXPECT_TRUE(isOperandA("amd.mfma.32x32x8.bf16", true));
  EXPECT_FALSE(isOperandA("amd.mfma.32x32x8.bf16", false));
  EXPECT_TRUE(isOperandA("amd.mfma.16x16x16.f16", true));
  EXPECT_FALSE(isOperandA("amd.mfma.16x16x16.f16", false));
  EXPECT_TRUE(isOperandA("nv.mma.m16n8k16.bf16", false));
}

// A wrong layout in the compiler must show up: the same instruction fed
// with lanes 0 and 1 swapped gives a wrong D (and for RDNA3's WMMA, upper
// half-waves that do not repeat the lower ones are refused).
TEST(MatrixLayouts, EmulatorNoticesSwappedLanes) {
  for (const Named &n : allInstrs()) {
    const MatrixInstr &mi = *n.instr;
    SCOPED_TRACE(mi.name);
    Kind kind = kindOf(mi);
    size_t eb = elemBytes(kind);
    int32_t lanes = n.lanes;
    Lanes la(static_cast<size_t>(lanes)), lb(static_cast<size_t>(lanes)),
        lc(static_cast<size_t>(lanes)), ld(static_cast<size_t>(lanes));
    for (int32_t l = 0; l < lanes; ++l) {
      la[size_t(l)].resize(size_t(mi.getARegisters()) * eb);
      lb[size_t(l)].resize(size_t(mi.getBRegisters()) * eb);
      lc[size_t(l)].assign(size_t(mi.getCRegisters()) * 4, 0);
      ld[size_t(l)].assign(size_t(mi.getCRegisters()) * 4, 0);
      for (int32_t r = 0; r < mi.getARegisters(); ++r) {
        auto [i, kk] = at(mi.aLayout, r, l);
        encode(kind, (i * 3 + kk) % 5 - 2, &la[size_t(l)][size_t(r) * eb]);
      }
      for (int32_t r = 0; r < mi.getBRegisters(); ++r) {
        auto [kk, j] = at(mi.bLayout, r, l);
        encode(kindOf(mi, true), (kk + 2 * j) % 7 - 3,
               &lb[size_t(l)][size_t(r) * eb]);
      }
    }
    auto run = [&](Lanes &out, bool &ok) {
      std::string message;
      ok = emulate(mi.name, lanes, la, lb, lc, out, false, message);
    };
    bool ok = false;
    run(ld, ok);
    ASSERT_TRUE(ok);
    std::vector<std::vector<uint8_t>> swapped = ld;
    std::swap(la[0], la[1]);
    run(swapped, ok);
    if (ok)
      EXPECT_NE(swapped, ld);
  }
}

} // namespace

// Warpgroup instructions (sm_90a's wgmma) read their shared operands
// through matrix descriptors. For the placements the stage makes —
// row-major and column-major tiles (getSharedLayout) of 16 to 128
// elements per row, hence the 32-, 64- and 128-byte swizzles and the
// 128-byte atoms of wider rows — the descriptor the compiler plans
// (planMatrixDescriptor) goes to the emulator's own decoding of the PTX
// layouts (emulateWarpgroupMatrixInstr) at every instruction tile of the
// operand, for each warp of the group, A from shared memory or from
// registers (the compiler's A fragment), C and D in the compiler's
// accumulator fragment: D must be A B + C exactly.
namespace {

struct WgCase {
  int32_t aRows, aCols; ///< A's tile, [M, K]
  bool aKMajor;         ///< row-major A (K contiguous), else M contiguous
  int32_t bRows, bCols; ///< B's tile, [K, N]
  bool bNMajor;         ///< row-major B (N contiguous), else K contiguous
};

const uint8_t *readShared(void *ctx, int64_t offset) {
  return static_cast<std::vector<uint8_t> *>(ctx)->data() + offset;
}

void checkWarpgroup(const MatrixInstr &mi, const WgCase &wc, bool aInRegs,
                    std::mt19937 &rng) {
  using namespace kiln::gpu::threads;
  Kind kind = kindOf(mi);
  const int64_t eb = mi.k == 32 ? 1 : 2; // fp8: k32
  std::uniform_int_distribution<int> small(-4, 4);
  auto where = [&](int32_t rows, int32_t cols, bool rowMajor) {
    std::vector<unsigned> order;
    if (!rowMajor)
      order = {0, 1};
    return *getSharedLayout({rows, cols}, eb, order).invert();
  };
  LinearLayout wa = where(wc.aRows, wc.aCols, wc.aKMajor),
               wb = where(wc.bRows, wc.bCols, wc.bNMajor);
  auto corners = [&](int32_t extentX, int32_t stepX, int32_t extentK) {
    std::vector<std::pair<int32_t, int32_t>> out;
    for (int32_t x = 0; x < extentX; x += stepX)
      for (int32_t k = 0; k < extentK; k += mi.k)
        out.push_back({x, k});
    return out;
  };
  auto ca = corners(wc.aRows, 64, wc.aCols);
  auto cb = corners(wc.bCols, mi.n, wc.bRows);
  std::optional<MatrixDescriptor> da =
      planMatrixDescriptor(wa, eb, true, 64, ca, mi.sharedMNMajor);
  std::optional<MatrixDescriptor> db =
      planMatrixDescriptor(wb, eb, false, mi.n, cb, mi.sharedMNMajor);
  ASSERT_TRUE(da.has_value()) << "no descriptor for A";
  ASSERT_TRUE(db.has_value()) << "no descriptor for B";
  EXPECT_EQ(da->mnMajor, !wc.aKMajor);
  EXPECT_EQ(db->mnMajor, wc.bNMajor);
  // Shared memory: A at 0, B after it (both 1024-byte aligned).
  int64_t aBytes = int64_t(wc.aRows) * wc.aCols * eb;
  int64_t bBase = (aBytes + 1023) / 1024 * 1024;
  std::vector<uint8_t> shared(size_t(bBase + int64_t(wc.bRows) * wc.bCols * eb),
                              0xEE);
  std::vector<int> a(size_t(wc.aRows * wc.aCols)), b(size_t(wc.bRows * wc.bCols));
  for (int32_t i = 0; i < wc.aRows; ++i)
    for (int32_t k = 0; k < wc.aCols; ++k) {
      int v = a[size_t(i * wc.aCols + k)] = small(rng);
      encode(kind, v, &shared[size_t(eb * wa.apply({{"dim0", i}, {"dim1", k}})[0])]);
    }
  for (int32_t k = 0; k < wc.bRows; ++k)
    for (int32_t j = 0; j < wc.bCols; ++j) {
      int v = b[size_t(k * wc.bCols + j)] = small(rng);
      encode(kindOf(mi, true), v,
             &shared[size_t(bBase + eb * wb.apply({{"dim0", k}, {"dim1", j}})[0])]);
    }
  int32_t cRegs = mi.getCRegisters(), aRegs = mi.getARegisters();
  std::vector<double> scratch(static_cast<size_t>(kiln::rt::detail::kWarpgroupScratch));
  // Every A tile against every B tile at one K step (the last), so that
  // every corner of both operands is read.
  for (auto [ax, ak] : ca)
    for (auto [bx, bk] : cb) {
      if (ak != bk)
        continue;
      uint64_t descA =
          da->encode() | uint64_t(eb * wa.apply({{"dim0", ax}, {"dim1", ak}})[0] >> 4);
      uint64_t descB = db->encode() |
                       uint64_t((bBase + eb * wb.apply({{"dim0", bk}, {"dim1", bx}})[0]) >> 4);
      for (int w = 0; w < 4; ++w) {
        Lanes la(32, std::vector<uint8_t>(size_t(aRegs) * eb)),
            lc(32, std::vector<uint8_t>(size_t(cRegs) * 4)),
            ld(32, std::vector<uint8_t>(size_t(cRegs) * 4, 0xAB));
        std::vector<const void *> pa, pc;
        std::vector<void *> pd;
        for (int32_t l = 0; l < 32; ++l) {
          for (int32_t r = 0; r < aRegs; ++r) {
            auto [i, kk] = at(mi.aLayout, r, l);
            encode(kind, a[size_t((ax + 16 * w + i) * wc.aCols + ak + kk)],
                   &la[size_t(l)][size_t(r) * eb]);
          }
          for (int32_t r = 0; r < cRegs; ++r) {
            auto [i, j] = at(mi.cLayout, r, l);
            float v = float((i * 7 + j * 3 + w) % 9 - 4);
            std::memcpy(&lc[size_t(l)][size_t(r) * 4], &v, 4);
          }
          pa.push_back(la[size_t(l)].data());
          pc.push_back(lc[size_t(l)].data());
          pd.push_back(ld[size_t(l)].data());
        }
        int flags = (da->mnMajor ? 1 : 0) | (db->mnMajor ? 2 : 0);
        std::string message;
        ASSERT_TRUE(kiln::rt::detail::emulateWarpgroupMatrixInstr(
            mi.name, w, aInRegs ? 0 : descA, aInRegs ? pa.data() : nullptr,
            descB, aInRegs ? flags & 2 : flags, pc.data(), pd.data(),
            &readShared, &shared, scratch.data(), message))
            << message;
        int wrong = 0;
        for (int32_t l = 0; l < 32; ++l)
          for (int32_t r = 0; r < cRegs; ++r) {
            auto [i, j] = at(mi.cLayout, r, l);
            double want = float((i * 7 + j * 3 + w) % 9 - 4);
            for (int32_t kk = 0; kk < mi.k; ++kk)
              want += double(a[size_t((ax + 16 * w + i) * wc.aCols + ak + kk)]) *
                      b[size_t((bk + kk) * wc.bCols + bx + j)];
            float got;
            std::memcpy(&got, &ld[size_t(l)][size_t(r) * 4], 4);
            if (double(got) != want && wrong++ < 3)
              ADD_FAILURE() << "A tile (" << ax << ", " << ak << "), B tile ("
                            << bk << ", " << bx << "), warp " << w << ": D["
                            << i << ", " << j << "] = " << got << ", want "
                            << want;
          }
        ASSERT_EQ(wrong, 0);
      }
    }
}

} // namespace

TEST(MatrixLayouts, WarpgroupDescriptorsAgree) {
  kiln::nvptx::registerNVPTXTargets();
  const GPUTarget *t = lookupGPUTarget("sm_90a");
  ASSERT_NE(t, nullptr);
  std::mt19937 rng(5);
  int instrs = 0;
  for (const MatrixInstr &mi : t->matrixInstrs) {
    if (mi.groupWarps != 4)
      continue;
    ++instrs;
    EXPECT_EQ(mi.m, 16);
    EXPECT_EQ(mi.getCRegisters(), mi.n / 2);
    for (int32_t bk : {16, 32, 64, 128})
      for (bool aKMajor : {true, false})
        for (bool bNMajor : {true, false}) {
          // fp8 (k32): K-major shared operands only.
          if (bk < mi.k || (!mi.sharedMNMajor && (!aKMajor || bNMajor)))
            continue;
          // Wide enough for two instruction tiles along N where the
          // instruction is narrower than 256 (and two groups along M).
          int32_t bn = std::min(256, 2 * mi.n);
          WgCase wc{128, bk, aKMajor, bk, bn, bNMajor};
          for (bool aInRegs : {false, true}) {
            SCOPED_TRACE(mi.name + " A " + std::to_string(wc.aRows) + "x" +
                         std::to_string(bk) + (aKMajor ? " K-major" : " M-major") +
                         (aInRegs ? " (registers)" : "") + ", B " +
                         std::to_string(bk) + "x" + std::to_string(bn) +
                         (bNMajor ? " N-major" : " K-major"));
            checkWarpgroup(mi, wc, aInRegs, rng);
          }
        }
  }
  EXPECT_EQ(instrs, 36); // f16, bf16 and the four fp8 pairs; N 8 to 256
}

// fp8 warpgroup instructions read only K-major shared operands: a
// row-major B (N contiguous) has no descriptor for them, and the
// emulator refuses the transpose flags as the hardware has none.
TEST(MatrixLayouts, WarpgroupFp8IsKMajorOnly) {
  using namespace kiln::gpu::threads;
  kiln::nvptx::registerNVPTXTargets();
  const MatrixInstr *mi = lookupMatrixInstr("nv.wgmma.m64n64k32.e4m3");
  ASSERT_NE(mi, nullptr);
  EXPECT_FALSE(mi->sharedMNMajor);
  EXPECT_EQ(mi->k, 32);
  LinearLayout nMajor = *getSharedLayout({64, 64}, 1).invert();
  std::vector<std::pair<int32_t, int32_t>> corners{{0, 0}, {0, 32}};
  std::optional<MatrixDescriptor> any =
      planMatrixDescriptor(nMajor, 1, false, 64, corners, true);
  ASSERT_TRUE(any.has_value());
  EXPECT_TRUE(any->mnMajor);
  EXPECT_FALSE(
      planMatrixDescriptor(nMajor, 1, false, 64, corners, false).has_value());
  std::vector<double> scratch(
      static_cast<size_t>(kiln::rt::detail::kWarpgroupScratch));
  std::vector<uint8_t> shared(8192, 0);
  Lanes lc(32, std::vector<uint8_t>(32 * 4)), ld = lc;
  std::vector<const void *> pc;
  std::vector<void *> pd;
  for (int l = 0; l < 32; ++l) {
    pc.push_back(lc[size_t(l)].data());
    pd.push_back(ld[size_t(l)].data());
  }
  std::string message;
  EXPECT_FALSE(kiln::rt::detail::emulateWarpgroupMatrixInstr(
      mi->name, 0, any->encode(), nullptr, any->encode(), 2, pc.data(),
      pd.data(), &readShared, &shared, scratch.data(), message));
  EXPECT_NE(message.find("only K-major"), std::string::npos) << message;
}

// A placement that is none of the canonical layouts gets no descriptor
// (the stage then stores the operand into a buffer of its own): a
// row-major 64x64 f16 tile without a swizzle, whose rows are 128 bytes
// apart where an unswizzled core matrix wants 16.
TEST(MatrixLayouts, WarpgroupDescriptorRefusesOtherPlacements) {
  using namespace kiln::gpu::threads;
  std::vector<std::pair<int32_t, int32_t>> corners{{0, 0}};
  LinearLayout swizzled = *getSharedLayout({64, 64}, 2).invert();
  EXPECT_TRUE(planMatrixDescriptor(swizzled, 2, true, 64, corners, true).has_value());
  LinearLayout::InDim rows{"dim0", {}}, cols{"dim1", {}};
  for (int32_t b = 1; b < 64; b *= 2) {
    cols.bases.push_back({b});
    rows.bases.push_back({64 * b});
  }
  LinearLayout plain({rows, cols}, {{"offset", 64 * 64}});
  EXPECT_FALSE(planMatrixDescriptor(plain, 2, true, 64, corners, true).has_value());
}

// Tensor copies put a tile where the stage's shared layout has it: the
// widest swizzle whose span is a row of the piece, rows over 128 bytes in
// 128-byte pieces, and no plan for boxes the hardware cannot copy.
TEST(MatrixLayouts, TensorCopyPlans) {
  using kiln::gpu::threads::planTensorCopy;
  struct Case {
    llvm::SmallVector<int64_t, 3> shape;
    int64_t elemBytes;
    int32_t swizzle;
    llvm::SmallVector<int64_t, 3> pieceBox;
    int64_t pieces, pieceBytes, alignment;
  };
  const Case cases[] = {
      {{128, 64}, 2, 128, {128, 64}, 1, 16384, 1024},
      {{64, 256}, 2, 128, {64, 64}, 4, 8192, 1024},
      {{64, 32}, 2, 64, {64, 32}, 1, 4096, 512},
      {{32, 16}, 2, 32, {32, 16}, 1, 1024, 256},
      {{64, 32}, 4, 128, {64, 32}, 1, 8192, 1024},
      {{1, 128, 128}, 2, 128, {1, 128, 64}, 2, 16384, 1024},
      {{128, 128}, 1, 128, {128, 128}, 1, 16384, 1024},
  };
  for (const Case &c : cases) {
    std::optional<kiln::gpu::threads::TensorCopyPlan> plan =
        planTensorCopy(c.shape, c.elemBytes);
    ASSERT_TRUE(plan.has_value()) << "shape " << c.shape[0] << "x...";
    EXPECT_EQ(plan->swizzle, c.swizzle);
    EXPECT_EQ(plan->pieceBox, c.pieceBox);
    EXPECT_EQ(plan->pieces, c.pieces);
    EXPECT_EQ(plan->pieceBytes, c.pieceBytes);
    EXPECT_EQ(plan->alignment, c.alignment);
  }
  // More than 256 rows in a box; rows under 16 bytes; rank 0.
  EXPECT_FALSE(planTensorCopy({512, 64}, 2).has_value());
  EXPECT_FALSE(planTensorCopy({64, 4}, 2).has_value());
  EXPECT_FALSE(planTensorCopy({}, 2).has_value());
}
