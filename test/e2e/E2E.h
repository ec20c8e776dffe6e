//===- E2E.h - Helpers of the end-to-end tests ------------------*- C++ -*-===//
//
// Bundles compiled at build time (test/e2e/CMakeLists.txt, for the host and
// NVIDIA targets) are loaded on the test device: `KILN_E2E_DEVICE` (a
// Device::open spec: `host`, the default, or `cuda`, `cuda:N`, ...; E2EMain.cpp
// opens it once, or exits with code 77, "skipped", when a GPU asked for is
// not there). Inputs are fresh random values (the seed is printed with every
// failure), outputs are poisoned before each launch (0xFF bytes: NaN for
// f16/bf16/f32; 0xAB for integers) and the elements past the logical size
// must keep their poison. The references are the same float64 (or exact)
// values on every device; CrossDeviceTest.cpp also compares a device's
// results with the host's directly.
//
// `KILN_E2E_BUNDLE_DIR` overrides the bundle folder compiled in (a device
// pack, scripts/gpu-pack.sh, carries the bundles elsewhere).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_E2E_E2E_H
#define KILN_TEST_E2E_E2E_H

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::e2e {

using rt::Arg;
using rt::Buffer;

/// The seed of this process's random inputs (from std::random_device, or
/// KILN_E2E_SEED to reproduce a failure).
inline uint32_t seed() {
  static uint32_t S = [] {
    if (const char *E = std::getenv("KILN_E2E_SEED"))
      return uint32_t(std::strtoul(E, nullptr, 0));
    return uint32_t(std::random_device{}());
  }();
  return S;
}

/// What the demo table (KILN_E2E_TABLE=1) reports for the running test: the
/// last launch's kernel and variant, the launches' time, and the largest
/// relative error that expectClose saw.
struct TableRow {
  std::string Kernel, Variant;
  double Millis = 0;
  double MaxRelError = 0;
  unsigned Launches = 0;
};
inline TableRow &currentRow() {
  static TableRow Row;
  return Row;
}

/// The device spec of this run: $KILN_E2E_DEVICE, or "host".
inline std::string deviceSpec() {
  const char *E = std::getenv("KILN_E2E_DEVICE");
  return E && *E ? E : "host";
}

/// The folder of the bundles: $KILN_E2E_BUNDLE_DIR, or the build's.
inline std::string bundleDir() {
  const char *E = std::getenv("KILN_E2E_BUNDLE_DIR");
  return E && *E ? E : KILN_E2E_BUNDLE_DIR;
}

inline std::string bundlePath(const std::string &Bundle) {
  return bundleDir() + "/" + Bundle + ".kpack";
}

/// The device every test runs on, opened once by main (E2EMain.cpp).
std::optional<rt::Device> &testDevice();

/// True when the test device is a GPU or the emulator of one (the GPU
/// stage's code runs).
inline bool onGpu() {
  return testDevice() && testDevice()->kind() != rt::DeviceKind::Host;
}

/// True when the test device is a real GPU (the emulator is not: a trap
/// does not poison it, and its errors carry the assertion's text).
inline bool onRealGpu() {
  return onGpu() && testDevice()->kind() != rt::DeviceKind::Emulator;
}

/// Why test `Suite.Name` does not run on a GPU, or "". Tests whose name
/// ends in "Trap" launch a kernel that traps, which leaves the CUDA context
/// unusable for the rest of the process: on a GPU they run only when they
/// are the one test of the process (`--gtest_filter=Suite.NameTrap`, as
/// ctest's KilnE2ETestsGPU.Suite.NameTrap and run-gpu-tests.sh run them).
std::string gpuSkipReason(const std::string &Suite, const std::string &Name);

constexpr uint8_t PoisonFloat = 0xFF;
constexpr uint8_t PoisonInt = 0xAB;

class E2ETest : public ::testing::Test {
public:
  void SetUp() override {
    Trace.emplace(__FILE__, __LINE__,
                  "random seed " + std::to_string(seed()) +
                      " (rerun with KILN_E2E_SEED=" + std::to_string(seed()) +
                      ")");
    Rng.seed(seed() ^ std::hash<std::string>()(
                          ::testing::UnitTest::GetInstance()
                              ->current_test_info()
                              ->name()));
    ASSERT_TRUE(testDevice()) << "the test device is not open (E2EMain.cpp)";
    Dev.emplace(*testDevice());
    if (onGpu()) {
      const ::testing::TestInfo *Info =
          ::testing::UnitTest::GetInstance()->current_test_info();
      std::string Why = gpuSkipReason(Info->test_suite_name(), Info->name());
      if (!Why.empty())
        GTEST_SKIP() << "on " << Dev->name() << ": " << Why;
    }
    auto S = Dev->createStream();
    ASSERT_TRUE(S) << S.error().message();
    Str.emplace(std::move(*S));
    currentRow() = TableRow();
  }

  /// With KILN_E2E_TABLE set, one row per test: the demo's table.
  void TearDown() override {
    if (!std::getenv("KILN_E2E_TABLE"))
      return;
    const TableRow &R = currentRow();
    std::printf("%-20s %-14s %-60s %9.3f %10.1e  %s\n",
                ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                R.Kernel.c_str(), R.Variant.c_str(), R.Millis, R.MaxRelError,
                HasFailure() ? "FAIL" : "ok");
  }

  /// Kernel `Name` of bundles/`Bundle`.kpack on the test device. A bundle
  /// or kernel that does not load fails the test with the runtime's message
  /// (a C++ exception, which GoogleTest reports as the test's failure before
  /// it goes on with the next test).
  rt::Kernel kernel(const std::string &Bundle, const std::string &Name) {
    return kernelOn(*Dev, Bundle, Name);
  }
  static rt::Kernel kernelOn(rt::Device &D, const std::string &Bundle,
                             const std::string &Name) {
    std::string Path = bundlePath(Bundle);
    auto M = D.loadModuleFile(Path);
    if (!M)
      throw std::runtime_error("cannot load " + Path + " on " + D.name() +
                               ": " + M.error().message());
    auto K = M->kernel(Name);
    if (!K)
      throw std::runtime_error("kernel '" + Name + "' of " + Path + " on " +
                               D.name() + ": " + K.error().message());
    return *K;
  }

  template <typename T> Buffer upload(const std::vector<T> &Data) {
    auto B = Dev->allocate(std::max<size_t>(Data.size() * sizeof(T), 16));
    EXPECT_TRUE(B) << B.error().message();
    if (!Data.empty()) {
      rt::Error E = Str->copyToDevice(*B, 0, Data.data(), Data.size() * sizeof(T));
      EXPECT_FALSE(E) << E.message();
    }
    return std::move(*B);
  }

  /// `Count` elements of T, every byte set to `Poison`.
  template <typename T> Buffer poisoned(size_t Count, uint8_t Poison) {
    auto B = Dev->allocate(std::max<size_t>(Count * sizeof(T), 16));
    EXPECT_TRUE(B) << B.error().message();
    rt::Error E = Str->fill(*B, 0, Poison, B->size());
    EXPECT_FALSE(E) << E.message();
    return std::move(*B);
  }

  template <typename T> std::vector<T> download(const Buffer &B, size_t Count) {
    std::vector<T> Out(Count);
    rt::Error E = Str->copyToHost(Out.data(), B, 0, Count * sizeof(T));
    EXPECT_FALSE(E) << E.message();
    E = Str->synchronize();
    EXPECT_FALSE(E) << E.message();
    return Out;
  }

  /// Launches and expects success; returns the plan.
  rt::LaunchPlan launch(const rt::Kernel &K, const std::vector<Arg> &Args,
                        const rt::LaunchOptions &Options = {}) {
    auto Start = std::chrono::steady_clock::now();
    auto P = K.launch(*Str, Args, Options);
    EXPECT_TRUE(P) << K.name() << ": " << P.error().message();
    rt::Error E = Str->synchronize();
    EXPECT_FALSE(E) << E.message();
    TableRow &Row = currentRow();
    Row.Millis += std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
    ++Row.Launches;
    Row.Kernel = K.name();
    if (P)
      Row.Variant = P->VariantName + " (" + P->Config + ")";
    return P ? *P : rt::LaunchPlan();
  }

  /// Whether `Plan` runs a fast-path image (entry `..._a16`).
  static bool runsFastPath(const rt::Kernel &K, const rt::LaunchPlan &Plan) {
    for (const rt::VariantInfo &V : K.info().Variants)
      if (V.Index == Plan.Variant && Plan.Image < V.Images.size()) {
        const std::string &E = V.Images[Plan.Image].Entry;
        return E.size() > 4 && E.compare(E.size() - 4, 4, "_a16") == 0;
      }
    return false;
  }

  std::vector<float> randomF32(size_t N, float Lo = -1, float Hi = 1) {
    std::uniform_real_distribution<float> D(Lo, Hi);
    std::vector<float> V(N);
    for (float &X : V)
      X = D(Rng);
    return V;
  }
  /// Random bf16 (or f16, `Half`) bit patterns of values in [Lo, Hi].
  std::vector<uint16_t> random16(size_t N, bool Half, float Lo = -1,
                                 float Hi = 1) {
    std::vector<uint16_t> V(N);
    std::uniform_real_distribution<float> D(Lo, Hi);
    for (auto &B : V)
      B = Half ? rt::floatToHalf(D(Rng)) : rt::floatToBF16(D(Rng));
    return V;
  }
  std::vector<int32_t> randomI32(size_t N, int32_t Lo, int32_t Hi) {
    std::uniform_int_distribution<int32_t> D(Lo, Hi);
    std::vector<int32_t> V(N);
    for (auto &X : V)
      X = D(Rng);
    return V;
  }

  std::mt19937 Rng;
  std::optional<testing::ScopedTrace> Trace;
  std::optional<rt::Device> Dev;
  std::optional<rt::Stream> Str;
};

template <typename To, typename From> To bitCast(From V) {
  static_assert(sizeof(To) == sizeof(From), "sizes differ");
  To R;
  std::memcpy(&R, &V, sizeof(R));
  return R;
}

inline double bf16(uint16_t B) { return rt::bf16ToFloat(B); }
inline double f16(uint16_t B) { return rt::halfToFloat(B); }

/// |Got - Ref| <= Tol * max(|Ref|, Floor); NaN never passes. Reports the
/// first few mismatches, returns the number of failing elements.
inline size_t expectClose(const char *What, const std::vector<double> &Got,
                          const std::vector<double> &Ref, double Tol,
                          double Floor = 1.0) {
  size_t Bad = 0;
  for (size_t I = 0; I < Ref.size(); ++I) {
    double Err = std::fabs(Got[I] - Ref[I]);
    if (std::isfinite(Ref[I]))
      currentRow().MaxRelError = std::max(
          currentRow().MaxRelError, Err / std::max(std::fabs(Ref[I]), Floor));
    bool Ok = std::isinf(Ref[I]) ? Got[I] == Ref[I]
                                 : Err <= Tol * std::max(std::fabs(Ref[I]), Floor);
    if (!Ok && Bad++ < 5)
      ADD_FAILURE() << What << "[" << I << "] = " << Got[I] << ", expected "
                    << Ref[I] << " (tolerance " << Tol << ")";
  }
  if (Bad > 5)
    ADD_FAILURE() << What << ": " << Bad << " mismatches of " << Ref.size();
  return Bad;
}

/// The bytes of `B` from element `From` to `To` (elements of `Size` bytes)
/// all still hold `Poison`.
inline void expectPoison(const char *What, const std::vector<uint8_t> &Bytes,
                         size_t From, size_t To, uint8_t Poison) {
  for (size_t I = From; I < To; ++I)
    if (Bytes[I] != Poison) {
      ADD_FAILURE() << What << ": byte " << I << " (past the logical end, "
                    << From << ") was overwritten: " << int(Bytes[I]);
      return;
    }
}

} // namespace kiln::e2e

#endif
