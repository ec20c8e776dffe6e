//===- TensorMapTest.cpp - Images with TMA tensor maps --------------------===//
//
// The manifest's "tensor_maps" (format 4, docs/bundle.md): what the reader
// accepts and the located message of each thing it refuses; the launch's
// evaluation of the maps and TMA's requirements, which send a launch to
// the next image when they break; the CUDA device's cuTensorMapEncodeTiled
// arguments (on the fake driver, FakeCuda.h), its failure, and drivers
// without it; the host and HIP devices, which run no such image. The
// emulator's side is in EmuDeviceTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/CudaDevice.h"
#include "../../runtime/lib/HipDevice.h"
#include "FakeDriver.h"
#include "TestUtil.h"

#include <cstring>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::test;
using nlohmann::json;

namespace {

json tensorMap(const std::string &Param, const std::string &Type,
               std::vector<std::string> Sizes, std::vector<std::string> Strides,
               std::vector<int64_t> Box, int64_t Swizzle) {
  return {{"param", Param},     {"type", Type}, {"sizes", Sizes},
          {"strides", Strides}, {"box", Box},   {"swizzle", Swizzle}};
}

/// tma(a: *f16, b: *f32, M: i32, K: i32, lda: i32, bs: i32); grid (1).
TestKernel tmaKernel() {
  return {"tma",
          {{"a", "*f16"},
           {"b", "*f32"},
           {"M", "i32"},
           {"K", "i32"},
           {"lda", "i32"},
           {"bs", "i32"}},
          {"BK"},
          {{64}},
          {"1"},
          {},
          {}};
}

/// The maps of tma's fast path: a 3-d view of `a` (2 x M x K, f16, box
/// 1 x 128 x BK, 128-byte swizzle) and a 1-d one of `b` (K f32, box 32).
json tmaMaps() {
  return {tensorMap("a", "f16", {"2", "M", "K"}, {"bs", "lda", "1"},
                    {1, 128, 64}, 128),
          tensorMap("b", "f32", {"K"}, {"1"}, {32}, 0)};
}

/// A bundle spec in format 4.
BundleSpec version4(BundleSpec Spec) {
  Spec.FormatVersion = "4";
  Spec.JsonVersion = 4;
  return Spec;
}

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

TEST(TensorMapManifest, Parsed) {
  BundleSpec Spec = version4({{tmaKernel()}});
  TestImage I = cudaImage(fakeImage({"tma_v0 params=6 tmaps=2"}));
  I.TensorMaps = tmaMaps();
  Spec.Images = {I};
  std::string Bytes = buildBundle(Spec);
  auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_TRUE(B) << B.error().message();
  const std::vector<TensorMapInfo> &Maps =
      B->kernels()[0].Variants[0].Images[0].TensorMaps;
  ASSERT_EQ(Maps.size(), 2u);
  EXPECT_EQ(Maps[0].Param, "a");
  EXPECT_EQ(Maps[0].Type, ScalarType::F16);
  EXPECT_EQ(Maps[0].Sizes, (std::vector<std::string>{"2", "M", "K"}));
  EXPECT_EQ(Maps[0].Strides, (std::vector<std::string>{"bs", "lda", "1"}));
  EXPECT_EQ(Maps[0].Box, (std::vector<int64_t>{1, 128, 64}));
  EXPECT_EQ(Maps[0].Swizzle, 128);
  EXPECT_EQ(Maps[1].Param, "b");
  EXPECT_EQ(Maps[1].Type, ScalarType::F32);
}

TEST(TensorMapManifest, BadMaps) {
  auto Expect = [](json Maps, const std::string &Why) {
    BundleSpec Spec = version4({{tmaKernel()}});
    TestImage I = cudaImage(fakeImage({"tma_v0 params=6 tmaps=1"}));
    I.TensorMaps = std::move(Maps);
    Spec.Images = {I};
    std::string Bytes = buildBundle(Spec);
    auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
    ASSERT_FALSE(B) << Why;
    EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
    EXPECT_EQ(B.error().message(),
              "t.kpack: manifest: kernel 'tma': variant 0: image "
              "nvptx64-nvidia-cuda sm_90: " +
                  Why);
  };
  json Good = tensorMap("a", "f16", {"M", "K"}, {"lda", "1"}, {128, 64}, 128);
  auto With = [&](const char *Key, json Value) {
    json M = Good;
    M[Key] = std::move(Value);
    return json::array({M});
  };
  Expect(Good, "'tensor_maps' must be an array of tensor maps");
  Expect(json::array({7}), "tensor map 0: it needs a 'param' string");
  Expect(With("param", "x"),
         "tensor map 0 (x): 'param' names 'x', which is not a pointer param");
  Expect(With("param", "M"),
         "tensor map 0 (M): 'param' names 'M', which is not a pointer param");
  Expect(With("type", "f17"), "tensor map 0 (a): 'type' must be an element "
                              "type (f16, bf16, f32, i8, ...), not 'f17'");
  Expect(With("type", "bool"), "tensor map 0 (a): 'type' must be an element "
                               "type (f16, bf16, f32, i8, ...), not 'bool'");
  Expect(With("type", 16), "tensor map 0 (a): 'type' must be an element "
                           "type (f16, bf16, f32, i8, ...)");
  Expect(With("sizes", "M"),
         "tensor map 0 (a): 'sizes' and 'strides' must be arrays of "
         "expressions");
  json NoStrides = Good;
  NoStrides.erase("strides");
  Expect(json::array({NoStrides}),
         "tensor map 0 (a): 'sizes' and 'strides' must be arrays of "
         "expressions");
  Expect(With("sizes", json::array()),
         "tensor map 0 (a): it has 0 dimensions (1 to 5 expected)");
  json Six = tensorMap("a", "f16", {"1", "1", "1", "1", "1", "M"},
                       {"1", "1", "1", "1", "1", "1"}, {1, 1, 1, 1, 1, 8}, 0);
  Expect(json::array({Six}),
         "tensor map 0 (a): it has 6 dimensions (1 to 5 expected)");
  Expect(With("strides", {"1"}),
         "tensor map 0 (a): 'strides' has 1 entries for 2 dimensions");
  Expect(With("box", {64}), "tensor map 0 (a): 'box' must be an array of 2 "
                            "integers, one per dimension");
  Expect(With("box", {0, 64}),
         "tensor map 0 (a): 'box' has 0, not an integer in 1..256");
  Expect(With("box", {128, 257}),
         "tensor map 0 (a): 'box' has 257, not an integer in 1..256");
  Expect(With("box", {128, "64"}),
         "tensor map 0 (a): 'box' has \"64\", not an integer in 1..256");
  Expect(With("swizzle", 16),
         "tensor map 0 (a): 'swizzle' must be 0, 32, 64 or 128, not 16");
  json NoSwizzle = Good;
  NoSwizzle.erase("swizzle");
  Expect(json::array({NoSwizzle}),
         "tensor map 0 (a): 'swizzle' must be 0, 32, 64 or 128");
  Expect(With("sizes", {"M", "(+ K"}),
         "tensor map 0 (a): size 1 '(+ K': unexpected end of expression");
  Expect(With("strides", {"N", "1"}),
         "tensor map 0 (a): stride 0 'N': unknown name 'N'");
  Expect(With("strides", {"a", "1"}),
         "tensor map 0 (a): stride 0 'a': 'a' is *f16; only integer and "
         "bool params may be used");
}

TEST(TensorMapManifest, NeedFormatVersion4) {
  BundleSpec Spec{{tmaKernel()}};
  TestImage I = cudaImage(fakeImage({"tma_v0 params=6 tmaps=2"}));
  I.TensorMaps = tmaMaps();
  Spec.Images = {I};
  std::string Bytes = buildBundle(Spec);
  auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(B.error().message(),
            "t.kpack: manifest: kernel 'tma': variant 0: image "
            "nvptx64-nvidia-cuda sm_90: 'tensor_maps' needs bundle format "
            "version 4, the manifest says 3");
  // The manifest's JSON and strings, and the images' strings, agree.
  BundleSpec Mixed = version4(Spec);
  Mixed.JsonVersion = 3;
  Bytes = buildBundle(Mixed);
  B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message(),
            "t.kpack: manifest: 'version' is 3, but the bundle's "
            "kiln.format-version is 4");
  // Two images that differ only in their maps are two images.
  BundleSpec Two = version4(Spec);
  TestImage Generic = cudaImage(fakeImage({"tma_v0 params=6"}));
  Two.Images = {I, Generic};
  Bytes = buildBundle(Two);
  B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_TRUE(B) << B.error().message();
  Two.Images = {I, I};
  Bytes = buildBundle(Two);
  B = Bundle::readMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().message(),
            "t.kpack: manifest: kernel 'tma': variant 0: two images for "
            "nvptx64-nvidia-cuda sm_90 of one kind");
}

