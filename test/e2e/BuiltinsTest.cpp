//===- BuiltinsTest.cpp - test/e2e/builtins.tile end to end --------------===//
#include "E2E.h"

#include <algorithm>
#include <climits>
#include <functional>

using namespace kiln;
using namespace kiln::e2e;

namespace {

class Builtins : public E2ETest {};

constexpr size_t Pad = 33;

double sigmoidRef(double X) { return 1 / (1 + std::exp(-X)); }

const std::vector<std::function<double(double)>> &mathRefs() {
  static const std::vector<std::function<double(double)>> R = {
      [](double x) { return std::exp(x); },
      [](double x) { return std::exp2(x); },
      [](double x) { return std::log(x); },
      [](double x) { return std::log2(x); },
      [](double x) { return std::sqrt(x); },
      [](double x) { return 1 / std::sqrt(x); },
      [](double x) { return std::sin(x); },
      [](double x) { return std::cos(x); },
      [](double x) { return std::tanh(x); },
      [](double x) { return std::erf(x); },
      sigmoidRef,
      [](double x) { return std::fabs(x); },
      [](double x) { return std::floor(x); },
      [](double x) { return std::ceil(x); },
  };
  return R;
}
const char *MathNames[] = {"exp",  "exp2", "log",     "log2", "sqrt",
                           "rsqrt", "sin", "cos",     "tanh", "erf",
                           "sigmoid", "abs", "floor", "ceil", "fma"};
// Functions whose f32 bound is absolute (log near 1, sin, cos): judged with
// a floor of 1 on the magnitude.
bool absoluteBound(size_t K) { return K == 2 || K == 3 || K == 6 || K == 7; }

TEST_F(Builtins, MathF32) {
  auto K = kernel("builtins", "math_f32");
  struct Case { size_t N; float Range; };
  for (Case C : {Case{1, 8}, Case{255, 8}, Case{257, 8}, Case{1000, 8},
                 Case{1000, 60}}) {
    size_t N = C.N;
    SCOPED_TRACE("n = " + std::to_string(N) + ", |x| <= " + std::to_string(C.Range));
    auto S = randomF32(N, -C.Range, C.Range), P = randomF32(N, 1e-3f, 1e4f);
    // Small magnitudes, where an expansion like (1 - e^-2x) / (1 + e^-2x)
    // cancels.
    const float Small[] = {1e-3f, -1.0414e-3f, 1e-4f, 3e-5f, -1e-6f, 0.05f,
                           -0.2f, 0.0f};
    for (size_t I = 0; I < N && I < 8 && N > 255; ++I)
      S[I] = Small[I];
    Buffer BS = upload(S), BP = upload(P);
    Buffer BO = poisoned<float>(15 * N + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BS), Arg::pointer(BP), Arg::pointer(BO),
               Arg::i32(N)});
    auto O = download<float>(BO, 15 * N);
    for (size_t F = 0; F < 15; ++F) {
      SCOPED_TRACE(MathNames[F]);
      std::vector<double> G(O.begin() + F * N, O.begin() + (F + 1) * N), R(N);
      for (size_t I = 0; I < N; ++I) {
        bool UsesP = F >= 2 && F <= 5;
        R[I] = F == 14 ? std::fma(S[I], P[I], S[I]) // fmaf: one rounding
                       : mathRefs()[F](UsesP ? P[I] : S[I]);
      }
      // The bound (relative error below 1e-5), and fma correctly
      // rounded (docs/language.md 9.4): exact.
      expectClose(MathNames[F], G, R, F == 14 ? 0.0 : 1e-5,
                  absoluteBound(F) ? 1.0 : 1e-30);
      // The documented f32 bounds of docs/language.md 9.4 (a little slack
      // for the float64 reference of a float32 input).
      static const double DocBound[15] = {
          5e-6, 1e-6, 1e-6, 1e-6, 1.2e-7, 2.4e-7, 2e-6, 2e-6,
          5e-6, 5e-6, 5e-6, 0, 0, 0, 0};
      std::string What = std::string(MathNames[F]) + " (docs/language.md 9.4 bound)";
      expectClose(What.c_str(), G, R, DocBound[F] * 1.01,
                  absoluteBound(F) ? 1.0 : 1e-30);
    }
    expectPoison("out", download<uint8_t>(BO, (15 * N + Pad) * 4), 15 * N * 4,
                 (15 * N + Pad) * 4, PoisonFloat);
  }
  // From 2^24 up, sin and cos are some value in [-1, 1] (the reduction
  // would need pi to many more bits); they were 2e20 and -1.5e22 at 1e10.
  std::vector<float> Huge = {1e10f, -1e30f, 3e38f, 16777216.0f, -3e7f};
  size_t N = Huge.size();
  Buffer BS = upload(Huge), BP = upload(std::vector<float>(N, 1.0f));
  Buffer BO = poisoned<float>(15 * N, PoisonFloat);
  launch(K,
         {Arg::pointer(BS), Arg::pointer(BP), Arg::pointer(BO), Arg::i32(N)});
  auto O = download<float>(BO, 15 * N);
  for (size_t I = 0; I < N; ++I)
    for (size_t F : {6, 7})
      EXPECT_LE(std::fabs(O[F * N + I]), 1.0f)
          << MathNames[F] << "(" << Huge[I] << ") = " << O[F * N + I];
}

// f64 references: long double (64-bit significands: 2^-64 relative, far
// below the bounds judged), but sqrt, rsqrt (a square root, then a
// reciprocal) and fma in double, rounded as the kernel must round them
// (long double then double would round twice).
double mathRefF64(size_t F, double X, double P) {
  using LD = long double;
  static const std::function<LD(LD, LD)> R[15] = {
      [](LD X, LD) { return expl(X); },
      [](LD X, LD) { return exp2l(X); },
      [](LD, LD P) { return logl(P); },
      [](LD, LD P) { return log2l(P); },
      nullptr,
      nullptr,
      [](LD X, LD) { return sinl(X); },
      [](LD X, LD) { return cosl(X); },
      [](LD X, LD) { return tanhl(X); },
      [](LD X, LD) { return erfl(X); },
      [](LD X, LD) { return 1 / (1 + expl(-X)); },
      [](LD X, LD) { return fabsl(X); },
      [](LD X, LD) { return floorl(X); },
      [](LD X, LD) { return ceill(X); },
      nullptr};
  if (F == 4)
    return std::sqrt(P);
  if (F == 5)
    return 1 / std::sqrt(P);
  if (F == 14)
    return std::fma(X, P, X);
  return double(R[F](X, P));
}

