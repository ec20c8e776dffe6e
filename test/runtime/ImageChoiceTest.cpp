//===- ImageChoiceTest.cpp - Images with requirements and assumptions -----===//
//
// The manifest's "requires" and "assumes" keys, and the choice among a
// variant's code objects at each launch: the best rank, then the most
// assumptions, among those whose assumptions hold for the arguments. The
// two images of a variant here are the same test kernels with different
// entries, tag_v0 (generic) and tag_v3 (the "fast path"), so the tag each
// launch writes (100 + the entry's number) shows which one ran.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <thread>

using namespace kiln::rt;
using namespace kiln::test;
using nlohmann::json;

namespace {

/// tag(out: *i32, cols: i32, stride: i32, p: *f32, u: u32): no promises.
TestKernel plainTag() {
  TestKernel K = tagKernel();
  K.Params = {{"out", "*i32"}, {"cols", "i32"}, {"stride", "i32"},
              {"p", "*f32"}, {"u", "u32"}};
  K.Variants = {{256, 4, 2}};
  return K;
}

TestImage generic() {
  TestImage I;
  I.Entry = "tag_v0";
  return I;
}

TestImage fast(json Assumes = {{"align16", {"p"}}, {"div16", {"cols"}}}) {
  TestImage I;
  I.Entry = "tag_v3";
  I.Assumes = std::move(Assumes);
  return I;
}

class ImageChoice : public HostTest {
protected:
  /// Launches tag and returns what it wrote, or -1 on failure.
  int32_t run(const Kernel &K, int32_t Cols, const void *P,
              LaunchPlan *Plan = nullptr, int32_t Stride = 8) {
    Buffer Out = upload(std::vector<int32_t>(1));
    auto L = K.launch(*Str, {Arg::pointer(Out), Arg::i32(Cols),
                             Arg::i32(Stride), Arg::pointer(P), Arg::u32(0)});
    EXPECT_TRUE(L) << L.error().message();
    if (!L)
      return -1;
    if (Plan)
      *Plan = *L;
    return download<int32_t>(Out)[0];
  }

  alignas(16) static inline float Data[16];
  const float *Aligned = Data;
  const float *Misaligned = Data + 1;
};

TEST_F(ImageChoice, ManifestKeys) {
  BundleSpec Spec{{plainTag()}};
  TestImage G = generic();
  G.Requires = {{"cpu", "x86-64-v2"}, {"features", {"sse4.2", "popcnt"}},
                {"sm", 90}, {"arch_specific", true}, {"ptx_isa", 84},
                {"future_key", "ignored"}};
  Spec.Images = {G, fast()};
  std::string Bytes = buildBundle(Spec);
  auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "test.kpack");
  ASSERT_TRUE(B) << B.error().message();
  const std::vector<ImageInfo> &Images = B->kernels()[0].Variants[0].Images;
  ASSERT_EQ(Images.size(), 2u);
  const ImageRequirements &R = Images[0].Requires;
  EXPECT_TRUE(R.Present);
  EXPECT_EQ(R.Cpu, "x86-64-v2");
  EXPECT_EQ(R.Features, (std::vector<std::string>{"sse4.2", "popcnt"}));
  EXPECT_EQ(R.Sm, 90u);
  EXPECT_TRUE(R.ArchSpecific);
  EXPECT_EQ(R.PtxIsa, 84u);
  EXPECT_EQ(Images[0].Assumes.count(), 0u);
  EXPECT_FALSE(Images[1].Requires.Present);
  EXPECT_EQ(Images[1].Assumes.Align16, (std::vector<std::string>{"p"}));
  EXPECT_EQ(Images[1].Assumes.Div16, (std::vector<std::string>{"cols"}));
  EXPECT_EQ(Images[1].Entry, "tag_v3");
  EXPECT_NE(Images[0].Offset, Images[1].Offset);
}

