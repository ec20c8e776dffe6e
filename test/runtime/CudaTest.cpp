//===- CudaTest.cpp - The CUDA device, against a fake driver --------------===//
//
// No GPU is needed: KILN_CUDA_DRIVER points the runtime at libfakecuda.so
// (FakeCuda.h), whose behaviour KILN_FAKE_CUDA chooses. Covered: opening
// devices (no driver, a driver without an entry point, no device, an
// ordinal out of range, auto), properties, memory round trips, streams and
// events, module loads (the JIT log of a refused image, a missing entry,
// PTX too new for the driver), the ranking rules, launch parameters
// (grid, block and shared memory from the image's resources, the opt-in
// above 48 KiB, the kernel params), driver error names and traps.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/CudaDevice.h"
#include "../../runtime/lib/CudaDriver.h"
#include "FakeDriver.h"
#include "TestUtil.h"
#include "kiln/runtime_c.h"

#include <dlfcn.h>

#include <cstring>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::test;
using nlohmann::json;

namespace {

/// The tests never use a real GPU: unless a test points KILN_CUDA_DRIVER
/// at the fake, there is no driver (and "auto" is the host).
[[maybe_unused]] const bool NoRealDriver =
    setenv("KILN_CUDA_DRIVER", "/nonexistent/kiln-tests/libcuda.so.1", 1) == 0;

class CudaFake : public FakeDriverTest {
protected:
  CudaFake() : FakeDriverTest(KILN_FAKE_CUDA) {}
  void open(const char *Spec = "cuda") { FakeDriverTest::open(Spec); }

  ScopedEnv Driver{"KILN_CUDA_DRIVER", KILN_FAKE_CUDA};
  ScopedEnv Mode{"KILN_FAKE_CUDA", "one"};
  ScopedEnv Version{"KILN_FAKE_CUDA_DRIVER_VERSION", nullptr};
};

TEST(CudaOpen, NoDriver) {
  ScopedEnv Driver("KILN_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  auto D = Device::open("cuda");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(),
            "cannot open cuda:0: /nonexistent/libcuda.so.1 could not be "
            "loaded (/nonexistent/libcuda.so.1: cannot open shared object "
            "file: No such file or directory)");
  // auto falls back to the host without a word.
  for (const char *Spec : {"auto", ""}) {
    auto A = Device::open(Spec);
    ASSERT_TRUE(A) << A.error().message();
    EXPECT_EQ(A->kind(), DeviceKind::Host);
  }
}

TEST(CudaOpen, DriverWithoutAnEntryPoint) {
  ScopedEnv Driver("KILN_CUDA_DRIVER", KILN_TEST_KERNELS_LIB);
  auto D = Device::open("cuda:0");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(), std::string("cannot open cuda:0: the CUDA "
                                             "driver ") +
                                     KILN_TEST_KERNELS_LIB +
                                     " does not export cuInit");
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

TEST_F(CudaFake, NoDevice) {
  ScopedEnv None("KILN_FAKE_CUDA", "nodevice");
  auto D = Device::open("cuda");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(), "cannot open cuda:0: no CUDA device (cuInit "
                                 "failed: CUDA_ERROR_NO_DEVICE)");
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kind(), DeviceKind::Host);
}

TEST_F(CudaFake, OrdinalOutOfRange) {
  auto D = Device::open("cuda:3");
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().code(), ErrorCode::Driver);
  EXPECT_EQ(D.error().message(), "cuda:3: only 1 CUDA device");
  ScopedEnv Two("KILN_FAKE_CUDA", "two");
  auto D2 = Device::open("cuda:2");
  ASSERT_FALSE(D2);
  EXPECT_EQ(D2.error().message(), "cuda:2: only 2 CUDA devices");
  auto D1 = Device::open("cuda:1");
  ASSERT_TRUE(D1) << D1.error().message();
  EXPECT_EQ(D1->name(), "cuda:1");
  EXPECT_EQ(D1->description(),
            "cuda:1 (Kiln Fake GPU, sm_86, 84 SMs, 24.0 GiB, CUDA 12.4)");
}

