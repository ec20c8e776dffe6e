//===- LaunchTest.cpp - Devices, kernels and launches on the host ---------===//
//
// Argument checks, promises, grid evaluation, launch conditions, variant
// choice, large and empty grids, parallelism, print and trap, and the
// marshalling of every scalar type, with the kernels of TestKernels.c.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

std::vector<Arg> tagArgs(const Buffer &Out, int32_t Cols, int32_t Stride = 8,
                         const void *P = nullptr, uint32_t U = 4) {
  return {Arg::pointer(Out), Arg::i32(Cols), Arg::i32(Stride), Arg::pointer(P),
          Arg::u32(U)};
}

TEST_F(HostTest, VectorAdd) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K) << K.error().message();
  EXPECT_EQ(K->info().Params.size(), 4u);
  const int N = 37;
  std::vector<float> X(N), Y(N);
  for (int I = 0; I < N; ++I) {
    X[I] = float(I);
    Y[I] = 0.5f * float(I);
  }
  Buffer BX = upload(X), BY = upload(Y), BZ = upload(std::vector<float>(N));
  auto Plan = K->launch(*Str, {Arg::pointer(BX, ScalarType::F32),
                               Arg::pointer(BY), Arg::pointer(BZ),
                               Arg::i32(N)});
  ASSERT_TRUE(Plan) << Plan.error().message();
  EXPECT_EQ(Plan->VariantName, "vadd_v0");
  EXPECT_EQ(Plan->Config, "BLOCK=4, warps=4, stages=2");
  EXPECT_EQ(Plan->Grid[0], 10);
  EXPECT_EQ(Plan->Grid[1], 1);
  EXPECT_EQ(Plan->programs(), 10u);
  std::vector<float> Z = download<float>(BZ);
  for (int I = 0; I < N; ++I)
    EXPECT_EQ(Z[I], 1.5f * float(I)) << I;
}

TEST_F(HostTest, ConfigOverride) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K);
  Buffer B = upload(std::vector<float>(100, 1.0f));
  std::vector<Arg> Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                           Arg::i32(100)};
  LaunchOptions O;
  O.Config = {{"BLOCK", 16}};
  auto Plan = K->launch(*Str, Args, O);
  ASSERT_TRUE(Plan) << Plan.error().message();
  EXPECT_EQ(Plan->VariantName, "vadd_v2");
  EXPECT_EQ(Plan->Grid[0], 7);
  for (float V : download<float>(B))
    EXPECT_EQ(V, 2.0f);

  LaunchOptions ByIndex;
  ByIndex.Variant = 1;
  auto P1 = K->plan(Args, ByIndex);
  ASSERT_TRUE(P1);
  EXPECT_EQ(P1->VariantName, "vadd_v1");
  EXPECT_EQ(P1->Grid[0], 13);

  LaunchOptions Typo;
  Typo.Config = {{"BLOK", 16}};
  auto E1 = K->plan(Args, Typo);
  ASSERT_FALSE(E1);
  EXPECT_EQ(E1.error().code(), ErrorCode::NotFound);
  EXPECT_EQ(E1.error().message(),
            "kernel 'vadd' has no const param 'BLOK'; did you mean 'BLOCK'? "
            "(const params: BLOCK, warps, stages)");

  LaunchOptions Missing;
  Missing.Config = {{"BLOCK", 5}, {"warps", 4}};
  auto E2 = K->plan(Args, Missing);
  ASSERT_FALSE(E2);
  EXPECT_EQ(E2.error().message(),
            "kernel 'vadd' has no variant with BLOCK=5, warps=4 (variants: "
            "0: BLOCK=4, warps=4, stages=2; 1: BLOCK=8, warps=4, stages=2; "
            "2: BLOCK=16, warps=4, stages=2)");

  auto Parsed = parseConfig("BLOCK=8,warps=4");
  ASSERT_TRUE(Parsed);
  EXPECT_EQ(Parsed->size(), 2u);
  EXPECT_FALSE(parseConfig("BLOCK"));
  EXPECT_FALSE(parseConfig("BLOCK=x"));
  EXPECT_FALSE(parseConfig("A=1,A=2"));
  auto Flags = parseConfig("CAUSAL=true");
  ASSERT_TRUE(Flags);
  EXPECT_EQ((*Flags)[0].second, 1);
}