//===----------------------------------------------------------------------===//
// Devices that run no image with tensor maps
//===----------------------------------------------------------------------===//

TEST(TensorMapDevices, HostRunsTheImageWithout) {
  // tag(out: *i32, cols: i32, stride: i32, p: *f32, u: u32): its entry
  // tag_v3 writes 103, tag_v0 100.
  TestKernel K = tagKernel();
  K.Params = {{"out", "*i32"}, {"cols", "i32"}, {"stride", "i32"},
              {"p", "*f32"}, {"u", "u32"}};
  K.Variants = {{256, 4, 2}};
  BundleSpec Spec = version4({{K}});
  TestImage Generic, Tma;
  Generic.Entry = "tag_v0";
  Tma.Entry = "tag_v3";
  Tma.TensorMaps = {tensorMap("p", "f32", {"cols"}, {"1"}, {32}, 0)};
  Spec.Images = {Tma, Generic};
  auto D = Device::open("host");
  ASSERT_TRUE(D);
  auto S = D->createStream();
  ASSERT_TRUE(S);
  std::string Bytes = buildBundle(Spec);
  auto M = D->loadModuleMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_TRUE(M) << M.error().message();
  auto Out = D->allocate(4);
  ASSERT_TRUE(Out);
  alignas(16) static float P[64];
  auto L = M->kernel("tag")->launch(
      *S, {Arg::pointer(*Out), Arg::i32(64), Arg::i32(8), Arg::pointer(P),
           Arg::u32(0)});
  ASSERT_TRUE(L) << L.error().message();
  EXPECT_EQ(L->Image, 1u);
  int32_t Tag = 0;
  ASSERT_FALSE(S->copyToHost(&Tag, *Out, 0, 4));
  ASSERT_FALSE(S->synchronize());
  EXPECT_EQ(Tag, 100);
  // With only the image with maps, nothing runs, and the message says why.
  Spec.Images = {Tma};
  Bytes = buildBundle(Spec);
  auto M2 = D->loadModuleMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(M2);
  EXPECT_EQ(M2.error().code(), ErrorCode::NoImage);
  std::string Expected = "; it has " + hostTriple() + " " + hostArch() +
                         " (takes TMA tensor maps, which only NVIDIA GPUs "
                         "run)";
  EXPECT_NE(M2.error().message().find(Expected), std::string::npos)
      << M2.error().message();
}

