// Launches types.tile's kernels through the launchers generated with
// --namespace=t::u, on the host device, against a reference in double on
// fresh random inputs, with poisoned outputs. Prints "ok" lines; any
// mismatch or runtime error prints FAIL and exits 1.
#include "types.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace kiln::rt;

static int fail(const char *What, const Error &E) {
  std::printf("FAIL %s: %s\n", What, E.message().c_str());
  return 1;
}

int main() {
  auto Dev = Device::open("host");
  auto S = Dev->createStream();
  unsigned Seed = std::random_device{}();
  std::printf("seed %u\n", Seed);
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> U(-2, 2);

  // scale: a bf16 array, an f16 scalar, a bool.
  const int N = 1000;
  std::vector<bf16> X(N);
  for (bf16 &V : X)
    V = bf16(U(Gen));
  f16 A(U(Gen));
  float B = U(Gen);
  auto DX = DeviceArray<bf16>::allocate(*Dev, N);
  auto DY = DeviceArray<float>::allocate(*Dev, N + 8);
  if (Error E = DX->upload(*S, X))
    return fail("upload", E);
  for (bool Flag : {false, true}) {
    if (Error E = S->fill(DY->buffer(), 0, 0xff, DY->bytes()))
      return fail("fill", E);
    if (Error E = t::u::scale(*S, *DX, *DY, A, B, Flag, N))
      return fail("scale", E);
    std::vector<float> Y;
    if (Error E = DY->download(*S, Y))
      return fail("download", E);
    if (Error E = S->synchronize())
      return fail("synchronize", E);
    double Worst = 0;
    for (int I = 0; I < N; ++I) {
      double Want = double(float(X[I])) * double(float(A)) + B + (Flag ? 1 : 0);
      double Err = std::fabs(Y[I] - Want);
      if (!(Err <= 1e-5 * (1 + std::fabs(Want)))) {
        std::printf("FAIL scale flag=%d: y[%d] = %g, want %g\n", Flag, I, Y[I],
                    Want);
        return 1;
      }
      Worst = std::fmax(Worst, Err);
    }
    for (int I = N; I < N + 8; ++I)
      if (!std::isnan(Y[I])) {
        std::printf("FAIL scale wrote y[%d] past n\n", I);
        return 1;
      }
    std::printf("ok scale flag=%d max error %.2g\n", Flag, Worst);
  }

  // A pinned variant through LaunchOptions, and an error that comes back as
  // an Error (not an abort): a variant that does not exist.
  LaunchOptions Pin;
  Pin.Config = {{"BLOCK", 128}};
  if (Error E = t::u::scale(*S, *DX, *DY, A, B, false, N, Pin))
    return fail("scale BLOCK=128", E);
  Pin.Config = {{"BLOCK", 96}};
  Error Refused = t::u::scale(*S, *DX, *DY, A, B, false, N, Pin);
  std::printf("refused: %s\n", Refused.message().c_str());

  // all_types: every pointer type (one shared array for the unused ones),
  // renamed parameters reaching the kernel in order.
  auto Z = DeviceArray<int64_t>::allocate(*Dev, 16);
  auto Raw = DeviceArray<uint64_t>::allocate(*Dev, 16);
  const void *P = Raw->buffer().data();
  int32_t Class = int32_t(Gen() % 1000), Stream = int32_t(Gen() % 1000),
          Options = int32_t(Gen() % 1000);
  int64_t New = int64_t(Gen() % 1000) - 500;
  int64_t Want = Class + Stream * 1000LL + Options * 1000000LL + New * 1000000000LL;
  if (Error E = S->fill(Z->buffer(), 0, 0xff, Z->bytes()))
    return fail("fill", E);
  if (Error E = t::u::all_types(
          *S, DevicePtr<int8_t>::fromAddress(P),
          DevicePtr<int16_t>::fromAddress(P), DevicePtr<int32_t>::fromAddress(P),
          DevicePtr<int64_t>::fromAddress(P), DevicePtr<uint8_t>::fromAddress(P),
          DevicePtr<uint16_t>::fromAddress(P),
          DevicePtr<uint32_t>::fromAddress(P), Raw->ptr(),
          DevicePtr<f16>::fromAddress(P), DevicePtr<double>::fromAddress(P),
          DevicePtr<f8e4m3>::fromAddress(P), DevicePtr<f8e5m2>::fromAddress(P),
          true, int8_t(-1), int16_t(-2), int64_t(-3), uint8_t(4), uint16_t(5),
          uint32_t(6), uint64_t(7), 8.5, Class, Stream, Options, New, *Z))
    return fail("all_types", E);
  std::vector<int64_t> Got;
  if (Error E = Z->download(*S, Got))
    return fail("download", E);
  if (Error E = S->synchronize())
    return fail("synchronize", E);
  for (int64_t V : Got)
    if (V != Want) {
      std::printf("FAIL all_types: %lld, want %lld\n", (long long)V,
                  (long long)Want);
      return 1;
    }
  std::printf("ok all_types\n");

  // The C accessor gives the same bytes as the bundle object.
  size_t Size = 0;
  const void *Bytes = kiln_bundle_t__u__types(&Size);
  if (Bytes != t::u::kiln_bundle_types.data() ||
      Size != t::u::kiln_bundle_types.size() || Size == 0) {
    std::printf("FAIL the C accessor\n");
    return 1;
  }
  std::printf("ok bundle %s\n", t::u::kiln_bundle_types.name());
  return 0;
}
