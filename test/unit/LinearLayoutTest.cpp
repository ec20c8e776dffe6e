//===- LinearLayoutTest.cpp - The layout algebra of the GPU stage ---------===//
//
// Proves the algebra without a GPU: every layout covers its tile exactly
// once (or, when broadcast, every element with the same number of copies),
// conversions compose and invert, and the named layouts hold the elements
// the vendors' documents say.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/LinearLayout.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace kiln::gpu;
using LL = LinearLayout;

namespace {

const std::string D0 = dims::tileDim(0), D1 = dims::tileDim(1);

/// Every input index, enumerated, with its image.
std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>
enumerate(const LL &l) {
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> all;
  std::vector<int32_t> idx(l.getInDims().size(), 0);
  for (int64_t n = 0; n < l.getTotalInSize(); ++n) {
    int64_t rest = n;
    for (size_t i = 0; i < idx.size(); ++i) {
      int32_t size = int32_t(1) << l.getInDims()[i].bases.size();
      idx[i] = rest % size;
      rest /= size;
    }
    auto out = l.applyIndices(idx);
    all.push_back({idx, std::vector<int32_t>(out.begin(), out.end())});
  }
  return all;
}

/// Each element of the output space is held by exactly `copies` inputs.
void expectCoversEvenly(const LL &l, int64_t copies) {
  std::map<std::vector<int32_t>, int64_t> count;
  for (auto &[in, out] : enumerate(l))
    ++count[out];
  EXPECT_EQ(int64_t(count.size()), l.getTotalOutSize()) << l.str();
  for (auto &[out, n] : count)
    EXPECT_EQ(n, copies) << l.str();
}

/// A blocked layout of a 2-d tile, built the way the GPU stage builds it.
LL blocked2D(int spt0, int spt1, int tpw0, int tpw1, int wpb0, int wpb1,
             int rows, int cols) {
  LL l = LL::identity1D(spt1, dims::kRegister, D1) *
         LL::identity1D(spt0, dims::kRegister, D0) *
         LL::identity1D(tpw1, dims::kLane, D1) *
         LL::identity1D(tpw0, dims::kLane, D0) *
         LL::identity1D(wpb1, dims::kWarp, D1) *
         LL::identity1D(wpb0, dims::kWarp, D0);
  return l.transposeOuts({D0, D1}).fitToShape({rows, cols}, dims::kRegister);
}

/// Random invertible layout: a random permutation of the output bits,
/// XOR-mixed by an upper-triangular matrix.
LL randomInvertible(std::mt19937 &rng, int regBits, int laneBits,
                    int warpBits) {
  int total = regBits + laneBits + warpBits;
  std::vector<uint64_t> cols(total);
  for (int i = 0; i < total; ++i)
    cols[i] = uint64_t(1) << i;
  std::shuffle(cols.begin(), cols.end(), rng);
  // Mix: add earlier columns into later ones (keeps full rank).
  for (int j = 1; j < total; ++j)
    if (rng() & 1)
      cols[j] ^= cols[rng() % j];
  int outBits0 = total / 2, outBits1 = total - outBits0;
  auto basis = [&](uint64_t c) -> LL::Basis {
    return {int32_t(c & ((1u << outBits0) - 1)), int32_t(c >> outBits0)};
  };
  LL::InDim r{dims::kRegister.str(), {}}, la{dims::kLane.str(), {}},
      w{dims::kWarp.str(), {}};
  int i = 0;
  for (; i < regBits; ++i)
    r.bases.push_back(basis(cols[i]));
  for (; i < regBits + laneBits; ++i)
    la.bases.push_back(basis(cols[i]));
  for (; i < total; ++i)
    w.bases.push_back(basis(cols[i]));
  return LL({r, la, w}, {{D0, 1 << outBits0}, {D1, 1 << outBits1}});
}

} // namespace

TEST(LinearLayout, WorkedExampleOfTheHeader) {
  LL l({{"register", {{1}}}, {"lane", {{2}, {4}}}}, {{D0, 8}});
  EXPECT_EQ(l.apply({{"lane", 3}, {"register", 1}})[0], 7);
  EXPECT_EQ(l.apply({{"lane", 1}, {"register", 0}})[0], 2);
  expectCoversEvenly(l, 1);
  EXPECT_TRUE(l.isInvertible());
  EXPECT_EQ(l.getNumConsecutive("register", D0), 2);
}