TEST_F(CudaFake, Properties) {
  open();
  EXPECT_EQ(Dev->kind(), DeviceKind::Cuda);
  EXPECT_EQ(Dev->name(), "cuda:0");
  EXPECT_EQ(Dev->description(), "cuda:0 (Kiln Fake GPU, sm_90, 132 SMs, 80.0 "
                                "GiB, 3352 GB/s, CUDA 12.4)");
  DeviceProperties P = Dev->properties();
  EXPECT_EQ(P.Kind, DeviceKind::Cuda);
  EXPECT_EQ(P.Model, "Kiln Fake GPU");
  EXPECT_EQ(P.Arch, "sm_90");
  EXPECT_EQ(P.ComputeUnits, 132u);
  EXPECT_EQ(P.MemoryBytes, uint64_t(80) << 30);
  EXPECT_EQ(P.MaxSharedBytesPerBlock, 232448u);
  EXPECT_EQ(P.MaxThreadsPerBlock, 1024u);
  EXPECT_EQ(P.MemoryClockKHz, 2619000u);
  EXPECT_EQ(P.MemoryBusBits, 5120u);
  EXPECT_NEAR(P.PeakBandwidthGBs, 3352.32, 0.01);
  EXPECT_EQ(P.DriverVersion, 12040);
  // "auto" prefers the GPU.
  auto A = Device::open("auto");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->name(), "cuda:0");
  // So does the C API.
  kiln_device *C = nullptr;
  ASSERT_EQ(kiln_device_open("cuda:0", &C), KILN_SUCCESS) << kiln_last_error();
  EXPECT_STREQ(kiln_device_name(C), "cuda:0");
  kiln_device_close(C);
}

TEST_F(CudaFake, MemoryRoundTrip) {
  open();
  int Allocations, Streams, Events, Modules, Contexts;
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  int AllocationsBefore = Allocations;
  {
    Buffer A = upload(std::vector<uint32_t>{1, 2, 3, 4});
    Buffer B = upload(std::vector<uint32_t>(4));
    EXPECT_NE(A.data(), B.data());
    ASSERT_FALSE(Str->copy(B, 4, A, 0, 8));
    ASSERT_FALSE(Str->fill(B, 12, 0xff, 4));
    EXPECT_EQ(download<uint32_t>(B),
              (std::vector<uint32_t>{0, 1, 2, 0xffffffffu}));
    EXPECT_EQ(download<uint32_t>(A), (std::vector<uint32_t>{1, 2, 3, 4}));
    // Offsets on both sides; zero bytes do nothing.
    uint32_t Two[2] = {};
    ASSERT_FALSE(Str->copyToHost(Two, A, 8, 8));
    ASSERT_FALSE(Str->synchronize());
    EXPECT_EQ(Two[0], 3u);
    EXPECT_EQ(Two[1], 4u);
    EXPECT_FALSE(Str->copyToDevice(A, 0, nullptr, 0));
    EXPECT_FALSE(Str->fill(A, 0, 0, 0));
    auto Empty = Dev->allocate(0);
    ASSERT_TRUE(Empty) << Empty.error().message();
    EXPECT_NE(Empty->data(), nullptr);
    Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
    EXPECT_EQ(Allocations, AllocationsBefore + 3);

    // Events time the stream.
    auto Start = Dev->createEvent(), End = Dev->createEvent();
    ASSERT_TRUE(Start && End);
    auto T0 = Event::elapsedMilliseconds(*Start, *End);
    ASSERT_FALSE(T0);
    EXPECT_EQ(T0.error().message(),
              "elapsed time of an event that has not been recorded");
    EXPECT_TRUE(End->synchronize());
    ASSERT_FALSE(Str->record(*Start));
    ASSERT_FALSE(Str->copy(B, 0, A, 0, 16));
    ASSERT_FALSE(Str->record(*End));
    ASSERT_FALSE(End->synchronize());
    auto T = Event::elapsedMilliseconds(*Start, *End);
    ASSERT_TRUE(T) << T.error().message();
    EXPECT_GE(*T, 0.0);

    // Too large: out of memory, named.
    auto Huge = Dev->allocate(size_t(1) << 50);
    ASSERT_FALSE(Huge);
    EXPECT_EQ(Huge.error().code(), ErrorCode::OutOfMemory);
    EXPECT_EQ(Huge.error().message(),
              "cannot allocate 1125899906842624 bytes on cuda:0: "
              "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY");
    // A host buffer and a CUDA stream do not mix.
    auto Host = Device::open("host");
    ASSERT_TRUE(Host);
    auto HB = Host->allocate(16);
    ASSERT_TRUE(HB);
    EXPECT_TRUE(Str->fill(*HB, 0, 0, 16));
  }
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  EXPECT_EQ(Allocations, AllocationsBefore) << "buffers are freed";
  EXPECT_EQ(Events, 0) << "events are destroyed";
  Str.reset();
  Dev.reset();
  Hooks.Live(&Allocations, &Streams, &Events, &Modules, &Contexts);
  EXPECT_EQ(Streams, 0);
  EXPECT_EQ(Contexts, 0) << "the primary context is released";
}

