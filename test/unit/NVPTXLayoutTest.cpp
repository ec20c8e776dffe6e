//===- NVPTXLayoutTest.cpp - NVIDIA fragments and the named layouts -------===//
//
// The mma.sync fragment tables of codegen/nvptx against the PTX ISA's
// description of the fragments and of ldmatrix, element by element; and the
// GPU stage's matrix layouts built from them cover their tiles exactly as
// the warps share them.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/NVPTXTargets.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

using namespace kiln::gpu;

namespace {

const MatrixInstr &instr(const char *name) {
  kiln::nvptx::registerNVPTXTargets();
  const MatrixInstr *i = lookupMatrixInstr(name);
  EXPECT_NE(i, nullptr) << name;
  return *i;
}

std::pair<int32_t, int32_t> at(const LinearLayout &l, int32_t reg,
                               int32_t lane) {
  auto c = l.apply({{"register", reg}, {"lane", lane}});
  return {c[0], c[1]};
}

} // namespace

TEST(NVPTXFragments, EveryFragmentCoversItsTileOnce) {
  for (const char *name :
       {"nv.mma.m16n8k16.f16", "nv.mma.m16n8k16.bf16", "nv.mma.m16n8k8.tf32",
        "nv.mma.m16n8k32.s8"}) {
    const MatrixInstr &i = instr(name);
    for (const LinearLayout *l : {&i.aLayout, &i.bLayout, &i.cLayout})
      EXPECT_TRUE(l->isInvertible()) << name << ": " << l->str();
    EXPECT_EQ(i.aLayout.getTotalOutSize(), int64_t(i.m) * i.k);
    EXPECT_EQ(i.bLayout.getTotalOutSize(), int64_t(i.k) * i.n);
    EXPECT_EQ(i.cLayout.getTotalOutSize(), int64_t(i.m) * i.n);
  }
}

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
// groupID = lane >> 2, threadID_in_group = lane % 4.
TEST(NVPTXFragments, M16N8K16MatchesThePTXFigures) {
  const MatrixInstr &i = instr("nv.mma.m16n8k16.f16");
  for (int32_t lane = 0; lane < 32; ++lane) {
    int32_t g = lane >> 2, t = lane % 4;
    for (int32_t r = 0; r < 8; ++r) {
      int32_t row = (r < 2 || (r >= 4 && r < 6)) ? g : g + 8;
      int32_t col = t * 2 + (r & 1) + (r >= 4 ? 8 : 0);
      EXPECT_EQ(at(i.aLayout, r, lane), std::make_pair(row, col));
    }
    for (int32_t r = 0; r < 4; ++r)
      EXPECT_EQ(at(i.bLayout, r, lane),
                std::make_pair(t * 2 + (r & 1) + (r >= 2 ? 8 : 0), g));
    for (int32_t r = 0; r < 4; ++r)
      EXPECT_EQ(at(i.cLayout, r, lane),
                std::make_pair(r < 2 ? g : g + 8, t * 2 + (r & 1)));
  }
}

// ldmatrix.x4 with lane L addressing row (L % 8) + 8 ((L / 8) % 2), column
// 8 (L / 16) of the A tile (what the GPU stage emits) gives lane l, for
// matrix m, row l / 4 and columns 2 (l % 4) + {0, 1} of that matrix: the A
// fragment. ldmatrix.x2.trans over rows k = (L % 8) + 8 ((L / 8) % 2) of
// the B tile gives the B fragment.
TEST(NVPTXFragments, MatrixLoadsYieldTheOperandFragments) {
  const MatrixInstr &i = instr("nv.mma.m16n8k16.bf16");
  for (int32_t lane = 0; lane < 32; ++lane) {
    for (int32_t r = 0; r < 8; ++r) {
      int32_t m = r / 2;
      int32_t row = lane / 4 + 8 * (m % 2);
      int32_t col = 8 * (m / 2) + 2 * (lane % 4) + r % 2;
      EXPECT_EQ(at(i.aLayout, r, lane), std::make_pair(row, col))
          << "lane " << lane << " register " << r;
    }
    for (int32_t r = 0; r < 4; ++r) {
      int32_t m = r / 2;
      int32_t k = 8 * m + 2 * (lane % 4) + r % 2;
      EXPECT_EQ(at(i.bLayout, r, lane), std::make_pair(k, lane / 4))
          << "lane " << lane << " register " << r;
    }
  }
}

