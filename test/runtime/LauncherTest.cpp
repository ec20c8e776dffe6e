//===- LauncherTest.cpp - kiln/launcher.h ---------------------------------===//
//
// What generated launchers stand on: the element types, DevicePtr and
// DeviceArray, Stream::device, and EmbeddedBundle (one load per device,
// also when threads race for it; release; errors as values).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "kiln/launcher.h"

#include <thread>
#include <type_traits>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

/// The bytes of a bundle with the vadd test kernel (z = x + y, three
/// variants), alive for the whole test process as a generated array is.
const std::string &vaddBundleBytes() {
  static const std::string Bytes = buildBundle({{vaddKernel()}});
  return Bytes;
}

LaunchOptions untuned() {
  LaunchOptions O;
  O.Tuning = TuningMode::Off;
  return O;
}

TEST(LauncherTypes, Conversions) {
  EXPECT_EQ(bf16(1.5f).bits, 0x3FC0);
  EXPECT_EQ(float(bf16::fromBits(0x3FC0)), 1.5f);
  EXPECT_EQ(f16(1.0f).bits, 0x3C00);
  EXPECT_EQ(float(f16::fromBits(0xC000)), -2.0f);
  EXPECT_EQ(float(f8e4m3(448.0f)), 448.0f);
  EXPECT_EQ(float(f8e4m3(1e6f)), 448.0f) << "E4M3 saturates";
  EXPECT_EQ(float(f8e5m2(-0.5f)), -0.5f);
  EXPECT_EQ(ElementType<bf16>::value, ScalarType::BF16);
  EXPECT_EQ(ElementType<uint16_t>::value, ScalarType::U16);
  EXPECT_EQ(ElementType<int64_t>::value, ScalarType::I64);
  static_assert(IsElementType<f8e5m2>::value && !IsElementType<char>::value &&
                    !IsElementType<long double>::value,
                "the element types and nothing else");
  static_assert(!std::is_convertible_v<DevicePtr<float>, DevicePtr<bf16>> &&
                    !std::is_convertible_v<DevicePtr<uint16_t>, DevicePtr<f16>> &&
                    !std::is_convertible_v<DeviceArray<float>, DevicePtr<double>> &&
                    std::is_convertible_v<DeviceArray<float>, DevicePtr<float>> &&
                    !std::is_convertible_v<float, f16> &&
                    !std::is_convertible_v<Buffer, DevicePtr<float>>,
                "typed pointers convert only to their own type");
}

TEST_F(HostTest, DevicePtrOffsets) {
  auto B = Dev->allocate(64);
  ASSERT_TRUE(B);
  DevicePtr<float> P(*B);
  EXPECT_EQ(P.address(), B->data());
  EXPECT_TRUE(P.arg().isPointer());
  EXPECT_EQ(P.arg().type(), ScalarType::F32);
  EXPECT_TRUE(P.arg().hasElementType());
  EXPECT_EQ(P.arg().bufferBytes(), 64u);
  EXPECT_EQ(P.arg().deviceTag(), B->deviceTag());
  DevicePtr<float> Q = DevicePtr<float>(*B, 3) + 2;
  EXPECT_EQ(Q.address(), static_cast<char *>(B->data()) + 20);
  EXPECT_EQ(Q.arg().bufferBytes(), 44u);
  EXPECT_EQ(uint64_t(uintptr_t(Q.address())), Q.arg().bits());
  // Past the end: no bytes left (the launch's checks see an empty range).
  EXPECT_EQ((P + 100).arg().bufferBytes(), 0u);
  int Host = 0;
  auto Raw = DevicePtr<int32_t>::fromAddress(&Host);
  EXPECT_EQ(Raw.address(), &Host);
  EXPECT_EQ(Raw.arg().deviceTag(), nullptr);
  EXPECT_EQ(DevicePtr<double>().address(), nullptr);
  // A scalar does not move.
  EXPECT_EQ(Arg::i32(5).advanced(8).bits(), 5u);
}

TEST_F(HostTest, DeviceArrays) {
  auto A = DeviceArray<int32_t>::allocate(*Dev, 10);
  ASSERT_TRUE(A) << A.error().message();
  EXPECT_EQ(A->size(), 10u);
  EXPECT_EQ(A->bytes(), 40u);
  std::vector<int32_t> In = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Out;
  ASSERT_FALSE(A->upload(*Str, In));
  ASSERT_FALSE(A->upload(*Str, In.data(), 2, 8)); // elements 8, 9 = 1, 2
  ASSERT_FALSE(A->download(*Str, Out));
  ASSERT_FALSE(Str->synchronize());
  EXPECT_EQ(Out, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 1, 2}));
  Error Past = A->upload(*Str, In.data(), 3, 8);
  EXPECT_EQ(Past.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(Past.message().find("outside the array's 10"), std::string::npos)
      << Past.message();
  int32_t One;
  EXPECT_EQ(A->download(*Str, &One, 1, 11).code(), ErrorCode::InvalidArgument);
  auto Huge = DeviceArray<double>::allocate(*Dev, SIZE_MAX / 4);
  ASSERT_FALSE(Huge);
  EXPECT_EQ(Huge.error().code(), ErrorCode::InvalidArgument);
  DevicePtr<int32_t> P = *A;
  EXPECT_EQ(P.address(), A->buffer().data());
}

TEST_F(HostTest, StreamDevice) {
  auto D = Str->device();
  ASSERT_TRUE(D) << D.error().message();
  EXPECT_EQ(D->impl(), Dev->impl());
  Stream Moved = std::move(*Str);
  auto None = Str->device();
  ASSERT_FALSE(None);
  EXPECT_EQ(None.error().code(), ErrorCode::InvalidArgument);
  EXPECT_NE(None.error().message().find("the stream is empty"),
            std::string::npos);
  Str.emplace(std::move(Moved));
}

