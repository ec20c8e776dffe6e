//===- FakeDriver.h - Tests of a GPU device against a fake driver -*- C++ -*-===//
//
// What the CUDA and HIP device tests share: the fake drivers' hooks
// (FakeCuda.h), environment variables set for a scope, fake code objects,
// and a fixture over TestUtil.h's DeviceTest.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_RUNTIME_FAKEDRIVER_H
#define KILN_TEST_RUNTIME_FAKEDRIVER_H

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
