//===- FaultTest.cpp - Every failure point of the main flows --------------===//
//
// Linked with the runtime compiled with KILN_FAULT_INJECTION (Fault.h;
// kiln_runtime_fault in CMakeLists.txt), never with libkiln_runtime.
//
// The main flow (open the device, read and load a bundle, allocate, copy
// in, launch, copy back, synchronize, check the result) runs once per
// device kind (host, the emulator, CUDA and HIP through their fake
// drivers) to count the calls of each fault point it makes. Then, for every
// point and every N up to that count, the flow runs with the Nth call
// failing, and the test checks that:
//
//   - the failure comes back as an Error whose message says what failed
//     (the call's name, "cannot allocate", the file's errno), or the
//     flow succeeds where the runtime is designed to absorb that failure
//     (a short list below, each with its reason);
//   - the objects the failed flow made (device, module, stream, buffers)
//     are still usable: the same flow, disarmed, continues from them and
//     computes the right result;
//   - nothing leaks: the fake driver's live allocations, streams, events,
//     modules and contexts are back where they were once everything is
//     released (host memory: LeakSanitizer in the sanitizer build).
//
// The report lists, per device, how many points were reached.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/Fault.h"
#include "FakeDriver.h"
#include "TestUtil.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>

using namespace kiln::rt;
using namespace kiln::test;
namespace fault = kiln::rt::detail::fault;
using fault::Point;

namespace {

// Launches take the default variant (the tuner's measurements would make
// the second run of a flow differ from the first), and nothing reaches the
// user's tuning database.
[[maybe_unused]] const bool NoTuning =
    setenv("KILN_TUNING", "off", 1) == 0 &&
    setenv("KILN_CACHE_DIR", "/nonexistent/kiln-tests/cache", 1) == 0;
[[maybe_unused]] const bool NoRealDrivers =
    setenv("KILN_CUDA_DRIVER", "/nonexistent/kiln-tests/libcuda.so.1", 1) ==
        0 &&
    setenv("KILN_HIP_RUNTIME", "/nonexistent/kiln-tests/libamdhip64.so", 1) ==
        0;

constexpr int32_t kN = 37;      ///< elements of the vector add
constexpr int32_t kWords = 128; ///< of each buffer (the emulated kernel's)

/// Failures the runtime absorbs by design: the flow still succeeds.
/// What (Fault.h's `What`) -> why that is right.
const std::map<std::string, std::string> &absorbed() {
  static const std::map<std::string, std::string> M = {
      // HostImage::load: a memfd that dlopen refuses falls back to a
      // private temporary file.
      {"DlOpen:dlopen:host", "the memfd path falls back to a temporary file"},
      // The number of threads a CUDA function's registers allow is a check
      // of the image; a driver that cannot say leaves the image's own.
      {"DriverCall:cuFuncGetAttribute", "an optional check"},
      // The memory clock and bus width (and HIP's opt-in shared memory)
      // are optional: 0 when a device does not report them.
      {"DriverCall:cuDeviceGetAttribute", "optional attributes"},
      // Drivers before CUDA 12 lack cuTensorMapEncodeTiled: images with
      // tensor maps are then not used, nothing else changes.
      {"DlSym:cuTensorMapEncodeTiled", "an optional entry point"},
      {"DriverCall:hipDeviceGetAttribute", "optional attributes"},
      // HIP: asking which device is current only spares a hipSetDevice.
      {"DriverCall:hipGetDevice", "hipSetDevice is called instead"},
  };
  return M;
}

/// One device kind's flow: what it opens and the bundle it loads.
struct FlowKind {
  std::string Name;   ///< "host", "emu", "cuda", "hip"
  std::string Spec;   ///< Device::open's
  std::string Kernel; ///< what it launches
  std::string Bundle; ///< the bundle's bytes
  /// The driver's environment variable and library (GPU kinds).
  const char *DriverVar = nullptr;
  const char *DriverLib = nullptr;
};

/// The objects a flow has made so far; a later run continues from them.
struct FlowState {
  std::optional<Device> Dev;
  std::optional<Module> Mod;
  std::optional<Kernel> K;
  std::optional<Stream> Str;
  std::optional<Buffer> X, Y, Z;
  bool Uploaded = false;
};

std::string tempFile(const std::string &Dir, const std::string &Name,
                     const std::string &Bytes) {
  std::string Path = Dir + "/" + Name;
  EXPECT_TRUE(writeFileBytes(Path, Bytes)) << Path;
  return Path;
}

class Faults : public ::testing::Test {
protected:
  static void SetUpTestSuite() { Dir = new std::string(tempDir()); }

