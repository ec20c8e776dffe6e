//===- HipTest.cpp - The HIP device, against a fake and the real HIP ------===//
//
// No AMD GPU is needed: KILN_HIP_RUNTIME points the runtime at
// libfakehip.so (FakeCuda.h), whose behaviour KILN_FAKE_HIP chooses.
// Covered: opening devices (no library, a library without an entry point,
// no AMD GPU, an ordinal out of range, auto with and without CUDA),
// properties (the target ID from hipDeviceProp_t), memory round trips,
// streams and events, the current device restored around every call,
// module loads (not ELF, refused with the code-object-version hint, a
// missing entry), the image choice by processor and target features,
// launch parameters (workgroup size and dynamic LDS from the image's
// resources), error names and traps; and, where Debian's libamdhip64 is
// installed (CI installs it), the real HIP runtime on a machine without an
// AMD GPU: it loads, says "no AMD GPU", and auto falls back.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/GpuDevice.h"
#include "../../runtime/lib/HipDevice.h"
#include "FakeDriver.h"

#include <cstring>
#include <thread>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::test;
using nlohmann::json;

namespace {

/// Unless a test says otherwise, there is no HIP (the real library may be
/// installed: the tests must not depend on it) and no CUDA driver.
[[maybe_unused]] const bool NoRealHip =
    setenv("KILN_HIP_RUNTIME", "/nonexistent/kiln-tests/libamdhip64.so", 1) ==
    0;
[[maybe_unused]] const bool NoRealCuda =
    setenv("KILN_CUDA_DRIVER", "/nonexistent/kiln-tests/libcuda.so.1", 1) == 0;

class HipFake : public FakeDriverTest {
protected:
  HipFake() : FakeDriverTest(KILN_FAKE_HIP) {}
  void open(const char *Spec = "hip") { FakeDriverTest::open(Spec); }

  std::vector<Arg> vaddArgs(const Buffer &B, int32_t N) {
    return {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::i32(N)};
  }

