//===- BundleReaderTest.cpp - The runtime's bundle reader -----------------===//
//
// Bundles written as the compiler writes them are read back; truncated,
// mutated, inconsistent and newer-version bundles are refused with one
// clear message, never a crash.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/Internal.h"
#include "TestUtil.h"

#include <cstring>
#include <random>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

/// A small bundle: two kernels, four images of a few bytes each.
BundleSpec smallSpec() {
  BundleSpec S{{vaddKernel(), printerKernel()}};
  S.ImageBytes = "\x7f" "ELF tiny image";
  return S;
}

/// A kernel with every kind of promise and a launch condition; never
/// launched (its entry does not exist).
TestKernel promiseKernel() {
  return {"promises",
          {{"out", "*i32"},
           {"n", "i32"},
           {"stride", "i32", 8, 0},
           {"p", "*f32", 0, 16},
           {"flag", "bool"}},
          {"BLOCK"},
          {{64}},
          {"n"},
          {},
          {"(>= BLOCK n)"}};
}

Expected<Bundle> read(const std::string &Bytes) {
  return Bundle::readMemory(Bytes.data(), Bytes.size(), "b.kpack");
}

void writeLE(std::string &Bytes, size_t At, uint64_t V, unsigned Size) {
  for (unsigned I = 0; I < Size; ++I)
    Bytes[At + I] = char(V >> (8 * I));
}

uint64_t readLE(const std::string &Bytes, size_t At, unsigned Size) {
  uint64_t V = 0;
  for (unsigned I = 0; I < Size; ++I)
    V |= uint64_t(uint8_t(Bytes[At + I])) << (8 * I);
  return V;
}

TEST(BundleReader, FileAndMemory) {
  std::string Bytes = buildBundle({{vaddKernel(), promiseKernel()}});
  std::string Path = tempDir() + "/v.kpack";
  ASSERT_TRUE(writeFileBytes(Path, Bytes));
  auto FromFile = Bundle::readFile(Path);
  ASSERT_TRUE(FromFile) << FromFile.error().message();
  auto FromMemory = read(Bytes);
  ASSERT_TRUE(FromMemory) << FromMemory.error().message();
  for (const Bundle *B : {&*FromFile, &*FromMemory}) {
    EXPECT_EQ(B->source(), "test.tile");
    ASSERT_EQ(B->kernels().size(), 2u);
    const KernelInfo &K = B->kernels()[0];
    EXPECT_EQ(K.Name, "vadd");
    ASSERT_EQ(K.Params.size(), 4u);
    EXPECT_EQ(K.Params[0].Type.str(), "*f32");
    EXPECT_EQ(K.Params[0].Align, 16);
    EXPECT_EQ(K.Params[3].Type.str(), "i32");
    EXPECT_EQ(K.ConstParams,
              (std::vector<std::string>{"BLOCK", "warps", "stages"}));
    EXPECT_EQ(K.Grid, (std::vector<std::string>{"(cdiv n BLOCK)"}));
    EXPECT_EQ(K.Key, (std::vector<std::string>{"n"}));
    ASSERT_EQ(K.Variants.size(), 3u);
    EXPECT_EQ(K.Variants[2].ConstValues, (std::vector<int64_t>{16, 4, 2}));
    EXPECT_EQ(K.variantName(K.Variants[2]), "vadd_v2");
    const ImageInfo &Img = K.Variants[1].Images.at(0);
    EXPECT_EQ(Img.Entry, "vadd_v1");
    EXPECT_EQ(Img.Triple, hostTriple());
    EXPECT_EQ(Img.ImageKind, 1);
    EXPECT_EQ(Img.Offset % 8, 0u);
    ASSERT_EQ(Img.Size, testKernelsBytes().size());
    EXPECT_EQ(std::memcmp(B->imageData(Img), testKernelsBytes().data(),
                          Img.Size),
              0);
    const KernelInfo &T = B->kernels()[1];
    EXPECT_EQ(T.Params[2].Div, 8);
    EXPECT_EQ(T.Params[4].Type.str(), "bool");
    EXPECT_EQ(T.LaunchConditions,
              (std::vector<std::string>{"(>= BLOCK n)"}));
  }
  EXPECT_EQ(FromFile->name(), Path);
  EXPECT_EQ(FromMemory->name(), "b.kpack");

  auto Missing = Bundle::readFile("/nonexistent/x.kpack");
  ASSERT_FALSE(Missing);
  EXPECT_EQ(Missing.error().code(), ErrorCode::IO);
  EXPECT_EQ(Missing.error().message(),
            "cannot read '/nonexistent/x.kpack': No such file or directory");
}

