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
#include <cstring>
#include <vector>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

class EmuDevice : public ::testing::Test {
protected:
  void SetUp() override { open("emu:sm_80"); }

  /// Opens the emulated device `Name` and a stream on it.
  void open(const char *Name) {
    auto D = Device::open(Name);
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

//===----------------------------------------------------------------------===//
// Hopper's mbarriers and tensor loads (TMA), on emu:sm_90a
//===----------------------------------------------------------------------===//

class EmuTma : public EmuDevice {
protected:
  void SetUp() override { open("emu:sm_90a"); }

  std::string run(const std::string &Name, std::vector<TestParam> Params,
                  std::vector<Arg> Args, const EmuBundleOptions &Options) {
    std::string Bytes = emuBundle(Name, std::move(Params), Options);
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
};

/// A tensor map of the manifest.
nlohmann::json tensorMap(const std::string &Param, const std::string &Type,
                         std::vector<std::string> Sizes,
                         std::vector<std::string> Strides,
                         std::vector<int64_t> Box, int64_t Swizzle) {
  return {{"param", Param}, {"type", Type},   {"sizes", Sizes},
          {"strides", Strides}, {"box", Box}, {"swizzle", Swizzle}};
}

// A 2-d box in each swizzle mode, partly outside the tensor on both
// sides: the shared bytes are the box, dense and row-major, with zeros
// outside the tensor, each 16-byte chunk moved as CUTLASS's Swizzle<B, 4,
// 3> moves it (B = log2(swizzle / 16): the chunk's bits 4.. XOR the
// 128-byte line's bits 7..), from the shared base.
TEST_F(EmuTma, LoadsBoxesInEverySwizzleMode) {
  const int32_t Rows = 20, Cols = 70, Ld = 80, BoxRows = 16;
  std::vector<uint16_t> Src(size_t(Rows) * Ld);
  for (size_t I = 0; I < Src.size(); ++I)
    Src[I] = uint16_t(0x100 + I * 7);
  auto S = buffer(Src.size() * 2), Out = buffer(2048);
  ASSERT_TRUE(S && Out);
  ASSERT_FALSE(Str->copyToDevice(*S, 0, Src.data(), Src.size() * 2));
  struct Corner {
    int32_t C0, C1;
  };
  for (int64_t Swizzle : {0, 32, 64, 128})
    for (Corner C : {Corner{-3, 60}, Corner{10, -5}})
      for (bool Checked : {false, true}) {
        SCOPED_TRACE("swizzle " + std::to_string(Swizzle) + ", corner " +
                     std::to_string(C.C0) + ", " + std::to_string(C.C1) +
                     (Checked ? ", checked" : ""));
        int32_t Inner = Swizzle ? int32_t(Swizzle / 2) : 64; // u16 elements
        int32_t Bytes = BoxRows * Inner * 2;
        int32_t Dst = 1024;
        EmuBundleOptions O;
        O.Arch = "sm_90a";
        O.SharedBytes = 4096;
        O.Grid = "1";
        O.TensorMaps = {tensorMap("src", "u16", {"rows", "cols"}, {"ld", "1"},
                                  {BoxRows, Inner}, Swizzle)};
        if (Checked)
          O.Resources = {{"check_bounds", true}};
        ASSERT_FALSE(Str->fill(*Out, 0, 0xee, 2048));
        std::string Error = run(
            "tma_box",
            {{"src", "*u16"}, {"out", "*u8"}, {"rows", "i32"}, {"cols", "i32"},
             {"ld", "i32"}, {"c0", "i32"}, {"c1", "i32"}, {"bytes", "i32"},
             {"dst", "i32"}},
            {Arg::pointer(*S), Arg::pointer(*Out), Arg::i32(Rows),
             Arg::i32(Cols), Arg::i32(Ld), Arg::i32(C.C0), Arg::i32(C.C1),
             Arg::i32(Bytes), Arg::i32(Dst)},
            O);
        ASSERT_EQ(Error, "");
        std::vector<uint8_t> Got(2048);
        ASSERT_FALSE(Str->copyToHost(Got.data(), *Out, 0, Got.size()));
        ASSERT_FALSE(Str->synchronize());
        // The box, dense, as bytes.
        std::vector<uint8_t> Dense(size_t(Bytes), 0);
        for (int32_t R = 0; R < BoxRows; ++R)
          for (int32_t E = 0; E < Inner; ++E) {
            int32_t GR = C.C0 + R, GC = C.C1 + E;
            if (GR < 0 || GR >= Rows || GC < 0 || GC >= Cols)
              continue;
            uint16_t V = Src[size_t(GR) * Ld + size_t(GC)];
            std::memcpy(&Dense[size_t(2 * (R * Inner + E))], &V, 2);
          }
        int Bits = Swizzle == 128 ? 3 : Swizzle == 64 ? 2 : Swizzle ? 1 : 0;
        for (int32_t Byte = 0; Byte < Bytes; ++Byte) {
          int32_t Offset = Dst + Byte; // from the shared base
          int32_t YMask = ((1 << Bits) - 1) << (4 + 3);
          int32_t Placed = Offset ^ ((Offset & YMask) >> 3);
          ASSERT_EQ(Got[size_t(Placed - Dst)], Dense[size_t(Byte)])
              << "dense byte " << Byte << " (row " << Byte / (2 * Inner)
              << "), placed at " << Placed;
        }
      }
}

// A 2-stage ring: two mbarriers, thread 0 keeps two tiles in flight,
// every thread waits for each, and a barrier comes before a stage is
// loaded again. Nothing to report, and every tile arrives.
TEST_F(EmuTma, RunsATwoStageRing) {
  const int32_t Tiles = 5;
  std::vector<uint32_t> Src(size_t(Tiles) * 128);
  for (size_t I = 0; I < Src.size(); ++I)
    Src[I] = uint32_t(I * I + 3);
  auto S = buffer(Src.size() * 4), Out = buffer(128 * 4);
  ASSERT_TRUE(S && Out);
  ASSERT_FALSE(Str->copyToDevice(*S, 0, Src.data(), Src.size() * 4));
  EmuBundleOptions O;
  O.Arch = "sm_90a";
  O.SharedBytes = 2048;
  O.TensorMaps = {tensorMap("src", "u32", {"(* 8 tiles)", "16"}, {"16", "1"},
                            {8, 16}, 0)};
  EXPECT_EQ(run("tma_ring",
                {{"src", "*u32"}, {"out", "*u32"}, {"tiles", "i32"}},
                {Arg::pointer(*S), Arg::pointer(*Out), Arg::i32(Tiles)}, O),
            "");
  std::vector<uint32_t> Got(128);
  ASSERT_FALSE(Str->copyToHost(Got.data(), *Out, 0, Got.size() * 4));
  ASSERT_FALSE(Str->synchronize());
  for (uint32_t P = 0; P < 2; ++P)
    for (uint32_t T = 0; T < 64; ++T) {
      uint32_t Sum = 0;
      for (uint32_t I = 0; I < uint32_t(Tiles); ++I)
        Sum += Src[128 * I + T] + Src[128 * I + T + 64];
      ASSERT_EQ(Got[64 * P + T], Sum) << "program " << P << ", thread " << T;
    }
}

// Each misuse of tensor loads and mbarriers is reported, none hangs.
TEST_F(EmuTma, ReportsMisuse) {
  auto S = buffer(128 * 4);
  ASSERT_TRUE(S);
  auto Bug = [&](int32_t Kind) {
    EmuBundleOptions O;
    O.Arch = "sm_90a";
    O.SharedBytes = 2048;
    O.Grid = "1";
    O.TensorMaps = {
        tensorMap("src", "u32", {"8", "16"}, {"16", "1"}, {8, 16}, 128)};
    return run("tma_bug", {{"src", "*u32"}, {"kind", "i32"}},
               {Arg::pointer(*S), Arg::i32(Kind)}, O);
  };
  EXPECT_EQ(Bug(0),
            "emu:sm_90a: read of shared memory before the tensor load that "
            "writes it completed for this thread: byte 1024 by thread 5 "
            "(warp 0, lane 5) at bug.tile:8:1 (the load was issued at "
            "bug.tile:6:1 on the mbarrier at shared offset 0; an "
            "mbarrier_wait for its phase is missing) (in program (0, 0, 0))");
  EXPECT_EQ(Bug(1),
            "emu:sm_90a: mbarrier wait that nothing can end: thread 0 (warp "
            "0, lane 0) waits at bug.tile:7:1 for the phase of parity 0 of "
            "the mbarrier at shared offset 0 to complete (its phase has 1 of "
            "2 arrivals and 0 transaction bytes pending); every other thread "
            "has exited or waits (in program (0, 0, 0))");
  EXPECT_EQ(Bug(2),
            "emu:sm_90a: mbarrier_init of the mbarrier at shared offset 0 by "
            "thread 0 (warp 0, lane 0) at bug.tile:5:1 while its phase has 1 "
            "arrival and 512 transaction bytes pending (in program (0, 0, "
            "0))");
  EXPECT_EQ(Bug(3),
            "emu:sm_90a: tensor_load by thread 0 (warp 0, lane 0) at "
            "bug.tile:6:1 into shared offset 1152, which is not 1024-byte "
            "aligned (as its 128-byte swizzle needs) (in program (0, 0, 0))");
  EXPECT_EQ(Bug(4),
            "emu:sm_90a: write of shared memory that a warpgroup matrix "
            "instruction still reads: byte 1024 by thread 0 (warp 0, lane 0) "
            "at bug.tile:6:1 (the instruction was issued at bug.tile:3:3; a "
            "warpgroup_wait is missing before the write) (in program (0, 0, "
            "0))");
  EXPECT_EQ(Bug(6),
            "emu:sm_90a: mbarrier_wait of the mbarrier at shared offset 16 "
            "before any mbarrier_init of it, by thread 0 (warp 0, lane 0) at "
            "bug.tile:9:1 (in program (0, 0, 0))");
  EXPECT_EQ(Bug(7),
            "emu:sm_90a: arrival of thread 0 (warp 0, lane 0) at "
            "bug.tile:4:2 at the mbarrier at shared offset 0, whose phase "
            "already has all its 1 arrivals (in program (0, 0, 0))");
  EXPECT_EQ(Bug(8),
            "emu:sm_90a: tensor_load by thread 0 (warp 0, lane 0) at "
            "bug.tile:6:1 of a box of 512 bytes into shared offset 2048; the "
            "program has 2048 bytes (in program (0, 0, 0))");
  EXPECT_EQ(Bug(9),
            "emu:sm_90a: mbarrier_init of an mbarrier at shared offset 4, "
            "which is not 8-byte aligned, by thread 0 (warp 0, lane 0) at "
            "bug.tile:9:2 (in program (0, 0, 0))");
  EXPECT_EQ(Bug(10),
            "emu:sm_90a: mbarrier_init of the mbarrier at shared offset 0 "
            "with a count of 0 by thread 0 (warp 0, lane 0) at bug.tile:9:2 "
            "(in program (0, 0, 0))");
  EXPECT_EQ(Bug(11),
            "emu:sm_90a: tensor_load by thread 0 (warp 0, lane 0) at "
            "bug.tile:6:1 with a bad tensor map or coordinates (in program "
            "(0, 0, 0))");
}

// Checked builds check a tensor load's global reads like the kernel's
// own: a map larger than its buffer reads past it.
TEST_F(EmuTma, ChecksTensorLoadReads) {
  auto S = buffer(64 * 4); // half a box
  ASSERT_TRUE(S);
  EmuBundleOptions O;
  O.Arch = "sm_90a";
  O.SharedBytes = 2048;
  O.Grid = "1";
  O.Resources = {{"check_bounds", true}};
  O.TensorMaps = {tensorMap("src", "u32", {"8", "16"}, {"16", "1"}, {8, 16}, 0)};
  std::string Message = run("tma_bug", {{"src", "*u32"}, {"kind", "i32"}},
                            {Arg::pointer(*S), Arg::i32(5)}, O);
  EXPECT_NE(Message.find("emu:sm_90a: out-of-range load of 64 bytes at 0x"),
            std::string::npos)
      << Message;
  EXPECT_NE(Message.find(" by thread 0 (warp 0, lane 0) at bug.tile:6:1 (a "
                         "tensor load) (in program (0, 0, 0))"),
            std::string::npos)
      << Message;
}

// Emulators of archs before Hopper run no image with tensor maps.
TEST_F(EmuDevice, RunsNoTensorMapsBeforeHopper) {
  EmuBundleOptions O;
  O.TensorMaps = {tensorMap("src", "u32", {"8", "16"}, {"16", "1"}, {8, 16}, 0)};
  std::string Bytes =
      emuBundle("tma_bug", {{"src", "*u32"}, {"kind", "i32"}}, O);
  auto M = Dev->loadModuleMemory(Bytes.data(), Bytes.size(), "t.kpack");
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().message(),
            "no image for emu:sm_80 (images compiled with --targets=emu:sm_80) "
            "in bundle 't.kpack'; it has x86_64-unknown-linux-gnu emu:sm_80 "
            "(takes TMA tensor maps, which sm_80 does not have)");
}