  ScopedEnv Runtime{"KILN_HIP_RUNTIME", KILN_FAKE_HIP};
  ScopedEnv Mode{"KILN_FAKE_HIP", "one"};
  ScopedEnv Version{"KILN_FAKE_HIP_DRIVER_VERSION", nullptr};
  ScopedEnv Arch{"KILN_FAKE_HIP_ARCH", nullptr};
};

TEST(HipOpen, NoRuntime) {
  auto D = Device::open("hip");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(),
            "cannot open hip:0: /nonexistent/kiln-tests/libamdhip64.so could "
            "not be loaded (/nonexistent/kiln-tests/libamdhip64.so: cannot "
            "open shared object file: No such file or directory)");
  auto A = Device::open("auto");
  ASSERT_TRUE(A) << A.error().message();
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

TEST(HipOpen, RuntimeWithoutAnEntryPoint) {
  ScopedEnv Runtime("KILN_HIP_RUNTIME", KILN_TEST_KERNELS_LIB);
  auto D = Device::open("hip:0");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().message(), std::string("cannot open hip:0: the HIP "
                                             "runtime ") +
                                     KILN_TEST_KERNELS_LIB +
                                     " does not export hipInit");
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

/// Debian's libamdhip64-5 (ROCm 5.2) on this machine, which has no AMD
/// GPU. Where the library is absent the test is skipped, unless
/// KILN_EXPECT_HIP_RUNTIME=1 (scripts/test.sh sets it: scripts/deps.sh
/// installs the library), and then it fails.
TEST(HipReal, NoAmdGpu) {
  ScopedEnv Runtime("KILN_HIP_RUNTIME", nullptr); // the default names
  auto D = Device::open("hip");
  ASSERT_FALSE(D) << "an AMD GPU on a test machine? " << D->description();
  const std::string &Message = D.error().message();
  if (Message.find("could be loaded") != std::string::npos) {
    const char *Expect = std::getenv("KILN_EXPECT_HIP_RUNTIME");
    if (Expect && std::string(Expect) == "1")
      FAIL() << "KILN_EXPECT_HIP_RUNTIME=1 but " << Message;
    GTEST_SKIP() << Message;
  }
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  // ROCm 5.2 fails hipInit with hipErrorInvalidDevice; others may say
  // hipErrorNoDevice, or succeed and count no device.
  EXPECT_EQ(Message.rfind("cannot open hip:0: no AMD GPU", 0), 0u) << Message;
  if (Message.find("hipInit") != std::string::npos)
    EXPECT_TRUE(Message.find("(hipInit failed: hipErrorInvalidDevice)") !=
                    std::string::npos ||
                Message.find("(hipInit failed: hipErrorNoDevice)") !=
                    std::string::npos)
        << Message;
  auto Again = Device::open("hip:1");
  ASSERT_FALSE(Again);
  EXPECT_EQ(Again.error().message().rfind("cannot open hip:1: no AMD GPU", 0),
            0u);
  auto A = Device::open("auto");
  ASSERT_TRUE(A) << A.error().message();
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

TEST_F(HipFake, NoDevice) {
  ScopedEnv None("KILN_FAKE_HIP", "nodevice");
  auto D = Device::open("hip");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(), "cannot open hip:0: no AMD GPU (hipInit "
                                 "failed: hipErrorInvalidDevice)");
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

TEST_F(HipFake, PropertiesAndOrdinals) {
  open();
  EXPECT_EQ(Dev->kind(), DeviceKind::Hip);
  EXPECT_EQ(Dev->name(), "hip:0");
  EXPECT_EQ(Dev->description(),
            "hip:0 (Kiln Fake GPU, gfx942:sramecc+:xnack-, 304 CUs, 80.0 "
            "GiB, 2662 GB/s, HIP 6.2)");
  DeviceProperties P = Dev->properties();
  EXPECT_EQ(P.Kind, DeviceKind::Hip);
  EXPECT_EQ(P.Arch, "gfx942:sramecc+:xnack-");
  EXPECT_EQ(P.ComputeUnits, 304u);
  EXPECT_EQ(P.WarpSize, 64u);
  EXPECT_EQ(P.MaxSharedBytesPerBlock, 65536u) << "no opt-in on HIP";
  EXPECT_EQ(P.MaxThreadsPerBlock, 1024u);
  EXPECT_EQ(P.DriverVersion, 60241134);

  auto Out = Device::open("hip:1");
  ASSERT_FALSE(Out);
  EXPECT_EQ(Out.error().message(), "hip:1: only 1 HIP device");
  ScopedEnv Two("KILN_FAKE_HIP", "two");
  auto D1 = Device::open("hip:1");
  ASSERT_TRUE(D1) << D1.error().message();
  EXPECT_EQ(D1->description(), "hip:1 (Kiln Fake GPU, gfx1100, 96 CUs, 24.0 "
                               "GiB, 120 GB/s, HIP 6.2)");
  EXPECT_EQ(D1->properties().WarpSize, 32u);
  EXPECT_EQ(Device::open("hip:2").error().message(),
            "hip:2: only 2 HIP devices");

  // A wavefront size AMD GPUs do not have.
  {
    ScopedEnv Wave("KILN_FAKE_HIP_WAVE", "16");
    auto W = Device::open("hip");
    ASSERT_FALSE(W);
    EXPECT_EQ(W.error().message(),
              "cannot open hip:0: unexpected wavefront size 16");
  }
  // A name that is no target ID.
  ScopedEnv Odd("KILN_FAKE_HIP_ARCH", "Ellesmere");
  auto D2 = Device::open("hip");
  ASSERT_FALSE(D2);
  EXPECT_EQ(D2.error().message(),
            "cannot open hip:0: hipGetDeviceProperties gave no AMD GPU name "
            "(gcnArchName 'Ellesmere')");
}

TEST_F(HipFake, AutoPrefersCudaThenHip) {
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->name(), "hip:0") << "no CUDA driver: HIP";
  ScopedEnv Cuda("KILN_CUDA_DRIVER", KILN_FAKE_CUDA);
  ScopedEnv CudaMode("KILN_FAKE_CUDA", "one");
  auto B = Device::open("auto");
  ASSERT_TRUE(B);
  EXPECT_EQ(B->name(), "cuda:0") << "CUDA first when both are there";
  ScopedEnv NoCudaDevice("KILN_FAKE_CUDA", "nodevice");
  auto C = Device::open("auto");
  ASSERT_TRUE(C);
  EXPECT_EQ(C->name(), "hip:0");
}

TEST_F(HipFake, MemoryStreamsAndEvents) {
  open();
  int Allocations, Streams, Events, Modules, Contexts;
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  int Before = Allocations;
  {
    Buffer A = upload(std::vector<uint32_t>{1, 2, 3, 4});
    Buffer B = upload(std::vector<uint32_t>(4));
    ASSERT_FALSE(Str->copy(B, 4, A, 0, 8));
    ASSERT_FALSE(Str->fill(B, 12, 0xff, 4));
    EXPECT_EQ(download<uint32_t>(B),
              (std::vector<uint32_t>{0, 1, 2, 0xffffffffu}));
    auto Start = Dev->createEvent(), End = Dev->createEvent();
    ASSERT_TRUE(Start && End);
    ASSERT_FALSE(Str->record(*Start));
    ASSERT_FALSE(Str->copy(B, 0, A, 0, 16));
    ASSERT_FALSE(Str->record(*End));
    auto T = Event::elapsedMilliseconds(*Start, *End);
    ASSERT_TRUE(T) << T.error().message();
    EXPECT_GE(*T, 0.0);
    auto Huge = Dev->allocate(size_t(1) << 50);
    ASSERT_FALSE(Huge);
    EXPECT_EQ(Huge.error().code(), ErrorCode::OutOfMemory);
    EXPECT_EQ(Huge.error().message(),
              "cannot allocate 1125899906842624 bytes on hip:0: hipMalloc "
              "failed: hipErrorOutOfMemory");
  }
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  EXPECT_EQ(Allocations, Before);
  EXPECT_EQ(Events, 0);
  Str.reset();
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  EXPECT_EQ(Streams, 0);
}

TEST_F(HipFake, EveryCallRunsOnItsDeviceAndRestoresTheCurrentOne) {
  ScopedEnv Two("KILN_FAKE_HIP", "two");
  open("hip:1");
  using SetFn = int (*)(int);
  using GetFn = int (*)(int *);
  auto Set = reinterpret_cast<SetFn>(dlsym(Hooks.Handle, "hipSetDevice"));
  auto Get = reinterpret_cast<GetFn>(dlsym(Hooks.Handle, "hipGetDevice"));
  ASSERT_TRUE(Set && Get);
  // The caller works on device 0; hip:1's stream still works (the fake,
  // like ROCm 7, refuses a stream while another device is current).
  std::thread([&] {
    ASSERT_EQ(Set(0), 0);
    Buffer B = upload(std::vector<float>{1, 2, 3});
    EXPECT_EQ(download<float>(B), (std::vector<float>{1, 2, 3}));
    int Current = -1;
    ASSERT_EQ(Get(&Current), 0);
    EXPECT_EQ(Current, 0) << "the caller's device is restored";
  }).join();
}

TEST_F(HipFake, LaunchParameters) {
  open();
  BundleSpec Spec{{vaddKernel()}};
  TestImage I = amdImage(vaddFunctions(), "gfx942",
                         {{"gfx", "gfx942"}, {"wave_size", 64},
                          {"code_object", 5}});
  // 4 waves of 64 work-items.
  I.Resources = {{"threads", 256}, {"wave_size", 64}, {"shared_bytes", 2048}};
  Spec.Images = {I};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  const int N = 37;
  std::vector<float> X(N), Y(N);
  for (int J = 0; J < N; ++J) {
    X[J] = float(J);
    Y[J] = 2.0f * float(J);
  }
  Buffer BX = upload(X), BY = upload(Y), BZ = upload(std::vector<float>(N));
  auto Plan = M->kernel("vadd")->launch(
      *Str, {Arg::pointer(BX), Arg::pointer(BY), Arg::pointer(BZ),
             Arg::i32(N)});
  ASSERT_TRUE(Plan) << Plan.error().message();
  KilnFakeLaunch L = lastLaunch();
  EXPECT_STREQ(L.Function, "vadd_v0");
  EXPECT_EQ(L.Grid[0], 10u);
  EXPECT_EQ(L.Block[0], 256u);
  EXPECT_EQ(L.Block[1], 1u);
  EXPECT_EQ(L.SharedBytes, 2048u) << "dynamic LDS";
  ASSERT_EQ(L.NumParams, 4u);
  EXPECT_EQ(L.Params[2], uint64_t(uintptr_t(BZ.data())));
  EXPECT_EQ(L.Params[3] & 0xffffffffu, uint64_t(N));
  std::vector<float> Z = download<float>(BZ);
  for (int J = 0; J < N; ++J)
    EXPECT_EQ(Z[J], 3.0f * float(J)) << J;

  // More LDS than a workgroup may have.
  I.Resources = {{"threads", 256}, {"shared_bytes", 100000}};
  Spec.Images = {I};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2);
  auto P2 = M2->kernel("vadd")->launch(*Str, vaddArgs(BX, 4));
  ASSERT_FALSE(P2);
  EXPECT_EQ(P2.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(P2.error().message(),
            "test.kpack: cannot load the AMD code object of vadd_v0 "
            "(gfx942): it needs 100000 bytes of shared memory; hip:0 has "
            "65536 per block");
}

TEST_F(HipFake, ModuleLoadFailures) {
  open();
  Buffer B = upload(std::vector<float>(4));
  auto Expect = [&](TestImage I, ErrorCode Code, const std::string &Message) {
    BundleSpec Spec{{vaddKernel()}};
    Spec.Images = {std::move(I)};
    auto M = load(Spec);
    ASSERT_TRUE(M) << M.error().message();
    auto P = M->kernel("vadd")->launch(*Str, vaddArgs(B, 4));
    ASSERT_FALSE(P) << Message;
    EXPECT_EQ(P.error().code(), Code);
    EXPECT_EQ(P.error().message(),
              "test.kpack: cannot load the AMD code object of vadd_v0 "
              "(gfx942): " + Message);
  };
  TestImage NotElf = amdImage("");
  NotElf.Bytes = "garbage, not ELF";
  Expect(NotElf, ErrorCode::InvalidBundle, "it is not an ELF file");
  TestImage Refused = amdImage("garbage", "gfx942",
                               {{"gfx", "gfx942"}, {"code_object", 5}});
  Expect(Refused, ErrorCode::InvalidBundle,
         "hipModuleLoadData failed: hipErrorNoBinaryForGpu");
  Expect(amdImage(fakeImage({"other params=1"})), ErrorCode::InvalidBundle,
         "it does not define the entry 'vadd_v0' (hipModuleGetFunction "
         "failed: hipErrorNotFound)");
  // Before ROCm 6 a refused v5 code object gets a hint.
  ScopedEnv Old("KILN_FAKE_HIP_DRIVER_VERSION", "50221153");
  open();
  B = upload(std::vector<float>(4));
  Expect(Refused, ErrorCode::InvalidBundle,
         "hipModuleLoadData failed: hipErrorNoBinaryForGpu (this is code "
         "object v5 and HIP 5.2 may predate it: compile with "
         "--amdgpu-code-object=4)");
}

TEST_F(HipFake, ImageChoiceByProcessorAndFeatures) {
  open();
  Buffer B = upload(std::vector<float>(4));
  std::string Fns = vaddFunctions();
  BundleSpec Spec{{vaddKernel()}};
  // Another processor, a feature the device does not run, the plain
  // processor, and one made for exactly the device's sramecc.
  Spec.Images = {amdImage(Fns, "gfx90a"), amdImage(Fns, "gfx942:xnack+"),
                 amdImage(Fns, "gfx942"), amdImage(Fns, "gfx942:sramecc+")};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto P = M->kernel("vadd")->launch(*Str, vaddArgs(B, 4));
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Image, 3u) << "the most specific image";
  Spec.Images = {amdImage(Fns, "gfx90a"), amdImage(Fns, "gfx942:xnack+")};
  auto None = load(Spec);
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().code(), ErrorCode::NoImage);
  EXPECT_EQ(None.error().message(),
            "no image for hip:0 (Kiln Fake GPU, gfx942:sramecc+:xnack- "
            "(wave64): code objects for gfx942) in bundle 'test.kpack'; it "
            "has gfx90a, gfx942:xnack+ (built for xnack+; the device runs "
            "xnack-)");
}