TEST(TensorMapDevices, HipRanksThemZero) {
  HipTarget Mi300;
  Mi300.Id = *parseAmdTargetId("gfx942");
  Mi300.WaveSize = 64;
  ImageInfo I;
  I.Triple = "amdgcn-amd-amdhsa";
  I.Arch = I.Target = "gfx942";
  I.ImageKind = kImageObject;
  EXPECT_GT(rankHipImage(I, Mi300), 0);
  I.TensorMaps.push_back(TensorMapInfo());
  EXPECT_EQ(rankHipImage(I, Mi300), 0);
  EXPECT_EQ(whyNotHip(I, Mi300),
            "takes TMA tensor maps, which only NVIDIA GPUs run");
}

TEST(TensorMapDevices, CudaRanking) {
  ImageInfo I;
  I.Triple = "nvptx64-nvidia-cuda";
  I.Arch = I.Target = "sm_80";
  I.ImageKind = kImagePtx;
  I.TensorMaps.push_back(TensorMapInfo());
  CudaTarget H100{90, 12040, true}, Old{90, 11080, false}, A10{86, 12040, true};
  EXPECT_GT(rankCudaImage(I, H100), 0);
  EXPECT_EQ(rankCudaImage(I, Old), 0);
  EXPECT_EQ(whyNotCuda(I, Old),
            "takes TMA tensor maps, which this driver (CUDA 11.8) cannot "
            "encode: cuTensorMapEncodeTiled needs CUDA 12");
  EXPECT_EQ(rankCudaImage(I, A10), 0);
  EXPECT_EQ(whyNotCuda(I, A10), "takes TMA tensor maps, which need sm_90");
  I.TensorMaps.clear();
  EXPECT_GT(rankCudaImage(I, Old), 0);
  EXPECT_GT(rankCudaImage(I, A10), 0);
}