TEST_F(Builtins, MathF64) {
  auto K = kernel("builtins", "math_f64");
  // Inputs that take the expansions' other branches or edges: tanh's
  // series below 1/4, erf's two pieces at 2 and its end at 6, exp near
  // over- and underflow, log of subnormals and around 1.
  const double EdgesS[] = {0.25, -0.25, 0.2499999, 2.0, -2.0, 1.9999999, 6.0,
                           -6.5, 1e-300, -1e-8, 3e-5, 709.5, -700.0, -744.0,
                           1e-17, 0.5, 1e15, -3e14,
                           // in [2^51, 2^52): |r| up to 1.46, not pi/4
                           4497774597912257.5, -3377699720527872.5};
  const double EdgesP[] = {4.9406564584124654e-324,
                           1e-310,
                           2.2250738585072014e-308,
                           2.2250738585072009e-308,
                           1.0000000000000002,
                           0.99999999999999989,
                           1.0,
                           1.4142135623730951,
                           1.4142135623730949,
                           0.5,
                           1e300,
                           1e-300,
                           2.0,
                           3.0,
                           1e-5,
                           7.0,
                           1e10,
                           0.125,
                           9.0,
                           0.75};
  struct Case {
    size_t N;
    double Range;
  };
  for (Case C : {Case{1, 8}, Case{257, 8}, Case{1000, 8}, Case{1000, 60},
                 Case{1000, 700}}) {
    size_t N = C.N;
    SCOPED_TRACE("n = " + std::to_string(N) +
                 ", |x| <= " + std::to_string(C.Range));
    std::uniform_real_distribution<double> DS(-C.Range, C.Range), DP(1e-3, 1e4),
        DE(-690, 690);
    std::vector<double> S(N), P(N);
    for (size_t I = 0; I < N; ++I) {
      S[I] = DS(Rng);
      // Half the positive inputs spread over the whole normal range.
      P[I] = I % 2 ? DP(Rng) : std::exp(DE(Rng));
    }
    for (size_t I = 0; I < N && I < std::size(EdgesS) && N > 255; ++I) {
      S[I] = EdgesS[I];
      P[I] = EdgesP[I];
    }
    Buffer BS = upload(S), BP = upload(P);
    Buffer BO = poisoned<double>(15 * N + Pad, PoisonFloat);
    launch(K,
           {Arg::pointer(BS), Arg::pointer(BP), Arg::pointer(BO), Arg::i32(N)});
    auto O = download<double>(BO, 15 * N);
    for (size_t F = 0; F < 15; ++F) {
      SCOPED_TRACE(MathNames[F]);
      std::vector<double> G(O.begin() + F * N, O.begin() + (F + 1) * N), R(N);
      for (size_t I = 0; I < N; ++I)
        R[I] = mathRefF64(F, S[I], P[I]);
      // docs/language.md 9.4: + - * / sqrt fma correctly rounded (rsqrt
      // is a square root and a reciprocal, two roundings), the others
      // within 1e-13 relative; sin and cos absolute, as in f32.
      static const double DocBound[15] = {1e-13, 1e-13, 1e-13, 1e-13, 0,
                                          0,     1e-13, 1e-13, 1e-13, 1e-13,
                                          1e-13, 0,     0,     0,     0};
      double Floor = F == 6 || F == 7 ? 1.0 : 1e-300;
      std::string What =
          std::string(MathNames[F]) + " (docs/language.md 9.4 bound)";
      expectClose(What.c_str(), G, R, DocBound[F] * 1.01, Floor);
      // What the expansions reach (docs/codegen-gpu.md "Math": the largest
      // errors measured against 40-digit references, about twice over): a
      // few ulps. A looser result is a regression even within the
      // contract.
      static const double Reached[15] = {3e-16, 3e-16, 6e-16, 6e-16, 0,
                                         0,     3e-16, 3e-16, 8e-16, 6e-16,
                                         4e-16, 0,     0,     0,     0};
      What = std::string(MathNames[F]) + " (the expansions' few ulps)";
      expectClose(What.c_str(), G, R, Reached[F] * 1.01, Floor);
    }
    expectPoison("out", download<uint8_t>(BO, (15 * N + Pad) * 8), 15 * N * 8,
                 (15 * N + Pad) * 8, PoisonFloat);
  }
}

// C99 Annex F's special values through the f64 expansions: infinities,
// NaN, signed zeros, over- and underflow.
TEST_F(Builtins, MathF64SpecialValues) {
  auto K = kernel("builtins", "math_f64");
  const double Inf = INFINITY, NaN = NAN;
  std::vector<double> S = {0.0,    -0.0,   Inf,     -Inf, NaN,   710.0,
                           -746.0, 1030.0, -1080.0, 1e20, -1e300};
  std::vector<double> P = {0.0, -0.0, Inf, -1.0, NaN, 1.0,
                           1.0, 1.0,  1.0, 1.0,  1.0};
  size_t N = S.size();
  Buffer BS = upload(S), BP = upload(P);
  Buffer BO = poisoned<double>(15 * N + Pad, PoisonFloat);
  launch(K,
         {Arg::pointer(BS), Arg::pointer(BP), Arg::pointer(BO), Arg::i32(N)});
  auto O = download<double>(BO, 15 * N);
  auto At = [&](size_t F, size_t I) { return O[F * N + I]; };
  auto Same = [](double A, double B) {
    return (std::isnan(A) && std::isnan(B)) ||
           (A == B && std::signbit(A) == std::signbit(B));
  };
  // {function, input index, expected}
  struct Expect {
    size_t F, I;
    double V;
  };
  const Expect Cases[] = {
      {0, 0, 1.0},   {0, 2, Inf},   {0, 3, 0.0},  {0, 4, NaN},  {0, 5, Inf},
      {0, 6, 0.0},   {1, 2, Inf},   {1, 3, 0.0},  {1, 4, NaN},  {1, 7, Inf},
      {1, 8, 0.0},   {1, 0, 1.0},   {2, 0, -Inf}, {2, 1, -Inf}, {2, 2, Inf},
      {2, 3, NaN},   {2, 4, NaN},   {2, 5, 0.0},  {3, 0, -Inf}, {3, 2, Inf},
      {3, 3, NaN},   {3, 5, 0.0},   {6, 0, 0.0},  {6, 1, -0.0}, {6, 2, NaN},
      {6, 3, NaN},   {6, 4, NaN},   {7, 0, 1.0},  {7, 2, NaN},  {7, 4, NaN},
      {8, 0, 0.0},   {8, 1, -0.0},  {8, 2, 1.0},  {8, 3, -1.0}, {8, 4, NaN},
      {8, 10, -1.0}, {9, 0, 0.0},   {9, 1, -0.0}, {9, 2, 1.0},  {9, 3, -1.0},
      {9, 4, NaN},   {9, 10, -1.0}, {10, 2, 1.0}, {10, 3, 0.0}, {10, 4, NaN},
      {10, 0, 0.5}};
  for (const Expect &E : Cases)
    EXPECT_TRUE(Same(At(E.F, E.I), E.V))
        << MathNames[E.F] << "(" << (E.F >= 2 && E.F <= 5 ? P[E.I] : S[E.I])
        << ") = " << At(E.F, E.I) << ", expected " << E.V;
  // sin and cos of a large argument: some value in [-1, 1].
  EXPECT_LE(std::fabs(At(6, 9)), 1.0) << "sin(1e20)";
  EXPECT_LE(std::fabs(At(7, 9)), 1.0) << "cos(1e20)";
}

TEST_F(Builtins, MathBF16) {
  auto K = kernel("builtins", "math_bf16");
  for (size_t N : {1, 257, 1000}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto S = random16(N, false, -8, 8), P = random16(N, false, 0.01f, 50);
    Buffer BS = upload(S), BP = upload(P);
    Buffer BO = poisoned<uint16_t>(15 * N + Pad, PoisonFloat);
    launch(K, {Arg::pointer(BS), Arg::pointer(BP), Arg::pointer(BO),
               Arg::i32(N)});
    auto O = download<uint16_t>(BO, 15 * N + Pad);
    for (size_t F = 0; F < 15; ++F) {
      SCOPED_TRACE(MathNames[F]);
      std::vector<double> G(N), R(N);
      for (size_t I = 0; I < N; ++I) {
        bool UsesP = F >= 2 && F <= 5;
        double s = bf16(S[I]), p = bf16(P[I]);
        G[I] = bf16(O[F * N + I]);
        R[I] = F == 14 ? std::fma(s, p, s) : mathRefs()[F](UsesP ? p : s);
      }
      expectClose(MathNames[F], G, R, 1e-2, absoluteBound(F) ? 1.0 : 1e-30);
    }
    for (size_t I = 15 * N; I < O.size(); ++I)
      ASSERT_EQ(O[I], 0xFFFF) << "written past the end";
  }
}

template <typename T> T satCast(float V) {
  if (std::isnan(V))
    return 0;
  double D = std::trunc(double(V));
  D = std::clamp<double>(D, double(std::numeric_limits<T>::min()),
                         double(std::numeric_limits<T>::max()));
  return T(D);
}