TEST_F(CudaFake, LaunchParameters) {
  open();
  BundleSpec Spec{{vaddKernel()}};
  TestImage I = cudaImage(vaddFunctions());
  I.Resources = {{"threads", 256}, {"shared_bytes", 1024}, {"registers", 32}};
  Spec.Images = {I};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  auto K = M->kernel("vadd");
  ASSERT_TRUE(K) << K.error().message();
  const int N = 37;
  std::vector<float> X(N), Y(N);
  for (int J = 0; J < N; ++J) {
    X[J] = float(J);
    Y[J] = 0.5f * float(J);
  }
  Buffer BX = upload(X), BY = upload(Y), BZ = upload(std::vector<float>(N));
  int Before = Hooks.LaunchCount();
  auto Plan = K->launch(*Str, {Arg::pointer(BX), Arg::pointer(BY),
                               Arg::pointer(BZ), Arg::i32(N)});
  ASSERT_TRUE(Plan) << Plan.error().message();
  EXPECT_EQ(Hooks.LaunchCount(), Before + 1);
  KilnFakeLaunch L = lastLaunch();
  EXPECT_STREQ(L.Function, "vadd_v0");
  EXPECT_EQ(L.Grid[0], 10u); // cdiv(37, 4)
  EXPECT_EQ(L.Grid[1], 1u);
  EXPECT_EQ(L.Grid[2], 1u);
  EXPECT_EQ(L.Block[0], 256u);
  EXPECT_EQ(L.Block[1], 1u);
  EXPECT_EQ(L.Block[2], 1u);
  EXPECT_EQ(L.SharedBytes, 1024u);
  EXPECT_EQ(L.MaxDynamicShared, 48 * 1024) << "not raised below 48 KiB";
  ASSERT_EQ(L.NumParams, 4u);
  EXPECT_EQ(L.Params[0], uint64_t(uintptr_t(BX.data())));
  EXPECT_EQ(L.Params[1], uint64_t(uintptr_t(BY.data())));
  EXPECT_EQ(L.Params[2], uint64_t(uintptr_t(BZ.data())));
  EXPECT_EQ(L.Params[3] & 0xffffffffu, uint64_t(N));
  std::vector<float> Z = download<float>(BZ);
  for (int J = 0; J < N; ++J)
    EXPECT_EQ(Z[J], 1.5f * float(J)) << J;

  // Without "threads": 128; above 48 KiB of shared memory the function's
  // limit is raised first (the fake refuses the launch otherwise).
  I.Resources = {{"shared_bytes", 100000}};
  Spec.Images = {I};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2);
  LaunchOptions O;
  O.Variant = 2;
  auto P2 = M2->kernel("vadd")->launch(
      *Str, {Arg::pointer(BX), Arg::pointer(BY), Arg::pointer(BZ),
             Arg::i32(N)}, O);
  ASSERT_TRUE(P2) << P2.error().message();
  L = lastLaunch();
  EXPECT_STREQ(L.Function, "vadd_v2");
  EXPECT_EQ(L.Grid[0], 3u);
  EXPECT_EQ(L.Block[0], 128u);
  EXPECT_EQ(L.SharedBytes, 100000u);
  EXPECT_EQ(L.MaxDynamicShared, 100000);
}

