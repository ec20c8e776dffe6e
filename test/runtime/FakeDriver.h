//===- FakeDriver.h - Tests of a GPU device against a fake driver -*- C++ -*-===//
//
// What the CUDA and HIP device tests share: the fake drivers' hooks
// (FakeCuda.h), environment variables set for a scope, fake code objects,
// and a fixture that opens a device with a stream and moves data.
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

/// A device of a fake driver, with a stream.
class FakeDriverTest : public ::testing::Test {
protected:
  explicit FakeDriverTest(const char *FakePath) : Hooks(FakePath) {}

  void SetUp() override {
    ASSERT_TRUE(Hooks.Handle) << dlerror();
    ASSERT_TRUE(Hooks.LastLaunch && Hooks.LaunchCount && Hooks.Live);
  }

  /// Opens `Spec` on the fake, with a stream.
  void open(const char *Spec) {
    auto D = rt::Device::open(Spec);
    ASSERT_TRUE(D) << D.error().message();
    Dev.emplace(*D);
    auto S = Dev->createStream();
    ASSERT_TRUE(S) << S.error().message();
    Str.emplace(std::move(*S));
  }

  rt::Expected<rt::Module> load(const BundleSpec &Spec) {
    std::string Bytes = buildBundle(Spec);
    return Dev->loadModuleMemory(Bytes.data(), Bytes.size(), "test.kpack");
  }

  template <typename T> rt::Buffer upload(const std::vector<T> &Data) {
    auto B = Dev->allocate(Data.size() * sizeof(T));
    EXPECT_TRUE(B) << B.error().message();
    if (!B)
      return rt::Buffer();
    rt::Error E =
        Str->copyToDevice(*B, 0, Data.data(), Data.size() * sizeof(T));
    EXPECT_FALSE(E) << E.message();
    return std::move(*B);
  }

  template <typename T> std::vector<T> download(const rt::Buffer &B) {
    std::vector<T> Out(B.size() / sizeof(T));
    rt::Error E = Str->copyToHost(Out.data(), B, 0, Out.size() * sizeof(T));
    EXPECT_FALSE(E) << E.message();
    E = Str->synchronize();
    EXPECT_FALSE(E) << E.message();
    return Out;
  }

  KilnFakeLaunch lastLaunch() {
    KilnFakeLaunch L = {};
    EXPECT_TRUE(Hooks.LastLaunch(&L));
    return L;
  }

  FakeHooks Hooks;
  std::optional<rt::Device> Dev;
  std::optional<rt::Stream> Str;
};

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_FAKEDRIVER_H