TEST(BundleReader, NotABundle) {
  for (std::string Bytes : {std::string(), std::string("hello world"),
                            std::string(64, '\0')}) {
    auto B = read(Bytes);
    ASSERT_FALSE(B);
    EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
    EXPECT_EQ(B.error().message().rfind("b.kpack: not a Kiln bundle (", 0),
              0u)
        << B.error().message();
  }
  // An image first: no manifest.
  std::string Image = offloadBinary(1, 0, {{"triple", "x"}}, "abc");
  auto B = read(Image);
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message(),
            "b.kpack: not a Kiln bundle (its first offloading binary is not "
            "a Kiln manifest)");
}

TEST(BundleReader, EveryTruncationIsAnError) {
  std::string Bytes = buildBundle(smallSpec());
  ASSERT_TRUE(read(Bytes));
  for (size_t Length = 0; Length < Bytes.size(); ++Length) {
    auto B = read(Bytes.substr(0, Length));
    ASSERT_FALSE(B) << "a prefix of " << Length << " bytes was accepted";
    EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
  }
  auto B = read(Bytes.substr(0, Bytes.size() - 8));
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message().rfind("b.kpack: bundle is truncated: the "
                                      "binary at offset ",
                                      0),
            0u)
      << B.error().message();
}

TEST(BundleReader, MutationsNeverCrash) {
  std::string Bytes = buildBundle(smallSpec());
  // Every byte of the first binary's header, entry and string map, set to
  // a few interesting values.
  for (size_t At = 0; At < 256 && At < Bytes.size(); ++At)
    for (int V : {0x00, 0x01, 0x07, 0x7f, 0x80, 0xff}) {
      std::string M = Bytes;
      M[At] = char(V);
      auto B = read(M);
      if (!B)
        EXPECT_FALSE(B.error().message().empty());
    }
  // Random mutations anywhere, including in later binaries.
  std::mt19937 Rng(1234);
  for (int Round = 0; Round < 3000; ++Round) {
    std::string M = Bytes;
    int Edits = 1 + Round % 4;
    for (int E = 0; E < Edits; ++E)
      M[Rng() % M.size()] = char(Rng());
    if (Round % 7 == 0)
      M.resize(Rng() % M.size());
    auto B = read(M);
    if (!B)
      EXPECT_FALSE(B.error().message().empty());
  }
}