TEST_F(Builtins, CastsFromF32) {
  auto K = kernel("builtins", "casts_f32");
  std::vector<float> X = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, 127.9f,
                          128.0f, -128.9f, -129.0f, 255.5f, 256.0f, 1e10f,
                          -1e10f, 3e9f, INFINITY, -INFINITY, NAN, 65504.0f,
                          65520.0f, 1e-8f, 3.0e38f,
                          // Halfway cases for f16 (1 + 2^-11) and bf16
                          // (1 + 2^-8, 1 + 3 * 2^-8): nearest even.
                          1.00048828125f, 1.00146484375f, 1.00390625f,
                          1.01171875f, -1.00390625f};
  for (float V : randomF32(300, -300, 300))
    X.push_back(V);
  size_t N = X.size();
  Buffer BX = upload(X);
  Buffer O32 = poisoned<int32_t>(N + Pad, PoisonInt),
         O8 = poisoned<int8_t>(N + Pad, PoisonInt),
         OU8 = poisoned<uint8_t>(N + Pad, PoisonInt),
         OU32 = poisoned<uint32_t>(N + Pad, PoisonInt),
         OH = poisoned<uint16_t>(N + Pad, PoisonFloat),
         OB = poisoned<uint16_t>(N + Pad, PoisonFloat),
         OBool = poisoned<int32_t>(N + Pad, PoisonInt);
  launch(K, {Arg::pointer(BX), Arg::pointer(O32), Arg::pointer(O8),
             Arg::pointer(OU8), Arg::pointer(OU32), Arg::pointer(OH),
             Arg::pointer(OB), Arg::pointer(OBool), Arg::i32(N)});
  auto I32 = download<int32_t>(O32, N);
  auto I8 = download<int8_t>(O8, N + Pad);
  auto U8 = download<uint8_t>(OU8, N);
  auto U32 = download<uint32_t>(OU32, N);
  auto H = download<uint16_t>(OH, N);
  auto B = download<uint16_t>(OB, N);
  auto Bo = download<int32_t>(OBool, N);
  for (size_t I = 0; I < N; ++I) {
    SCOPED_TRACE("x = " + std::to_string(X[I]));
    EXPECT_EQ(I32[I], satCast<int32_t>(X[I]));
    EXPECT_EQ(I8[I], satCast<int8_t>(X[I]));
    EXPECT_EQ(U8[I], satCast<uint8_t>(X[I]));
    EXPECT_EQ(U32[I], satCast<uint32_t>(X[I]));
    uint16_t WantH = rt::floatToHalf(X[I]), WantB = rt::floatToBF16(X[I]);
    if (std::isnan(X[I])) {
      EXPECT_TRUE(std::isnan(f16(H[I])));
      EXPECT_TRUE(std::isnan(bf16(B[I])));
    } else {
      EXPECT_EQ(H[I], WantH) << "f16";
      EXPECT_EQ(B[I], WantB) << "bf16";
    }
    EXPECT_EQ(Bo[I], X[I] != 0 || std::isnan(X[I]) ? 1 : 0) << "bool";
  }
  for (size_t I = N; I < N + Pad; ++I)
    ASSERT_EQ(uint8_t(I8[I]), PoisonInt);
  // Spot checks of the halfway cases against hand-computed bits.
  EXPECT_EQ(H[23], 0x3C00) << "1 + 2^-11 -> f16 1.0 (even)";
  EXPECT_EQ(H[24], 0x3C02) << "1 + 3 * 2^-11 -> f16 up (even)";
  EXPECT_EQ(B[25], 0x3F80) << "1 + 2^-8 -> bf16 1.0 (even)";
  EXPECT_EQ(B[26], 0x3F82) << "1 + 3 * 2^-8 -> bf16 up (even)";
  EXPECT_EQ(H[20], 0x7C00) << "65520 -> f16 inf";
}

TEST_F(Builtins, CastsFromInt) {
  auto K = kernel("builtins", "casts_int");
  std::vector<int32_t> A = {0, 1, -1, 127, 128, -128, -129, 255, 256,
                            INT32_MAX, INT32_MIN, 16777217, 16777219,
                            -16777217};
  std::vector<uint32_t> U = {0, 1, 0xFFFFFFFFu, 0x80000000u, 16777217u,
                             4294967040u, 4294967168u};
  for (int32_t V : randomI32(200, INT32_MIN, INT32_MAX)) {
    A.push_back(V);
    U.push_back(uint32_t(V));
  }
  U.resize(A.size(), 7);
  size_t N = A.size();
  Buffer BA = upload(A), BU = upload(U);
  Buffer OF = poisoned<float>(N, PoisonFloat), O8 = poisoned<int8_t>(N, PoisonInt),
         OU8 = poisoned<uint8_t>(N, PoisonInt),
         O64 = poisoned<int64_t>(N, PoisonInt),
         OUF = poisoned<float>(N, PoisonFloat),
         OU64 = poisoned<int64_t>(N, PoisonInt);
  launch(K, {Arg::pointer(BA), Arg::pointer(BU), Arg::pointer(OF),
             Arg::pointer(O8), Arg::pointer(OU8), Arg::pointer(O64),
             Arg::pointer(OUF), Arg::pointer(OU64), Arg::i32(N)});
  auto F = download<float>(OF, N);
  auto I8 = download<int8_t>(O8, N);
  auto U8 = download<uint8_t>(OU8, N);
  auto I64 = download<int64_t>(O64, N);
  auto UF = download<float>(OUF, N);
  auto U64 = download<int64_t>(OU64, N);
  for (size_t I = 0; I < N; ++I) {
    SCOPED_TRACE("a = " + std::to_string(A[I]) + ", u = " + std::to_string(U[I]));
    EXPECT_EQ(F[I], float(A[I])); // the C++ conversion rounds to nearest even
    EXPECT_EQ(I8[I], int8_t(A[I]));
    EXPECT_EQ(U8[I], uint8_t(A[I]));
    EXPECT_EQ(I64[I], int64_t(A[I]));
    EXPECT_EQ(UF[I], float(U[I]));
    EXPECT_EQ(U64[I], int64_t(U[I]));
  }
}