TEST_F(CudaFake, ResourcesBeyondTheDevice) {
  open();
  std::vector<Arg> Args;
  Buffer B = upload(std::vector<float>(4));
  Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::i32(4)};
  auto Expect = [&](json Resources, const std::string &Functions,
                    const std::string &Message) {
    BundleSpec Spec{{vaddKernel()}};
    TestImage I = cudaImage(Functions);
    I.Resources = std::move(Resources);
    Spec.Images = {I};
    auto M = load(Spec);
    ASSERT_TRUE(M) << M.error().message();
    auto P = M->kernel("vadd")->launch(*Str, Args);
    ASSERT_FALSE(P) << Message;
    EXPECT_EQ(P.error().code(), ErrorCode::InvalidBundle);
    EXPECT_EQ(P.error().message(),
              "test.kpack: cannot load the CUDA code object of vadd_v0 "
              "(sm_90 cubin): " + Message);
  };
  Expect({{"threads", 2048}}, vaddFunctions(),
         "it asks for 2048 threads per block; cuda:0 allows 1 to 1024");
  Expect({{"threads", 0}}, vaddFunctions(),
         "it asks for 0 threads per block; cuda:0 allows 1 to 1024");
  Expect({{"shared_bytes", 300000}}, vaddFunctions(),
         "it needs 300000 bytes of shared memory; cuda:0 has 232448 per "
         "block");
  Expect({{"threads", 512}}, vaddFunctions(" maxthreads=256"),
         "it asks for 512 threads per block, but its registers allow only "
         "256");
}

TEST_F(CudaFake, ModuleLoadFailureCarriesTheJitLog) {
  open();
  BundleSpec Spec{{vaddKernel()}};
  Spec.Images = {cudaImage("garbage, not a cubin")};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer B = upload(std::vector<float>(4));
  std::vector<Arg> Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                           Arg::i32(4)};
  auto P = M->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(P.error().message(),
            "test.kpack: cannot load the CUDA code object of vadd_v0 (sm_90 "
            "cubin): cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (JIT "
            "log: ptxas application ptx input, line 1; fatal   : Parsing "
            "error near 'garbage': syntax error; ptxas fatal   : Ptx assembly "
            "aborted due to errors)");
  // The failure is kept: the next launch says the same.
  auto Again = M->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(Again);
  EXPECT_EQ(Again.error().message(), P.error().message());
  // Planning is unaffected.
  EXPECT_TRUE(M->kernel("vadd")->plan(Args));

  // A module without the entry.
  Spec.Images = {cudaImage(fakeImage({"something_else params=1"}))};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2);
  auto P2 = M2->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(P2);
  EXPECT_EQ(P2.error().message(),
            "test.kpack: cannot load the CUDA code object of vadd_v0 (sm_90 "
            "cubin): it does not define the entry 'vadd_v0' "
            "(cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND)");
}

