//===- ConcurrencyTest.cpp - Many threads on one device and one module ----===//
//
// The runtime sits inside other people's processes, on threads they own.
// These tests launch from many threads at once on one device and one
// module: first launches racing to load the same variant, separate streams
// and buffers per thread, a module whose last user is a launching thread,
// many threads tuning the same kernel. They check results, not timings;
// scripts/sanitize.sh thread runs them under ThreadSanitizer (CI does),
// which turns any data race they reach into a failure.
//
// Devices: the host, the emulator and the CUDA device through its fake
// driver (FakeCuda.h: every call from any thread, with the device's
// context pushed around it).
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"
#include "TestUtil.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

constexpr unsigned kThreads = 8;

/// Starts `Body(I)` on kThreads threads at once (each waits until all
/// exist) and joins them.
void together(const std::function<void(unsigned)> &Body,
              unsigned Threads = kThreads) {
  std::mutex M;
  std::condition_variable CV;
  unsigned Ready = 0;
  std::vector<std::thread> Pool;
  for (unsigned I = 0; I < Threads; ++I)
    Pool.emplace_back([&, I] {
      {
        std::unique_lock<std::mutex> Lock(M);
        if (++Ready == Threads)
          CV.notify_all();
        else
          CV.wait(Lock, [&] { return Ready == Threads; });
      }
      Body(I);
    });
  for (std::thread &T : Pool)
    T.join();
}

/// One thread's vector add: its own stream and buffers, `Rounds` launches
/// of variant `I % 3` (or the default when `Pin` is false), each checked.
/// The first failure, as a message; "" if none.
std::string vaddRounds(Device &Dev, Kernel K, unsigned I, unsigned Rounds,
                       bool Pin = true) {
  auto S = Dev.createStream();
  if (!S)
    return "stream: " + S.error().message();
  int32_t N = int32_t(50 + 13 * I);
  const size_t Count = size_t(N);
  std::vector<float> X(Count), Y(Count), Z(Count);
  for (int32_t J = 0; J < N; ++J) {
    X[size_t(J)] = float(J) + 0.25f * float(I);
    Y[size_t(J)] = 3.0f * float(I) - float(J);
  }
  auto Bx = Dev.allocate(size_t(N) * 4), By = Dev.allocate(size_t(N) * 4),
       Bz = Dev.allocate(size_t(N) * 4);
  if (!Bx || !By || !Bz)
    return "allocate failed";
  if (Error E = S->copyToDevice(*Bx, 0, X.data(), size_t(N) * 4))
    return E.message();
  if (Error E = S->copyToDevice(*By, 0, Y.data(), size_t(N) * 4))
    return E.message();
  for (unsigned R = 0; R < Rounds; ++R) {
    std::vector<float> Poison(size_t(N), -1.0f);
    if (Error E = S->copyToDevice(*Bz, 0, Poison.data(), size_t(N) * 4))
      return E.message();
    LaunchOptions O;
    if (Pin)
      O.Variant = (I + R) % 3;
    auto P = K.launch(*S,
                      {Arg::pointer(*Bx), Arg::pointer(*By), Arg::pointer(*Bz),
                       Arg::i32(N)},
                      O);
    if (!P)
      return "launch: " + P.error().message();
    if (Error E = S->copyToHost(Z.data(), *Bz, 0, size_t(N) * 4))
      return E.message();
    if (Error E = S->synchronize())
      return E.message();
    for (int32_t J = 0; J < N; ++J)
      if (Z[size_t(J)] != X[size_t(J)] + Y[size_t(J)])
        return "thread " + std::to_string(I) + ", round " +
               std::to_string(R) + ": wrong result at " + std::to_string(J);
  }
  return "";
}

/// Runs `Body` on every thread and reports each thread's failure.
void expectAllPass(const std::function<std::string(unsigned)> &Body,
                   unsigned Threads = kThreads) {
  std::vector<std::string> Failures(Threads);
  together([&](unsigned I) { Failures[I] = Body(I); }, Threads);
  for (unsigned I = 0; I < Threads; ++I)
    EXPECT_EQ(Failures[I], "") << "thread " << I;
}

class ThreadsOnHost : public HostTest {};

TEST_F(ThreadsOnHost, FirstLaunchesRaceToLoadTheSameVariant) {
  // A fresh module each round: every thread's first launch loads.
  for (unsigned Round = 0; Round < 10; ++Round) {
    auto M = load({{vaddKernel()}});
    ASSERT_TRUE(M) << M.error().message();
    auto K = M->kernel("vadd");
    ASSERT_TRUE(K);
    expectAllPass([&](unsigned) { return vaddRounds(*Dev, *K, 0, 1); });
  }
}

TEST_F(ThreadsOnHost, ManyLaunchesOnSeparateStreams) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K);
  expectAllPass([&](unsigned I) { return vaddRounds(*Dev, *K, I, 25); });
}

TEST_F(ThreadsOnHost, TheLastLaunchingThreadUnloadsTheModule) {
  std::vector<Kernel> Kernels;
  {
    auto M = load({{vaddKernel()}});
    ASSERT_TRUE(M) << M.error().message();
    auto K = M->kernel("vadd");
    ASSERT_TRUE(K);
    for (unsigned I = 0; I < kThreads; ++I)
      Kernels.push_back(*K);
  } // the test's Module and Kernel are gone; the threads' copies remain
  expectAllPass([&](unsigned I) {
    Kernel Mine = std::move(Kernels[I]);
    return vaddRounds(*Dev, Mine, I, 10);
  });
}