TEST_F(HipFake, TrapSurfacesAtSynchronize) {
  open();
  BundleSpec Spec{{trapperKernel()}};
  Spec.Images = {amdImage(fakeImage({"trapper_v0 params=3 action=trap"}))};
  auto M = load(Spec);
  ASSERT_TRUE(M);
  Buffer Done = upload(std::vector<int64_t>(1));
  auto P = M->kernel("trapper")->launch(
      *Str, {Arg::i32(5), Arg::pointer(Done), Arg::i32(100)});
  ASSERT_TRUE(P);
  Error E = Str->synchronize();
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(E.message(), "kernel trapped: hipStreamSynchronize failed: "
                         "hipErrorLaunchFailure (HIP device hip:0 cannot be "
                         "used any more)");
}

TEST_F(HipFake, PrintBufferIsDrainedAtSynchronize) {
  open();
  std::vector<std::string> Lines;
  Dev->setPrintHandler([&](const std::string &L) { Lines.push_back(L); });
  BundleSpec Spec{{printerKernel()}};
  TestImage I = amdImage(fakeImage({"printer_v0 params=2 action=print"}));
  I.Resources = {{"threads", 64},
                 {"print_formats", {"fake print: n = %d, half = %g\n"}}};
  Spec.Images = {I};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer X = upload(std::vector<float>(4));
  for (int32_t N : {7, 2}) {
    auto P = M->kernel("printer")->launch(*Str, {Arg::pointer(X), Arg::i32(N)});
    ASSERT_TRUE(P) << P.error().message();
  }
  KilnFakeLaunch L = lastLaunch();
  EXPECT_EQ(L.NumParams, 2u) << "the buffer is a hidden third argument";
  EXPECT_TRUE(Lines.empty()) << "nothing before the stream synchronizes";
  ASSERT_FALSE(Str->synchronize());
  EXPECT_EQ(Lines, (std::vector<std::string>{"fake print: n = 7, half = 3.5",
                                             "fake print: n = 2, half = 1"}));
  // Drained: the next synchronization prints only what came after.
  Lines.clear();
  ASSERT_TRUE(M->kernel("printer")->launch(*Str, {Arg::pointer(X),
                                                   Arg::i32(1)}));
  ASSERT_FALSE(Str->synchronize());
  EXPECT_EQ(Lines, (std::vector<std::string>{"fake print: n = 1, half = 0.5"}));
  // A kernel that does not print gets no hidden argument, and the handler
  // nothing.
  Lines.clear();
  ASSERT_FALSE(Str->synchronize());
  EXPECT_TRUE(Lines.empty());
}