TEST_F(Builtins, IntegerOps) {
  auto K = kernel("builtins", "int_ops");
  for (size_t N : {1, 255, 1000}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto A = randomI32(N, INT32_MIN, INT32_MAX), B = randomI32(N, -1000, 1000);
    auto S = randomI32(N, 0, 31);
    std::vector<uint32_t> UA(N), UB(N);
    for (size_t I = 0; I < N; ++I) {
      if (B[I] == 0)
        B[I] = 7;
      if (A[I] == INT32_MIN && B[I] == -1) // undefined: not tested
        A[I] = 0;
      if (I % 5 == 1)
        A[I] = -7, B[I] = 2; // -7 / 2 == -3, -7 % 2 == -1
      UA[I] = uint32_t(randomI32(1, INT32_MIN, INT32_MAX)[0]);
      UB[I] = uint32_t(randomI32(1, 1, INT32_MAX)[0]) >> (I % 30);
      if (UB[I] == 0)
        UB[I] = 3;
    }
    Buffer BA = upload(A), BB = upload(B), BS = upload(S), BUA = upload(UA),
           BUB = upload(UB);
    Buffer O = poisoned<int32_t>(14 * N + Pad, PoisonInt),
           UO = poisoned<uint32_t>(6 * N + Pad, PoisonInt);
    launch(K, {Arg::pointer(BA), Arg::pointer(BB), Arg::pointer(BS),
               Arg::pointer(O), Arg::pointer(BUA), Arg::pointer(BUB),
               Arg::pointer(UO), Arg::i32(N)});
    auto G = download<int32_t>(O, 14 * N);
    auto UG = download<uint32_t>(UO, 6 * N);
    const char *Names[] = {"+", "-", "*", "/", "%", ">>", "<<", "&", "|",
                           "^", "maximum", "minimum", "abs", "where"};
    const char *UNames[] = {"u/", "u%", "u>>", "u*", "umaximum", "u<"};
    for (size_t I = 0; I < N; ++I) {
      int32_t x = A[I], y = B[I];
      uint32_t ux = uint32_t(x), uy = uint32_t(y);
      int32_t R[14] = {int32_t(ux + uy), int32_t(ux - uy), int32_t(ux * uy),
                       x / y, x % y, x >> S[I], int32_t(ux << S[I]), x & y,
                       x | y, x ^ y, std::max(x, y), std::min(x, y),
                       x == INT32_MIN ? x : std::abs(x), x < y ? x : int32_t(uy * 2)};
      for (size_t F = 0; F < 14; ++F)
        if (G[F * N + I] != R[F]) {
          ADD_FAILURE() << "x = " << x << ", y = " << y << ", s = " << S[I]
                        << ": " << Names[F] << " gave " << G[F * N + I]
                        << ", expected " << R[F];
          break;
        }
      uint32_t a = UA[I], b = UB[I];
      uint32_t UR[6] = {a / b, a % b, a >> S[I], a * b, std::max(a, b),
                        a < b ? 1u : 0u};
      for (size_t F = 0; F < 6; ++F)
        if (UG[F * N + I] != UR[F]) {
          ADD_FAILURE() << "ux = " << a << ", uy = " << b << ", s = " << S[I]
                        << ": " << UNames[F] << " gave " << UG[F * N + I]
                        << ", expected " << UR[F];
          break;
        }
    }
    expectPoison("out", download<uint8_t>(O, (14 * N + Pad) * 4), 14 * N * 4,
                 (14 * N + Pad) * 4, PoisonInt);
    expectPoison("uout", download<uint8_t>(UO, (6 * N + Pad) * 4), 6 * N * 4,
                 (6 * N + Pad) * 4, PoisonInt);
  }
}

TEST_F(Builtins, Shapes) {
  auto K = kernel("builtins", "shapes");
  auto X = randomF32(64);
  Buffer BX = upload(X), BP = poisoned<float>(64, PoisonFloat),
         BT = poisoned<float>(64, PoisonFloat),
         BB = poisoned<float>(32 + Pad, PoisonFloat);
  launch(K, {Arg::pointer(BX), Arg::pointer(BP), Arg::pointer(BT),
             Arg::pointer(BB)});
  auto P = download<float>(BP, 64), T = download<float>(BT, 64),
       B = download<float>(BB, 32);
  // t[a][b][c] = X[a * 32 + b * 8 + c]; p = permute(t, [2, 0, 1]):
  // p[c][a][b] = t[a][b][c], p is [8, 2, 4].
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 8; ++c)
        EXPECT_EQ(P[c * 8 + a * 4 + b], X[a * 32 + b * 8 + c])
            << "permute at " << a << "," << b << "," << c;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(T[i * 8 + j], X[j * 8 + i]) << "trans at " << i << "," << j;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(B[i * 8 + j], X[j] + X[i]) << "broadcast at " << i << "," << j;
  expectPoison("b", download<uint8_t>(BB, (32 + Pad) * 4), 32 * 4,
               (32 + Pad) * 4, PoisonFloat);
}

TEST_F(Builtins, ReductionsAndScans) {
  auto K = kernel("builtins", "reduce");
  for (int Rep = 0; Rep < 3; ++Rep) {
    // Small values: ties for argmax/argmin are frequent.
    auto XI = randomI32(32, -3, 3);
    auto XF = randomF32(32, 0.5f, 2.0f);
    for (int i = 0; i < 32; i += 5)
      XF[i] = std::round(XF[i]); // f32 ties too
    Buffer BXI = upload(XI), BXF = upload(XF);
    Buffer RI = poisoned<int32_t>(28 + Pad, PoisonInt),
           CI = poisoned<int32_t>(64, PoisonInt),
           RF = poisoned<float>(48 + Pad, PoisonFloat),
           CF = poisoned<float>(64, PoisonFloat);
    launch(K, {Arg::pointer(BXI), Arg::pointer(BXF), Arg::pointer(RI),
               Arg::pointer(CI), Arg::pointer(RF), Arg::pointer(CF)});
    auto Ri = download<int32_t>(RI, 28), Ci = download<int32_t>(CI, 64);
    auto Rf = download<float>(RF, 48), Cf = download<float>(CF, 64);
    for (int r = 0; r < 4; ++r) {
      int32_t S = 0, Mx = INT32_MIN, Mn = INT32_MAX, X = 0, AMx = 0, AMn = 0;
      uint32_t P = 1;
      for (int c = 0; c < 8; ++c) {
        int32_t v = XI[r * 8 + c];
        S += v;
        P *= uint32_t(v);
        X ^= v;
        if (v > Mx)
          Mx = v, AMx = c;
        if (v < Mn)
          Mn = v, AMn = c;
        EXPECT_EQ(Ci[r * 8 + c], S) << "cumsum i32 " << r << "," << c;
        EXPECT_EQ(Ci[32 + r * 8 + c], int32_t(P)) << "cumprod i32 " << r << "," << c;
      }
      EXPECT_EQ(Ri[0 * 4 + r], S) << "sum row " << r;
      EXPECT_EQ(Ri[1 * 4 + r], Mx) << "max row " << r;
      EXPECT_EQ(Ri[2 * 4 + r], Mn) << "min row " << r;
      EXPECT_EQ(Ri[3 * 4 + r], int32_t(P)) << "prod row " << r;
      EXPECT_EQ(Ri[4 * 4 + r], X) << "xor_sum row " << r;
      EXPECT_EQ(Ri[5 * 4 + r], AMx) << "argmax row " << r;
      EXPECT_EQ(Ri[6 * 4 + r], AMn) << "argmin row " << r;
    }
    std::vector<double> G, R;
    for (int c = 0; c < 8; ++c) {
      double S = 0, P = 1, Mx = -INFINITY, Mn = INFINITY;
      int AMx = 0, AMn = 0;
      for (int r = 0; r < 4; ++r) {
        double v = XF[r * 8 + c];
        S += v;
        P *= v;
        if (v > Mx)
          Mx = v, AMx = r;
        if (v < Mn)
          Mn = v, AMn = r;
        G.push_back(Cf[r * 8 + c]), R.push_back(S);
        G.push_back(Cf[32 + r * 8 + c]), R.push_back(P);
      }
      double Want[6] = {S, Mx, Mn, P, double(AMx), double(AMn)};
      for (int F = 0; F < 6; ++F)
        G.push_back(Rf[F * 8 + c]), R.push_back(Want[F]);
    }
    expectClose("f32 reductions/scans", G, R, 1e-5);
    expectPoison("ri", download<uint8_t>(RI, (28 + Pad) * 4), 28 * 4,
                 (28 + Pad) * 4, PoisonInt);
    expectPoison("rf", download<uint8_t>(RF, (48 + Pad) * 4), 48 * 4,
                 (48 + Pad) * 4, PoisonFloat);
  }
}