TEST_F(CudaFake, PtxIsaTooNewForTheDriver) {
  open();
  BundleSpec Spec{{vaddKernel()}};
  Spec.Images = {cudaImage(vaddFunctions().insert(9, ".version 9.4\n"),
                           "sm_90", kImagePtx)};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer B = upload(std::vector<float>(4));
  std::vector<Arg> Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                           Arg::i32(4)};
  auto P = M->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::Driver);
  EXPECT_EQ(P.error().message(),
            "test.kpack: cannot load the CUDA code object of vadd_v0 (sm_90 "
            "PTX): PTX ISA 9.4 needs a newer driver: this driver (CUDA 12.4) "
            "takes PTX ISA up to 8.4");

  // With "requires.ptx_isa" the image is not even a candidate.
  Spec.Images[0].Requires = {{"sm", 90}, {"ptx_isa", 94}};
  auto M2 = load(Spec);
  ASSERT_FALSE(M2);
  EXPECT_EQ(M2.error().code(), ErrorCode::NoImage);
  EXPECT_EQ(M2.error().message(),
            "no image for cuda:0 (Kiln Fake GPU, sm_90: cubin sm_90a, sm_90; "
            "PTX for sm_90 and below, ISA up to 8.4) in bundle 'test.kpack'; "
            "it has sm_90 PTX (PTX ISA 9.4 needs a newer driver: this driver "
            "(CUDA 12.4) takes PTX ISA up to 8.4)");
}