TEST_F(ImageChoice, BadManifestKeys) {
  auto Expect = [&](std::vector<TestImage> Images, const std::string &Why) {
    BundleSpec Spec{{plainTag()}};
    Spec.Images = std::move(Images);
    std::string Bytes = buildBundle(Spec);
    auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "test.kpack");
    ASSERT_FALSE(B) << Why;
    EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
    EXPECT_EQ(B.error().message(), "test.kpack: manifest: kernel 'tag': " + Why);
  };
  std::string Where = "variant 0: image " + hostTriple() + " " + hostArch() +
                      ": ";
  Expect({fast({{"align16", {"cols"}}})},
         Where + "'assumes.align16' names 'cols', which is not a pointer "
                 "param");
  Expect({fast({{"div16", {"p"}}})},
         Where + "'assumes.div16' names 'p', which is not an integer param");
  Expect({fast({{"div16", "cols"}})},
         Where + "'assumes' must be an object of arrays of param names and "
                 "conditions");
  Expect({fast({{"holds", {"(<= stride"}}})},
         Where + "'assumes.holds' condition '(<= stride': unexpected end "
                 "of expression");
  Expect({fast({{"holds", {"(<= p 3)"}}})},
         Where + "'assumes.holds' condition '(<= p 3)': 'p' is *f32; only "
                 "integer and bool params may be used");
  TestImage BadSm = generic();
  BadSm.Requires = {{"sm", "90"}};
  Expect({BadSm}, Where + "'requires.sm' must be a non-negative integer");
  TestImage BadGfx = generic();
  BadGfx.Requires = {{"gfx", "mi300"}};
  Expect({BadGfx}, Where + "'requires.gfx' must be an AMD GPU name (gfx...)");
  TestImage BadWave = generic();
  BadWave.Requires = {{"wave_size", -64}};
  Expect({BadWave},
         Where + "'requires.wave_size' must be a non-negative integer");
  TestImage BadFeatures = generic();
  BadFeatures.Requires = {{"features", "avx2"}};
  Expect({BadFeatures},
         Where + "'requires.features' must be an array of strings");
  // Two images alike; a generic and a fast one are fine.
  Expect({generic(), generic()},
         "variant 0: two images for " + hostTriple() + " " + hostArch() +
             " of one kind");
  Expect({fast(), fast({{"div16", {"cols"}}, {"align16", {"p"}}})},
         "variant 0: two images for " + hostTriple() + " " + hostArch() +
             " of one kind with the same assumptions");
}

TEST_F(ImageChoice, AssumptionsPickTheImage) {
  BundleSpec Spec{{plainTag()}};
  Spec.Images = {generic(), fast()};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  LaunchPlan Plan;
  EXPECT_EQ(run(*K, 32, Aligned, &Plan), 103) << "aligned: the fast path";
  EXPECT_EQ(Plan.Image, 1u);
  EXPECT_EQ(Plan.VariantName, "tag_v0");
  EXPECT_EQ(run(*K, 32, Misaligned, &Plan), 100) << "p misaligned";
  EXPECT_EQ(Plan.Image, 0u);
  EXPECT_EQ(run(*K, 33, Aligned), 100) << "cols not a multiple of 16";
  EXPECT_EQ(run(*K, -48, Aligned), 103) << "negative multiples count";
  EXPECT_EQ(run(*K, 0, nullptr), 103) << "null is aligned";
  // Each image was loaded once and stays loaded: again, both ways.
  EXPECT_EQ(run(*K, 32, Aligned), 103);
  EXPECT_EQ(run(*K, 32, Misaligned), 100);
  // plan() says the same without running anything; load(plan) loads it.
  std::vector<Arg> Args = {Arg::pointer(Aligned), Arg::i32(16), Arg::i32(8),
                           Arg::pointer(Misaligned), Arg::u32(0)};
  auto P = K->plan(Args);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Image, 0u);
  EXPECT_FALSE(K->load(*P));
  EXPECT_FALSE(K->load(0));

  // The manifest order does not matter: the fast path is preferred.
  Spec.Images = {fast(), generic()};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2);
  EXPECT_EQ(run(*M2->kernel("tag"), 32, Aligned, &Plan), 103);
  EXPECT_EQ(Plan.Image, 0u);
  EXPECT_EQ(run(*M2->kernel("tag"), 32, Misaligned, &Plan), 100);
  EXPECT_EQ(Plan.Image, 1u);
}