// CUDA's dimensions are innermost first; strides in bytes without the
// innermost; the data type by size.
TEST(TensorMapDevices, CudaEncodeArguments) {
  TensorMap M;
  M.Rank = 3;
  M.ElemBytes = 2;
  M.Type = ScalarType::BF16;
  int64_t Sizes[] = {2, 300, 130}, Strides[] = {96000, 320, 2};
  int32_t Box[] = {1, 128, 64};
  for (int D = 0; D < 3; ++D) {
    M.Sizes[D] = Sizes[D];
    M.Strides[D] = Strides[D];
    M.Box[D] = Box[D];
  }
  M.Swizzle = 128;
  CudaTensorMapArgs A = cudaTensorMapArgs(M);
  EXPECT_EQ(A.DataType, 1); // CU_TENSOR_MAP_DATA_TYPE_UINT16
  EXPECT_EQ(A.Rank, 3u);
  EXPECT_EQ(A.GlobalDim[0], 130u);
  EXPECT_EQ(A.GlobalDim[1], 300u);
  EXPECT_EQ(A.GlobalDim[2], 2u);
  EXPECT_EQ(A.GlobalStrides[0], 320u);
  EXPECT_EQ(A.GlobalStrides[1], 96000u);
  EXPECT_EQ(A.BoxDim[0], 64u);
  EXPECT_EQ(A.BoxDim[1], 128u);
  EXPECT_EQ(A.BoxDim[2], 1u);
  EXPECT_EQ(A.ElementStrides[2], 1u);
  EXPECT_EQ(A.Swizzle, 3);
  const std::pair<unsigned, int> Types[] = {{1, 0}, {4, 2}, {8, 4}};
  for (auto [Bytes, Type] : Types) {
    M.ElemBytes = Bytes;
    EXPECT_EQ(cudaTensorMapArgs(M).DataType, Type) << Bytes;
  }
  const std::pair<int32_t, int> Swizzles[] = {{0, 0}, {32, 1}, {64, 2}};
  for (auto [Bytes, Code] : Swizzles) {
    M.Swizzle = Bytes;
    EXPECT_EQ(cudaTensorMapArgs(M).Swizzle, Code) << Bytes;
  }
}

//===----------------------------------------------------------------------===//
// The CUDA device, on the fake driver
//===----------------------------------------------------------------------===//

/// The fake's cuTensorMapEncodeTiled record hooks.
struct TensorMapHooks {
  explicit TensorMapHooks(void *Handle) {
    Count = reinterpret_cast<int (*)()>(
        dlsym(Handle, "kiln_fake_cuda_tensor_map_count"));
    Get = reinterpret_cast<int (*)(int, KilnFakeTensorMap *)>(
        dlsym(Handle, "kiln_fake_cuda_tensor_map"));
  }
  int (*Count)() = nullptr;
  int (*Get)(int, KilnFakeTensorMap *) = nullptr;
};

