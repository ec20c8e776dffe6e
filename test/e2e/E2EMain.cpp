//===- E2EMain.cpp - main() of KilnE2ETests: the test device --------------===//
//
// Opens the device of $KILN_E2E_DEVICE once (default `host`). When a GPU is
// asked for and none opens (no driver, no device), every test is skipped:
// one line says why and the exit code is 77, which ctest's KilnE2ETestsGPU
// takes as "skipped" (SKIP_RETURN_CODE) and run-gpu-tests.sh reports as such.
//
//===----------------------------------------------------------------------===//
#include "E2E.h"

#include <cstdio>
#include <cstdlib>

using namespace kiln;

namespace {

/// The exit code of a run whose device is not there: every test skipped.
constexpr int ExitSkipped = 77;

bool endsWith(const std::string &S, const char *Suffix) {
  size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

} // namespace

std::optional<rt::Device> &e2e::testDevice() {
  static std::optional<rt::Device> D;
  return D;
}

std::string e2e::gpuSkipReason(const std::string &Suite,
                               const std::string &Name) {
  // Tests that cannot run on a GPU yet, and why (docs/testing-gpu.md).
  struct Entry {
    const char *Test, *Why;
  };
  static const Entry NotOnGpu[] = {
      {"Examples.DebugDumpPrint",
       "kernel print on a GPU goes to the CUDA driver's printf (standard "
       "output), not to Device::setPrintHandler (docs/runtime.md)"},
  };
  std::string Full = Suite + "." + Name;
  for (const Entry &E : NotOnGpu)
    if (Full == E.Test)
      return E.Why;
  if (endsWith(Name, "Trap") && onRealGpu() &&
      ::testing::UnitTest::GetInstance()->test_to_run_count() != 1)
    return "a kernel that traps leaves the CUDA context unusable for the rest "
           "of the process, so on a GPU this test runs only as the one test "
           "of its process: KILN_E2E_DEVICE=cuda KilnE2ETests "
           "--gtest_filter=" +
           Full + " (ctest: KilnE2ETestsGPU." + Full +
           "; run-gpu-tests.sh: step traps)";
  return "";
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string Spec = e2e::deviceSpec();
  rt::Expected<rt::Device> D = rt::Device::open(Spec);
  bool Listing = GTEST_FLAG_GET(list_tests);
  if (!D) {
    if (Listing)
      return RUN_ALL_TESTS();
    bool Gpu = Spec != "host";
    std::printf("KilnE2ETests: %s (KILN_E2E_DEVICE=%s): %s\n",
                Spec.compare(0, 4, "cuda") == 0 ? "no CUDA device"
                                                : "no such device",
                Spec.c_str(), D.error().message().c_str());
    if (!Gpu)
      return 1;
    std::printf("KilnE2ETests: every test skipped (exit code %d)\n",
                ExitSkipped);
    return ExitSkipped;
  }
  e2e::testDevice() = *D;
  // Launches take the default variant and nothing is written to the
  // user's cache, unless asked (the Tuning tests ask per launch).
  if (!std::getenv("KILN_TUNING"))
    rt::setTuningMode(rt::TuningMode::Off);
  if (!std::getenv("KILN_CACHE_DIR"))
    rt::setTuningDatabase(":memory:");
  if (!Listing)
    std::printf("KilnE2ETests: device %s; bundles from %s\n",
                D->description().c_str(), e2e::bundleDir().c_str());
  std::fflush(stdout);
  int Code = RUN_ALL_TESTS();
  e2e::testDevice().reset();
  return Code;
}