TEST_F(HostTest, EmbeddedBundleLaunches) {
  static const EmbeddedBundle EB(vaddBundleBytes().data(),
                                 vaddBundleBytes().size(), "vadd.tile");
  EXPECT_STREQ(EB.name(), "vadd.tile");
  const int N = 37;
  auto X = DeviceArray<float>::allocate(*Dev, N);
  auto Y = DeviceArray<float>::allocate(*Dev, N);
  auto Z = DeviceArray<float>::allocate(*Dev, N);
  std::vector<float> HX(N), HY(N), HZ;
  for (int I = 0; I < N; ++I)
    HX[I] = float(I), HY[I] = 0.25f * float(I);
  ASSERT_FALSE(X->upload(*Str, HX));
  ASSERT_FALSE(Y->upload(*Str, HY));
  Error E = EB.launch(*Str, "vadd",
                      {X->ptr().arg(), Y->ptr().arg(), Z->ptr().arg(),
                       Arg::i32(N)},
                      untuned());
  ASSERT_FALSE(E) << E.message();
  ASSERT_FALSE(Z->download(*Str, HZ));
  ASSERT_FALSE(Str->synchronize());
  for (int I = 0; I < N; ++I)
    EXPECT_EQ(HZ[I], 1.25f * float(I)) << I;

  // One module per device: the same one again, a new one after release.
  auto M1 = EB.module(*Dev), M2 = EB.module(*Dev);
  ASSERT_TRUE(M1 && M2);
  EXPECT_EQ(&M1->bundle(), &M2->bundle());
  EB.release(*Dev);
  auto M3 = EB.module(*Dev);
  ASSERT_TRUE(M3);
  EXPECT_NE(&M3->bundle(), &M1->bundle());
  // Another device gets its own.
  auto Other = Device::open("host");
  ASSERT_TRUE(Other);
  auto M4 = EB.module(*Other);
  ASSERT_TRUE(M4);
  EXPECT_NE(&M4->bundle(), &M3->bundle());
  EB.release(*Other);

  // Errors come back as values: an unknown kernel, a wrong element type.
  auto K = EB.kernel(*Dev, "vad");
  ASSERT_FALSE(K);
  EXPECT_EQ(K.error().code(), ErrorCode::NotFound);
  EXPECT_NE(K.error().message().find("did you mean 'vadd'"), std::string::npos)
      << K.error().message();
  auto D = DeviceArray<double>::allocate(*Dev, N);
  Error Wrong = EB.launch(*Str, "vadd",
                          {D->ptr().arg(), Y->ptr().arg(), Z->ptr().arg(),
                           Arg::i32(N)},
                          untuned());
  EXPECT_EQ(Wrong.code(), ErrorCode::LaunchRefused) << Wrong.message();
  EXPECT_NE(Wrong.message().find("f64"), std::string::npos) << Wrong.message();
  Stream Empty;
  EXPECT_EQ(EB.launch(Empty, "vadd", {}).code(), ErrorCode::InvalidArgument);
  Device Kept = *Dev, Moved = std::move(Kept);
  auto NoDevice = EB.module(Kept);
  ASSERT_FALSE(NoDevice);
  EXPECT_EQ(NoDevice.error().message(), "vadd.tile: the device is empty");
  EB.release(*Dev); // the cached module would keep the device open
}

TEST_F(HostTest, EmbeddedBundleFirstLaunchesRace) {
  // Threads launch at once through a bundle no one has loaded yet, each on
  // a stream of its own: every launch works and there is one module.
  static const EmbeddedBundle EB(vaddBundleBytes().data(),
                                 vaddBundleBytes().size(), "race.tile");
  const int N = 64, Threads = 8;
  std::vector<std::thread> Pool;
  std::vector<std::string> Failures(Threads);
  std::vector<const Bundle *> Seen(Threads, nullptr);
  for (int T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      auto S = Dev->createStream();
      auto X = DeviceArray<float>::allocate(*Dev, N);
      if (!S || !X) {
        Failures[T] = "setup";
        return;
      }
      std::vector<float> H(N, float(T)), Out;
      (void)X->upload(*S, H);
      if (Error E = EB.launch(*S, "vadd",
                              {X->ptr().arg(), X->ptr().arg(), X->ptr().arg(),
                               Arg::i32(N)},
                              untuned())) {
        Failures[T] = E.message();
        return;
      }
      (void)X->download(*S, Out);
      (void)S->synchronize();
      for (float V : Out)
        if (V != 2.0f * float(T))
          Failures[T] = "wrong result";
      if (auto M = EB.module(*Dev))
        Seen[T] = &M->bundle();
    });
  for (std::thread &T : Pool)
    T.join();
  for (int T = 0; T < Threads; ++T) {
    EXPECT_EQ(Failures[T], "") << "thread " << T;
    EXPECT_EQ(Seen[T], Seen[0]) << "thread " << T;
  }
  EB.release(*Dev);
}

TEST_F(HostTest, EmbeddedBundleCorrupt) {
  static const char Junk[] = "not a bundle at all";
  static const EmbeddedBundle EB(Junk, sizeof(Junk) - 1, "junk.tile");
  auto B = EB.bundle();
  ASSERT_FALSE(B);
  EXPECT_EQ(B.error().code(), ErrorCode::InvalidBundle);
  EXPECT_NE(B.error().message().find("junk.tile"), std::string::npos)
      << B.error().message();
  // The failure is remembered, and every use reports it.
  Error E = EB.launch(*Str, "vadd", {});
  EXPECT_EQ(E.code(), ErrorCode::InvalidBundle);
  EXPECT_EQ(E.message(), B.error().message());
}

} // namespace