TEST_F(CudaFake, PtxOnANewerDriver) {
  ScopedEnv Newer("KILN_FAKE_CUDA_DRIVER_VERSION", "13010");
  open();
  BundleSpec Spec{{vaddKernel()}};
  // PTX is handed to the driver NUL-terminated, with any text after a NUL
  // dropped.
  std::string Ptx = vaddFunctions().insert(9, ".version 9.4\n");
  Spec.Images = {cudaImage(Ptx + std::string(1, '\0') + "trailing",
                           "sm_80", kImagePtx)};
  Spec.Images[0].Requires = {{"ptx_isa", 94}};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer B = upload(std::vector<float>{1, 2, 3, 4});
  auto P = M->kernel("vadd")->launch(
      *Str, {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::i32(4)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(download<float>(B), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(Dev->description(), "cuda:0 (Kiln Fake GPU, sm_90, 132 SMs, 80.0 "
                                "GiB, 3352 GB/s, CUDA 13.1)");
}

TEST_F(CudaFake, DriverErrorsNameTheCallAndTheResult) {
  open();
  BundleSpec Spec{{vaddKernel()}};
  Spec.Images = {cudaImage(vaddFunctions(" action=fail"))};
  auto M = load(Spec);
  ASSERT_TRUE(M);
  Buffer B = upload(std::vector<float>(8));
  std::vector<Arg> Args = {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B),
                           Arg::i32(8)};
  auto P = M->kernel("vadd")->launch(*Str, Args);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().code(), ErrorCode::Driver);
  EXPECT_EQ(P.error().message(),
            "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "
            "(vadd_v0: grid 2x1x1, 128 threads, 0 bytes of shared memory)");

  // An unknown CUresult still gets a name.
  auto D = cuda::loadDriver();
  ASSERT_TRUE(D) << D.error().message();
  EXPECT_EQ((*D)->errorName(218), "CUDA_ERROR_INVALID_PTX");
  EXPECT_EQ((*D)->errorName(12345), "CUDA error 12345");
  EXPECT_EQ((*D)->failure("cuInit", 3), "cuInit failed: "
                                        "CUDA_ERROR_NOT_INITIALIZED");
}

TEST_F(CudaFake, TrapSurfacesAtSynchronize) {
  open();
  TestKernel Trapper = trapperKernel();
  BundleSpec Spec{{Trapper}};
  Spec.Images = {cudaImage(fakeImage({"trapper_v0 params=3 action=trap"}))};
  auto M = load(Spec);
  ASSERT_TRUE(M);
  Buffer Done = upload(std::vector<int64_t>(1));
  auto P = M->kernel("trapper")->launch(
      *Str, {Arg::i32(5), Arg::pointer(Done), Arg::i32(100)});
  ASSERT_TRUE(P) << "the launch itself is asynchronous";
  Error E = Str->synchronize();
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(E.message(), "kernel trapped: cuStreamSynchronize failed: "
                         "CUDA_ERROR_ASSERT (the CUDA context of cuda:0 "
                         "cannot be used any more)");
  // Everything after fails the same way, and nothing aborts.
  int64_t Out;
  Error Copy = Str->copyToHost(&Out, Done, 0, 8);
  ASSERT_TRUE(Copy);
  EXPECT_EQ(Copy.code(), ErrorCode::KernelTrapped);
  EXPECT_EQ(Copy.message().rfind("kernel trapped: cuMemcpyDtoHAsync_v2 "
                                 "failed: CUDA_ERROR_ASSERT",
                                 0),
            0u)
      << Copy.message();
  Dev->setPrintHandler([](const std::string &) {}); // a no-op on the GPU
}

TEST_F(CudaFake, EveryScalarTypeInItsSlot) {
  open();
  BundleSpec Spec{{scalarsKernel()}};
  Spec.Images = {cudaImage(fakeImage({"scalars_v0 params=14"}))};
  auto M = load(Spec);
  ASSERT_TRUE(M) << M.error().message();
  Buffer Out = upload(std::vector<uint8_t>(8 * 13));
  auto P = M->kernel("scalars")->launch(
      *Str, {Arg::pointer(Out), Arg::boolean(true), Arg::i8(-2),
             Arg::i16(-300), Arg::i32(-70000), Arg::i64(-(int64_t(1) << 40)),
             Arg::u8(200), Arg::u16(60000), Arg::u32(4000000000u),
             Arg::u64(~uint64_t(0)), Arg::f16(1.5f), Arg::bf16(-2.0f),
             Arg::f32(3.25f), Arg::f64(-1e300)});
  ASSERT_TRUE(P) << P.error().message();
  KilnFakeLaunch L = lastLaunch();
  ASSERT_EQ(L.NumParams, 14u);
  EXPECT_EQ(L.Params[0], uint64_t(uintptr_t(Out.data())));
  EXPECT_EQ(L.Params[1] & 0xff, 1u) << "bool: one byte";
  EXPECT_EQ(uint8_t(L.Params[2]), uint8_t(-2));
  EXPECT_EQ(uint16_t(L.Params[3]), uint16_t(-300));
  EXPECT_EQ(uint32_t(L.Params[4]), uint32_t(-70000));
  EXPECT_EQ(int64_t(L.Params[5]), -(int64_t(1) << 40));
  EXPECT_EQ(uint16_t(L.Params[11]), 0xc000u) << "bf16 bits";
  float F;
  std::memcpy(&F, &L.Params[12], 4);
  EXPECT_EQ(F, 3.25f);
  double D;
  std::memcpy(&D, &L.Params[13], 8);
  EXPECT_EQ(D, -1e300);
}

TEST_F(CudaFake, ImagesForOtherDevices) {
  open();
  // A bundle with only host code objects has nothing for the GPU.
  auto M = load({{vaddKernel()}});
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().code(), ErrorCode::NoImage);
  EXPECT_EQ(M.error().message().rfind("no image for cuda:0 (Kiln Fake GPU, "
                                      "sm_90: ",
                                      0),
            0u)
      << M.error().message();
  // An sm_100 cubin next to sm_80 PTX: the PTX runs (JIT-compiled).
  BundleSpec Spec{{vaddKernel()}};
  Spec.Images = {cudaImage(fakeImage({"nothing"}), "sm_100"),
                 cudaImage(vaddFunctions(), "sm_80", kImagePtx)};
  auto M2 = load(Spec);
  ASSERT_TRUE(M2) << M2.error().message();
  Buffer B = upload(std::vector<float>{1, 2});
  auto P = M2->kernel("vadd")->launch(
      *Str, {Arg::pointer(B), Arg::pointer(B), Arg::pointer(B), Arg::i32(2)});
  ASSERT_TRUE(P) << P.error().message();
  EXPECT_EQ(P->Image, 1u);
  // Only an sm_100 cubin: the message says why.
  Spec.Images = {cudaImage(fakeImage({"nothing"}), "sm_100a")};
  auto M3 = load(Spec);
  ASSERT_FALSE(M3);
  EXPECT_NE(M3.error().message().find("; it has sm_100a (runs only on "
                                      "sm_100)"),
            std::string::npos)
      << M3.error().message();
}

