//===- Fp8Test.cpp - fp8 conversions and products end to end -------------===//
//
// fp8.tile on the test device. The references do not use the runtime's
// conversions: an f32/f64 value's fp8 code is found by searching all codes
// for the nearest value (ties to the even code, beyond the largest finite
// value the largest finite value, docs/language.md "Conversions"), and a
// code's value is computed from its fields.
//
//===----------------------------------------------------------------------===//
#include "E2E.h"

#include <limits>
#include <tuple>

using namespace kiln;
using namespace kiln::e2e;

namespace {

struct Format {
  int ExpBits, MantBits, Bias;
  bool HasInf;
};
constexpr Format E4M3{4, 3, 7, false};
constexpr Format E5M2{5, 2, 15, true};

class Fp8 : public E2ETest {
protected:
  /// Count random finite codes of F (-0 included) no larger than Limit in
  /// magnitude.
  std::vector<uint8_t> randomCodes(size_t Count, const Format &F,
                                   double Limit);
};

/// The largest finite code of F.
uint8_t maxCode(const Format &F) { return F.HasInf ? 0x7b : 0x7e; }

/// A code's value from its fields (NaN for the NaN codes).
double decode(uint8_t C, const Format &F) {
  int Exp = (C >> F.MantBits) & ((1 << F.ExpBits) - 1);
  int Mant = C & ((1 << F.MantBits) - 1);
  int MaxExp = (1 << F.ExpBits) - 1;
  double V;
  if (F.HasInf && Exp == MaxExp)
    V = Mant ? std::numeric_limits<double>::quiet_NaN()
             : std::numeric_limits<double>::infinity();
  else if (!F.HasInf && Exp == MaxExp && Mant == (1 << F.MantBits) - 1)
    V = std::numeric_limits<double>::quiet_NaN();
  else if (Exp == 0)
    V = std::ldexp(Mant, 1 - F.Bias - F.MantBits);
  else
    V = std::ldexp(Mant + (1 << F.MantBits), Exp - F.Bias - F.MantBits);
  return (C & 0x80) ? -V : V;
}

std::vector<uint8_t> Fp8::randomCodes(size_t Count, const Format &F,
                                      double Limit) {
  std::uniform_int_distribution<int> D(0, 255);
  std::vector<uint8_t> V(Count);
  for (auto &C : V)
    do
      C = uint8_t(D(Rng));
    while (!std::isfinite(decode(C, F)) || std::fabs(decode(C, F)) > Limit);
  return V;
}

/// The code of `V`: the nearest finite value, ties to the even code,
/// saturating; E5M2 keeps infinities; NaN is a NaN code (sign kept).
uint8_t encode(double V, const Format &F) {
  uint8_t Sign = std::signbit(V) ? 0x80 : 0;
  if (std::isnan(V))
    return Sign | 0x7f;
  if (std::isinf(V) && F.HasInf)
    return Sign | 0x7c;
  double A = std::fabs(V);
  uint8_t MaxCode = maxCode(F);
  if (A >= decode(MaxCode, F))
    return Sign | MaxCode;
  uint8_t Best = 0;
  double BestErr = std::numeric_limits<double>::infinity();
  for (int C = 0; C < 0x80; ++C) {
    double D = decode(uint8_t(C), F);
    if (!std::isfinite(D))
      continue;
    double Err = std::fabs(D - A);
    if (Err < BestErr || (Err == BestErr && (C & 1) == 0)) {
      Best = uint8_t(C);
      BestErr = Err;
    }
  }
  return Sign | Best;
}

/// Interesting values for format F: zeros, infinities, NaN, the largest
/// finite value and beyond, subnormals and the ties between codes.
std::vector<double> edgeValues(const Format &F) {
  std::vector<double> V = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1e30,
                           -1e30, 1e-30};
  for (int C = 0; C < 0x7f; ++C) {
    double D = decode(uint8_t(C), F), Next = decode(uint8_t(C + 1), F);
    if (!std::isfinite(D) || !std::isfinite(Next))
      continue;
    for (double X : {D, (D + Next) / 2, std::nextafter((D + Next) / 2, 0.0),
                     std::nextafter((D + Next) / 2, 1e9)}) {
      V.push_back(X);
      V.push_back(-X);
    }
  }
  double Max = decode(maxCode(F), F);
  for (double X : {Max * 1.03, Max * 1.07, Max * 2, Max * 1000})
    V.push_back(X), V.push_back(-X);
  return V;
}