  /// Runs (or continues) `Flow`: the first error, or success once the
  /// result is checked.
  Error run(const FlowKind &Flow, FlowState &S, const std::string &Path) {
    if (!S.Dev) {
      Expected<Device> D = Device::open(Flow.Spec);
      if (!D)
        return D.takeError();
      S.Dev.emplace(std::move(*D));
    }
    if (!S.Mod) {
      Expected<Module> M = S.Dev->loadModuleFile(Path);
      if (!M)
        return M.takeError();
      S.Mod.emplace(std::move(*M));
    }
    if (!S.K) {
      Expected<Kernel> K = S.Mod->kernel(Flow.Kernel);
      if (!K)
        return K.takeError();
      S.K.emplace(std::move(*K));
    }
    if (!S.Str) {
      Expected<Stream> St = S.Dev->createStream();
      if (!St)
        return St.takeError();
      S.Str.emplace(std::move(*St));
    }
    for (std::optional<Buffer> *B : {&S.X, &S.Y, &S.Z})
      if (!*B) {
        Expected<Buffer> A = S.Dev->allocate(size_t(kWords) * 4);
        if (!A)
          return A.takeError();
        B->emplace(std::move(*A));
      }
    bool Emu = Flow.Name == "emu";
    std::vector<float> X(kWords), Y(kWords);
    for (int32_t I = 0; I < kWords; ++I) {
      X[size_t(I)] = float(I) * 0.5f;
      Y[size_t(I)] = float(100 - I);
    }
    if (!S.Uploaded) {
      if (Error E = S.Str->copyToDevice(*S.X, 0, X.data(), kWords * 4))
        return E;
      if (Error E = S.Str->copyToDevice(*S.Y, 0, Y.data(), kWords * 4))
        return E;
      S.Uploaded = true;
    }
    std::vector<uint32_t> Poison(kWords, 0xdeadbeef), Z(kWords);
    if (Error E = S.Str->copyToDevice(*S.Z, 0, Poison.data(), kWords * 4))
      return E;
    std::vector<Arg> Args = {Arg::pointer(*S.Z)};
    if (!Emu)
      Args = {Arg::pointer(*S.X), Arg::pointer(*S.Y), Arg::pointer(*S.Z),
              Arg::i32(kN)};
    Expected<LaunchPlan> P = S.K->launch(*S.Str, Args);
    if (!P)
      return P.takeError();
    if (Error E = S.Str->copyToHost(Z.data(), *S.Z, 0, kWords * 4))
      return E;
    if (Error E = S.Str->synchronize())
      return E;
    for (int32_t I = 0; I < kWords; ++I) {
      uint32_t Want = 0xdeadbeef;
      if (Emu) {
        Want = exchangeValue(uint32_t(I));
      } else if (I < kN) {
        float Sum = X[size_t(I)] + Y[size_t(I)];
        std::memcpy(&Want, &Sum, 4);
      }
      if (Z[size_t(I)] != Want)
        return Error(ErrorCode::InvalidArgument,
                     "wrong result at " + std::to_string(I) + ": " +
                         std::to_string(Z[size_t(I)]) + ", expected " +
                         std::to_string(Want));
    }
    return Error::success();
  }

  /// A fresh path for the GPU driver, so that the runtime dlopens (and
  /// binds) it again instead of reusing the library it loaded for an
  /// earlier path.
  void freshDriver(const FlowKind &Flow) {
    if (!Flow.DriverVar)
      return;
    std::string Link = *Dir + "/" + Flow.Name + "-driver-" +
                       std::to_string(++Links) + ".so";
    ASSERT_EQ(symlink(Flow.DriverLib, Link.c_str()), 0) << Link;
    setenv(Flow.DriverVar, Link.c_str(), 1);
  }