//===----------------------------------------------------------------------===//
// Ranking rules, without a device
//===----------------------------------------------------------------------===//

ImageInfo nvImage(std::string Arch, uint16_t Kind,
                  std::optional<ImageRequirements> Requires = std::nullopt) {
  ImageInfo I;
  I.Target = Arch;
  I.Triple = "nvptx64-nvidia-cuda";
  I.Arch = std::move(Arch);
  I.ImageKind = Kind;
  I.OffloadKind = 2;
  if (Requires)
    I.Requires = *Requires;
  return I;
}

TEST(CudaRanking, Rules) {
  CudaTarget H100{90, 12040};
  CudaTarget A10{86, 12040};
  auto Rank = [](const CudaTarget &T, const char *Arch, uint16_t Kind) {
    return rankCudaImage(nvImage(Arch, Kind), T);
  };
  // Cubins: same major, minor at most the device's; "a" only exactly.
  EXPECT_GT(Rank(H100, "sm_90a", kImageCubin), Rank(H100, "sm_90", kImageCubin));
  EXPECT_GT(Rank(H100, "sm_90", kImageCubin), 0);
  EXPECT_EQ(Rank(H100, "sm_80", kImageCubin), 0) << "another major version";
  EXPECT_EQ(Rank(H100, "sm_100", kImageCubin), 0);
  EXPECT_GT(Rank(A10, "sm_86", kImageCubin), Rank(A10, "sm_80", kImageCubin));
  EXPECT_GT(Rank(A10, "sm_80", kImageCubin), 0);
  EXPECT_EQ(Rank(A10, "sm_87", kImageCubin), 0);
  EXPECT_EQ(Rank(A10, "sm_86a", kImageCubin) > 0, true);
  EXPECT_EQ(Rank(A10, "sm_80a", kImageCubin), 0) << "arch-specific";
  // PTX: any capability from its own up, the closest first, below cubins.
  EXPECT_GT(Rank(H100, "sm_80", kImagePtx), 0);
  EXPECT_GT(Rank(H100, "sm_90", kImagePtx), Rank(H100, "sm_80", kImagePtx));
  EXPECT_GT(Rank(H100, "sm_90", kImageCubin), Rank(H100, "sm_90", kImagePtx));
  EXPECT_EQ(Rank(A10, "sm_90", kImagePtx), 0);
  EXPECT_EQ(Rank(H100, "sm_80a", kImagePtx), 0) << "arch-specific PTX";
  EXPECT_GT(Rank(H100, "sm_90a", kImagePtx), Rank(H100, "sm_90", kImagePtx));
  // Family-specific: its major version only.
  CudaTarget B300{103, 12090};
  EXPECT_GT(Rank(B300, "sm_100f", kImageCubin), 0);
  EXPECT_GT(Rank(B300, "sm_100f", kImagePtx), 0);
  CudaTarget Rtx{120, 12090};
  EXPECT_EQ(Rank(Rtx, "sm_100f", kImagePtx), 0);
  EXPECT_GT(Rank(Rtx, "sm_100", kImagePtx), 0);
  // Not NVIDIA, not a code object kind the driver loads, not an sm arch.
  ImageInfo Host = nvImage("sm_90", kImageCubin);
  Host.Triple = "x86_64-unknown-linux-gnu";
  EXPECT_EQ(rankCudaImage(Host, H100), 0);
  EXPECT_EQ(Rank(H100, "sm_90", 1 /*IMG_Object*/), 0);
  EXPECT_EQ(Rank(H100, "gfx942", kImageCubin), 0);
  EXPECT_EQ(Rank(H100, "sm_9", kImageCubin), 0);
  EXPECT_EQ(Rank(H100, "sm_90x", kImageCubin), 0);
}