TEST(LinearLayout, ProductPutsOuterAbove) {
  LL l = LL::identity1D(4, "register", D0) * LL::identity1D(32, "lane", D0);
  EXPECT_EQ(l.getOutDimSize(D0), 128);
  EXPECT_EQ(l.apply({{"register", 3}, {"lane", 1}})[0], 7);
  EXPECT_EQ(l.getNumConsecutive("register", D0), 4);
  expectCoversEvenly(l, 1);
}

TEST(LinearLayout, BlockedLayoutsCoverTheirTileExactlyOnce) {
  // 1-d: 4 elements per thread, 32 lanes, 4 warps over 512 .. 4096.
  for (int size : {512, 1024, 4096}) {
    LL l = (LL::identity1D(4, "register", D0) *
            LL::identity1D(32, "lane", D0) * LL::identity1D(4, "warp", D0))
               .fitToShape({size}, "register");
    EXPECT_EQ(l.getInDimSize("register"), size / 128);
    expectCoversEvenly(l, 1);
    EXPECT_TRUE(l.isInvertible());
  }
  // 2-d: row-major coalescing over 64x64 with 4 warps.
  LL b = blocked2D(1, 4, 2, 16, 4, 1, 64, 64);
  expectCoversEvenly(b, 1);
  EXPECT_EQ(b.getNumConsecutive("register", D1), 4);
}

TEST(LinearLayout, SmallTilesAreBroadcastNotDropped) {
  // 128 threads holding a 64-element tile: each element held twice.
  LL l = (LL::identity1D(32, "lane", D0) * LL::identity1D(4, "warp", D0))
             .fitToShape({64}, "register");
  expectCoversEvenly(l, 2);
  EXPECT_TRUE(l.isSurjective());
  EXPECT_FALSE(l.isInjective());
  EXPECT_EQ(l.getZeroBasesMask("warp"), 0b10u);
  EXPECT_EQ(l.getFreeVariableMask("warp"), 0b10u);
}

TEST(LinearLayout, SliceOfABlockedLayout) {
  // Reducing dim1 of a 64x64 blocked tile: the result lives on dim0 only;
  // lanes along dim1 hold copies, registers along dim1 are dropped.
  LL b = blocked2D(1, 4, 2, 16, 4, 1, 64, 64);
  LL s = b.removeOut(D1).removeZeroBases("register");
  EXPECT_EQ(s.getOutDims().size(), 1u);
  expectCoversEvenly(s, 16);
  EXPECT_EQ(s.getFreeVariableMask("lane"), 0b01111u);
}

TEST(LinearLayout, ComposeAndInvertRoundTrip) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 50; ++trial) {
    LL l = randomInvertible(rng, 3, 5, 2);
    ASSERT_TRUE(l.isInvertible()) << l.str();
    std::optional<LL> inv = l.invert();
    ASSERT_TRUE(inv);
    LL id = l.compose(*inv);
    for (auto &[in, out] : enumerate(id))
      EXPECT_EQ(in, out) << id.str();
    LL id2 = inv->compose(l);
    for (auto &[in, out] : enumerate(id2))
      EXPECT_EQ(in, out);
  }
}

TEST(LinearLayout, ConversionMapsEachThreadToTheHolderOfItsElement) {
  // Conversions between random invertible layouts and a blocked layout:
  // dst.invertAndCompose(src) maps each hardware index of dst to one of
  // src holding the same element.
  std::mt19937 rng(99);
  LL blocked = (LL::identity1D(8, "register", D0) *
                LL::identity1D(32, "lane", D0) * LL::identity1D(4, "warp", D1))
                   .transposeOuts({D0, D1});
  for (int trial = 0; trial < 20; ++trial) {
    LL other = randomInvertible(rng, 3, 5, 2);
    ASSERT_EQ(other.getOutDimSize(D0) * other.getOutDimSize(D1),
              blocked.getTotalOutSize());
    LL dst = other.reshapeOuts({{D0, 256}, {D1, 4}});
    std::optional<LL> move = dst.invertAndCompose(blocked);
    ASSERT_TRUE(move);
    for (auto &[in, out] : enumerate(*move))
      EXPECT_EQ(dst.applyIndices(in), blocked.applyIndices(out));
    // And back.
    std::optional<LL> back = blocked.invertAndCompose(dst);
    ASSERT_TRUE(back);
    LL roundTrip = move->compose(*back);
    for (auto &[in, out] : enumerate(roundTrip))
      EXPECT_EQ(in, out);
  }
}