  /// The fake driver's live objects (GPU kinds), else nothing.
  std::vector<int> live(const FlowKind &Flow) {
    if (!Flow.DriverLib)
      return {};
    FakeHooks H(Flow.DriverLib);
    EXPECT_TRUE(H.Live);
    std::vector<int> L(5, -1);
    if (H.Live)
      H.Live(&L[0], &L[1], &L[2], &L[3], &L[4]);
    return L;
  }

  /// Walks every fault point of `Flow`.
  void walk(const FlowKind &Flow) {
    std::string Path = tempFile(*Dir, Flow.Name + ".kpack", Flow.Bundle);
    std::vector<int> Baseline = live(Flow);

    // Count the calls of each point in one clean run.
    std::array<uint64_t, fault::kNumPoints> Counts{};
    {
      freshDriver(Flow);
      fault::control::reset();
      FlowState S;
      Error E = run(Flow, S, Path);
      ASSERT_FALSE(E) << Flow.Name << ": the clean flow failed: "
                      << E.message();
      for (unsigned P = 0; P < fault::kNumPoints; ++P)
        Counts[P] = fault::control::count(Point(P));
    }
    EXPECT_EQ(live(Flow), Baseline) << Flow.Name << ": the clean flow leaks";

    unsigned Failed = 0, Absorbed = 0;
    std::set<std::string> AbsorbedKeys;
    std::string Report;
    for (unsigned P = 0; P < fault::kNumPoints; ++P) {
      Point Pt = Point(P);
      for (uint64_t N = 1; N <= Counts[P]; ++N) {
        std::string Where = Flow.Name + ": " + fault::control::name(Pt) +
                            " #" + std::to_string(N);
        {
          freshDriver(Flow);
          fault::control::reset();
          fault::control::arm(Pt, N);
          FlowState S;
          Error E = run(Flow, S, Path);
          std::string Fired = fault::control::fired();
          std::string Call = fault::control::firedCall();
          fault::control::arm(Pt, 0);
          ASSERT_FALSE(Fired.empty()) << Where << " was never reached";
          Where += " (" + Fired + ")";
          if (E) {
            ++Failed;
            EXPECT_FALSE(E.message().empty()) << Where;
            EXPECT_TRUE(explains(Pt, Call, E.message()))
                << Where << ": the error does not say what failed: "
                << E.message();
          } else {
            ++Absorbed;
            std::string Key = absorbedKey(Pt, Call, Flow);
            AbsorbedKeys.insert(Key);
            EXPECT_TRUE(absorbed().count(Key))
                << Where << ": the flow succeeded although the call failed ("
                << Key << ")";
          }
          // Whatever was made is still usable: continue from it.
          Error Again = run(Flow, S, Path);
          EXPECT_FALSE(Again) << Where << ": after the failure ("
                              << (E ? E.message() : "absorbed")
                              << "), the flow fails: " << Again.message();
        }
        EXPECT_EQ(live(Flow), Baseline) << Where << ": the flow leaks";
        if (::testing::Test::HasFailure())
          return;
      }
      if (Counts[P])
        Report += std::string(Report.empty() ? "" : ", ") +
                  fault::control::name(Pt) + " " + std::to_string(Counts[P]);
    }
    std::string Keys;
    for (const std::string &K : AbsorbedKeys)
      Keys += (Keys.empty() ? "" : ", ") + K;
    std::printf("[ faults   ] %s: %u failure points (%s): %u failed the flow "
                "with an error, %u absorbed (%s)\n",
                Flow.Name.c_str(), Failed + Absorbed, Report.c_str(), Failed,
                Absorbed, Keys.c_str());
    EXPECT_GT(Failed, 0u);
  }

  /// Whether an error message says what failed.
  /// Whether an error message says what failed; `What` is the call that
  /// did ("cuMemAlloc_v2").
  static bool explains(Point P, const std::string &What,
                       const std::string &Message) {
    auto Has = [&](const char *S) {
      return Message.find(S) != std::string::npos;
    };
    switch (P) {
    case Point::Allocate:
      return Has("cannot allocate") || Has("stacks");
    case Point::FileRead:
      return Has("Input/output error");
    case Point::DlOpen:
      return Has("dlopen") || Has("could not be loaded") ||
             Has("could be loaded");
    case Point::DlSym:
      return Has("does not export") || Has("does not define the entry");
    case Point::ModuleLoad:
    case Point::Launch:
      return Has("injected fault");
    case Point::DriverCall:
      return Message.find(What) != std::string::npos;
    }
    return false;
  }