class TensorMapCuda : public FakeDriverTest {
protected:
  TensorMapCuda() : FakeDriverTest(KILN_FAKE_CUDA), Maps(Hooks.Handle) {}

  void SetUp() override {
    FakeDriverTest::SetUp();
    ASSERT_TRUE(Maps.Count && Maps.Get);
    open("cuda");
  }

  /// tma's fast path (image 0: the maps) and its generic image (1).
  BundleSpec spec(bool WithGeneric = true) {
    BundleSpec Spec = version4({{tmaKernel()}});
    TestImage Fast = cudaImage(fakeImage({"tma_v0 params=6 tmaps=2"}));
    Fast.TensorMaps = tmaMaps();
    Spec.Images = {Fast};
    if (WithGeneric)
      Spec.Images.push_back(cudaImage(fakeImage({"tma_v0 params=6"})));
    return Spec;
  }

  std::vector<Arg> args(const Buffer &A, size_t AOffset, const Buffer &B,
                        int32_t M, int32_t K, int32_t Lda, int32_t Bs) {
    return {Arg::pointer(A).advanced(AOffset),
            Arg::pointer(B),
            Arg::i32(M),
            Arg::i32(K),
            Arg::i32(Lda),
            Arg::i32(Bs)};
  }

  ScopedEnv Driver{"KILN_CUDA_DRIVER", KILN_FAKE_CUDA};
  ScopedEnv Mode{"KILN_FAKE_CUDA", "one"};
  ScopedEnv Version{"KILN_FAKE_CUDA_DRIVER_VERSION", nullptr};
  ScopedEnv Fail{"KILN_FAKE_CUDA_TMAP_FAIL", nullptr};
  TensorMapHooks Maps;
};

TEST_F(TensorMapCuda, EncodesTheMapsAndPassesThemAfterTheParams) {
  auto M = load(spec());
  ASSERT_TRUE(M) << M.error().message();
  auto A = Dev->allocate(2 * 256 * 160 * 2), B = Dev->allocate(4096);
  ASSERT_TRUE(A && B);
  int Before = Maps.Count();
  auto P = M->kernel("tma")->launch(*Str, args(*A, 0, *B, 256, 130, 160,
                                               256 * 160));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Image, 0u);
  ASSERT_EQ(Maps.Count(), Before + 2);
  KilnFakeTensorMap T;
  ASSERT_TRUE(Maps.Get(Before, &T));
  EXPECT_EQ(T.DataType, 1); // UINT16: f16 by size
  EXPECT_EQ(T.Rank, 3u);
  EXPECT_EQ(T.Address, uint64_t(uintptr_t(A->data())));
  EXPECT_EQ(T.Dims[0], 130u); // K, innermost first
  EXPECT_EQ(T.Dims[1], 256u); // M
  EXPECT_EQ(T.Dims[2], 2u);
  EXPECT_EQ(T.Strides[0], 320u);         // lda, in bytes
  EXPECT_EQ(T.Strides[1], 256u * 320u);  // bs, in bytes
  EXPECT_EQ(T.Box[0], 64u);
  EXPECT_EQ(T.Box[1], 128u);
  EXPECT_EQ(T.Box[2], 1u);
  for (int D = 0; D < 3; ++D)
    EXPECT_EQ(T.ElementStrides[D], 1u);
  EXPECT_EQ(T.Interleave, 0);
  EXPECT_EQ(T.Swizzle, 3); // 128B
  EXPECT_EQ(T.L2Promotion, 2);
  EXPECT_EQ(T.OobFill, 0);
  ASSERT_TRUE(Maps.Get(Before + 1, &T));
  EXPECT_EQ(T.DataType, 2); // UINT32: f32
  EXPECT_EQ(T.Rank, 1u);
  EXPECT_EQ(T.Address, uint64_t(uintptr_t(B->data())));
  EXPECT_EQ(T.Dims[0], 130u);
  EXPECT_EQ(T.Box[0], 32u);
  EXPECT_EQ(T.Swizzle, 0);
  // The launch: the six params, then the two maps (the fake checks that
  // each is a 64-byte-aligned map it encoded: "KTMP" and its index).
  KilnFakeLaunch L = lastLaunch();
  EXPECT_STREQ(L.Function, "tma_v0");
  ASSERT_EQ(L.NumParams, 8u);
  EXPECT_EQ(L.Params[0], uint64_t(uintptr_t(A->data())));
  EXPECT_EQ(L.Params[2] & 0xffffffffu, 256u);
  for (int I = 0; I < 2; ++I) {
    char Tag[4];
    uint32_t Index;
    std::memcpy(Tag, &L.Params[6 + I], 4);
    std::memcpy(&Index, reinterpret_cast<char *>(&L.Params[6 + I]) + 4, 4);
    EXPECT_EQ(std::string(Tag, 4), "KTMP");
    EXPECT_EQ(Index, uint32_t(Before + I));
  }
}