TEST_F(Builtins, Atomics) {
  auto K = kernel("builtins", "atomics");
  for (size_t N : {size_t(1), size_t(100), size_t(64 * 5000 + 3)}) {
    SCOPED_TRACE("n = " + std::to_string(N));
    auto X = randomI32(N, -1000000, 1000000);
    Buffer BX = upload(X);
    int32_t Init[3] = {0, INT32_MIN, INT32_MAX};
    Buffer BC = upload(std::vector<int32_t>{Init[0]}),
           BMax = upload(std::vector<int32_t>{Init[1]}),
           BMin = upload(std::vector<int32_t>{Init[2]}),
           BClaim = upload(std::vector<int32_t>{0, 0, 0, 0}),
           BOld = poisoned<int32_t>(N + Pad, PoisonInt),
           BF = upload(std::vector<float>{0.0f}),
           BFM = upload(std::vector<float>{-INFINITY, INFINITY}),
           BUM = upload(std::vector<uint32_t>{0u, 0xFFFFFFFFu});
    auto Plan = launch(K, {Arg::pointer(BX), Arg::pointer(BC),
                           Arg::pointer(BMax), Arg::pointer(BMin),
                           Arg::pointer(BClaim), Arg::pointer(BOld),
                           Arg::pointer(BF), Arg::pointer(BFM),
                           Arg::pointer(BUM), Arg::i32(N)});
    size_t Programs = Plan.programs();
    EXPECT_EQ(download<int32_t>(BC, 1)[0], int32_t(N));
    EXPECT_EQ(download<float>(BF, 1)[0], float(N));
    EXPECT_EQ(download<int32_t>(BMax, 1)[0], *std::max_element(X.begin(), X.end()));
    EXPECT_EQ(download<int32_t>(BMin, 1)[0], *std::min_element(X.begin(), X.end()));
    // f32 max/min of float(x) / 1024; u32 max/min of uint32(x) (unsigned
    // order: negative values are the largest).
    auto FM = download<float>(BFM, 2);
    auto UM = download<uint32_t>(BUM, 2);
    float FMax = -INFINITY, FMin = INFINITY;
    uint32_t UMax = 0, UMin = 0xFFFFFFFFu;
    for (int32_t V : X) {
      FMax = std::max(FMax, float(V) / 1024.0f);
      FMin = std::min(FMin, float(V) / 1024.0f);
      UMax = std::max(UMax, uint32_t(V));
      UMin = std::min(UMin, uint32_t(V));
    }
    EXPECT_EQ(FM[0], FMax) << "atomic_max f32";
    EXPECT_EQ(FM[1], FMin) << "atomic_min f32";
    EXPECT_EQ(UM[0], UMax) << "atomic_max u32";
    EXPECT_EQ(UM[1], UMin) << "atomic_min u32";
    auto Old = download<int32_t>(BOld, N + Pad);
    std::vector<int32_t> Sorted(Old.begin(), Old.begin() + N);
    std::sort(Sorted.begin(), Sorted.end());
    for (size_t I = 0; I < N; ++I)
      if (Sorted[I] != int32_t(I)) {
        ADD_FAILURE() << "atomic_add's old values are not a permutation of 0..n-1";
        break;
      }
    for (size_t I = N; I < N + Pad; ++I)
      ASSERT_EQ(uint32_t(Old[I]), 0xABABABABu);
    auto Claim = download<int32_t>(BClaim, 4);
    for (size_t S = 0; S < 4; ++S) {
      if (S >= Programs) {
        EXPECT_EQ(Claim[S], 0);
        continue;
      }
      // Some program p with p % 4 == S won the slot (the first CAS).
      EXPECT_TRUE(Claim[S] > 0 && size_t(Claim[S] - 1) % 4 == S &&
                  size_t(Claim[S]) <= Programs)
          << "claim[" << S << "] = " << Claim[S];
    }
  }
}

TEST_F(Builtins, CompareAndSwapTile) {
  auto K = kernel("builtins", "cas_tile");
  Buffer Slots = upload(std::vector<int32_t>(16, 0)),
         Old = poisoned<int32_t>(33 + Pad, PoisonInt);
  launch(K, {Arg::pointer(Slots), Arg::pointer(Old)});
  auto S = download<int32_t>(Slots, 16);
  auto O = download<int32_t>(Old, 33 + Pad);
  for (int32_t I = 0; I < 16; ++I) {
    EXPECT_EQ(S[I], I % 2 == 0 ? 100 + I : I + 1) << "slots[" << I << "]";
    EXPECT_EQ(O[I], I + 1) << "old[" << I << "]";
    EXPECT_EQ(O[31 - I], I + 1) << "old[" << 31 - I << "]";
  }
  EXPECT_EQ(O[32], 136) << "sum of the old values";
  for (size_t I = 33; I < 33 + Pad; ++I)
    ASSERT_EQ(uint32_t(O[I]), 0xABABABABu);
}

TEST_F(Builtins, Dots) {
  // In a bundle of its own, for the host only (test/e2e/CMakeLists.txt).
  auto K = kernel("builtins", "dots");
  auto A16 = random16(512, true), B16 = random16(512, true);
  auto AB = random16(512, false), BB = random16(512, false);
  auto AF = randomF32(512), BF = randomF32(512);
  std::vector<int8_t> A8(512), B8(512);
  for (auto *V : {&A8, &B8})
    for (auto &X : *V)
      X = int8_t(randomI32(1, -128, 127)[0]);
  Buffer BA16 = upload(A16), BB16 = upload(B16), BAB = upload(AB),
         BBB = upload(BB), BAF = upload(AF), BBF = upload(BF),
         BA8 = upload(A8), BB8 = upload(B8);
  Buffer C16 = poisoned<float>(1024, PoisonFloat),
         CB = poisoned<float>(1024, PoisonFloat),
         CF = poisoned<float>(1024, PoisonFloat),
         CT = poisoned<float>(1024, PoisonFloat),
         C8 = poisoned<int32_t>(1024, PoisonInt);
  launch(K, {Arg::pointer(BA16), Arg::pointer(BB16), Arg::pointer(BAB),
             Arg::pointer(BBB), Arg::pointer(BAF), Arg::pointer(BBF),
             Arg::pointer(BA8), Arg::pointer(BB8), Arg::pointer(C16),
             Arg::pointer(CB), Arg::pointer(CF), Arg::pointer(CT),
             Arg::pointer(C8)});
  auto G16 = download<float>(C16, 1024), GB = download<float>(CB, 1024),
       GF = download<float>(CF, 1024), GT = download<float>(CT, 1024);
  auto G8 = download<int32_t>(C8, 1024);
  auto Tf32 = [](float V) {
    uint32_t B = bitCast<uint32_t>(V);
    B = (B + 0xFFF + ((B >> 13) & 1)) & ~0x1FFFu;
    return double(bitCast<float>(B));
  };
  std::vector<double> g16, r16, gb, rb, gf, rf, gt, rt;
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      double S16 = 0, SB = 1, SF = 0, ST = 0;
      int32_t S8 = 0;
      for (int k = 0; k < 16; ++k) {
        S16 += f16(A16[i * 16 + k]) * f16(B16[k * 32 + j]);
        SB += bf16(AB[i * 16 + k]) * bf16(BB[k * 32 + j]);
        SF += double(AF[i * 16 + k]) * BF[k * 32 + j];
        ST += Tf32(AF[i * 16 + k]) * Tf32(BF[k * 32 + j]);
        S8 += int32_t(A8[i * 16 + k]) * B8[k * 32 + j];
      }
      g16.push_back(G16[i * 32 + j]), r16.push_back(S16);
      gb.push_back(GB[i * 32 + j]), rb.push_back(SB);
      gf.push_back(GF[i * 32 + j]), rf.push_back(SF);
      gt.push_back(GT[i * 32 + j]), rt.push_back(ST);
      EXPECT_EQ(G8[i * 32 + j], S8) << "i8 dot at " << i << "," << j;
    }
  expectClose("f16 dot", g16, r16, 1e-5);
  expectClose("bf16 dot (acc 1)", gb, rb, 1e-5);
  expectClose("f32 dot", gf, rf, 1e-5);
  expectClose("tf32 dot", gt, rt, 1e-5);
}

