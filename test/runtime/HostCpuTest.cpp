//===- HostCpuTest.cpp - Which host code objects this CPU runs ------------===//
//
// The host device's ranking rules on made-up CPUs (HostTarget values),
// the feature detection against LLVM's own (llvm::sys::getHostCPUFeatures,
// what `kiln compile --targets=native` compiles for), and images that
// record what they require running where their arch name is unknown.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/HostDevice.h"
#include "TestUtil.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <set>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::test;
using nlohmann::json;

namespace {

/// An x86-64 CPU with x86-64-v3 and a few more features.
HostTarget fakeCpu() {
  HostTarget T;
  T.Triple = "x86_64-unknown-linux-gnu";
  T.TripleArch = "x86_64";
  T.Names = {"haswell", "x86-64-v3", "x86-64-v2", "x86-64", "generic"};
  T.Features = {"64bit", "avx",   "avx2",   "bmi",    "bmi2",  "cmov",
                "crc32", "cx16",  "cx8",    "f16c",   "fma",   "fxsr",
                "lzcnt", "mmx",   "movbe",  "pclmul", "popcnt", "sahf",
                "sse",   "sse2",  "sse3",   "sse4.1", "sse4.2", "ssse3",
                "x87",   "xsave"};
  std::sort(T.Features.begin(), T.Features.end());
  return T;
}

ImageInfo hostImage(std::string Arch, nlohmann::json Requires = nullptr) {
  ImageInfo I;
  I.Target = "host";
  I.Triple = "x86_64-pc-linux-gnu";
  I.Arch = std::move(Arch);
  I.ImageKind = 1;
  if (!Requires.is_null()) {
    I.Requires.Present = true;
    if (Requires.contains("cpu"))
      I.Requires.Cpu = Requires["cpu"];
    if (Requires.contains("features"))
      I.Requires.Features =
          Requires["features"].get<std::vector<std::string>>();
  }
  return I;
}

TEST(HostRanking, LevelsByFeatures) {
#if defined(__x86_64__)
  HostTarget T = fakeCpu();
  int Generic = T.rank(hostImage("generic"));
  int V1 = T.rank(hostImage("x86-64"));
  int V2 = T.rank(hostImage("x86-64-v2"));
  int V3 = T.rank(hostImage("x86-64-v3"));
  EXPECT_EQ(Generic, 1);
  EXPECT_GT(V1, Generic);
  EXPECT_GT(V2, V1);
  EXPECT_GT(V3, V2);
  EXPECT_EQ(T.rank(hostImage("x86-64-v4")), 0);
  EXPECT_EQ(T.whyNot(hostImage("x86-64-v4")),
            "lacks avx512bw, avx512cd, avx512dq, avx512f, avx512vl");
  // The CPU's own name (and $KILN_HOST_CPU) ranks like a native image.
  EXPECT_EQ(T.rank(hostImage("haswell")), 1 + int(T.Features.size()));
  EXPECT_EQ(T.rank(hostImage("skylake")), 0);
  EXPECT_EQ(T.whyNot(hostImage("skylake")), "");
  // Other architectures and kinds never run.
  ImageInfo Arm = hostImage("generic");
  Arm.Triple = "aarch64-unknown-linux-gnu";
  EXPECT_EQ(T.rank(Arm), 0);
  ImageInfo Cubin = hostImage("generic");
  Cubin.ImageKind = 3;
  EXPECT_EQ(T.rank(Cubin), 0);
#endif
}

TEST(HostRanking, RequiredFeatures) {
#if defined(__x86_64__)
  HostTarget T = fakeCpu();
  // An arch name the runtime has never heard of runs if the CPU has every
  // feature the image records (the emeraldrapids bug).
  ImageInfo Native =
      hostImage("emeraldrapids", {{"cpu", "emeraldrapids"},
                                  {"features", {"avx2", "fma", "sse4.2",
                                                "bmi2", "evex512"}}});
  int NativeRank = T.rank(Native);
  EXPECT_EQ(NativeRank, 1 + 4) << "evex512 restricts nothing";
  // More features, a better rank: native beats x86-64-v3 beats v2.
  std::vector<std::string> All = T.Features;
  ImageInfo Rich = hostImage("znver9", {{"cpu", "znver9"}, {"features", All}});
  EXPECT_EQ(T.rank(Rich), 1 + int(All.size()));
  EXPECT_GT(T.rank(Rich), T.rank(hostImage("x86-64-v3")));
  // A level CPU needs the level's features even if the list is short.
  ImageInfo V4 = hostImage("x86-64-v4", {{"cpu", "x86-64-v4"},
                                         {"features", {"avx2"}}});
  EXPECT_EQ(T.rank(V4), 0);
  ImageInfo V3 = hostImage("x86-64-v3", {{"cpu", "x86-64-v3"},
                                         {"features", json::array()}});
  EXPECT_EQ(T.rank(V3), T.rank(hostImage("x86-64-v3")));
  // A missing or unknown feature: never.
  ImageInfo Avx512 = hostImage("sapphirerapids",
                               {{"cpu", "sapphirerapids"},
                                {"features", {"avx2", "avx512f", "amx-tile",
                                              "kiln-no-such-feature"}}});
  EXPECT_EQ(T.rank(Avx512), 0);
  EXPECT_EQ(T.whyNot(Avx512),
            "lacks amx-tile, avx512f, kiln-no-such-feature");
  // A named CPU without features falls back to the name.
  EXPECT_EQ(T.rank(hostImage("skylake", {{"cpu", "skylake"}})), 0);
  EXPECT_EQ(T.rank(hostImage("haswell", {{"cpu", "haswell"}})),
            1 + int(T.Features.size()));
#endif
}

TEST(HostCpu, DetectionAgreesWithLLVM) {
  // Every feature that LLVM's getHostCPUFeatures reports (what `native`
  // compiles for) is one the runtime detects, with the same answer.
  std::vector<std::string> Detected = detectHostFeatures();
  std::set<std::string> Has(Detected.begin(), Detected.end());
  llvm::StringMap<bool> Llvm = llvm::sys::getHostCPUFeatures();
  for (const auto &F : Llvm) {
    std::string Name = F.first().str();
    EXPECT_TRUE(isKnownHostFeature(Name)) << Name;
    EXPECT_EQ(F.second, Has.count(Name) != 0) << Name;
  }
  EXPECT_TRUE(std::is_sorted(Detected.begin(), Detected.end()));
  EXPECT_EQ(hostTarget().Features, Detected);
}

TEST(HostCpu, KnowsEveryFeatureOfLLVMsCpus) {
#if defined(__x86_64__)
  // Whatever CPU an image was compiled for, the runtime can decide each
  // feature it records; and the levels agree with LLVM's.
  llvm::SmallVector<llvm::StringRef> Cpus;
  llvm::X86::fillValidCPUArchList(Cpus, /*Only64Bit=*/true);
  ASSERT_FALSE(Cpus.empty());
  for (llvm::StringRef Cpu : Cpus) {
    llvm::SmallVector<llvm::StringRef> Features;
    llvm::X86::getFeaturesForCPU(Cpu, Features);
    for (llvm::StringRef F : Features)
      EXPECT_TRUE(isKnownHostFeature(F.str())) << F.str() << " of " << Cpu.str();
  }
  for (const char *Level : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    const std::vector<std::string> *Ours = levelFeatures(Level);
    ASSERT_TRUE(Ours) << Level;
    llvm::SmallVector<llvm::StringRef> Features;
    llvm::X86::getFeaturesForCPU(Level, Features);
    for (llvm::StringRef F : Features)
      EXPECT_NE(std::find(Ours->begin(), Ours->end(), F.str()), Ours->end())
          << F.str() << " of " << Level;
  }
  EXPECT_EQ(levelFeatures("znver4"), nullptr);
  ASSERT_TRUE(levelFeatures("generic"));
  EXPECT_TRUE(levelFeatures("generic")->empty());
#endif
}

TEST_F(HostTest, ImageOfAnUnknownCpuRunsByItsFeatures) {
  // What `kiln compile --targets=native` writes on a CPU whose name
  // __builtin_cpu_is does not know.
  BundleSpec Spec{{tagKernel()}};
  TestImage Native;
  Native.Arch = "kiln-future-cpu";
  Native.Target = "native";
  Native.Requires = {{"cpu", "kiln-future-cpu"},
                     {"features", detectHostFeatures()}};
  Spec.Images = {Native};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer Out = upload(std::vector<int32_t>(1));
  alignas(16) static float P[4];
  auto Plan = M->kernel("tag")->launch(
      *Str, {Arg::pointer(Out), Arg::i32(10), Arg::i32(8), Arg::pointer(P),
             Arg::u32(4)});
  ASSERT_TRUE(Plan) << Plan.error().message();
  EXPECT_EQ(download<int32_t>(Out)[0], 100);

  // A feature this CPU lacks: the message says which.
  Native.Requires["features"].push_back("kiln-no-such-feature");
  Spec.Images = {Native};
  auto None = load(Spec);
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().code(), ErrorCode::NoImage);
  EXPECT_NE(None.error().message().find(
                "; it has " + hostTriple() +
                " kiln-future-cpu (lacks kiln-no-such-feature)"),
            std::string::npos)
      << None.error().message();
}

TEST(HostCpu, DescribeNamesLevelsAndFeatures) {
  const HostTarget &T = hostTarget();
  std::string D = T.describe();
  EXPECT_EQ(D.rfind(T.Triple + ": ", 0), 0u) << D;
  EXPECT_NE(D.find("generic; "), std::string::npos) << D;
  EXPECT_NE(D.find(" CPU features"), std::string::npos) << D;
  auto Dev = Device::open("host");
  ASSERT_TRUE(Dev);
  DeviceProperties P = Dev->properties();
  EXPECT_EQ(P.Kind, DeviceKind::Host);
  EXPECT_EQ(P.Model, "host");
  EXPECT_EQ(P.Arch, T.Names.front());
  EXPECT_GT(P.ComputeUnits, 0u);
  EXPECT_GT(P.MemoryBytes, 0u);
}

} // namespace