TEST(BundleReader, UnknownVersions) {
  std::string Bytes = buildBundle(smallSpec());
  std::string Container = Bytes;
  writeLE(Container, 4, 2, 4);
  auto C = read(Container);
  ASSERT_FALSE(C);
  EXPECT_EQ(C.error().code(), ErrorCode::UnsupportedVersion);
  EXPECT_EQ(C.error().message(),
            "b.kpack: bundle container version 2 is not supported (this "
            "runtime reads container version 1)");

  for (const char *Version : {"5", "2"}) {
    BundleSpec Newer = smallSpec();
    Newer.FormatVersion = Version;
    auto F = read(buildBundle(Newer));
    ASSERT_FALSE(F);
    EXPECT_EQ(F.error().code(), ErrorCode::UnsupportedVersion);
    EXPECT_EQ(F.error().message(),
              std::string("b.kpack: bundle format version ") + Version +
                  " is not supported (this runtime reads versions 3 and 4)");
  }

  BundleSpec Json = smallSpec();
  Json.JsonVersion = 7;
  auto J = read(buildBundle(Json));
  ASSERT_FALSE(J);
  EXPECT_EQ(J.error().code(), ErrorCode::UnsupportedVersion);
  EXPECT_EQ(J.error().message(), "b.kpack: bundle format version 7 is not "
                                 "supported (this runtime reads versions 3 "
                                 "and 4)");

  // Version 4 (images may have tensor maps) is read; the JSON's version
  // and every binary's must be the manifest binary's.
  BundleSpec Four = smallSpec();
  Four.FormatVersion = "4";
  Four.JsonVersion = 4;
  auto V4 = read(buildBundle(Four));
  EXPECT_TRUE(V4) << V4.error().message();
  Four.JsonVersion = 3;
  auto Mixed = read(buildBundle(Four));
  ASSERT_FALSE(Mixed);
  EXPECT_EQ(Mixed.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(Mixed.error().message(),
            "b.kpack: manifest: 'version' is 3, but the bundle's "
            "kiln.format-version is 4");
  // An image binary of version 3 after a version-4 manifest.
  std::string V3 = buildBundle(smallSpec());
  BundleSpec FourAgain = smallSpec();
  FourAgain.FormatVersion = "4";
  FourAgain.JsonVersion = 4;
  std::string V4Bytes = buildBundle(FourAgain);
  auto Manifest4 = detail::readContainer(
      reinterpret_cast<const uint8_t *>(V4Bytes.data()), V4Bytes.size(), "b");
  auto Binaries3 = detail::readContainer(
      reinterpret_cast<const uint8_t *>(V3.data()), V3.size(), "b");
  ASSERT_TRUE(Manifest4 && Binaries3);
  uint64_t Images3 = (*Binaries3)[1].Offset, Images4 = (*Manifest4)[1].Offset;
  std::string Spliced = V4Bytes.substr(0, Images4) + V3.substr(Images3);
  auto S = read(Spliced);
  ASSERT_FALSE(S);
  EXPECT_EQ(S.error().message(),
            "b.kpack: bundle is corrupt: the binary at offset " +
                std::to_string(Images4) +
                " has format version 3, the manifest 4");
}

TEST(BundleReader, StructuralDamage) {
  std::string Bytes = buildBundle(smallSpec());
  auto Expect = [&](std::string M, const std::string &Tail) {
    auto B = read(M);
    ASSERT_FALSE(B) << Tail;
    EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
    const std::string &Msg = B.error().message();
    EXPECT_TRUE(Msg.size() >= Tail.size() &&
                Msg.compare(Msg.size() - Tail.size(), Tail.size(), Tail) == 0)
        << Msg;
  };
  uint64_t EntryOffset = readLE(Bytes, 16, 8);
  ASSERT_EQ(EntryOffset, 32u);
  std::string M = Bytes;
  writeLE(M, 16, 36, 8);
  Expect(M, "misaligned entry offset 36");
  M = Bytes;
  writeLE(M, 16, 1ull << 40, 8);
  Expect(M, "entry (offset 1099511627776, size 40) is outside the binary");
  M = Bytes;
  writeLE(M, EntryOffset + 16, 1ull << 40, 8); // string count
  Expect(M, "absurd string count 1099511627776");
  M = Bytes;
  writeLE(M, EntryOffset + 8, 32, 8); // string map over the entry
  Expect(M, "its entry, string map and image overlap");
  M = Bytes;
  writeLE(M, EntryOffset + 32, ~0ull, 8); // image size
  Expect(M, "is outside the binary");
  M = Bytes;
  writeLE(M, EntryOffset + 24, readLE(Bytes, EntryOffset + 24, 8) + 4, 8);
  Expect(M, "misaligned image offset " +
                std::to_string(readLE(Bytes, EntryOffset + 24, 8) + 4));
  M = Bytes;
  writeLE(M, 8, 8, 8); // binary size
  Expect(M, "impossible binary size 8");
  M = Bytes;
  writeLE(M, EntryOffset, 9, 2);
  Expect(M, "unknown image kind 9");
  // A string key offset pointing past the binary.
  uint64_t StringMap = readLE(Bytes, EntryOffset + 8, 8);
  M = Bytes;
  writeLE(M, StringMap, 1ull << 33, 8);
  Expect(M, "string 0 is outside the binary or unterminated");
  Expect(Bytes + std::string(8, '\0'),
         "no offloading binary here (trailing data?)");
}

TEST(BundleReader, InconsistentManifest) {
  BundleSpec Spec = smallSpec();
  auto Expect = [&](const nlohmann::json &Manifest, ErrorCode Code,
                    const std::string &Message) {
    std::string Text = Manifest.dump();
    auto B = read(buildBundle(Spec, &Text));
    ASSERT_FALSE(B) << Message;
    EXPECT_EQ(B.error().code(), Code);
    EXPECT_EQ(B.error().message(), "b.kpack: " + Message);
  };
  nlohmann::json Good = manifestJson(Spec);

  std::string Broken = "{\"format\": \"kiln-bundle\", ";
  auto B = read(buildBundle(Spec, &Broken));
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message().rfind("b.kpack: manifest: not valid JSON: "
                                      "parse error at line 1",
                                      0),
            0u)
      << B.error().message();

  nlohmann::json J = Good;
  J["kernels"][0]["grid"] = {"(cdiv n B)"};
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': grid axis 0 '(cdiv n B)': unknown name "
         "'B'");
  J = Good;
  J["kernels"][0]["grid"] = {"(cdiv x BLOCK)"};
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': grid axis 0 '(cdiv x BLOCK)': 'x' is "
         "*f32; only integer and bool params may be used");
  J = Good;
  J["kernels"][0]["grid"] = {"(cdiv n BLOCK"};
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': grid axis 0 '(cdiv n BLOCK': expected ')' "
         "after the operands of 'cdiv'");
  J = Good;
  J["kernels"][0]["grid"] = {"1", "1", "1", "1"};
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': the grid has 4 axes (1 to 3 expected)");
  J = Good;
  J["kernels"][0]["params"][0]["type"] = "*bool";
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': parameter 'x' has unknown type '*bool'");
  J = Good;
  J["kernels"][0]["params"][0]["align"] = 12;
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': @align(12) on 'x' is not a power of two");
  J = Good;
  J["kernels"][0]["variants"][1]["const"].erase("BLOCK");
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: kernel 'vadd': variant 1: const param 'BLOCK' has no "
         "integer value");
  J = Good;
  J["kernels"][1]["name"] = "vadd";
  Expect(J, ErrorCode::InvalidBundle, "manifest: kernel 'vadd' appears twice");
  J = Good;
  J["format"] = "other";
  Expect(J, ErrorCode::InvalidBundle,
         "manifest: 'format' is not \"kiln-bundle\"");
  J = Good;
  J["kernels"] = 3;
  Expect(J, ErrorCode::InvalidBundle, "manifest: 'kernels' must be an array");

  // An image the manifest does not list, and one it lists but lacks.
  J = Good;
  J["kernels"][0]["variants"].erase(2);
  std::string Text = J.dump();
  auto Extra = read(buildBundle(Spec, &Text));
  ASSERT_FALSE(Extra);
  std::string Suffix = "(kernel 'vadd', variant 2, " + hostTriple() + " " +
                       hostArch() + ") is not listed in the manifest";
  const std::string &Msg = Extra.error().message();
  EXPECT_EQ(Msg.rfind("b.kpack: bundle is corrupt: image at offset ", 0), 0u)
      << Msg;
  EXPECT_EQ(Msg.substr(Msg.size() - std::min(Msg.size(), Suffix.size())),
            Suffix);
  J = Good;
  nlohmann::json V3 = J["kernels"][0]["variants"][2];
  V3["index"] = 3;
  V3["images"][0]["entry"] = "vadd_v3";
  J["kernels"][0]["variants"].push_back(V3);
  Expect(J, ErrorCode::InvalidBundle,
         "bundle is corrupt: the manifest lists image vadd_v3 for " +
             hostTriple() + " " + hostArch() +
             " but the bundle has no code object for it");
  J = Good;
  J["kernels"][0]["variants"][1]["images"][0]["entry"] = "other";
  Text = J.dump();
  auto Entry = read(buildBundle(Spec, &Text));
  ASSERT_FALSE(Entry);
  EXPECT_NE(Entry.error().message().find(
                "has entry 'vadd_v1' but the manifest says 'other'"),
            std::string::npos)
      << Entry.error().message();
}

} // namespace