TEST(LinearLayout, ConversionFromABroadcastLayoutPicksACopy) {
  LL src = (LL::identity1D(32, "lane", D0) * LL::identity1D(4, "warp", D0))
               .fitToShape({64}, "register");
  LL dst = (LL::identity1D(2, "register", D0) *
            LL::identity1D(32, "lane", D0) * LL::zeros1D(4, "warp", D0));
  std::optional<LL> move = dst.invertAndCompose(src);
  ASSERT_TRUE(move);
  for (auto &[in, out] : enumerate(*move))
    EXPECT_EQ(dst.applyIndices(in), src.applyIndices(out));
  // Free bits of src (warp bit 1) are never chosen.
  for (auto &[in, out] : enumerate(*move))
    EXPECT_EQ(out[1] & 2, 0);
}

TEST(LinearLayout, ConversionFailsWhenSourceLacksElements) {
  // 32 lanes holding elements 0-31 of a 64-element tile cannot feed a
  // layout that holds all 64.
  LL half({{"lane", {{1}, {2}, {4}, {8}, {16}}}}, {{D0, 64}});
  EXPECT_FALSE(half.isSurjective());
  LL full = LL::identity1D(2, "register", D0) * LL::identity1D(32, "lane", D0);
  EXPECT_FALSE(full.invertAndCompose(half).has_value());
  EXPECT_FALSE(half.pseudoInvert().has_value());
  EXPECT_TRUE(half.invertAndCompose(full).has_value());
}

TEST(LinearLayout, SwizzledSharedLayoutIsABijection) {
  // 8 rows of 64 halves; row r's 16-byte chunks are XORed with r: a read of
  // one column by 8 threads hits 8 different chunks (no bank conflict).
  LL::InDim off{"offset", {}};
  for (int b = 0; b < 3; ++b) // within a chunk: 8 halves
    off.bases.push_back({0, 1 << b});
  for (int b = 0; b < 3; ++b) // chunk index
    off.bases.push_back({0, 8 << b});
  for (int b = 0; b < 3; ++b) // row, XOR-ing the chunk index
    off.bases.push_back({1 << b, 8 << b});
  LL shared({off}, {{D0, 8}, {D1, 64}});
  EXPECT_TRUE(shared.isInvertible());
  std::optional<LL> where = shared.invert();
  ASSERT_TRUE(where);
  std::set<int32_t> chunks;
  for (int r = 0; r < 8; ++r) {
    int32_t offset = where->apply({{D0, r}, {D1, 0}})[0];
    EXPECT_EQ(offset / 64, r);
    chunks.insert((offset % 64) / 8);
  }
  EXPECT_EQ(chunks.size(), 8u);
}

TEST(LinearLayout, ReshapeIsRowMajor) {
  LL l = LL::identity1D(8, "register", D0) * LL::identity1D(16, "lane", D0);
  LL r = l.reshapeOuts({{D0, 8}, {D1, 16}});
  // Element 17 of the 1-d tile is row 1, column 1 of the 8x16 tile.
  for (auto &[in, out] : enumerate(l)) {
    auto o2 = r.applyIndices(in);
    EXPECT_EQ(o2[0] * 16 + o2[1], out[0]);
  }
}

TEST(LinearLayout, SublayoutTransposeAndRename) {
  LL b = blocked2D(2, 2, 4, 8, 2, 2, 32, 64);
  LL t = b.transposeOuts({D1, D0});
  for (auto &[in, out] : enumerate(b)) {
    auto o = t.applyIndices(in);
    EXPECT_EQ(o[0], out[1]);
    EXPECT_EQ(o[1], out[0]);
  }
  LL lanes = b.sublayout({"lane"}, {D0, D1});
  EXPECT_EQ(lanes.getInDimSize("lane"), 32);
  EXPECT_TRUE(b.renameOut(D0, "m").hasOutDim("m"));
  LL ins = b.transposeIns({"warp", "lane", "register"});
  EXPECT_EQ(ins.getInDims()[0].name, "warp");
  LL e = b.insertOut(0, "dim9");
  EXPECT_EQ(e.getOutDims().size(), 3u);
  EXPECT_EQ(e.removeOut("dim9"), b);
}

TEST(LinearLayout, StrAndEquality) {
  LL l = LL::identity1D(2, "register", D0) * LL::identity1D(4, "lane", D0);
  EXPECT_EQ(l.str(), "register: [[1]], lane: [[2], [4]] -> dim0 = 8");
  EXPECT_EQ(l, LL::identity1D(2, "register", D0) *
                   LL::identity1D(4, "lane", D0));
  EXPECT_NE(l, LL::identity1D(4, "lane", D0) *
                   LL::identity1D(2, "register", D0));
}