TEST_F(Builtins, ViewsOutOfBounds) {
  auto K = kernel("builtins", "views");
  struct Case { int Rows, Cols, R0, C0; };
  for (Case C : {Case{1, 1, 0, 0}, Case{20, 20, 0, 0}, Case{20, 20, 10, 12},
                 Case{20, 20, -5, -3}, Case{7, 30, 3, 20}, Case{5, 5, 10, 10}}) {
    SCOPED_TRACE("rows = " + std::to_string(C.Rows) + ", cols = " +
                 std::to_string(C.Cols) + ", at (" + std::to_string(C.R0) +
                 ", " + std::to_string(C.C0) + ")");
    int Ld = C.Cols + 3;
    auto X = randomF32(C.Rows * Ld);
    Buffer BX = upload(X), BY = poisoned<float>(C.Rows * Ld + Pad, PoisonFloat),
           BO = poisoned<float>(256, PoisonFloat);
    launch(K, {Arg::pointer(BX), Arg::pointer(BY), Arg::pointer(BO),
               Arg::i32(C.Rows), Arg::i32(C.Cols), Arg::i32(Ld),
               Arg::i32(C.R0), Arg::i32(C.C0)});
    auto O = download<float>(BO, 256);
    auto Y = download<uint32_t>(BY, C.Rows * Ld + Pad);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        int r = C.R0 + i, c = C.C0 + j;
        bool In = r >= 0 && r < C.Rows && c >= 0 && c < C.Cols;
        float Want = In ? X[r * Ld + c] : -1.0f;
        ASSERT_EQ(O[i * 16 + j], Want) << "box element " << i << "," << j;
      }
    for (int r = 0; r < C.Rows; ++r)
      for (int c = 0; c < Ld; ++c) {
        bool Written = c < C.Cols && r >= C.R0 && r < C.R0 + 16 &&
                       c >= C.C0 && c < C.C0 + 16;
        uint32_t Want = Written ? bitCast<uint32_t>(X[r * Ld + c] * 2.0f)
                                : 0xFFFFFFFFu;
        ASSERT_EQ(Y[r * Ld + c], Want) << "y at " << r << "," << c;
      }
    for (size_t I = C.Rows * Ld; I < Y.size(); ++I)
      ASSERT_EQ(Y[I], 0xFFFFFFFFu) << "view store past the end";
  }
}

// The fast path's stride bound on AMD targets (docs/bundle.md "assumes"):
// a stride within it runs the fast-path image, one past it (or a length
// that is not a multiple of 16) the generic one; both read the strided
// elements. (Other devices: the strided reads gain nothing from the fast
// path's assumptions, which the test does not pin.)
TEST_F(Builtins, StridedViewBound) {
  auto K = kernel("builtins", "strided");
  bool Amd = Dev->properties().Arch.rfind("gfx", 0) == 0;
  struct Case { int32_t N, S; bool Fast; };
  for (Case C : {Case{16, 1 << 17, true}, Case{16, (1 << 17) + 16, false},
                 Case{4112, 16, true}, Case{17, 3, false},
                 Case{32, -16, false}}) {
    SCOPED_TRACE("n = " + std::to_string(C.N) + ", s = " + std::to_string(C.S));
    // x[0] is element `First` of the buffer (the last for a negative s).
    size_t Span = size_t(C.N - 1) * std::abs(C.S) + 1;
    size_t First = C.S < 0 ? Span - 1 : 0;
    auto X = randomF32(Span);
    Buffer BX = upload(X), BY = poisoned<float>(C.N + Pad, PoisonFloat);
    const float *X0 = static_cast<const float *>(BX.data()) + First;
    rt::LaunchPlan P = launch(K, {Arg::pointer(X0), Arg::pointer(BY),
                                  Arg::i32(C.N), Arg::i32(C.S)});
    if (Amd)
      EXPECT_EQ(runsFastPath(K, P), C.Fast);
    auto Y = download<float>(BY, C.N + Pad);
    for (int32_t i = 0; i < C.N; ++i)
      ASSERT_EQ(Y[i], X[First + int64_t(i) * C.S] + 1.0f) << "y[" << i << "]";
    expectPoison("y", download<uint8_t>(BY, (C.N + Pad) * 4), C.N * 4,
                 (C.N + Pad) * 4, PoisonFloat);
  }
}

TEST_F(Builtins, ScalarsAndPrint) {
  auto K = kernel("builtins", "scalars");
  std::vector<std::string> Lines;
  Dev->setPrintHandler([&](const std::string &L) { Lines.push_back(L); });
  std::vector<float> X = {2.75f};
  std::vector<int64_t> I = {5, int64_t(1) << 40};
  Buffer BX = upload(X), BI = upload(I), BY = poisoned<float>(4, PoisonFloat),
         BJ = poisoned<int64_t>(3, PoisonInt);
  launch(K, {Arg::pointer(BX), Arg::pointer(BI), Arg::pointer(BY),
             Arg::pointer(BJ)});
  Dev->setPrintHandler(nullptr);
  auto Y = download<uint32_t>(BY, 4);
  auto J = download<uint64_t>(BJ, 3);
  EXPECT_EQ(bitCast<float>(Y[0]), 5.5f);
  EXPECT_EQ(Y[1], 0xFFFFFFFFu);
  EXPECT_EQ(J[0], 0xABABABABABABABABull);
  EXPECT_EQ(J[1], (uint64_t(1) << 40) + 1);
  EXPECT_EQ(J[2], 0xABABABABABABABABull);
  // Kernel print on a GPU goes to the driver's printf, not to the handler.
  if (onGpu())
    return;
  std::string All;
  for (auto &L : Lines)
    All += L + "\n";
  EXPECT_NE(All.find("scalars: a b = "), std::string::npos) << All;
  EXPECT_NE(All.find("2.75"), std::string::npos) << All;
  EXPECT_NE(All.find("1099511627776"), std::string::npos) << All;
}

// The trap comes last: on a GPU it leaves the CUDA context unusable.
TEST_F(Builtins, AssertTrap) {
  // Checked build: GPU targets compile assertions only there.
  auto K = kernel("builtins_checked", "check_nonneg");
  std::vector<int32_t> Good = randomI32(1000, 0, 100);
  Buffer BG = upload(Good);
  launch(K, {Arg::pointer(BG), Arg::i32(1000)});
  std::vector<int32_t> Bad = Good;
  Bad[777] = -1;
  Buffer BB = upload(Bad);
  // Masked-off lanes are excluded by the condition: n = 777 passes.
  launch(K, {Arg::pointer(BB), Arg::i32(777)});
  auto P = K.launch(*Str, {Arg::pointer(BB), Arg::i32(1000)});
  rt::Error E = P ? Str->synchronize() : P.takeError();
  ASSERT_TRUE(bool(E)) << "a failing assert did not fail the launch";
  EXPECT_EQ(E.code(), rt::ErrorCode::KernelTrapped) << E.message();
  // On a GPU the assert's text goes to the driver's printf; the error names
  // the CUDA fault (the emulator's names the assertion).
  if (!onRealGpu())
    EXPECT_NE(E.message().find("negative value"), std::string::npos)
        << E.message();
}