// Arguments that break TMA's requirements send the launch to the generic
// image; without one, the launch is refused and says what was assumed.
TEST_F(TensorMapCuda, BrokenRequirementsFallBackToTheGenericImage) {
  auto M = load(spec());
  ASSERT_TRUE(M) << M.error().message();
  auto A = Dev->allocate(2 * 256 * 160 * 2 + 64), B = Dev->allocate(4096);
  ASSERT_TRUE(A && B);
  struct Case {
    const char *What;
    size_t AOffset;
    int32_t M, K, Lda, Bs;
  } Cases[] = {
      {"a misaligned base", 2, 256, 130, 160, 256 * 160},
      {"a size of 0", 0, 0, 130, 160, 256 * 160},
      {"a stride of 100 f16, 200 bytes", 0, 256, 100, 100, 256 * 100},
      {"a negative stride", 0, 256, 130, 160, -1},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.What);
    std::vector<Arg> Args = args(*A, C.AOffset, *B, C.M, C.K, C.Lda, C.Bs);
    int Before = Maps.Count();
    auto P = M->kernel("tma")->launch(*Str, Args);
    ASSERT_TRUE(P) << P.error().message();
    EXPECT_EQ(P->Image, 1u);
    EXPECT_EQ(Maps.Count(), Before) << "nothing encoded";
    EXPECT_EQ(lastLaunch().NumParams, 6u);
  }
  // Only the image with maps: refused, naming the maps' requirements.
  auto M2 = load(spec(/*WithGeneric=*/false));
  ASSERT_TRUE(M2) << M2.error().message();
  auto P = M2->kernel("tma")->launch(*Str, args(*A, 2, *B, 256, 130, 160, 64));
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(P.error().message(),
            "no variant of kernel 'tma' can run: the code objects of kernel "
            "'tma' for this device assume tensor map a within TMA's limits, "
            "tensor map b within TMA's limits, which the arguments break"
            " (`kiln compile --generic-images=all` gives every variant a "
            "code object for any arguments)");
}

