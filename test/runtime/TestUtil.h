//===- TestUtil.h - Shared helpers of the runtime tests ---------*- C++ -*-===//
#ifndef KILN_TEST_RUNTIME_TESTUTIL_H
#define KILN_TEST_RUNTIME_TESTUTIL_H

#include "BundleBuilder.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace kiln::test {

/// A fixture with a device, a stream, and helpers to load bundles and move
/// data.
class DeviceTest : public ::testing::Test {
protected:
  /// Opens `Spec`, with a stream.
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
    rt::Error E = Str->copyToDevice(*B, 0, Data.data(), Data.size() * sizeof(T));
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

  std::optional<rt::Device> Dev;
  std::optional<rt::Stream> Str;
};

/// The host device, with a stream.
class HostTest : public DeviceTest {
protected:
  void SetUp() override { open("host"); }
};

/// A fresh temporary directory, removed at exit of the test process.
inline std::string tempDir() {
  char Template[] = "/tmp/kiln-rt-test-XXXXXX";
  const char *D = mkdtemp(Template);
  return D ? D : "/tmp";
}

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_TESTUTIL_H
