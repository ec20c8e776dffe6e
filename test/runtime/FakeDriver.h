//===- FakeDriver.h - Tests of a GPU device against a fake driver -*- C++ -*-===//
//
// What the CUDA and HIP device tests share: the fake drivers' hooks
// (FakeCuda.h), environment variables set for a scope, fake code objects,
// and a fixture over TestUtil.h's DeviceTest.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_RUNTIME_FAKEDRIVER_H
#define KILN_TEST_RUNTIME_FAKEDRIVER_H

#include "../../runtime/lib/CudaDevice.h"
#include "../../runtime/lib/HipDevice.h"
#include "FakeCuda.h"
#include "TestUtil.h"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace kiln::test {

/// Sets an environment variable for the life of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const char *Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      setenv(Name, Value, 1);
    else
      unsetenv(Name);
  }
  ~ScopedEnv() {
    if (Saved)
      setenv(Name, Saved->c_str(), 1);
    else
      unsetenv(Name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *Name;
  std::optional<std::string> Saved;
};

/// A fake driver's test hooks (the same library instance the runtime
/// loads: dlopen of one path gives one handle).
struct FakeHooks {
  explicit FakeHooks(const char *Path) {
    Handle = dlopen(Path, RTLD_NOW | RTLD_LOCAL);
    if (!Handle)
      return;
    LastLaunch = reinterpret_cast<KilnFakeLastLaunchFn>(
        dlsym(Handle, "kiln_fake_cuda_last_launch"));
    LaunchCount = reinterpret_cast<KilnFakeLaunchCountFn>(
        dlsym(Handle, "kiln_fake_cuda_launch_count"));
    Live = reinterpret_cast<KilnFakeLiveFn>(
        dlsym(Handle, "kiln_fake_cuda_live"));
  }
  void *Handle = nullptr;
  KilnFakeLastLaunchFn LastLaunch = nullptr;
  KilnFakeLaunchCountFn LaunchCount = nullptr;
  KilnFakeLiveFn Live = nullptr;
};

/// A fake code object defining `Functions` ("vadd_v0 params=4 ...").
inline std::string fakeImage(const std::vector<std::string> &Functions,
                             const std::string &Header = "") {
  std::string Out = "KILNFAKE\n" + Header;
  for (const std::string &F : Functions)
    Out += F + "\n";
  return Out + "END\n";
}

/// Images of vadd's three variants in one fake code object; `Extra` is
/// appended to each function's line (" action=fail").
inline std::string vaddFunctions(const std::string &Extra = "") {
  return fakeImage({"vadd_v0 params=4 action=vadd" + Extra,
                    "vadd_v1 params=4 action=vadd" + Extra,
                    "vadd_v2 params=4 action=vadd" + Extra});
}

/// A CUDA code object (a cubin by default) for the fake CUDA driver.
inline TestImage cudaImage(std::string Bytes, std::string Arch = "sm_90",
                           uint16_t Kind = rt::detail::kImageCubin) {
  TestImage I;
  I.Triple = "nvptx64-nvidia-cuda";
  I.Arch = std::move(Arch);
  I.Target = I.Arch;
  I.ImageKind = Kind;
  I.OffloadKind = 2; // OFK_Cuda
  I.Bytes = std::move(Bytes);
  return I;
}

/// An AMD code object for the fake HIP: an ELF magic, then the fake's text.
inline TestImage amdImage(const std::string &Fake, std::string Arch = "gfx942",
                          nlohmann::json Requires = nullptr) {
  TestImage I;
  I.Triple = "amdgcn-amd-amdhsa";
  I.Arch = std::move(Arch);
  I.Target = I.Arch;
  I.ImageKind = rt::detail::kImageObject;
  I.OffloadKind = 3; // OFK_HIP
  I.Bytes = "\x7f" "ELF" + Fake;
  I.Requires = std::move(Requires);
  return I;
}

/// A device of a fake driver, with a stream (DeviceTest::open) and the
/// fake's hooks.
class FakeDriverTest : public DeviceTest {
protected:
  explicit FakeDriverTest(const char *FakePath) : Hooks(FakePath) {}

  void SetUp() override {
    ASSERT_TRUE(Hooks.Handle) << dlerror();
    ASSERT_TRUE(Hooks.LastLaunch && Hooks.LaunchCount && Hooks.Live);
  }

  KilnFakeLaunch lastLaunch() {
    KilnFakeLaunch L = {};
    EXPECT_TRUE(Hooks.LastLaunch(&L));
    return L;
  }

  FakeHooks Hooks;
};

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_FAKEDRIVER_H