// A failed assertion on AMD ends its wave and leaves its message in the
// print buffer: synchronize() returns it, the other records still print,
// and the device stays usable.
TEST_F(HipFake, FailedAssertionIsLocatedAtSynchronize) {
  open();
  std::vector<std::string> Lines;
  Dev->setPrintHandler([&](const std::string &L) { Lines.push_back(L); });
  BundleSpec Spec{{printerKernel()}};
  TestImage I = amdImage(fakeImage({"printer_v0 params=2 action=assert"}));
  I.Resources = {
      {"threads", 64},
      {"print_formats",
       {"fake print: n = %d, half = %g\n",
        "k.tile:3:5: assertion failed: boom (in program %d, %d, %d)\n"}}};
  Spec.Images = {I};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer X = upload(std::vector<float>(4));
  // Two launches fail: the first assertion is the error, the second
  // launch's print still prints.
  for (int32_t N : {7, 2})
    ASSERT_TRUE(M->kernel("printer")->launch(*Str, {Arg::pointer(X),
                                                     Arg::i32(N)}));
  Error E = Str->synchronize();
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(E.message(), "kernel trapped: k.tile:3:5: assertion failed: boom "
                         "(in program 7, 0, 0)");
  EXPECT_EQ(Lines, (std::vector<std::string>{"fake print: n = 7, half = 3.5",
                                             "fake print: n = 2, half = 1"}));
  // The trap word was reset and the device still works.
  Lines.clear();
  ASSERT_TRUE(M->kernel("printer")->launch(*Str, {Arg::pointer(X),
                                                   Arg::i32(3)}));
  E = Str->synchronize();
  ASSERT_TRUE(E);
  EXPECT_EQ(E.message(), "kernel trapped: k.tile:3:5: assertion failed: boom "
                         "(in program 3, 0, 0)");
  EXPECT_EQ(Lines, (std::vector<std::string>{"fake print: n = 3, half = 1.5"}));
  // A message that did not fit in the print buffer (the fake's n >= 1000).
  auto Full = M->kernel("printer")->launch(*Str, {Arg::pointer(X),
                                                   Arg::i32(1000)});
  ASSERT_TRUE(Full) << Full.error().message();
  E = Str->synchronize();
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(E.message(), "kernel trapped: an assertion failed (its message "
                         "did not fit in hip:0's print buffer)");
  Buffer Y = upload(std::vector<float>{1, 2});
  EXPECT_EQ(download<float>(Y), (std::vector<float>{1, 2}));
}