TEST_F(Fp8, Conversions) {
  auto K = kernel("fp8", "fp8_casts");
  // Edge values of both formats, then random values over many binades.
  std::vector<double> Xd = edgeValues(E4M3);
  for (double X : edgeValues(E5M2))
    Xd.push_back(X);
  std::uniform_real_distribution<double> Exp(-20, 18), Unit(-1, 1);
  while (Xd.size() < 4000)
    Xd.push_back(std::copysign(std::exp2(Exp(Rng)), Unit(Rng)));
  // f64 values just off an E4M3 tie that f32 would round onto it.
  for (double T : {1.0625, 1.1875, 0.0068359375, 300.0})
    Xd.push_back(T + T * 0x1p-40), Xd.push_back(T - T * 0x1p-40);
  size_t N = Xd.size();
  std::vector<float> X(N);
  for (size_t I = 0; I < N; ++I)
    X[I] = float(Xd[I]);
  std::vector<uint8_t> Codes(256);
  for (int C = 0; C < 256; ++C)
    Codes[C] = uint8_t(C);
  Buffer BX = upload(X), BXd = upload(Xd), BC = upload(Codes);
  Buffer Q = poisoned<uint8_t>(N + 16, 0xAB), R = poisoned<uint8_t>(N + 16, 0xAB),
         Qd = poisoned<uint8_t>(N + 16, 0xAB),
         Y4 = poisoned<float>(N, PoisonFloat), Y5 = poisoned<float>(N, PoisonFloat),
         H4 = poisoned<uint16_t>(N, PoisonFloat), I5 = poisoned<int32_t>(N, PoisonInt);
  launch(K, {Arg::pointer(BX), Arg::pointer(BXd), Arg::pointer(Q),
             Arg::pointer(R), Arg::pointer(Qd), Arg::pointer(BC),
             Arg::pointer(BC), Arg::pointer(Y4), Arg::pointer(Y5),
             Arg::pointer(H4), Arg::pointer(I5), Arg::i32(int32_t(N))});
  auto GQ = download<uint8_t>(Q, N + 16), GR = download<uint8_t>(R, N + 16),
       GQd = download<uint8_t>(Qd, N + 16);
  auto GY4 = download<float>(Y4, N), GY5 = download<float>(Y5, N);
  auto GH4 = download<uint16_t>(H4, N);
  auto GI5 = download<int32_t>(I5, N);
  size_t Bad = 0;
  auto expectCode = [&](const char *What, size_t I, double In, uint8_t Got,
                        uint8_t Want) {
    if (Got != Want && Bad++ < 8)
      ADD_FAILURE() << What << "(" << In << ") at " << I << ": got 0x"
                    << std::hex << int(Got) << ", expected 0x" << int(Want)
                    << std::dec;
  };
  for (size_t I = 0; I < N; ++I) {
    expectCode("f32 -> f8e4m3", I, X[I], GQ[I], encode(X[I], E4M3));
    expectCode("f32 -> f8e5m2", I, X[I], GR[I], encode(X[I], E5M2));
    expectCode("f64 -> f8e4m3", I, Xd[I], GQd[I], encode(Xd[I], E4M3));
  }
  EXPECT_EQ(Bad, 0u) << "conversions to fp8 that differ";
  expectPoison("q", GQ, N, N + 16, 0xAB);
  expectPoison("r", GR, N, N + 16, 0xAB);
  for (size_t I = 0; I < N; ++I) {
    uint8_t C = uint8_t(I % 256);
    double V4 = decode(C, E4M3), V5 = decode(C, E5M2);
    auto same = [](double Got, double Want) {
      return std::isnan(Want) ? std::isnan(Got)
                              : Got == Want && std::signbit(Got) == std::signbit(Want);
    };
    EXPECT_TRUE(same(GY4[I], V4)) << "f8e4m3 0x" << std::hex << int(C)
                                  << " -> f32: " << GY4[I] << ", expected " << V4;
    EXPECT_TRUE(same(GY5[I], V5)) << "f8e5m2 0x" << std::hex << int(C)
                                  << " -> f32: " << GY5[I] << ", expected " << V5;
    EXPECT_TRUE(same(rt::halfToFloat(GH4[I]), V4))
        << "f8e4m3 0x" << std::hex << int(C) << " -> f16";
    // Float to integer: toward zero, saturating, NaN -> 0.
    int32_t WantI = std::isnan(V5) ? 0
                    : V5 >= 2147483647.0 ? INT32_MAX
                    : V5 <= -2147483648.0 ? INT32_MIN
                                          : int32_t(V5);
    EXPECT_EQ(GI5[I], WantI) << "f8e5m2 0x" << std::hex << int(C) << " -> i32";
    if (HasFailure())
      break;
  }
}