TEST_F(Builtins, CastsHalf) {
  auto K = kernel("builtins", "casts_half");
  std::vector<uint16_t> H = random16(200, true, -70000, 70000),
                        B = random16(200, false, -1e6f, 1e6f);
  // Specials: 0, -0, inf, NaN, f16 max, a subnormal f16, bf16 beyond f16.
  const uint16_t HS[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0x0001, 0x3C01};
  const uint16_t BS[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x4780, 0x477F, 0x3F81};
  for (size_t I = 0; I < 8; ++I)
    H[I] = HS[I], B[I] = BS[I];
  std::vector<double> D(200);
  for (size_t I = 0; I < 200; ++I)
    D[I] = std::ldexp(double(randomF32(1)[0]) + 1e-12 * I, randomI32(1, -140, 130)[0]);
  D[0] = 1.0 + std::ldexp(1.0, -24); // halfway: rounds to 1.0 (even)
  D[1] = 1.0 + 3 * std::ldexp(1.0, -24);
  D[2] = 1e300;
  D[3] = -1e-300;
  size_t N = 200;
  Buffer BH = upload(H), BB = upload(B), BD = upload(D);
  Buffer OHB = poisoned<uint16_t>(N, PoisonFloat), OBH = poisoned<uint16_t>(N, PoisonFloat),
         OHD = poisoned<double>(N, PoisonFloat), ODF = poisoned<float>(N, PoisonFloat);
  launch(K, {Arg::pointer(BH), Arg::pointer(BB), Arg::pointer(BD), Arg::pointer(OHB),
             Arg::pointer(OBH), Arg::pointer(OHD), Arg::pointer(ODF), Arg::i32(N)});
  auto HB = download<uint16_t>(OHB, N), BH2 = download<uint16_t>(OBH, N);
  auto HD = download<double>(OHD, N);
  auto DF = download<float>(ODF, N);
  for (size_t I = 0; I < N; ++I) {
    SCOPED_TRACE("element " + std::to_string(I));
    float HF = rt::halfToFloat(H[I]), BF = rt::bf16ToFloat(B[I]);
    if (std::isnan(HF)) {
      EXPECT_TRUE(std::isnan(bf16(HB[I])));
      EXPECT_TRUE(std::isnan(HD[I]));
    } else {
      EXPECT_EQ(HB[I], rt::floatToBF16(HF)) << "f16 " << HF << " -> bf16";
      EXPECT_EQ(HD[I], double(HF)) << "f16 -> f64";
    }
    if (std::isnan(BF))
      EXPECT_TRUE(std::isnan(f16(BH2[I])));
    else
      EXPECT_EQ(BH2[I], rt::floatToHalf(BF)) << "bf16 " << BF << " -> f16";
    EXPECT_EQ(bitCast<uint32_t>(DF[I]), bitCast<uint32_t>(float(D[I])))
        << "f64 " << D[I] << " -> f32";
  }
}

// Float % is C's fmod, exact, in every float type and at every magnitude:
// random bit patterns (every exponent, subnormals, infinities, NaN) and
// pairs chosen for large quotients. The reference is fmod in double, exact
// for every type here (the remainder is representable in the operands'
// type).
TEST_F(Builtins, FloatRemainder) {
  auto K = kernel("builtins", "fmod_all");
  size_t N = 2000;
  std::uniform_int_distribution<uint64_t> Bits;
  std::vector<float> A32(N), B32(N);
  std::vector<double> A64(N), B64(N);
  std::vector<uint16_t> AH(N), BH(N), AB(N), BB(N);
  for (size_t I = 0; I < N; ++I) {
    uint64_t X = Bits(Rng), Y = Bits(Rng);
    if (I % 4 == 1) // Quotients of 2^10 to 2^40: one round or a few.
      Y = (X & ~(uint64_t(0x7ff) << 52)) |
          (((X >> 52 & 0x7ff) - 10 - I % 31) & 0x7ff) << 52;
    A64[I] = bitCast<double>(X), B64[I] = bitCast<double>(Y);
    A32[I] = bitCast<float>(uint32_t(X)), B32[I] = bitCast<float>(uint32_t(Y));
    AH[I] = uint16_t(X), BH[I] = uint16_t(Y);
    AB[I] = uint16_t(X >> 16), BB[I] = uint16_t(Y >> 16);
  }
  // Fixed cases: the one that exposed LLVM's NVPTX lowering (1e10 % 3 was
  // 256), signed zeros, infinities, subnormal divisors.
  const double Fixed[][2] = {
      {1e10, 3}, {-1e10, 3},      {6, 3},          {-6, 3},
      {-0.0, 3}, {5.5, INFINITY}, {INFINITY, 2},   {2, 0},
      {7, -2},   {1e300, 1e-300}, {1e38, 1.4e-45}, {3e-310, 1e-320}};
  for (size_t I = 0; I < std::size(Fixed); ++I) {
    A64[I] = Fixed[I][0], B64[I] = Fixed[I][1];
    A32[I] = float(Fixed[I][0]), B32[I] = float(Fixed[I][1]);
    AH[I] = rt::floatToHalf(float(Fixed[I][0]));
    BH[I] = rt::floatToHalf(float(Fixed[I][1]));
    AB[I] = rt::floatToBF16(float(Fixed[I][0]));
    BB[I] = rt::floatToBF16(float(Fixed[I][1]));
  }
  Buffer BA32 = upload(A32), BB32 = upload(B32), BA64 = upload(A64),
         BB64 = upload(B64), BAH = upload(AH), BBH = upload(BH),
         BAB = upload(AB), BBB = upload(BB);
  Buffer O32 = poisoned<float>(N + Pad, PoisonFloat),
         O64 = poisoned<double>(N + Pad, PoisonFloat),
         OH = poisoned<uint16_t>(N + Pad, PoisonFloat),
         OB = poisoned<uint16_t>(N + Pad, PoisonFloat);
  launch(K,
         {Arg::pointer(BA32), Arg::pointer(BB32), Arg::pointer(O32),
          Arg::pointer(BA64), Arg::pointer(BB64), Arg::pointer(O64),
          Arg::pointer(BAH), Arg::pointer(BBH), Arg::pointer(OH),
          Arg::pointer(BAB), Arg::pointer(BBB), Arg::pointer(OB), Arg::i32(N)});
  auto G32 = download<float>(O32, N);
  auto G64 = download<double>(O64, N);
  auto GH = download<uint16_t>(OH, N), GB = download<uint16_t>(OB, N);
  auto Same = [](double X, double Y) {
    return (std::isnan(X) && std::isnan(Y)) ||
           (X == Y && std::signbit(X) == std::signbit(Y));
  };
  size_t Bad = 0;
  auto Check = [&](const char *T, size_t I, double A, double B, double Got) {
    double Want = std::fmod(A, B);
    if (!Same(Got, Want) && Bad++ < 8)
      ADD_FAILURE() << T << ": " << A << " % " << B << " = " << Got
                    << ", expected " << Want << " (element " << I << ")";
  };
  for (size_t I = 0; I < N; ++I) {
    Check("f32", I, A32[I], B32[I], G32[I]);
    Check("f64", I, A64[I], B64[I], G64[I]);
    Check("f16", I, f16(AH[I]), f16(BH[I]), f16(GH[I]));
    Check("bf16", I, bf16(AB[I]), bf16(BB[I]), bf16(GB[I]));
  }
  EXPECT_EQ(Bad, 0u);
  expectPoison("o64", download<uint8_t>(O64, (N + Pad) * 8), N * 8,
               (N + Pad) * 8, PoisonFloat);
}