TEST_F(HostTest, KernelLookup) {
  auto M = load({{vaddKernel(), countKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  EXPECT_EQ(M->kernelNames(), (std::vector<std::string>{"vadd", "count"}));
  auto K = M->kernel("vad");
  ASSERT_FALSE(K);
  EXPECT_EQ(K.error().code(), ErrorCode::NotFound);
  EXPECT_EQ(K.error().message(),
            "bundle 'test.kpack' has no kernel 'vad'; did you mean 'vadd'? "
            "(kernels: vadd, count)");
  auto Far = M->kernel("softmax");
  ASSERT_FALSE(Far);
  EXPECT_EQ(Far.error().message(), "bundle 'test.kpack' has no kernel "
                                   "'softmax' (kernels: vadd, count)");
}

TEST_F(HostTest, ArgumentChecks) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M);
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K);
  Buffer B = upload(std::vector<float>(16));
  auto Expect = [&](std::vector<Arg> Args, const std::string &Message) {
    auto P = K->plan(Args);
    ASSERT_FALSE(P) << Message;
    EXPECT_EQ(P.error().code(), ErrorCode::LaunchRefused);
    EXPECT_EQ(P.error().message(), Message);
  };
  Expect({Arg::pointer(B), Arg::pointer(B), Arg::i32(3)},
         "kernel 'vadd' takes 4 arguments (x, y, z, n), got 3");
  Expect({Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::f32(3)},
         "argument 3 ('n') of vadd expects i32, got f32");
  Expect({Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::pointer(B)},
         "argument 3 ('n') of vadd expects i32, got a pointer");
  Expect({Arg::i32(0), Arg::pointer(B), Arg::pointer(B), Arg::i32(3)},
         "argument 0 ('x') of vadd expects *f32, got i32");
  Expect({Arg::pointer(B), Arg::pointer(B, ScalarType::I32), Arg::pointer(B),
          Arg::i32(3)},
         "argument 1 ('y') of vadd expects *f32, got *i32");
  Expect({Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::i64(3)},
         "argument 3 ('n') of vadd expects i32, got i64");
}