// "holds": conditions over the integer params, evaluated at each launch
// like launch conditions (the fast path's bounded view strides).
TEST_F(ImageChoice, HeldConditionsPickTheImage) {
  BundleSpec Spec{{plainTag()}};
  Spec.Images = {generic(),
                 fast({{"holds",
                        {"(&& (>= stride 0) (<= stride 64))",
                         "(== (/ 16 (+ u 16)) 1)"}}})};
  std::string Bytes = buildBundle(Spec);
  auto B = Bundle::readMemory(Bytes.data(), Bytes.size(), "test.kpack");
  ASSERT_TRUE(B) << B.error().message();
  EXPECT_EQ(B->kernels()[0].Variants[0].Images[1].Assumes.Holds.size(), 2u);
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  LaunchPlan Plan;
  EXPECT_EQ(run(*K, 7, Misaligned, &Plan, 64), 103) << "both hold";
  EXPECT_EQ(Plan.Image, 1u);
  EXPECT_EQ(run(*K, 7, Misaligned, &Plan, 0), 103);
  EXPECT_EQ(run(*K, 7, Misaligned, &Plan, 65), 100) << "stride above 64";
  EXPECT_EQ(Plan.Image, 0u);
  EXPECT_EQ(run(*K, 7, Misaligned, &Plan, -1), 100) << "negative stride";

  // Only the image with the conditions: the refusal names them; a
  // condition that cannot be evaluated (16 / 0 with u = 2^32 - 16) does
  // not hold.
  Spec.Images = {fast({{"holds", {"(&& (>= stride 0) (<= stride 64))",
                                  "(== (/ 16 (+ u 16)) 1)"}}})};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2) << M2.error().message();
  auto K2 = M2->kernel("tag");
  Buffer Out = upload(std::vector<int32_t>(1));
  for (auto [Stride, U] : {std::pair<int32_t, uint32_t>{65, 0},
                           std::pair<int32_t, uint32_t>{8, 4294967280u}}) {
    auto P = K2->plan({Arg::pointer(Out), Arg::i32(7), Arg::i32(Stride),
                       Arg::pointer(Aligned), Arg::u32(U)});
    ASSERT_FALSE(P);
    EXPECT_EQ(P.error().message(),
              "no variant of kernel 'tag' can run: the code objects of kernel "
              "'tag' for this device assume '(&& (>= stride 0) (<= stride "
              "64))', '(== (/ 16 (+ u 16)) 1)', which the arguments break"
            " (`kiln compile --generic-images=all` gives every variant a "
            "code object for any arguments)");
  }
}

TEST_F(ImageChoice, RankComesBeforeAssumptions) {
  // The fast image is for a lesser CPU (x86-64) than the generic one
  // (x86-64-v2, the test default): the better rank wins when both run.
  BundleSpec Spec{{plainTag()}};
  TestImage Slow = fast();
  Slow.Arch = "generic";
  Spec.Images = {generic(), Slow};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  EXPECT_EQ(run(*M->kernel("tag"), 32, Aligned), 100);
  // An image this CPU cannot run is never chosen, whatever it assumes.
  TestImage Future = fast();
  Future.Arch = "x86-64-v9";
  Spec.Images = {generic(), Future};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2);
  EXPECT_EQ(run(*M2->kernel("tag"), 32, Aligned), 100);
}