TEST_F(Builtins, FloatSemantics) {
  auto K = kernel("builtins", "float_sem");
  const float Nan = NAN, Inf = INFINITY;
  std::vector<float> A = {Nan, 1.0f, Nan, -0.0f, 0.0f, 5.5f, -5.5f, 7.0f, -7.25f, Inf, 3.0f};
  std::vector<float> B = {1.0f, Nan, Nan, 0.0f, -0.0f, 2.0f, 2.0f, -3.0f, 0.5f, 1.0f, 3.0f};
  for (float V : randomF32(40, -10, 10))
    A.push_back(V);
  for (float V : randomF32(40, -10, 10))
    B.push_back(V == 0 ? 1 : V);
  size_t N = A.size();
  for (bool WithNan : {true, false}) {
    if (!WithNan)
      A[0] = 1.0f, A[2] = 2.0f;
    Buffer BA = upload(A), BB = upload(B), BO = poisoned<float>(5 * N, PoisonFloat),
           BR = poisoned<float>(2, PoisonFloat);
    launch(K, {Arg::pointer(BA), Arg::pointer(BB), Arg::pointer(BO), Arg::pointer(BR),
               Arg::i32(N)});
    auto O = download<float>(BO, 5 * N);
    auto R = download<float>(BR, 2);
    auto Same = [](float X, float Y) {
      return (std::isnan(X) && std::isnan(Y)) ||
             (X == Y && std::signbit(X) == std::signbit(Y));
    };
    for (size_t I = 0; I < N; ++I) {
      float a = A[I], b = B[I];
      float Max = std::isnan(a) || std::isnan(b) ? Nan
                  : a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
      float Min = std::isnan(a) || std::isnan(b) ? Nan
                  : a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
      EXPECT_TRUE(Same(O[I], Max)) << "maximum(" << a << ", " << b << ") = " << O[I];
      EXPECT_TRUE(Same(O[N + I], Min)) << "minimum(" << a << ", " << b << ") = " << O[N + I];
      EXPECT_TRUE(Same(O[2 * N + I], std::fmod(a, b)))
          << a << " % " << b << " = " << O[2 * N + I];
      EXPECT_EQ(O[3 * N + I], a < b ? 1.0f : 0.0f) << a << " < " << b;
      EXPECT_EQ(O[4 * N + I], a != b ? 1.0f : 0.0f) << a << " != " << b;
    }
    float Mx = -Inf, Mn = Inf;
    bool AnyNan = false;
    for (float V : A) {
      AnyNan |= std::isnan(V);
      Mx = std::max(Mx, V), Mn = std::min(Mn, V);
    }
    if (AnyNan) {
      EXPECT_TRUE(std::isnan(R[0])) << "max reduction with a NaN: " << R[0];
      EXPECT_TRUE(std::isnan(R[1])) << "min reduction with a NaN: " << R[1];
    } else {
      EXPECT_EQ(R[0], Mx);
      EXPECT_EQ(R[1], Mn);
    }
  }
}

TEST_F(Builtins, NarrowReductions) {
  auto K = kernel("builtins", "reduce_narrow");
  std::vector<int8_t> X8(128);
  std::vector<uint8_t> XU8(128);
  for (size_t I = 0; I < 128; ++I) {
    X8[I] = int8_t(randomI32(1, -128, 127)[0]);
    XU8[I] = uint8_t(randomI32(1, 0, 255)[0]);
  }
  for (size_t r = 0; r < 8; ++r)
    X8[r * 16] = 127; // column 0 sums to 1016: no i8 wraparound
  auto XB = random16(128, false, -4, 4);
  auto X3 = randomF32(64);
  Buffer B8 = upload(X8), BU8 = upload(XU8), BB = upload(XB), B3 = upload(X3);
  Buffer S8 = poisoned<int32_t>(16, PoisonInt), Cnt = poisoned<int32_t>(8, PoisonInt),
         CB = poisoned<float>(128, PoisonFloat), MU8 = poisoned<int32_t>(16, PoisonInt),
         M3 = poisoned<float>(16, PoisonFloat);
  launch(K, {Arg::pointer(B8), Arg::pointer(BU8), Arg::pointer(BB), Arg::pointer(B3),
             Arg::pointer(S8), Arg::pointer(Cnt), Arg::pointer(CB), Arg::pointer(MU8),
             Arg::pointer(M3)});
  auto GS8 = download<int32_t>(S8, 16), GCnt = download<int32_t>(Cnt, 8),
       GMU8 = download<int32_t>(MU8, 16);
  auto GCB = download<float>(CB, 128), GM3 = download<float>(M3, 16);
  for (int c = 0; c < 16; ++c) {
    int32_t S = 0, M = 0;
    for (int r = 0; r < 8; ++r)
      S += X8[r * 16 + c], M = std::max<int32_t>(M, XU8[r * 16 + c]);
    EXPECT_EQ(GS8[c], S) << "sum of i8 column " << c;
    EXPECT_EQ(GMU8[c], M) << "max of u8 column " << c;
  }
  std::vector<double> G, R;
  for (int r = 0; r < 8; ++r) {
    int32_t N = 0;
    double S = 0;
    for (int c = 0; c < 16; ++c) {
      N += X8[r * 16 + c] > 0;
      S += bf16(XB[r * 16 + c]);
      G.push_back(GCB[r * 16 + c]), R.push_back(S);
    }
    EXPECT_EQ(GCnt[r], N) << "count of row " << r;
  }
  expectClose("bf16 cumsum", G, R, 1e-5);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 8; ++c) {
      float M = -INFINITY;
      for (int b = 0; b < 4; ++b)
        M = std::max(M, X3[a * 32 + b * 8 + c]);
      EXPECT_EQ(GM3[a * 8 + c], M) << "rank-3 max at " << a << "," << c;
    }
}

TEST_F(Builtins, WideOps) {
  auto K = kernel("builtins", "wide_ops");
  std::vector<double> X = {0.0, -0.5, 1.9, -1.9, 1e19, -1e19, 2e19, 9.3e18,
                           -9.3e18, NAN, INFINITY, -INFINITY, 4294967296.5};
  std::uniform_real_distribution<double> D(-1e19, 2e19);
  std::uniform_int_distribution<int64_t> I64(INT64_MIN, INT64_MAX),
      Small(-100000, 100000), Sh(0, 63);
  while (X.size() < 300)
    X.push_back(D(Rng));
  size_t N = X.size();
  std::vector<int64_t> A(N), B(N), S(N);
  for (size_t I = 0; I < N; ++I) {
    A[I] = I64(Rng), B[I] = I % 2 ? I64(Rng) : Small(Rng), S[I] = Sh(Rng);
    if (B[I] == 0 || (B[I] == -1 && A[I] == INT64_MIN))
      B[I] = 3;
  }
  Buffer BX = upload(X), BA = upload(A), BB = upload(B), BS = upload(S);
  Buffer OI = poisoned<int64_t>(N, PoisonInt), OU = poisoned<uint64_t>(N, PoisonInt),
         O = poisoned<int64_t>(4 * N, PoisonInt), UO = poisoned<uint64_t>(3 * N, PoisonInt);
  launch(K, {Arg::pointer(BX), Arg::pointer(OI), Arg::pointer(OU), Arg::pointer(BA),
             Arg::pointer(BB), Arg::pointer(BS), Arg::pointer(O), Arg::pointer(UO),
             Arg::i32(N)});
  auto GI = download<int64_t>(OI, N);
  auto GU = download<uint64_t>(OU, N);
  auto G = download<int64_t>(O, 4 * N);
  auto UG = download<uint64_t>(UO, 3 * N);
  auto Sat = [](double V, double Lo, double Hi) {
    return std::isnan(V) ? 0.0 : std::trunc(std::clamp(V, Lo, Hi));
  };
  for (size_t I = 0; I < N; ++I) {
    SCOPED_TRACE("x = " + std::to_string(X[I]) + ", a = " + std::to_string(A[I]) +
                 ", b = " + std::to_string(B[I]) + ", s = " + std::to_string(S[I]));
    double V = X[I];
    int64_t WantI = std::isnan(V) ? 0
                    : V >= 9223372036854775808.0 ? INT64_MAX
                    : V < -9223372036854775808.0 ? INT64_MIN
                                                 : int64_t(Sat(V, -9.3e18, 9.3e18));
    uint64_t WantU = std::isnan(V) || V <= 0 ? 0
                     : V >= 18446744073709551616.0 ? UINT64_MAX
                                                   : uint64_t(std::trunc(V));
    EXPECT_EQ(GI[I], WantI) << "f64 -> i64";
    EXPECT_EQ(GU[I], WantU) << "f64 -> u64";
    int64_t a = A[I], b = B[I];
    EXPECT_EQ(G[I], a / b);
    EXPECT_EQ(G[N + I], a % b);
    EXPECT_EQ(G[2 * N + I], a >> S[I]);
    EXPECT_EQ(G[3 * N + I], int64_t(uint64_t(a) * uint64_t(b)));
    uint64_t ua = uint64_t(a), ub = uint64_t(b);
    EXPECT_EQ(UG[I], ua / ub);
    EXPECT_EQ(UG[N + I], ua % ub);
    EXPECT_EQ(UG[2 * N + I], ua >> S[I]);
  }
}

} // namespace