TEST_F(HipFake, PrintFormatsMustBeStrings) {
  open();
  Buffer X = upload(std::vector<float>(4));
  for (json Formats : {json("x = %d\n"), json::array({json(1)})}) {
    BundleSpec Spec{{printerKernel()}};
    TestImage I = amdImage(fakeImage({"printer_v0 params=2 action=print"}));
    I.Resources = {{"print_formats", Formats}};
    Spec.Images = {I};
    auto M = load(Spec);
    ASSERT_TRUE(M) << M.error().message();
    auto P = M->kernel("printer")->launch(*Str, {Arg::pointer(X), Arg::i32(2)});
    ASSERT_FALSE(P);
    EXPECT_EQ(P.error().code(), ErrorCode::InvalidBundle);
    EXPECT_EQ(P.error().message(),
              "test.kpack: cannot load the AMD code object of printer_v0 "
              "(gfx942): its 'print_formats' is not a list of strings");
  }
}

TEST(PrintRecords, Formatting) {
  auto F = [](const char *Format, std::vector<uint64_t> Slots) {
    return gpu::formatPrintRecord(Format, Slots.data(),
                                  unsigned(Slots.size()));
  };
  auto Bits = [](double D) {
    uint64_t B;
    std::memcpy(&B, &D, 8);
    return B;
  };
  EXPECT_EQ(F("x[%d, %d] = %g\n", {uint64_t(-2), 3, Bits(0.25)}),
            "x[-2, 3] = 0.25\n");
  EXPECT_EQ(F("%lld %u %x %5.2f%%", {uint64_t(1) << 40, 7, 255, Bits(3.14159)}),
            "1099511627776 7 ff  3.14%");
  EXPECT_EQ(F("%d and %d", {1}), "1 and %d") << "a missing slot";
  EXPECT_EQ(F("%s", {1}), "%s") << "no strings";
  EXPECT_EQ(gpu::printFormatHash(""), 2166136261u);
  EXPECT_EQ(gpu::printFormatHash("a"), 0xe40c292cu);
}