TEST_F(ImageChoice, NoImageWhoseAssumptionsHold) {
  BundleSpec Spec{{plainTag()}};
  Spec.Images = {fast({{"align16", {"p", "out"}}})};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  EXPECT_EQ(run(*K, 7, Aligned), 103);
  Buffer Out = upload(std::vector<int32_t>(1));
  std::vector<Arg> Args = {Arg::pointer(Out), Arg::i32(7), Arg::i32(8),
                           Arg::pointer(Misaligned), Arg::u32(0)};
  auto P = K->plan(Args);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(P.error().message(),
            "no variant of kernel 'tag' can run: the code objects of kernel "
            "'tag' for this device assume out 16-byte aligned, p 16-byte "
            "aligned, which the arguments break"
            " (`kiln compile --generic-images=all` gives every variant a "
            "code object for any arguments)");
  LaunchOptions O;
  O.Config = {{"BLOCK", 256}};
  auto P2 = K->plan(Args, O);
  ASSERT_FALSE(P2);
  EXPECT_EQ(P2.error().message(),
            "the variant of kernel 'tag' with BLOCK=256 cannot run: the code "
            "objects of kernel 'tag' for this device assume out 16-byte "
            "aligned, p 16-byte aligned, which the arguments break"
            " (`kiln compile --generic-images=all` gives every variant a "
            "code object for any arguments)");
}

TEST_F(ImageChoice, AssumptionsAndLaunchConditions) {
  // Two variants, each with only a fast image; the launch conditions pick
  // the variant, the assumptions must still hold.
  TestKernel K = plainTag();
  K.Variants = {{256, 4, 2}, {512, 4, 2}};
  K.Conditions = {"(>= BLOCK cols)"};
  BundleSpec Spec{{K}};
  TestImage F = fast({{"align16", {"p"}}});
  F.Entry = ""; // tag_v0, tag_v1
  Spec.Images = {F};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto Tag = M->kernel("tag");
  ASSERT_TRUE(Tag);
  LaunchPlan Plan;
  EXPECT_EQ(run(*Tag, 100, Aligned, &Plan), 100);
  EXPECT_EQ(Plan.VariantName, "tag_v0");
  EXPECT_EQ(run(*Tag, 300, Aligned, &Plan), 101);
  EXPECT_EQ(Plan.VariantName, "tag_v1");
  Buffer Out = upload(std::vector<int32_t>(1));
  auto P = Tag->plan({Arg::pointer(Out), Arg::i32(300), Arg::i32(8),
                      Arg::pointer(Misaligned), Arg::u32(0)});
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().message(),
            "no variant of kernel 'tag' can run: the code objects of kernel "
            "'tag' for this device assume p 16-byte aligned, which the "
            "arguments break"
            " (`kiln compile --generic-images=all` gives every variant a "
            "code object for any arguments)");
  // Conditions that rule out every variant are reported as before.
  auto None = Tag->plan({Arg::pointer(Out), Arg::i32(600), Arg::i32(8),
                         Arg::pointer(Misaligned), Arg::u32(0)});
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().message(),
            "no variant of kernel 'tag' can run with cols=600: launch "
            "condition '(>= BLOCK cols)' rules out all 2 variants");
}

TEST_F(ImageChoice, ConcurrentLaunchesChooseIndependently) {
  BundleSpec Spec{{plainTag()}};
  Spec.Images = {generic(), fast()};
  auto M = load(Spec);
  ASSERT_TRUE(M);
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  std::atomic<int> Failures{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      auto S = Dev->createStream();
      auto Out = Dev->allocate(4);
      if (!S || !Out) {
        ++Failures;
        return;
      }
      for (int I = 0; I < 50; ++I) {
        bool Fast = (I + T) % 2 == 0;
        auto L = K->launch(*S, {Arg::pointer(*Out), Arg::i32(64), Arg::i32(8),
                                Arg::pointer(Fast ? Aligned : Misaligned),
                                Arg::u32(0)});
        int32_t Tag = 0;
        if (!L || S->copyToHost(&Tag, *Out, 0, 4) || S->synchronize() ||
            Tag != (Fast ? 103 : 100))
          ++Failures;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
}

} // namespace