TEST_F(Fp8, Dots) {
  auto K = kernel("fp8", "fp8_dots");
  // Random finite codes (no NaN or infinity).
  auto A = randomCodes(32 * 64, E4M3, 64), B4 = randomCodes(64 * 32, E4M3, 64),
       B5 = randomCodes(64 * 32, E5M2, 64);
  Buffer BA = upload(A), BB4 = upload(B4), BB5 = upload(B5);
  Buffer C44 = poisoned<float>(1024, PoisonFloat),
         C45 = poisoned<float>(1024, PoisonFloat);
  launch(K, {Arg::pointer(BA), Arg::pointer(BB4), Arg::pointer(BB5),
             Arg::pointer(C44), Arg::pointer(C45)});
  auto G44 = download<float>(C44, 1024), G45 = download<float>(C45, 1024);
  // Products are exact in f32; each of the 64 additions rounds, by at
  // most 2^-24 of a partial sum, itself at most the sum of the terms'
  // magnitudes M: |error| <= 64 * 2^-24 * M (in any order).
  size_t Bad = 0;
  for (int I = 0; I < 32; ++I)
    for (int J = 0; J < 32; ++J) {
      double S44 = 0.5, S45 = 0, M44 = 0.5, M45 = 0;
      for (int Kk = 0; Kk < 64; ++Kk) {
        double X = decode(A[I * 64 + Kk], E4M3);
        double P44 = X * decode(B4[Kk * 32 + J], E4M3);
        double P45 = X * decode(B5[Kk * 32 + J], E5M2);
        S44 += P44, M44 += std::fabs(P44);
        S45 += P45, M45 += std::fabs(P45);
      }
      for (auto [What, Got, Ref, M] :
           {std::tuple{"f8e4m3 x f8e4m3 (acc 0.5)", G44[I * 32 + J], S44, M44},
            std::tuple{"f8e4m3 x f8e5m2", G45[I * 32 + J], S45, M45}})
        if (!(std::fabs(Got - Ref) <= 64 * 0x1p-24 * M) && Bad++ < 5)
          ADD_FAILURE() << What << " dot at " << I << "," << J << ": " << Got
                        << ", expected " << Ref << " (terms' magnitudes " << M
                        << ")";
    }
  EXPECT_EQ(Bad, 0u) << "dot elements out of tolerance";
}