//===----------------------------------------------------------------------===//
// Ranking rules, without a device
//===----------------------------------------------------------------------===//

ImageInfo gfxImage(std::string Arch, std::string Gfx = "") {
  ImageInfo I;
  I.Triple = "amdgcn-amd-amdhsa";
  I.Arch = std::move(Arch);
  I.Target = I.Arch;
  I.ImageKind = kImageObject;
  I.Requires.Gfx = std::move(Gfx);
  I.Requires.Present = !I.Requires.Gfx.empty();
  return I;
}

HipTarget target(const char *Id, unsigned Wave = 64) {
  HipTarget T;
  T.Id = *parseAmdTargetId(Id);
  T.WaveSize = Wave;
  return T;
}

TEST(HipRanking, TargetIds) {
  auto T = parseAmdTargetId("gfx942:sramecc+:xnack-");
  ASSERT_TRUE(T);
  EXPECT_EQ(T->Processor, "gfx942");
  EXPECT_EQ(T->feature("sramecc"), true);
  EXPECT_EQ(T->feature("xnack"), false);
  EXPECT_EQ(T->feature("wavefrontsize64"), std::nullopt);
  EXPECT_EQ(T->str(), "gfx942:sramecc+:xnack-");
  EXPECT_TRUE(parseAmdTargetId("gfx90a"));
  EXPECT_TRUE(parseAmdTargetId("gfx1100"));
  for (const char *Bad : {"", "gfx", "sm_90", "gfx942:", "gfx942:xnack",
                          "gfx942:xnack*", "gfx9 42", "gfx942::xnack+"})
    EXPECT_FALSE(parseAmdTargetId(Bad)) << Bad;
  EXPECT_EQ(hipVersionString(50221153), "5.2");
  EXPECT_EQ(hipVersionString(60241134), "6.2");
  EXPECT_EQ(hipVersionString(70051831), "7.0");
}

