//===- EmuDeviceTest.cpp - The emulator device's runs and reports --------===//
//
// Hand-written emulated kernels (EmuTestKernels.c, kiln/emu_abi.h) in test
// bundles: the emulator runs threads, barriers, shuffles and asynchronous
// copies correctly, and reports each class of bug with the source location
// and the threads (docs/emulator.md, "What it reports").
//
//===----------------------------------------------------------------------===//

#include "BundleBuilder.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

class EmuDevice : public ::testing::Test {
protected:
  void SetUp() override {
    auto D = Device::open("emu:sm_80");
    ASSERT_TRUE(D) << D.error().message();
    Dev.emplace(std::move(*D));
    auto S = Dev->createStream();
    ASSERT_TRUE(S);
    Str.emplace(std::move(*S));
  }

  /// Launches `Name` over 2 programs; the launch's error ("" if none).
  std::string run(const std::string &Name, std::vector<TestParam> Params,
                  std::vector<Arg> Args) {
    std::string Bytes = emuBundle(Name, std::move(Params));
    auto M = Dev->loadModuleMemory(Bytes.data(), Bytes.size());
    EXPECT_TRUE(M) << M.error().message();
    if (!M)
      return "no module";
    auto K = M->kernel(Name);
    EXPECT_TRUE(K);
    auto P = K->launch(*Str, Args);
    Error E = P ? Str->synchronize() : P.takeError();
    return E ? E.message() : "";
  }

  Expected<Buffer> buffer(size_t Bytes) { return Dev->allocate(Bytes); }

  std::optional<Device> Dev;
  std::optional<Stream> Str;
};

TEST_F(EmuDevice, Describes) {
  EXPECT_EQ(Dev->kind(), DeviceKind::Emulator);
  EXPECT_EQ(Dev->name(), "emu:sm_80");
  EXPECT_NE(Dev->description().find("emulated sm_80 on the host"),
            std::string::npos);
}

TEST_F(EmuDevice, BarriersAndShuffles) {
  auto Out = buffer(128 * 4);
  ASSERT_TRUE(Out);
  EXPECT_EQ(run("exchange", {{"out", "*u32"}}, {Arg::pointer(*Out)}), "");
  std::vector<uint32_t> Got(128);
  ASSERT_FALSE(Str->copyToHost(Got.data(), *Out, 0, Got.size() * 4));
  for (uint32_t P = 0; P < 2; ++P)
    for (uint32_t T = 0; T < 64; ++T)
      ASSERT_EQ(Got[64 * P + T], exchangeValue(64 * P + T))
          << "program " << P << ", thread " << T;
}

TEST_F(EmuDevice, AsynchronousCopies) {
  std::vector<uint32_t> Src(64);
  for (uint32_t I = 0; I < 64; ++I)
    Src[I] = 3 * I + 1;
  auto S = buffer(64 * 4), Out = buffer(256 * 4);
  ASSERT_TRUE(S && Out);
  ASSERT_FALSE(Str->copyToDevice(*S, 0, Src.data(), 64 * 4));
  EXPECT_EQ(run("async_ok", {{"src", "*u32"}, {"out", "*u32"}},
                {Arg::pointer(*S), Arg::pointer(*Out)}),
            "");
  std::vector<uint32_t> Got(256);
  ASSERT_FALSE(Str->copyToHost(Got.data(), *Out, 0, Got.size() * 4));
  for (uint32_t T = 0; T < 64; ++T)
    for (uint32_t I = 0; I < 4; ++I)
      ASSERT_EQ(Got[4 * T + I], Src[4 * ((T + 1) % 16) + I]) << T;
}

TEST_F(EmuDevice, ReportsRaces) {
  EXPECT_EQ(run("race", {}, {}),
            "emu:sm_80: shared-memory race on byte 0: thread 1 (warp 0, lane "
            "1) writes it at race.tile:7:3, thread 0 (warp 0, lane 0) wrote "
            "it at race.tile:7:3, with no barrier between (in program (0, 0, "
            "0))");
}

TEST_F(EmuDevice, ReportsUnwrittenReads) {
  EXPECT_EQ(run("unwritten", {}, {}),
            "emu:sm_80: read of shared memory nothing wrote: byte 8 by thread "
            "2 (warp 0, lane 2) at unwritten.tile:4:9 (in program (0, 0, 0))");
}

TEST_F(EmuDevice, ReportsOutOfRangeShared) {
  EXPECT_EQ(run("out_of_range", {}, {}),
            "emu:sm_80: out-of-range shared-memory write of bytes [256, 260) "
            "by thread 3 (warp 0, lane 3) at oob.tile:2:2; the program has "
            "256 bytes (in program (0, 0, 0))");
}

TEST_F(EmuDevice, ReportsBarriersNotReached) {
  std::string Message = run("early_exit", {}, {});
  EXPECT_NE(Message.find("barrier not reached by every thread"),
            std::string::npos)
      << Message;
  EXPECT_NE(Message.find("thread 5 (warp 0, lane 5) has exited"),
            std::string::npos)
      << Message;
  EXPECT_NE(Message.find("exit.tile:9:1"), std::string::npos) << Message;
}

TEST_F(EmuDevice, ReportsDivergentLanes) {
  std::string Message = run("diverge", {}, {});
  EXPECT_NE(Message.find("lanes of warp 0 diverge"), std::string::npos)
      << Message;
  EXPECT_NE(Message.find("div.tile:3:5"), std::string::npos) << Message;
  EXPECT_NE(Message.find("div.tile:4:5"), std::string::npos) << Message;
}

TEST_F(EmuDevice, ReportsReadsBeforeCopiesLand) {
  auto S = buffer(64);
  ASSERT_TRUE(S);
  std::string Message = run("async_early", {{"src", "*u32"}},
                            {Arg::pointer(*S)});
  EXPECT_EQ(Message,
            "emu:sm_80: read of shared memory before the asynchronous copy "
            "that writes it landed: byte 0 by thread 0 (warp 0, lane 0) at "
            "early.tile:2:1 (the copy started at early.tile:1:1; a wait is "
            "missing) (in program (0, 0, 0))");
}

// A warpgroup matrix instruction reads shared memory asynchronously: a
// write of what it reads before the warpgroup_wait that covers it is
// reported; after it, the same write is fine (and the product is right).
TEST_F(EmuDevice, ReportsWritesUnderWarpgroupReads) {
  EXPECT_EQ(run("wgmma_write", {{"after", "i32"}}, {Arg::i32(1)}), "");
  EXPECT_EQ(run("wgmma_write", {{"after", "i32"}}, {Arg::i32(0)}),
            "emu:sm_80: write of shared memory that a warpgroup matrix "
            "instruction still reads: byte 0 by thread 0 (warp 0, lane 0) at "
            "wgmma.tile:5:1 (the instruction was issued at wgmma.tile:3:1; a "
            "warpgroup_wait is missing before the write) (in program (0, 0, "
            "0))");
}

TEST_F(EmuDevice, TrapsWithTheMessage) {
  Dev->setPrintHandler([](const std::string &) {});
  std::string Message = run("trapper", {}, {});
  EXPECT_EQ(Message,
            "emu:sm_80: kernel trapped: trap.tile:3:5: assertion failed: "
            "thread 7 in thread 7 (warp 0, lane 7) (in program (0, 0, 0))");
}

TEST(EmuDeviceSpecs, Errors) {
  auto D = Device::open("emu:");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().message(),
            "emu:<arch> needs a GPU arch name such as sm_80 or gfx942");
}

} // namespace