TEST(NVPTXFragments, M16N8K32S8AndTf32MatchThePTXFigures) {
  const MatrixInstr &s8 = instr("nv.mma.m16n8k32.s8");
  const MatrixInstr &tf = instr("nv.mma.m16n8k8.tf32");
  for (int32_t lane = 0; lane < 32; ++lane) {
    int32_t g = lane >> 2, t = lane % 4;
    for (int32_t r = 0; r < 16; ++r) {
      bool low = r < 4 || (r >= 8 && r < 12);
      EXPECT_EQ(at(s8.aLayout, r, lane),
                std::make_pair(low ? g : g + 8,
                               t * 4 + (r & 3) + (r >= 8 ? 16 : 0)));
    }
    for (int32_t r = 0; r < 8; ++r)
      EXPECT_EQ(at(s8.bLayout, r, lane),
                std::make_pair(t * 4 + (r & 3) + (r >= 4 ? 16 : 0), g));
    for (int32_t r = 0; r < 4; ++r)
      EXPECT_EQ(at(tf.aLayout, r, lane),
                std::make_pair((r % 2) ? g + 8 : g, r >= 2 ? t + 4 : t));
    for (int32_t r = 0; r < 2; ++r)
      EXPECT_EQ(at(tf.bLayout, r, lane), std::make_pair(r ? t + 4 : t, g));
  }
}

TEST(NVPTXLayouts, MmaAndOperandLayoutsShareTheTileAmongWarps) {
  kiln::nvptx::registerNVPTXTargets();
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnGPUDialect>();
  auto mma = MmaAttr::get(&ctx, "nv.mma.m16n8k16.f16", {2, 2}, false);
  LinearLayout c = mma.toLinearLayout({64, 64});
  LinearLayout a = OperandAttr::get(&ctx, 0, mma).toLinearLayout({64, 32});
  LinearLayout b = OperandAttr::get(&ctx, 1, mma).toLinearLayout({32, 64});
  // The accumulator: every element once.
  EXPECT_TRUE(c.isInvertible()) << c.str();
  // A: warps side by side along N hold the same rows (copies); B likewise
  // along M.
  EXPECT_TRUE(a.isSurjective());
  EXPECT_EQ(a.getZeroBasesMask("warp"), 0b10u);
  EXPECT_EQ(b.getZeroBasesMask("warp"), 0b01u);
  // Each warp's A rows are its accumulator rows; its B columns its
  // accumulator columns.
  for (int32_t w = 0; w < 4; ++w) {
    std::map<int32_t, int> rowsC, rowsA;
    for (int32_t r = 0; r < c.getInDimSize("register"); ++r)
      for (int32_t l = 0; l < 32; ++l)
        ++rowsC[c.apply({{"register", r}, {"lane", l}, {"warp", w}})[0]];
    for (int32_t r = 0; r < a.getInDimSize("register"); ++r)
      for (int32_t l = 0; l < 32; ++l)
        ++rowsA[a.apply({{"register", r}, {"lane", l}, {"warp", w}})[0]];
    std::vector<int32_t> kc, ka;
    for (auto &[row, n] : rowsC)
      kc.push_back(row);
    for (auto &[row, n] : rowsA)
      ka.push_back(row);
    EXPECT_EQ(kc, ka) << "warp " << w;
  }
}

// The swizzled shared layouts are bijections, keep 16-byte chunks whole,
// and spread eight consecutive rows' first chunks over different banks.
TEST(SharedLayouts, SwizzleSpreadsRowsOverBanks) {
  for (auto [rows, cols, bytes] :
       {std::tuple{64, 32, 2}, std::tuple{32, 64, 2}, std::tuple{128, 64, 2},
        std::tuple{64, 64, 4}, std::tuple{16, 16, 2}, std::tuple{32, 8, 2}}) {
    LinearLayout s = getSharedLayout({rows, cols}, bytes);
    ASSERT_TRUE(s.isInvertible()) << s.str();
    LinearLayout where = *s.invert();
    int32_t chunk = 16 / bytes;
    // A chunk of a row is contiguous in memory.
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t c = 0; c < cols; c += chunk) {
        int32_t first = where.apply({{"dim0", r}, {"dim1", c}})[0];
        EXPECT_EQ(first % chunk, 0);
        for (int32_t i = 1; i < std::min(chunk, cols); ++i)
          EXPECT_EQ(where.apply({{"dim0", r}, {"dim1", c + i}})[0], first + i);
      }
    // Rows 0-7 of column 0 (what eight lanes of a matrix load address) fall
    // in eight different 16-byte bank groups of a 128-byte line.
    std::set<int32_t> groups;
    for (int32_t r = 0; r < std::min(rows, 8); ++r)
      groups.insert((where.apply({{"dim0", r}, {"dim1", 0}})[0] * bytes % 128) /
                    16);
    EXPECT_EQ(int32_t(groups.size()), std::min(rows, 8))
        << rows << "x" << cols << " x" << bytes;
  }
}