TEST(CudaRanking, RequiresOverridesTheArch) {
  CudaTarget H100{90, 12040};
  ImageRequirements R;
  R.Present = true;
  R.Sm = 90;
  R.ArchSpecific = true;
  // An arch string the runtime cannot read, "requires" says it all.
  EXPECT_GT(rankCudaImage(nvImage("hopper", kImageCubin, R), H100), 0);
  EXPECT_EQ(rankCudaImage(nvImage("hopper", kImageCubin, R), {91, 12040}), 0);
  R.Sm = 80;
  R.ArchSpecific = false;
  R.PtxIsa = 85;
  EXPECT_EQ(rankCudaImage(nvImage("sm_80", kImagePtx, R), H100), 0);
  EXPECT_EQ(whyNotCuda(nvImage("sm_80", kImagePtx, R), H100),
            "PTX ISA 8.5 needs a newer driver: this driver (CUDA 12.4) takes "
            "PTX ISA up to 8.4");
  EXPECT_GT(rankCudaImage(nvImage("sm_80", kImagePtx, R), {90, 12050}), 0);
  EXPECT_GT(rankCudaImage(nvImage("sm_80", kImagePtx, R), {90, 99000}), 0)
      << "a driver newer than the runtime knows takes any ISA";
  EXPECT_EQ(whyNotCuda(nvImage("sm_100", kImageCubin), H100),
            "a cubin for another major version");
  EXPECT_EQ(whyNotCuda(nvImage("sm_100", kImagePtx), H100), "needs sm_100");
  EXPECT_EQ(whyNotCuda(nvImage("sm_90", kImageCubin), H100), "");
}

TEST(CudaRanking, DriverVersionsAndPtx) {
  const std::pair<int, unsigned> Cases[] = {
      {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
      {12050, 85}, {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90},
      {11080, 78}, {12070, 85}};
  for (const auto &[Version, Isa] : Cases)
    EXPECT_EQ(maxPtxIsa(Version), Isa) << Version;
  EXPECT_EQ(maxPtxIsa(13010), 0u);
  EXPECT_EQ(cudaVersionString(12040), "12.4");
  EXPECT_EQ(cudaVersionString(13000), "13.0");
  EXPECT_EQ(ptxIsaOf("//\n// Generated\n//\n\n.version 8.4\n.target sm_90a\n"),
            84u);
  EXPECT_EQ(ptxIsaOf(".version 10.0\n"), 100u);
  EXPECT_EQ(ptxIsaOf("no version here"), std::nullopt);
  EXPECT_EQ(ptxIsaOf(".version x"), std::nullopt);
  EXPECT_EQ(ptxIsaProblem(84, 12040), "");
  EXPECT_EQ(ptxIsaProblem(94, 12040),
            "PTX ISA 9.4 needs a newer driver: this driver (CUDA 12.4) takes "
            "PTX ISA up to 8.4");
  EXPECT_EQ(describeCudaTarget({86, 12040}),
            "sm_86: cubin sm_86a, sm_80 to sm_86; PTX for sm_86 and below, "
            "ISA up to 8.4");
  EXPECT_EQ(describeCudaTarget({90, 13010}),
            "sm_90: cubin sm_90a, sm_90; PTX for sm_90 and below, any ISA");
  auto A = parseSmArch("sm_90a");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Sm, 90u);
  EXPECT_TRUE(A->ArchSpecific);
  EXPECT_FALSE(parseSmArch("gfx90a"));
}

} // namespace