TEST_F(Fp8, LoopDots) {
  auto K = kernel("fp8", "fp8_loop_dots");
  constexpr int Depth = 96;
  // Every finite code, -0 (0x80) and the largest values included.
  auto codes = [&](size_t Count, const Format &F) {
    std::vector<uint8_t> V = randomCodes(Count, F, INFINITY);
    // A -0 and the largest finite code at fixed places, drawn or not.
    V[3] = 0x80, V[Count / 2] = maxCode(F);
    return V;
  };
  auto A4 = codes(32 * Depth, E4M3), B4 = codes(Depth * 32, E4M3),
       A5 = codes(32 * Depth, E5M2), B5 = codes(Depth * 32, E5M2);
  Buffer BA4 = upload(A4), BB4 = upload(B4), BA5 = upload(A5),
         BB5 = upload(B5);
  Buffer C44 = poisoned<float>(1024, PoisonFloat),
         C55 = poisoned<float>(1024, PoisonFloat);
  launch(K, {Arg::pointer(BA4), Arg::pointer(BB4), Arg::pointer(BA5),
             Arg::pointer(BB5), Arg::pointer(C44), Arg::pointer(C55),
             Arg::i32(Depth)});
  auto G44 = download<float>(C44, 1024), G55 = download<float>(C55, 1024);
  // As in Dots: |error| <= (Depth + 1) * 2^-24 * the terms' magnitudes.
  size_t Bad = 0;
  for (int I = 0; I < 32; ++I)
    for (int J = 0; J < 32; ++J) {
      double S44 = 0.25, S55 = 0.25, M44 = 0.25, M55 = 0.25;
      for (int Kk = 0; Kk < Depth; ++Kk) {
        double P44 = decode(A4[I * Depth + Kk], E4M3) *
                     decode(B4[Kk * 32 + J], E4M3);
        double P55 = decode(A5[I * Depth + Kk], E5M2) *
                     decode(B5[Kk * 32 + J], E5M2);
        S44 += P44, M44 += std::fabs(P44);
        S55 += P55, M55 += std::fabs(P55);
      }
      for (auto [What, Got, Ref, M] :
           {std::tuple{"f8e4m3 x f8e4m3", G44[I * 32 + J], S44, M44},
            std::tuple{"f8e5m2 x f8e5m2", G55[I * 32 + J], S55, M55}})
        if (!(std::fabs(Got - Ref) <= (Depth + 1) * 0x1p-24 * M) &&
            Bad++ < 5)
          ADD_FAILURE() << What << " loop dot at " << I << "," << J << ": "
                        << Got << ", expected " << Ref
                        << " (terms' magnitudes " << M << ")";
    }
  EXPECT_EQ(Bad, 0u) << "dot elements out of tolerance";
}

TEST_F(Fp8, DotOfEveryCode) {
  auto K = kernel("fp8", "fp8_codes");
  std::vector<uint8_t> A(256 * 32, 0), B4(32 * 32, 0), B5(32 * 32, 0);
  for (int I = 0; I < 256; ++I)
    A[I * 32] = uint8_t(I);
  for (int I = 0; I < 32; ++I)
    B4[I * 32 + I] = 0x38, B5[I * 32 + I] = 0x3c; // 1.0
  Buffer BA = upload(A), BB4 = upload(B4), BB5 = upload(B5);
  Buffer C4 = poisoned<float>(256 * 32, PoisonFloat),
         C5 = poisoned<float>(256 * 32, PoisonFloat);
  launch(K, {Arg::pointer(BA), Arg::pointer(BA), Arg::pointer(BB4),
             Arg::pointer(BB5), Arg::pointer(C4), Arg::pointer(C5)});
  auto G4 = download<float>(C4, 256 * 32), G5 = download<float>(C5, 256 * 32);
  for (int I = 0; I < 256; ++I)
    for (auto [What, Got, F] : {std::tuple{"f8e4m3", G4[I * 32], E4M3},
                                std::tuple{"f8e5m2", G5[I * 32], E5M2}}) {
      double Want = decode(uint8_t(I), F);
      // A NaN stays a NaN; an infinity may become a NaN (gfx942's FNUZ
      // MFMA has no infinity, docs/codegen-gpu.md "fp8"); the sign of a
      // zero product is not kept everywhere.
      bool Ok = std::isnan(Want)   ? std::isnan(Got)
                : std::isinf(Want) ? Got == Want || std::isnan(Got)
                                   : Got == Want;
      EXPECT_TRUE(Ok) << What << " code 0x" << std::hex << I << std::dec
                      << " times 1: " << Got << ", expected " << Want;
    }
}

} // namespace