  static std::string absorbedKey(Point P, const std::string &What,
                                 const FlowKind &Flow) {
    std::string Key = std::string(fault::control::name(P)) + ":" + What;
    if (P == Point::DlOpen && !Flow.DriverLib)
      Key += ":host";
    return Key;
  }

  static std::string *Dir;
  unsigned Links = 0;
};

std::string *Faults::Dir = nullptr;

std::string vaddBundle(std::vector<TestImage> Images) {
  BundleSpec Spec({vaddKernel()});
  Spec.Images = std::move(Images);
  return buildBundle(Spec);
}

TEST_F(Faults, Host) {
  walk({"host", "host", "vadd", vaddBundle({}), nullptr, nullptr});
}

// The host's fallback loader (a temporary file when the memfd's dlopen
// fails) has a failure of its own: both dlopens failing is an error that
// names dlopen, and the module loads at the next launch.
TEST_F(Faults, HostImageBothLoadersFail) {
  std::string Path = tempFile(*Dir, "both.kpack", vaddBundle({}));
  FlowKind Flow{"host", "host", "vadd", "", nullptr, nullptr};
  fault::control::reset();
  fault::control::arm(Point::DlOpen, 1, 2);
  FlowState S;
  Error E = run(Flow, S, Path);
  fault::control::arm(Point::DlOpen, 0);
  ASSERT_TRUE(E);
  EXPECT_EQ(fault::control::count(Point::DlOpen), 2u);
  EXPECT_NE(E.message().find("cannot load the host code object of vadd_v0"),
            std::string::npos)
      << E.message();
  EXPECT_NE(E.message().find("dlopen"), std::string::npos) << E.message();
  Error Again = run(Flow, S, Path);
  EXPECT_FALSE(Again) << Again.message();
}

TEST_F(Faults, Emulator) {
  walk({"emu", "emu:sm_80", "exchange",
        emuBundle("exchange", {{"out", "*u32"}}), nullptr, nullptr});
}

TEST_F(Faults, Cuda) {
  ScopedEnv Mode("KILN_FAKE_CUDA", "one");
  ScopedEnv Driver("KILN_CUDA_DRIVER", KILN_FAKE_CUDA);
  TestImage I = cudaImage(vaddFunctions());
  // Above 48 KiB of shared memory: the opt-in is one more driver call.
  I.Resources = {{"threads", 128}, {"shared_bytes", 65536}};
  walk({"cuda", "cuda:0", "vadd", vaddBundle({I}), "KILN_CUDA_DRIVER",
        KILN_FAKE_CUDA});
}

// An image with tensor maps of x and y (and the generic one): encoding
// them is one more driver call per map, whose failure names it; without
// the entry point, the generic image runs (absorbed).
TEST_F(Faults, CudaTensorMaps) {
  ScopedEnv Mode("KILN_FAKE_CUDA", "one");
  ScopedEnv Driver("KILN_CUDA_DRIVER", KILN_FAKE_CUDA);
  TestImage Fast = cudaImage(vaddFunctions(" tmaps=2"));
  Fast.TensorMaps = vaddTensorMaps();
  BundleSpec Spec({vaddKernel()});
  Spec.Images = {Fast, cudaImage(vaddFunctions())};
  Spec.FormatVersion = "4";
  Spec.JsonVersion = 4;
  walk({"cuda-tma", "cuda:0", "vadd", buildBundle(Spec), "KILN_CUDA_DRIVER",
        KILN_FAKE_CUDA});
}

TEST_F(Faults, Hip) {
  ScopedEnv Mode("KILN_FAKE_HIP", "one");
  ScopedEnv Runtime("KILN_HIP_RUNTIME", KILN_FAKE_HIP);
  walk({"hip", "hip:0", "vadd", vaddBundle({amdImage(vaddFunctions())}),
        "KILN_HIP_RUNTIME", KILN_FAKE_HIP});
}

} // namespace
