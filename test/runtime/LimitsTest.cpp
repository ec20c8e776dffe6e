//===- LimitsTest.cpp - What the runtime refuses to take in ---------------===//
//
// Every limit of kiln/runtime.h's `limits` (docs/runtime.md, "Limits"): at
// the limit the input is read, one over it is refused with an error that
// names the limit, before anything of the claimed size is allocated.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/Internal.h"
#include "TestUtil.h"
#include "kiln/npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

using namespace kiln::rt;
using namespace kiln::test;
using nlohmann::json;

namespace {

Expected<Bundle> read(const std::string &Bytes) {
  return Bundle::readMemory(Bytes.data(), Bytes.size(), "b.kpack");
}

/// The bundle of `Spec` with its manifest replaced by `M`.
Expected<Bundle> readManifest(const BundleSpec &Spec, const json &M) {
  std::string Text = M.dump();
  return read(buildBundle(Spec, &Text));
}

void expectRefused(const Expected<Bundle> &B, const std::string &Message) {
  ASSERT_FALSE(B) << Message;
  EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(B.error().message(), Message);
}

TEST(Limits, BundleInMemory) {
  // Refused from its size alone: nothing is read or copied.
  char Byte = 0;
  auto B = Bundle::readMemory(&Byte, size_t(limits::kMaxBundleBytes) + 1,
                              "huge.kpack");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(B.error().message(),
            "huge.kpack: the bundle is 2.0 GiB, over the limit of 2 GiB");
}

TEST(Limits, BundleFile) {
  // A sparse file one byte over the limit: refused before it is read.
  std::string Path = tempDir() + "/huge.kpack";
  int Fd = ::open(Path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(Fd, 0);
  ASSERT_EQ(ftruncate(Fd, off_t(limits::kMaxBundleBytes) + 1), 0);
  ::close(Fd);
  auto B = Bundle::readFile(Path);
  ::unlink(Path.c_str());
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(B.error().message(), "cannot read '" + Path +
                                     "': it is 2.0 GiB, over the limit of "
                                     "2 GiB for a bundle");
}

TEST(Limits, ByteSizes) {
  EXPECT_EQ(detail::byteSize(300), "300 bytes");
  EXPECT_EQ(detail::byteSize(65536), "64 KiB");
  EXPECT_EQ(detail::byteSize(uint64_t(1) << 31), "2 GiB");
  EXPECT_EQ(detail::byteSize((uint64_t(1) << 24) + 1), "16.0 MiB");
  EXPECT_EQ(detail::byteSize(1536), "1.5 KiB");
}

TEST(Limits, Manifest) {
  BundleSpec Spec({vaddKernel()});
  json M = manifestJson(Spec);
  // Padded with spaces (still valid JSON) to exactly the limit: read.
  std::string Text = M.dump();
  Text.append(size_t(limits::kMaxManifestBytes) - Text.size(), ' ');
  auto B = read(buildBundle(Spec, &Text));
  ASSERT_TRUE(B) << B.error().message();
  Text.push_back(' ');
  expectRefused(read(buildBundle(Spec, &Text)),
                "b.kpack: the manifest is 16.0 MiB, over the limit of 16 MiB");
}

TEST(Limits, Kernels) {
  BundleSpec Spec({vaddKernel()});
  json M = manifestJson(Spec);
  json Many = json::array();
  for (size_t I = 0; I <= limits::kMaxKernels; ++I)
    Many.push_back(json::object());
  M["kernels"] = Many;
  expectRefused(readManifest(Spec, M),
                "b.kpack: manifest: 4097 kernels, over the limit of 4096");
}

TEST(Limits, Params) {
  TestKernel K = vaddKernel();
  // Exactly the limit: the kernel's 4 and 252 more.
  for (size_t I = K.Params.size(); I < limits::kMaxParams; ++I)
    K.Params.push_back({"p" + std::to_string(I), "i32"});
  BundleSpec Spec({K});
  auto B = read(buildBundle(Spec));
  ASSERT_TRUE(B) << B.error().message();
  EXPECT_EQ(B->kernels()[0].Params.size(), limits::kMaxParams);
  K.Params.push_back({"one_more", "i32"});
  expectRefused(read(buildBundle(BundleSpec({K}))),
                "b.kpack: manifest: kernel 'vadd': 257 parameters, over the "
                "limit of 256");
}

TEST(Limits, Variants) {
  BundleSpec Spec({vaddKernel()});
  json M = manifestJson(Spec);
  json Many = json::array();
  for (size_t I = 0; I <= limits::kMaxVariants; ++I)
    Many.push_back(json::object());
  M["kernels"][0]["variants"] = Many;
  expectRefused(readManifest(Spec, M),
                "b.kpack: manifest: kernel 'vadd': 65537 variants, over the "
                "limit of 65536");
}

TEST(Limits, ImagesPerVariant) {
  BundleSpec Spec({vaddKernel()});
  json M = manifestJson(Spec);
  json &Images = M["kernels"][0]["variants"][0]["images"];
  json One = Images[0];
  Images = json::array();
  for (size_t I = 0; I <= limits::kMaxImagesPerVariant; ++I)
    Images.push_back(One);
  expectRefused(readManifest(Spec, M),
                "b.kpack: manifest: kernel 'vadd': variant 0: 257 images, "
                "over the limit of 256");
}

TEST(Limits, Expressions) {
  BundleSpec Spec({vaddKernel()});
  json M = manifestJson(Spec);
  M["kernels"][0]["grid"] = {std::string(limits::kMaxExprBytes + 1, '1')};
  expectRefused(readManifest(Spec, M),
                "b.kpack: manifest: kernel 'vadd': grid axis 0 '" +
                    std::string(limits::kMaxExprBytes + 1, '1') +
                    "': expression is 65537 bytes, over the limit of 65536");
}

/// A .npy file (format 2.0, 32-bit header length) with `Header` padded
/// to a multiple of 64 bytes, then `Data`.
std::string npy(std::string Header, const std::string &Data = "") {
  size_t Total = 12 + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header.push_back('\n');
  std::string Out = "\x93NUMPY";
  Out.push_back(char(2));
  Out.push_back(char(0));
  uint32_t L = uint32_t(Header.size());
  for (int I = 0; I < 4; ++I)
    Out.push_back(char(L >> (8 * I)));
  return Out + Header + Data;
}

TEST(Limits, NpyHeader) {
  std::string Dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  std::string Small = npy(Dict, "abcd");
  auto A = parseNpy(reinterpret_cast<const uint8_t *>(Small.data()),
                    Small.size(), "a.npy");
  ASSERT_TRUE(A) << A.error().message();
  // Spaces pad the dict past the limit: refused from its length alone.
  std::string Big = npy(Dict + std::string(limits::kMaxNpyHeaderBytes, ' '));
  auto B = parseNpy(reinterpret_cast<const uint8_t *>(Big.data()), Big.size(),
                    "b.npy");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message(),
            "b.npy: the header is 65652 bytes, over the limit of 65536");
}

TEST(Limits, NpyRank) {
  auto Shape = [](size_t Rank) {
    std::string S = "(";
    for (size_t I = 0; I < Rank; ++I)
      S += "1,";
    return S + ")";
  };
  std::string At = npy("{'descr': '<f4', 'fortran_order': False, 'shape': " +
                           Shape(limits::kMaxNpyRank) + ", }",
                       "abcd");
  auto A = parseNpy(reinterpret_cast<const uint8_t *>(At.data()), At.size(),
                    "a.npy");
  ASSERT_TRUE(A) << A.error().message();
  EXPECT_EQ(A->Shape.size(), limits::kMaxNpyRank);
  std::string Over =
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': " +
              Shape(limits::kMaxNpyRank + 1) + ", }",
          "abcd");
  auto B = parseNpy(reinterpret_cast<const uint8_t *>(Over.data()),
                    Over.size(), "b.npy");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message(),
            "b.npy: bad .npy header: 'shape' has more than 64 dimensions");
}

} // namespace
