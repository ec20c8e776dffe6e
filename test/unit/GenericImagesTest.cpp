//===- GenericImagesTest.cpp - Which variants get a generic image ---------===//
//
// tools/kiln/GenericImages.h: the names launch conditions read, the groups
// they make, and which variant of each group gets the generic image.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/GenericImages.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::driver;

namespace {

TEST(GenericImages, NamesSkipOperators) {
  // matmul.tile's conditions: BM and M; `cdiv`, `min`, `neg` in operator
  // position are not names, but a param called `min` elsewhere is.
  EXPECT_EQ(namesInConditions({"(|| (== BM 16) (> M 32))",
                               "(|| (> BM 16) (<= M 32))"}),
            (std::vector<std::string>{"BM", "M"}));
  EXPECT_EQ(namesInConditions({"(< (cdiv n BLOCK) (min max 4))",
                               "(neg _x)"}),
            (std::vector<std::string>{"n", "BLOCK", "max", "_x"}));
  EXPECT_EQ(namesInConditions({"HEAD_DIM"}),
            (std::vector<std::string>{"HEAD_DIM"}));
  EXPECT_TRUE(namesInConditions({}).empty());
  EXPECT_TRUE(namesInConditions({"(&& 1 (! 0))"}).empty());
}

TEST(GenericImages, GroupIsTheValuesRead) {
  std::vector<std::pair<std::string, int64_t>> values = {
      {"BM", 64}, {"BN", 128}, {"warps", 4}, {"stages", 3}};
  EXPECT_EQ(conditionGroup(values, {"BM", "M"}), (std::vector<int64_t>{64}));
  EXPECT_EQ(conditionGroup(values, {"stages", "BM"}),
            (std::vector<int64_t>{64, 3}));
  EXPECT_TRUE(conditionGroup(values, {"M"}).empty());
}

TEST(GenericImages, GenericAndSharedBytes) {
  CodeObject generic;
  CodeObject fast;
  fast.assumesJson = R"({"div16":["N"]})";
  fast.resourcesJson = R"({"shared_bytes":20512,"registers":30})";
  generic.resourcesJson = R"({"shared_bytes":4096})";
  CodeObject none;
  none.assumesJson = "";
  none.resourcesJson = "{}";
  EXPECT_TRUE(isGenericImage(generic));
  EXPECT_TRUE(isGenericImage(none));
  EXPECT_FALSE(isGenericImage(fast));
  // Every parameter promised: a fast path with tensor maps alone (their
  // requirements may fail at launch) is no generic image.
  CodeObject maps;
  maps.tensorMapsJson = R"([{"param":"a"}])";
  EXPECT_FALSE(isGenericImage(maps));
  maps.tensorMapsJson = "[]";
  EXPECT_TRUE(isGenericImage(maps));
  EXPECT_EQ(sharedBytesOf({generic, fast}), 20512);
  EXPECT_EQ(sharedBytesOf({none}), 0);
  EXPECT_EQ(sharedBytesOf({}), 0);
}

CompiledVariant variant(int64_t index, std::vector<int64_t> group, bool kept,
                        bool hasGeneric, int64_t shared) {
  CompiledVariant v;
  v.variant = index;
  v.group = std::move(group);
  v.kept = kept;
  v.hasGeneric = hasGeneric;
  v.sharedBytes = shared;
  return v;
}

TEST(GenericImages, OneTryListPerUncoveredGroup) {
  std::vector<CompiledVariant> vs = {
      // Group {16}: least shared memory first, ties by index; a dropped
      // variant is never tried.
      variant(0, {16}, true, false, 20000),
      variant(1, {16}, true, false, 8000),
      variant(2, {16}, false, false, 0),
      variant(3, {16}, true, false, 8000),
      // Group {64}: one variant's only image is generic: covered.
      variant(4, {64}, true, false, 1000),
      variant(5, {64}, true, true, 50000),
      // Group {128}: every variant dropped: nothing to try.
      variant(6, {128}, false, false, 0),
      // Group {256}: a dropped variant with a generic image covers
      // nothing.
      variant(7, {256}, false, true, 0),
      variant(8, {256}, true, false, 4096),
  };
  std::vector<std::vector<size_t>> groups = uncoveredGroups(vs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{1, 3, 0}));
  EXPECT_EQ(groups[1], (std::vector<size_t>{8}));
}

TEST(GenericImages, NoConditionsOneGroup) {
  std::vector<CompiledVariant> vs = {variant(0, {}, true, false, 300),
                                     variant(1, {}, true, false, 200)};
  std::vector<std::vector<size_t>> groups = uncoveredGroups(vs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(uncoveredGroups({}).empty());
}

} // namespace