TEST_F(ThreadsOnHost, ModulesLoadedAndDroppedWhileOthersLaunch) {
  auto M = load({{vaddKernel()}});
  ASSERT_TRUE(M);
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K);
  std::string Bytes = buildBundle({{vaddKernel()}});
  expectAllPass([&](unsigned I) -> std::string {
    if (I % 2)
      return vaddRounds(*Dev, *K, I, 10);
    for (unsigned R = 0; R < 10; ++R) {
      auto Own = Dev->loadModuleMemory(Bytes.data(), Bytes.size());
      if (!Own)
        return Own.error().message();
      auto OwnK = Own->kernel("vadd");
      if (!OwnK)
        return OwnK.error().message();
      if (std::string F = vaddRounds(*Dev, *OwnK, I, 1); !F.empty())
        return F;
    }
    return "";
  });
}

TEST_F(ThreadsOnHost, ManyThreadsTuneOneKernel) {
  std::string Dir = tempDir();
  setTuningDatabase(Dir + "/tuning.db");
  setTuningMode(TuningMode::Full);
  auto M = load({{spinKernel(3)}});
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("spin");
  ASSERT_TRUE(K);
  std::vector<LaunchPlan> Plans(kThreads);
  expectAllPass([&](unsigned I) -> std::string {
    auto S = Dev->createStream();
    if (!S)
      return S.error().message();
    const int32_t N = 64;
    std::vector<float> In(N, 1.0f + float(I));
    auto B = Dev->allocate(N * 4);
    if (!B)
      return B.error().message();
    if (Error E = S->copyToDevice(*B, 0, In.data(), N * 4))
      return E.message();
    auto P = K->launch(*S, {Arg::pointer(*B), Arg::i32(N), Arg::i32(200)});
    if (!P)
      return P.error().message();
    Plans[I] = *P;
    std::vector<float> Out(N);
    if (Error E = S->copyToHost(Out.data(), *B, 0, N * 4))
      return E.message();
    if (Error E = S->synchronize())
      return E.message();
    // One update in place (spin: acc = 2 acc + 1), whoever measured.
    for (int32_t J = 0; J < N; ++J)
      if (Out[size_t(J)] != 2 * In[size_t(J)] + 1)
        return "wrong result at " + std::to_string(J);
    return "";
  });
  setTuningMode(TuningMode::Off);
  setTuningDatabase(":memory:");
  // One thread measured the three variants; the others waited for it and
  // took its choice.
  unsigned Measured = 0;
  for (const LaunchPlan &P : Plans) {
    Measured += P.Measured;
    EXPECT_EQ(P.Config, Plans[0].Config);
  }
  EXPECT_EQ(Measured, 3u);
}

TEST(ThreadsOnEmulator, ManyLaunchesFromManyThreads) {
  std::string Bytes = emuBundle("exchange", {{"out", "*u32"}});
  auto D = Device::open("emu:sm_80");
  ASSERT_TRUE(D) << D.error().message();
  auto M = D->loadModuleMemory(Bytes.data(), Bytes.size());
  ASSERT_TRUE(M) << M.error().message();
  auto Ex = M->kernel("exchange");
  ASSERT_TRUE(Ex);
  expectAllPass(
      [&](unsigned T) -> std::string {
        auto S = D->createStream();
        auto Out = D->allocate(128 * 4);
        if (!S || !Out)
          return "setup failed";
        for (unsigned R = 0; R < 5; ++R) {
          auto P = Ex->launch(*S, {Arg::pointer(*Out)});
          if (!P)
            return P.error().message();
          std::vector<uint32_t> Got(128);
          if (Error E = S->copyToHost(Got.data(), *Out, 0, 128 * 4))
            return E.message();
          if (Error E = S->synchronize())
            return E.message();
          for (uint32_t I = 0; I < 128; ++I)
            if (Got[I] != exchangeValue(I))
              return "wrong result at " + std::to_string(I);
        }
        return "";
      },
      4);
}

class ThreadsOnCuda : public FakeDriverTest {
protected:
  ThreadsOnCuda() : FakeDriverTest(KILN_FAKE_CUDA) {}
  void SetUp() override {
    FakeDriverTest::SetUp();
    open("cuda:0");
  }

  std::string bundle() {
    BundleSpec Spec({vaddKernel()});
    Spec.Images = {cudaImage(vaddFunctions())};
    return buildBundle(Spec);
  }

  int liveModules() {
    int A, S, E, M, C;
    Hooks.Live(&A, &S, &E, &M, &C);
    return M;
  }

  ScopedEnv Driver{"KILN_CUDA_DRIVER", KILN_FAKE_CUDA};
  ScopedEnv Mode{"KILN_FAKE_CUDA", "one"};
};

TEST_F(ThreadsOnCuda, ManyThreadsLaunchOnOneModule) {
  std::string Bytes = bundle();
  int Before = liveModules();
  {
    std::vector<Kernel> Kernels;
    {
      auto M = Dev->loadModuleMemory(Bytes.data(), Bytes.size());
      ASSERT_TRUE(M) << M.error().message();
      auto K = M->kernel("vadd");
      ASSERT_TRUE(K);
      for (unsigned I = 0; I < kThreads; ++I)
        Kernels.push_back(*K);
    }
    expectAllPass([&](unsigned I) {
      Kernel Mine = std::move(Kernels[I]);
      return vaddRounds(*Dev, Mine, I, 10);
    });
  }
  // The last thread's Kernel unloaded the module's code objects.
  EXPECT_EQ(liveModules(), Before);
}

} // namespace