// Each requirement, checked on its own (the evaluation the planner and
// the launch share).
TEST(TensorMapRequirements, EachIsChecked) {
  KernelInfo K;
  K.Name = "k";
  K.Params = {{"a", {true, ScalarType::BF16}},
              {"n", {false, ScalarType::I64}},
              {"ld", {false, ScalarType::I64}}};
  auto Resolve = [&](std::string_view Name,
                     std::string &Why) -> std::optional<ExprSlot> {
    if (Name == "n")
      return ExprSlot{false, 1};
    if (Name == "ld")
      return ExprSlot{false, 2};
    Why = "unknown";
    return std::nullopt;
  };
  auto Map = [&](std::vector<std::string> Sizes,
                 std::vector<std::string> Strides, std::vector<int64_t> Box,
                 int32_t Swizzle) {
    TensorMapExprs X;
    X.Param = 0;
    X.ElemBytes = 2;
    X.Type = ScalarType::BF16;
    for (const std::string &S : Sizes)
      X.Sizes.push_back(*Expr::parse(S, Resolve));
    for (const std::string &S : Strides)
      X.Strides.push_back(*Expr::parse(S, Resolve));
    X.Box = std::move(Box);
    X.Swizzle = Swizzle;
    return X;
  };
  auto Check = [&](const TensorMapExprs &X, uint64_t Base, int64_t N,
                   int64_t Ld) -> std::string {
    std::vector<Arg> Args = {Arg::pointer(reinterpret_cast<void *>(Base)),
                             Arg::i64(N), Arg::i64(Ld)};
    std::vector<int64_t> Values = {0, N, Ld};
    auto R = evaluateTensorMaps(K, {X}, Args, Values, {});
    return R ? "" : R.error().message();
  };
  TensorMapExprs Good = Map({"n", "64"}, {"ld", "1"}, {16, 64}, 128);
  EXPECT_EQ(Check(Good, 0x1000, 100, 64), "");
  EXPECT_EQ(Check(Good, 0x1008, 100, 64),
            "tensor map 0 (a): its base 0x1008 is not 16-byte aligned");
  EXPECT_EQ(Check(Good, 0x1000, 0, 64),
            "tensor map 0 (a): size 0 'n' is 0, outside 1 to 2^32");
  EXPECT_EQ(Check(Good, 0x1000, (int64_t(1) << 32) + 1, 64),
            "tensor map 0 (a): size 0 'n' is 4294967297, outside 1 to 2^32");
  EXPECT_EQ(Check(Good, 0x1000, int64_t(1) << 32, 64), "");
  EXPECT_EQ(Check(Good, 0x1000, 100, 12),
            "tensor map 0 (a): stride 0 'ld' is 12 elements, 24 bytes: not a "
            "multiple of 16 bytes");
  EXPECT_EQ(Check(Good, 0x1000, 100, 0),
            "tensor map 0 (a): stride 0 'ld' is 0 elements, outside 1 to "
            "2^40 bytes");
  EXPECT_EQ(Check(Good, 0x1000, 100, int64_t(1) << 39),
            "tensor map 0 (a): stride 0 'ld' is 549755813888 elements, "
            "outside 1 to 2^40 bytes");
  EXPECT_EQ(Check(Good, 0x1000, 100, (int64_t(1) << 39) - 8), "");
  EXPECT_EQ(Check(Map({"n", "64"}, {"ld", "2"}, {16, 64}, 128), 0x1000, 100,
                  64),
            "tensor map 0 (a): stride 1 '2' is 2, but the innermost stride "
            "must be 1");
  EXPECT_EQ(Check(Map({"n", "(/ 64 (- ld 64))"}, {"ld", "1"}, {16, 64}, 128),
                  0x1000, 100, 64),
            "tensor map 0 (a): size 1 '(/ 64 (- ld 64))': division by zero");
  EXPECT_EQ(Check(Map({"n", "64"}, {"ld", "1"}, {16, 12}, 0), 0x1000, 100, 64),
            "tensor map 0 (a): its box's rows are 24 bytes, not a multiple "
            "of 16");
  EXPECT_EQ(Check(Map({"n", "64"}, {"ld", "1"}, {16, 64}, 64), 0x1000, 100,
                  64),
            "tensor map 0 (a): its box's rows are 128 bytes, wider than its "
            "swizzle of 64 bytes");
  EXPECT_EQ(Check(Map({"n", "64"}, {"ld", "1"}, {16, 256}, 0), 0x1000, 100,
                  64),
            "");
}