TEST(HipRanking, Rules) {
  HipTarget Mi300 = target("gfx942:sramecc+:xnack-");
  HipTarget Rdna3 = target("gfx1100", 32);
  auto Rank = [](const HipTarget &T, const char *Arch) {
    return rankHipImage(gfxImage(Arch), T);
  };
  EXPECT_GT(Rank(Mi300, "gfx942"), 0);
  EXPECT_GT(Rank(Mi300, "gfx942:sramecc+"), Rank(Mi300, "gfx942"));
  EXPECT_GT(Rank(Mi300, "gfx942:sramecc+:xnack-"),
            Rank(Mi300, "gfx942:sramecc+"));
  EXPECT_EQ(Rank(Mi300, "gfx942:xnack+"), 0);
  EXPECT_EQ(Rank(Mi300, "gfx90a"), 0) << "code objects are per processor";
  EXPECT_EQ(Rank(Mi300, "gfx950"), 0);
  EXPECT_GT(Rank(Rdna3, "gfx1100"), 0);
  EXPECT_EQ(Rank(Rdna3, "gfx1100:xnack-"), 0) << "a feature it lacks";
  EXPECT_EQ(whyNotHip(gfxImage("gfx1100:xnack-"), Rdna3),
            "built for xnack-, which gfx1100 does not have");
  EXPECT_EQ(whyNotHip(gfxImage("gfx942:xnack+"), Mi300),
            "built for xnack+; the device runs xnack-");
  EXPECT_EQ(whyNotHip(gfxImage("gfx90a"), Mi300), "") << "its arch says it";
  EXPECT_EQ(whyNotHip(gfxImage("gfx942"), Mi300), "");
  // "requires.gfx" names the processor when the arch string does not.
  EXPECT_GT(rankHipImage(gfxImage("mi300", "gfx942"), Mi300), 0);
  EXPECT_EQ(rankHipImage(gfxImage("gfx942", "gfx90a"), Mi300), 0);
  // Not AMD, not a code object, not a gfx arch.
  ImageInfo Ptx = gfxImage("gfx942");
  Ptx.Triple = "nvptx64-nvidia-cuda";
  EXPECT_EQ(rankHipImage(Ptx, Mi300), 0);
  ImageInfo Bitcode = gfxImage("gfx942");
  Bitcode.ImageKind = 2;
  EXPECT_EQ(rankHipImage(Bitcode, Mi300), 0);
  EXPECT_EQ(Rank(Mi300, "sm_90"), 0);
  EXPECT_EQ(describeHipTarget(Mi300),
            "gfx942:sramecc+:xnack- (wave64): code objects for gfx942");
  EXPECT_EQ(describeHipTarget(Rdna3), "gfx1100 (wave32): code objects for "
                                      "gfx1100");
}

} // namespace