TEST_F(HostTest, Promises) {
  auto M = load({{tagKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  Buffer Out = upload(std::vector<int32_t>(1));
  alignas(16) static float Aligned[8];
  EXPECT_TRUE(K->plan(tagArgs(Out, 10, 8, Aligned)));
  EXPECT_TRUE(K->plan(tagArgs(Out, 10, -16, Aligned)));
  EXPECT_TRUE(K->plan(tagArgs(Out, 10, 0, nullptr)));
  EXPECT_TRUE(K->plan(tagArgs(Out, 10, 8, nullptr, 4294967292u)));

  auto Div = K->plan(tagArgs(Out, 10, 100, Aligned));
  ASSERT_FALSE(Div);
  EXPECT_EQ(Div.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(Div.error().message(),
            "argument 'stride' = 100 breaks its promise @div(8)");
  auto Neg = K->plan(tagArgs(Out, 10, -12, Aligned));
  ASSERT_FALSE(Neg);
  EXPECT_EQ(Neg.error().message(),
            "argument 'stride' = -12 breaks its promise @div(8)");
  auto Unsigned = K->plan(tagArgs(Out, 10, 8, Aligned, 4294967294u));
  ASSERT_FALSE(Unsigned);
  EXPECT_EQ(Unsigned.error().message(),
            "argument 'u' = 4294967294 breaks its promise @div(4)");
  auto Align = K->plan(tagArgs(Out, 10, 8, reinterpret_cast<void *>(0x1004)));
  ASSERT_FALSE(Align);
  EXPECT_EQ(Align.error().message(),
            "argument 'p' = 0x1004 breaks its promise @align(16)");
  // A launch is refused the same way, and runs nothing.
  auto L = K->launch(*Str, tagArgs(Out, 10, 3, Aligned));
  ASSERT_FALSE(L);
  EXPECT_EQ(download<int32_t>(Out)[0], 0);
}

TEST_F(HostTest, GridEvaluation) {
  TestKernel G = tagKernel();
  G.Params = {{"out", "*i32"}, {"n", "i32"}, {"d", "i64"}, {"flag", "bool"}};
  G.ConstParams = {"BLOCK"};
  G.Variants = {{64}};
  G.Key = {};
  G.Grid = {"(+ (cdiv n BLOCK) (neg (< n 0)))", "(max 1 (min d 3))",
            "(- (/ (neg n) 2) (% n 3))"};
  auto M = load({{G}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  Buffer Out = upload(std::vector<int32_t>(1));
  auto Args = [&](int32_t N, int64_t D) {
    return std::vector<Arg>{Arg::pointer(Out), Arg::i32(N), Arg::i64(D),
                            Arg::boolean(true)};
  };
  // cdiv rounds up (-129 / 64 -> -2), (< n 0) is 1: axis 0 is -3.
  auto Neg = K->plan(Args(-129, 7));
  ASSERT_FALSE(Neg);
  EXPECT_EQ(Neg.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(Neg.error().message(),
            "grid axis 0 of kernel 'tag' ('(+ (cdiv n BLOCK) (neg (< n 0)))' "
            "with n=-129, variant BLOCK=64) is negative: -3");
  // Axis 2 is -129 / 2 - 0 = -64 (division truncates).
  auto Pos = K->plan(Args(129, 7));
  ASSERT_FALSE(Pos);
  EXPECT_EQ(Pos.error().message(),
            "grid axis 2 of kernel 'tag' ('(- (/ (neg n) 2) (% n 3))' with "
            "n=129, variant BLOCK=64) is negative: -64");
}

TEST_F(HostTest, GridValues) {
  TestKernel G = tagKernel();
  G.Params = {{"out", "*i32"}, {"n", "i32"}, {"d", "i64"}};
  G.ConstParams = {"BLOCK"};
  G.Variants = {{64}};
  G.Key = {};
  G.Grid = {"(cdiv n BLOCK)", "(max 1 (min d 3))", "(<< (& d 1) 2)"};
  auto M = load({{G}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  Buffer Out = upload(std::vector<int32_t>(1));
  auto Plan = [&](int32_t N, int64_t D) {
    return K->plan({Arg::pointer(Out), Arg::i32(N), Arg::i64(D)});
  };
  auto P = Plan(129, 7);
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Grid[0], 3);
  EXPECT_EQ(P->Grid[1], 3);
  EXPECT_EQ(P->Grid[2], 4);
  P = Plan(128, -5);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Grid[0], 2);
  EXPECT_EQ(P->Grid[1], 1);
  EXPECT_EQ(P->Grid[2], 4);
  // A zero axis launches nothing.
  P = Plan(0, 0);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Grid[0], 0);
  EXPECT_EQ(P->programs(), 0u);
  auto L = K->launch(*Str, {Arg::pointer(Out), Arg::i32(0), Arg::i64(0)});
  ASSERT_TRUE(L) << L.error().message();
  EXPECT_EQ(download<int32_t>(Out)[0], 0);

  G.Grid = {"(/ n d)"};
  auto M2 = load({{G}});
  ASSERT_TRUE(M2);
  auto K2 = M2->kernel("tag");
  ASSERT_TRUE(K2);
  auto Zero = K2->plan({Arg::pointer(Out), Arg::i32(5), Arg::i64(0)});
  ASSERT_FALSE(Zero);
  EXPECT_EQ(Zero.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(Zero.error().message(),
            "grid axis 0 of kernel 'tag' ('(/ n d)' with n=5, d=0, variant "
            "BLOCK=64): division by zero");

  G.Grid = {"(* n 1000000)"};
  auto M3 = load({{G}});
  ASSERT_TRUE(M3);
  auto Big = M3->kernel("tag")->plan(
      {Arg::pointer(Out), Arg::i32(5000), Arg::i64(0)});
  ASSERT_FALSE(Big);
  EXPECT_EQ(Big.error().message(),
            "grid axis 0 of kernel 'tag' ('(* n 1000000)' with n=5000, "
            "variant BLOCK=64) is 5000000000, above this device's limit of "
            "2147483647");
}

TEST_F(HostTest, LaunchConditionsChooseTheVariant) {
  auto M = load({{tagKernel({"(>= BLOCK cols)"})}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  Buffer Out = upload(std::vector<int32_t>(1));
  auto P = K->launch(*Str, tagArgs(Out, 300));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->VariantName, "tag_v1");
  EXPECT_EQ(download<int32_t>(Out)[0], 101);
  P = K->launch(*Str, tagArgs(Out, 100));
  ASSERT_TRUE(P);
  EXPECT_EQ(download<int32_t>(Out)[0], 100);

  auto None = K->plan(tagArgs(Out, 5000));
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().code(), ErrorCode::LaunchRefused);
  EXPECT_EQ(None.error().message(),
            "no variant of kernel 'tag' can run with cols=5000: launch "
            "condition '(>= BLOCK cols)' rules out all 4 variants");

  // An override must still satisfy the conditions.
  LaunchOptions O;
  O.Config = {{"BLOCK", 256}};
  auto Bad = K->plan(tagArgs(Out, 300), O);
  ASSERT_FALSE(Bad);
  EXPECT_EQ(Bad.error().message(),
            "the variant of kernel 'tag' with BLOCK=256 cannot run with "
            "cols=300: launch condition '(>= BLOCK cols)' does not hold");
  O.Config = {{"BLOCK", 1024}, {"warps", 8}};
  P = K->launch(*Str, tagArgs(Out, 300), O);
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->VariantName, "tag_v3");
  EXPECT_EQ(P->Config, "BLOCK=1024, warps=8, stages=2");
  EXPECT_EQ(download<int32_t>(Out)[0], 103);
}

TEST_F(HostTest, SeveralLaunchConditions) {
  auto M = load({{tagKernel({"(>= BLOCK cols)", "(== (% stride 16) 0)"})}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("tag");
  ASSERT_TRUE(K);
  Buffer Out = upload(std::vector<int32_t>(1));
  auto P = K->plan(tagArgs(Out, 600, 32));
  ASSERT_TRUE(P);
  EXPECT_EQ(P->VariantName, "tag_v2");
  auto None = K->plan(tagArgs(Out, 600, 8));
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().message(),
            "no variant of kernel 'tag' can run with cols=600, stride=8: "
            "launch conditions '(>= BLOCK cols)', '(== (% stride 16) 0)' "
            "rule out all 4 variants");
}

TEST_F(HostTest, LargeGrid) {
  auto M = load({{countKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("count");
  ASSERT_TRUE(K);
  const int N = 100000;
  Buffer Hits = upload(std::vector<int32_t>(N));
  Buffer Total = upload(std::vector<int64_t>(1));
  auto P = K->launch(*Str, {Arg::pointer(Hits), Arg::pointer(Total),
                            Arg::i32(N), Arg::i32(1), Arg::i32(1)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->programs(), uint64_t(N));
  EXPECT_EQ(download<int64_t>(Total)[0], N);
  std::vector<int32_t> H = download<int32_t>(Hits);
  EXPECT_EQ(std::count(H.begin(), H.end(), 1), N);
}

TEST_F(HostTest, ThreeDimensionalGrid) {
  auto M = load({{countKernel()}});
  ASSERT_TRUE(M);
  auto K = M->kernel("count");
  ASSERT_TRUE(K);
  Buffer Hits = upload(std::vector<int32_t>(7 * 5 * 3));
  Buffer Total = upload(std::vector<int64_t>(1));
  auto P = K->launch(*Str, {Arg::pointer(Hits), Arg::pointer(Total),
                            Arg::i32(7), Arg::i32(5), Arg::i32(3)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Grid[2], 3);
  std::vector<int32_t> H = download<int32_t>(Hits);
  EXPECT_EQ(std::count(H.begin(), H.end(), 1), 105);

  // Zero in any axis: nothing runs; a negative axis is refused.
  auto Z = K->launch(*Str, {Arg::pointer(Hits), Arg::pointer(Total),
                            Arg::i32(7), Arg::i32(0), Arg::i32(3)});
  ASSERT_TRUE(Z);
  EXPECT_EQ(Z->programs(), 0u);
  EXPECT_EQ(download<int64_t>(Total)[0], 105);
  auto Neg = K->plan({Arg::pointer(Hits), Arg::pointer(Total), Arg::i32(-1),
                      Arg::i32(1), Arg::i32(1)});
  ASSERT_FALSE(Neg);
  EXPECT_EQ(Neg.error().message(),
            "grid axis 0 of kernel 'count' ('gx' with gx=-1, variant warps=4, "
            "stages=2) is negative: -1");
}

TEST(HostConcurrency, ProgramsRunInParallel) {
  setenv("KILN_HOST_THREADS", "4", 1);
  auto D = Device::open("host");
  unsetenv("KILN_HOST_THREADS");
  ASSERT_TRUE(D);
  EXPECT_EQ(D->description(), "host (4 threads)");
  TestKernel Overlap{"overlap", {{"stats", "*i64"}, {"micros", "i32"},
                                 {"n", "i32"}}, {}, {{}}, {"n"}, {}, {}};
  std::string Bytes = buildBundle({{Overlap}});
  auto M = D->loadModuleMemory(Bytes.data(), Bytes.size());
  ASSERT_TRUE(M) << M.error().message();
  auto S = D->createStream();
  auto Stats = D->allocate(16);
  ASSERT_TRUE(S && Stats);
  ASSERT_FALSE(S->fill(*Stats, 0, 0, 16));
  auto P = M->kernel("overlap")->launch(
      *S, {Arg::pointer(*Stats), Arg::i32(2000), Arg::i32(64)});
  ASSERT_TRUE(P) << P.error().message();
  int64_t Out[2];
  ASSERT_FALSE(S->copyToHost(Out, *Stats, 0, 16));
  EXPECT_EQ(Out[0], 0);
  EXPECT_GE(Out[1], 2) << "programs never ran at the same time";
  EXPECT_LE(Out[1], 4);
}

TEST_F(HostTest, ConcurrentLaunchesFromThreads) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M);
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K);
  std::atomic<int> Failures{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      auto S = Dev->createStream();
      auto B = Dev->allocate(64 * sizeof(float));
      if (!S || !B) {
        ++Failures;
        return;
      }
      std::vector<float> Ones(64, float(T));
      if (S->copyToDevice(*B, 0, Ones.data(), B->size()))
        ++Failures;
      LaunchOptions O;
      O.Variant = unsigned(T % 3);
      for (int I = 0; I < 20; ++I)
        if (!K->launch(*S, {Arg::pointer(*B), Arg::pointer(*B),
                            Arg::pointer(*B), Arg::i32(64)}, O))
          ++Failures;
      if (S->copyToHost(Ones.data(), *B, 0, B->size()))
        ++Failures;
      for (float V : Ones)
        Failures += V != float(T) * float(1 << 20);
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
}

TEST_F(HostTest, PrintCallback) {
  auto M = load({{printerKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  std::mutex Mutex;
  std::vector<std::string> Lines;
  Dev->setPrintHandler([&](const std::string &L) {
    std::lock_guard<std::mutex> Lock(Mutex);
    Lines.push_back(L);
  });
  Buffer X = upload(std::vector<float>{1.5f, -0.25f});
  auto P = M->kernel("printer")->launch(*Str, {Arg::pointer(X), Arg::i32(2)});
  ASSERT_TRUE(P) << P.error().message();
  ASSERT_EQ(Lines.size(), 10u);
  std::sort(Lines.begin(), Lines.end());
  EXPECT_EQ(Lines, (std::vector<std::string>{
                       "flag true", "flag true", "h=1.5", "h=1.5", "hello",
                       "hello", "t = [[1, 2, 3], [4, 5, -6]]",
                       "t = [[1, 2, 3], [4, 5, -6]]", "x = -0.25", "x = 1.5"}));
}

TEST_F(HostTest, TrapStopsTheLaunch) {
  auto M = load({{trapperKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("trapper");
  ASSERT_TRUE(K);
  Buffer Done = upload(std::vector<int64_t>(1));
  auto P = K->launch(*Str, {Arg::i32(5), Arg::pointer(Done), Arg::i32(1000)});
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(P.error().message(), "kernel trapped: k.tile:3:5: assertion "
                                 "failed: boom (in program 5, 0, 0)");
  EXPECT_LT(download<int64_t>(Done)[0], 1000);
  // The next launch is unaffected.
  ASSERT_FALSE(Str->fill(Done, 0, 0, 8));
  P = K->launch(*Str, {Arg::i32(-1), Arg::pointer(Done), Arg::i32(1000)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(download<int64_t>(Done)[0], 1000);
}

TEST_F(HostTest, EveryScalarType) {
  TestKernel Scalars = scalarsKernel();
  auto M = load({{Scalars}});
  ASSERT_TRUE(M) << M.error().message();
  Buffer Out = upload(std::vector<uint8_t>(8 * 13, 0xee));
  std::vector<Arg> Args = {
      Arg::pointer(Out),   Arg::boolean(true),  Arg::i8(-2),
      Arg::i16(-300),      Arg::i32(-70000),    Arg::i64(-(int64_t(1) << 40)),
      Arg::u8(200),        Arg::u16(60000),     Arg::u32(4000000000u),
      Arg::u64(~uint64_t(0)), Arg::f16(1.5f),   Arg::bf16(-2.0f),
      Arg::f32(3.25f),     Arg::f64(-1e300)};
  auto P = M->kernel("scalars")->launch(*Str, Args);
  ASSERT_TRUE(P) << P.error().message();
  std::vector<uint8_t> Bytes = download<uint8_t>(Out);
  auto At = [&](int I, auto V) {
    std::memcpy(&V, &Bytes[8 * I], sizeof(V));
    return V;
  };
  EXPECT_EQ(At(0, uint8_t()), 1);
  EXPECT_EQ(Bytes[1], 0xee) << "bool is one byte";
  EXPECT_EQ(At(1, int8_t()), -2);
  EXPECT_EQ(At(2, int16_t()), -300);
  EXPECT_EQ(At(3, int32_t()), -70000);
  EXPECT_EQ(At(4, int64_t()), -(int64_t(1) << 40));
  EXPECT_EQ(At(5, uint8_t()), 200);
  EXPECT_EQ(At(6, uint16_t()), 60000);
  EXPECT_EQ(At(7, uint32_t()), 4000000000u);
  EXPECT_EQ(At(8, uint64_t()), ~uint64_t(0));
  EXPECT_EQ(At(9, uint16_t()), 0x3e00);
  EXPECT_EQ(At(10, uint16_t()), 0xc000);
  EXPECT_EQ(At(11, float()), 3.25f);
  EXPECT_EQ(At(12, double()), -1e300);
}

TEST_F(HostTest, DoubleInPlace) {
  auto M = load({{scaleKernel()}});
  ASSERT_TRUE(M);
  Buffer X = upload(std::vector<double>{1, 2, 3});
  auto P = M->kernel("scale")->launch(
      *Str, {Arg::pointer(X), Arg::f64(0.5), Arg::i64(3)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(download<double>(X), (std::vector<double>{0.5, 1, 1.5}));
}

TEST_F(HostTest, StreamsEventsAndBuffers) {
  auto Start = Dev->createEvent();
  auto End = Dev->createEvent();
  ASSERT_TRUE(Start && End);
  auto T0 = Event::elapsedMilliseconds(*Start, *End);
  ASSERT_FALSE(T0);
  EXPECT_EQ(T0.error().code(), ErrorCode::InvalidArgument);
  ASSERT_FALSE(Str->record(*Start));
  ASSERT_FALSE(Str->record(*End));
  ASSERT_FALSE(End->synchronize());
  auto T = Event::elapsedMilliseconds(*Start, *End);
  ASSERT_TRUE(T);
  EXPECT_GE(*T, 0.0);

  Buffer A = upload(std::vector<uint32_t>{1, 2, 3, 4});
  Buffer B = upload(std::vector<uint32_t>(4));
  ASSERT_FALSE(Str->copy(B, 4, A, 0, 8));
  ASSERT_FALSE(Str->fill(B, 12, 0xff, 4));
  EXPECT_EQ(download<uint32_t>(B),
            (std::vector<uint32_t>{0, 1, 2, 0xffffffffu}));
  Error E = Str->copyToDevice(A, 8, "0123456789", 10);
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(E.message(), "copyToDevice: 10 bytes at offset 8 do not fit in a "
                         "buffer of 16 bytes");
  Buffer Moved = std::move(A);
  EXPECT_TRUE(Str->fill(A, 0, 0, 1));
  EXPECT_FALSE(Str->fill(Moved, 0, 0, 16));
  auto Empty = Dev->allocate(0);
  ASSERT_TRUE(Empty);
  EXPECT_EQ(Empty->size(), 0u);
  EXPECT_NE(Empty->data(), nullptr);

  auto Other = Device::open("host");
  ASSERT_TRUE(Other);
  auto OtherBuf = Other->allocate(16);
  ASSERT_TRUE(OtherBuf);
  Error Cross = Str->fill(*OtherBuf, 0, 0, 16);
  ASSERT_TRUE(Cross);
  EXPECT_EQ(Cross.message(),
            "fill: the buffer belongs to another device than the stream");
}

TEST(Devices, Specs) {
  auto Auto = Device::open("auto");
  ASSERT_TRUE(Auto);
  EXPECT_EQ(Auto->kind(), DeviceKind::Host);
  EXPECT_EQ(Auto->name(), "host");
  // The tests run without a CUDA driver (CudaTest.cpp).
  auto Cuda = Device::open("cuda:0");
  ASSERT_FALSE(Cuda);
  EXPECT_EQ(Cuda.error().code(), ErrorCode::Driver);
  EXPECT_EQ(Cuda.error().message().rfind("cannot open cuda:0: ", 0), 0u)
      << Cuda.error().message();
  // Nor HIP (HipTest.cpp).
  auto Hip = Device::open("hip");
  ASSERT_FALSE(Hip);
  EXPECT_EQ(Hip.error().code(), ErrorCode::Driver);
  EXPECT_EQ(Hip.error().message().rfind("cannot open hip:0: ", 0), 0u)
      << Hip.error().message();
  for (const char *Bad : {"tpu", "cuda:", "cuda:x", "host:1", "cuda:-1"}) {
    auto D = Device::open(Bad);
    ASSERT_FALSE(D) << Bad;
    EXPECT_EQ(D.error().code(), ErrorCode::InvalidArgument) << Bad;
    EXPECT_EQ(D.error().message(),
              "unknown device '" + std::string(Bad) +
                  "'; expected auto, host, cuda[:N], hip[:N] or emu:<arch>");
  }
}

TEST_F(HostTest, NoImageForThisDevice) {
  BundleSpec Gpu{{vaddKernel()}};
  Gpu.Triple = "nvptx64-nvidia-cuda";
  Gpu.Arch = "sm_90a";
  auto M = load(Gpu);
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().code(), ErrorCode::NoImage);
  EXPECT_EQ(M.error().message().rfind("no image for host (", 0), 0u)
      << M.error().message();
  EXPECT_NE(M.error().message().find(") in bundle 'test.kpack'; it has "
                                     "sm_90a"),
            std::string::npos)
      << M.error().message();

  // An arch this CPU cannot run is skipped the same way.
  BundleSpec Future{{vaddKernel()}};
  Future.Arch = "x86-64-v9";
  auto F = load(Future);
  ASSERT_FALSE(F);
  EXPECT_EQ(F.error().code(), ErrorCode::NoImage);
}

TEST_F(HostTest, BrokenCodeObjects) {
  BundleSpec Garbage{{vaddKernel()}};
  Garbage.ImageBytes = std::string(100, 'x');
  auto M = load(Garbage);
  ASSERT_TRUE(M) << M.error().message();
  Buffer B = upload(std::vector<float>(4));
  std::vector<Arg> Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                           Arg::i32(4)};
  auto P = M->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().message(),
            "test.kpack: cannot load the host code object of vadd_v0: it is "
            "not an ELF shared object for this machine");
  // Planning still works: the image is loaded only to launch.
  EXPECT_TRUE(M->kernel("vadd")->plan(Args));

  TestKernel NoEntry = vaddKernel();
  NoEntry.Name = "nosuch";
  auto M2 = load({{NoEntry}});
  ASSERT_TRUE(M2);
  auto P2 = M2->kernel("nosuch")->launch(*Str, Args);
  ASSERT_FALSE(P2);
  EXPECT_EQ(P2.error().message(),
            "test.kpack: cannot load the host code object of nosuch_v0: it "
            "does not define the entry 'nosuch_v0'");
}

TEST_F(HostTest, ModuleOutlivesItsHandles) {
  std::optional<Kernel> K;
  {
    auto D = Device::open("host");
    ASSERT_TRUE(D);
    std::string Bytes = buildBundle({{vaddKernel()}});
    auto M = D->loadModuleMemory(Bytes.data(), Bytes.size());
    ASSERT_TRUE(M);
    auto Found = M->kernel("vadd");
    ASSERT_TRUE(Found);
    K.emplace(*Found);
  }
  auto D = K->info().Name;
  EXPECT_EQ(D, "vadd");
  // The stream belongs to another device: refused, not crashed.
  Buffer B = upload(std::vector<float>(4));
  auto P = K->launch(*Str, {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                            Arg::i32(4)});
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().message(),
            "launch: the stream belongs to another device than the module");
}

} // namespace