// A driver that refuses to encode a map the runtime's checks let through
// sends the launch to the next image whose assumptions hold (the generic
// one); without one, the launch is refused, naming the call, its result
// and the map.
TEST_F(TensorMapCuda, FailedEncodeFallsBack) {
  auto M = load(spec());
  ASSERT_TRUE(M) << M.error().message();
  auto A = Dev->allocate(2 * 256 * 160 * 2), B = Dev->allocate(4096);
  ASSERT_TRUE(A && B);
  ScopedEnv Refuse("KILN_FAKE_CUDA_TMAP_FAIL", "1");
  int Launches = Hooks.LaunchCount();
  auto P = M->kernel("tma")->launch(*Str, args(*A, 0, *B, 256, 130, 160,
                                               256 * 160));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Image, 1u);
  EXPECT_EQ(Hooks.LaunchCount(), Launches + 1);
  EXPECT_EQ(lastLaunch().NumParams, 6u) << "the generic image, no maps";

  auto M2 = load(spec(/*WithGeneric=*/false));
  ASSERT_TRUE(M2) << M2.error().message();
  auto P2 = M2->kernel("tma")->launch(*Str, args(*A, 0, *B, 256, 130, 160,
                                                 256 * 160));
  ASSERT_FALSE(P2);
  EXPECT_EQ(P2.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(P2.error().message(),
            "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (tensor "
            "map 0 of tma_v0: f16 dims [130, 256, 2] strides [320, 81920] "
            "box [64, 128, 1] swizzle 128B); no other code object of tma_v0 "
            "holds for these arguments");
  EXPECT_EQ(Hooks.LaunchCount(), Launches + 1) << "nothing more launched";
}

// A driver before CUDA 12 has no cuTensorMapEncodeTiled: the device opens,
// and launches take the generic image.
TEST(TensorMapCuda11, MissingEntryPointFallsBack) {
  ScopedEnv Driver("KILN_CUDA_DRIVER", KILN_FAKE_CUDA11);
  ScopedEnv Mode("KILN_FAKE_CUDA", "one");
  ScopedEnv Version("KILN_FAKE_CUDA_DRIVER_VERSION", nullptr);
  FakeHooks Hooks(KILN_FAKE_CUDA11);
  ASSERT_TRUE(Hooks.Handle && Hooks.LastLaunch);
  ASSERT_FALSE(dlsym(Hooks.Handle, "cuTensorMapEncodeTiled"));
  auto D = Device::open("cuda");
  ASSERT_TRUE(D) << D.error().message();
  EXPECT_EQ(D->properties().DriverVersion, 11080);
  auto S = D->createStream();
  ASSERT_TRUE(S);
  BundleSpec Spec = version4({{tmaKernel()}});
  TestImage Fast = cudaImage(fakeImage({"tma_v0 params=6 tmaps=2"}));
  Fast.TensorMaps = tmaMaps();
  Spec.Images = {Fast, cudaImage(fakeImage({"tma_v0 params=6"}))};
  std::string Bytes = buildBundle(Spec);
  auto M = D->loadModuleMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_TRUE(M) << M.error().message();
  auto A = D->allocate(2 * 256 * 160 * 2), B = D->allocate(4096);
  ASSERT_TRUE(A && B);
  auto P = M->kernel("tma")->launch(
      *S, {Arg::pointer(*A), Arg::pointer(*B), Arg::i32(256), Arg::i32(130),
           Arg::i32(160), Arg::i32(256 * 160)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Image, 1u);
  KilnFakeLaunch L = {};
  ASSERT_TRUE(Hooks.LastLaunch(&L));
  EXPECT_EQ(L.NumParams, 6u);
  // Only the image with maps: no code object for this device.
  Spec.Images = {Fast};
  Bytes = buildBundle(Spec);
  auto M2 = D->loadModuleMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(M2);
  EXPECT_EQ(M2.error().code(), ErrorCode::NoImage);
  EXPECT_NE(M2.error().message().find(
                "; it has sm_90 (takes TMA tensor maps, which this driver "
                "(CUDA 11.8) cannot encode: cuTensorMapEncodeTiled needs CUDA "
                "12)"),
            std::string::npos)
      << M2.error().message();
}

} // namespace
