//===- MathExpansion.cpp - Math functions as arithmetic, for GPUs ---------===//

#include "compiler/GPU/MathExpansion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <iterator>
#include <limits>

using namespace mlir;

namespace {

/// Element-wise arithmetic on scalars or vectors of one float type, f32 or
/// f64 (what the expansions below are written in: arith and math ops that
/// every backend has an instruction for, and integer bit operations).
struct Elementwise {
  Elementwise(ImplicitLocOpBuilder &b, Type type)
      : b(b), type(type),
        intType(same(IntegerType::get(
            b.getContext(),
            getElementTypeOrSelf(type).getIntOrFloatBitWidth()))) {}

  ImplicitLocOpBuilder &b;
  Type type;    ///< the float type (scalar or vector)
  Type intType; ///< integers of its width, same shape

  bool isF64() const { return getElementTypeOrSelf(type).isF64(); }
  Type same(Type element) const {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return shaped.clone(element);
    return element;
  }
  Value constant(Type t, TypedAttr scalar) {
    if (auto shaped = dyn_cast<ShapedType>(t))
      return arith::ConstantOp::create(b,
                                       DenseElementsAttr::get(shaped, scalar));
    return arith::ConstantOp::create(b, scalar);
  }
  /// `v` rounded to the float type.
  Value f(double v) {
    return constant(type, b.getFloatAttr(getElementTypeOrSelf(type), v));
  }
  Value i(int64_t v) {
    return constant(intType,
                    b.getIntegerAttr(getElementTypeOrSelf(intType), v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, x); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, x, y, z);
  }
  Value abs(Value x) { return math::AbsFOp::create(b, x); }
  /// t (>= 0 or NaN) with the sign of x, for x not +-0: a select, not
  /// llvm.copysign, on which LLVM 22's AMDGPU instruction selection crashes
  /// for <1 x double> (InstCombine also turns the same thing written in
  /// bit operations back into llvm.copysign).
  Value withSignOf(Value t, Value x) {
    return select(lt(x, f(0.0)), neg(t), t);
  }
  /// x rounded to an integer, ties to even. f64: (x + 2^52) - 2^52 (x -
  /// 2^52 + 2^52 below 0) where |x| < 2^52, exact there; x itself from
  /// 2^52 up (an integer, or not finite). Not math.roundeven, which MLIR
  /// expands through copysign (see withSignOf).
  Value roundEven(Value x) {
    if (!isF64())
      return math::RoundEvenOp::create(b, x);
    Value shift = select(lt(x, f(0.0)), f(-0x1p52), f(0x1p52));
    return select(lt(abs(x), f(0x1p52)), sub(add(x, shift), shift), x);
  }
  Value floor(Value x) { return math::FloorOp::create(b, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, p, x, y);
  }
  Value eq(Value x, Value y) { return cmp(arith::CmpFPredicate::OEQ, x, y); }
  Value lt(Value x, Value y) { return cmp(arith::CmpFPredicate::OLT, x, y); }
  Value gt(Value x, Value y) { return cmp(arith::CmpFPredicate::OGT, x, y); }
  Value isNaN(Value x) { return cmp(arith::CmpFPredicate::UNO, x, x); }
  /// x limited to [lo, hi]; NaN stays NaN (compares, not min/max, which
  /// NVPTX has no f64 instruction for).
  Value clamp(Value x, double lo, double hi) {
    return select(lt(x, f(lo)), f(lo), select(gt(x, f(hi)), f(hi), x));
  }
  Value bits(Value x) { return arith::BitcastOp::create(b, intType, x); }
  Value fromBits(Value x) { return arith::BitcastOp::create(b, type, x); }
  Value iadd(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value isub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value iand(Value x, int64_t m) { return arith::AndIOp::create(b, x, i(m)); }
  Value ior(Value x, int64_t m) { return arith::OrIOp::create(b, x, i(m)); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, x, i(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRSIOp::create(b, x, i(n)); }
  Value imax(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value imin(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value toInt(Value x) { return arith::FPToSIOp::create(b, intType, x); }
  Value both(Value p, Value q) { return arith::AndIOp::create(b, p, q); }
  int64_t mantissaBits() const { return isF64() ? 52 : 23; }
  int64_t bias() const { return isF64() ? 1023 : 127; }
  /// 2^n, built from bits, for integers n of the normal exponent range.
  Value powerOfTwo(Value n) {
    return fromBits(shl(iadd(n, i(bias())), mantissaBits()));
  }
  /// For v > 0 finite: v's bits after scaling a subnormal v by
  /// 2^(mantissa + 2) into the normal range, and ilogb(v).
  std::pair<Value, Value> exponentOf(Value v) {
    int64_t scale = mantissaBits() + 2;
    Value tiny = lt(v, f(std::ldexp(1.0, 1 - bias())));
    Value scaled = bits(select(tiny, mul(v, f(std::ldexp(1.0, scale))), v));
    Value field = iand(shr(scaled, mantissaBits()), 2 * bias() + 1);
    return {scaled, isub(field, select(tiny, i(bias() + scale), i(bias())))};
  }
  Value toFloat(Value x) { return arith::SIToFPOp::create(b, type, x); }
  /// The sum over n = from, from + step, ..., to of r^((n - from) / step)
  /// / n!, by Horner's rule.
  Value taylor(Value r, int from, int to, int step = 1) {
    auto inverseFactorial = [](int n) {
      double factorial = 1; // exact through 18!
      for (int k = 2; k <= n; ++k)
        factorial *= k;
      return 1 / factorial;
    };
    Value q = f(inverseFactorial(to));
    for (int n = to - step; n >= from; n -= step)
      q = fma(q, r, f(inverseFactorial(n)));
    return q;
  }
};

/// sin(x) or cos(x), f32 or f64. With k = round(x * 2/pi) and
/// r = x - k * pi/2 (pi/2 split into three parts of the type, each
/// subtracted with one rounding by a fused multiply-add), |r| <= pi/4 and
///   sin(x) = [sin r, cos r, -sin r, -cos r][k mod 4],
///   cos(x) = [cos r, -sin r, -cos r, sin r][k mod 4].
/// Taylor polynomials then: through r^9 and r^10 in f32 (within 2e-9 of sin
/// and cos on [-pi/4, pi/4]), through r^21 and r^20 in f64 (within 1e-17
/// up to |r| = 1.5, which x * 2/pi's rounding reaches in [2^51, 2^52):
/// ties there go to the even k).
/// k mod 4 is computed in floating point (exact below 2^24 in f32, 2^53 in
/// f64), so nothing converts to an integer. From |x| = 2^24 in f32 and 2^52
/// in f64 the result is some value in [-1, 1]. Infinities and NaN give
/// NaN; sin keeps the sign of 0.
Value sinOrCos(Elementwise &e, Value x, bool isCos) {
  bool f64 = e.isF64();
  Value k = e.roundEven(e.mul(x, e.f(0.63661977236758134)));
  Value negK = e.neg(k);
  // pi/2 in three parts: 1.5707963705062866 - 4.371138828673793e-08 -
  // 1.7151245100058819e-15 (+ 1.1e-23) in f32, 1.5707963267948966 +
  // 6.123233995736766e-17 - 1.4973849048591698e-33 (+ 5.6e-50) in f64.
  const double parts[2][3] = {
      {1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15},
      {1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33}};
  Value r = x;
  for (double part : parts[f64])
    r = e.fma(negK, e.f(part), r);
  // From 2^24 (f32) or 2^52 (f64) up, k's rounding leaves r anywhere:
  // reduced to 0 (a result in [-1, 1]; the reduction of such arguments
  // would need pi to thousands of bits).
  Value a = e.abs(x);
  Value huge =
      e.both(e.cmp(arith::CmpFPredicate::OGE, a, e.f(f64 ? 0x1p52 : 0x1p24)),
             e.lt(a, e.f(std::numeric_limits<double>::infinity())));
  r = e.select(huge, e.f(0.0), r);
  Value r2 = e.mul(r, r);
  // sin r = r + r^3 (-1/3! + r^2 (1/5! - ...)), cos r = 1 + r^2 (-1/2! +
  // r^2 (1/4! - ...)): the series in r^2 with alternating signs.
  auto series = [&](int from, int to) {
    // sum (-1)^j r^2j / (from + 2j)!: Horner in -r^2.
    return e.taylor(e.neg(r2), from, to, 2);
  };
  Value sinR = e.fma(e.mul(r2, r), e.neg(series(3, f64 ? 21 : 9)), r);
  Value cosR = e.fma(e.neg(r2), series(2, f64 ? 20 : 10), e.f(1.0));
  // q = k mod 4 in {0, 1, 2, 3}; cos(x) = sin(x + pi/2): quadrant q + 1.
  Value q = e.sub(k, e.mul(e.f(4.0), e.floor(e.mul(k, e.f(0.25)))));
  if (isCos)
    q = e.select(e.eq(q, e.f(3.0)), e.f(0.0), e.add(q, e.f(1.0)));
  Value odd = arith::OrIOp::create(e.b, e.eq(q, e.f(1.0)), e.eq(q, e.f(3.0)));
  Value value = e.select(odd, cosR, sinR);
  Value negative = e.cmp(arith::CmpFPredicate::OGE, q, e.f(2.0));
  Value result = e.select(negative, e.neg(value), value);
  // sin(-0) = -0 (the polynomial gives +0).
  return isCos ? result : e.select(e.eq(x, e.f(0.0)), x, result);
}

// f64 functions (docs/language.md 9.4: within 1e-13 relative; these are
// within a few ulps, docs/codegen-gpu.md "Math"). Only fused multiply-adds,
// IEEE arithmetic, roundeven/floor and bit operations: the same code on
// every GPU and on the emulator.

constexpr double kLn2Hi = 0.6931471805599453, kLn2Lo = 2.3190468138462996e-17;
constexpr double kLog2EHi = 1.4426950408889634,
                 kLog2ELo = 2.0355273740931033e-17;

/// e^r - 1 for small |r|: the Taylor series through r^degree.
Value expm1Taylor(Elementwise &e, Value r, int degree) {
  return e.fma(e.taylor(r, 2, degree), e.mul(r, r), r);
}

/// 2^k e^r for an integral k in [-1100, 1100] (or NaN, when r is NaN too)
/// and |r| <= ln2 / 2: the Taylor series through r^13 (within 5e-18 of
/// e^r), scaled by 2^(k/2) and 2^(k - k/2), each a normal power of two, so
/// that 2^k far outside the normal range still over- or underflows once.
Value scaledExp(Elementwise &e, Value k, Value r) {
  Value p = e.add(e.f(1.0), expm1Taylor(e, r, 13));
  // NaN to an integer would be poison: k = 0 then (r is NaN).
  Value ki = e.toInt(e.select(e.isNaN(k), e.f(0.0), k));
  Value half = e.shr(ki, 1);
  return e.mul(e.mul(p, e.powerOfTwo(half)), e.powerOfTwo(e.isub(ki, half)));
}

/// e^x: k = round(x / ln2), r = x - k ln2 (ln2 in two parts). Beyond
/// [-746, 710] the result is 0 or infinity: x is clamped there first.
Value expF64(Elementwise &e, Value x) {
  Value xc = e.clamp(x, -746.0, 710.0);
  Value k = e.roundEven(e.mul(xc, e.f(kLog2EHi)));
  Value r = e.fma(e.neg(k), e.f(kLn2Hi), xc);
  r = e.fma(e.neg(k), e.f(kLn2Lo), r);
  return scaledExp(e, k, r);
}

/// 2^x: k = round(x), r = (x - k) ln2 (x - k is exact; the product in two
/// parts).
Value exp2F64(Elementwise &e, Value x) {
  Value xc = e.clamp(x, -1080.0, 1030.0);
  Value k = e.roundEven(xc);
  Value f = e.sub(xc, k);
  Value r = e.fma(f, e.f(kLn2Hi), e.mul(f, e.f(kLn2Lo)));
  return scaledExp(e, k, r);
}

/// x = 2^n m with m in [sqrt(1/2), sqrt(2)) (subnormal x scaled by 2^54
/// first), and log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with
/// s = (m - 1) / (m + 1), |s| <= 0.1716: through s^21 (within 2e-18).
/// Returns {n, log m}; the callers put the special values back.
std::pair<Value, Value> logParts(Elementwise &e, Value x) {
  auto [bits, n] = e.exponentOf(x);
  Value m = e.fromBits(e.ior(e.iand(bits, (int64_t(1) << e.mantissaBits()) - 1),
                             e.bias() << e.mantissaBits()));
  Value big = e.gt(m, e.f(1.4142135623730951));
  m = e.select(big, e.mul(m, e.f(0.5)), m);
  Value nf = e.add(e.toFloat(n), e.select(big, e.f(1.0), e.f(0.0)));
  Value s = e.div(e.sub(m, e.f(1.0)), e.add(m, e.f(1.0)));
  Value z = e.mul(s, s);
  // 2 (1 + z/3 + z^2/5 + ... + z^10/21)
  Value q = e.f(2.0 / 21);
  for (int j = 19; j >= 1; j -= 2)
    q = e.fma(q, z, e.f(2.0 / j));
  return {nf, e.mul(s, q)};
}

/// log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN; `value`
/// elsewhere.
Value logSpecials(Elementwise &e, Value x, Value value) {
  double inf = std::numeric_limits<double>::infinity();
  Value finitePositive = e.both(e.gt(x, e.f(0.0)), e.lt(x, e.f(inf)));
  Value special =
      e.select(e.eq(x, e.f(0.0)), e.f(-inf),
               e.select(e.eq(x, e.f(inf)), e.f(inf),
                        e.f(std::numeric_limits<double>::quiet_NaN())));
  return e.select(finitePositive, value, special);
}

Value logF64(Elementwise &e, Value x) {
  auto [n, logM] = logParts(e, x);
  // n ln2 + log m, ln2 in two parts: one rounding of the large part.
  Value v = e.fma(n, e.f(kLn2Hi), e.fma(n, e.f(kLn2Lo), logM));
  return logSpecials(e, x, v);
}

Value log2F64(Elementwise &e, Value x) {
  auto [n, logM] = logParts(e, x);
  // n + log m / ln2, 1/ln2 in two parts.
  Value t = e.fma(logM, e.f(kLog2EHi), e.mul(logM, e.f(kLog2ELo)));
  return logSpecials(e, x, e.add(n, t));
}

/// tanh x = sign(x) (1 - 2 / (e^2|x| + 1)) for |x| >= 1/4 (no cancellation:
/// tanh is above 0.24 there); below, e / (e + 2) with e = e^2|x| - 1 from
/// its Taylor series through (2|x|)^15 (within 1e-18 relative).
Value tanhF64(Elementwise &e, Value x) {
  Value a = e.abs(x);
  Value small = e.lt(a, e.f(0.25));
  Value a2 = e.add(a, a);
  Value em1 = expm1Taylor(e, a2, 15);
  Value near = e.div(em1, e.add(em1, e.f(2.0)));
  Value far = e.sub(e.f(1.0), e.div(e.f(2.0), e.add(expF64(e, a2), e.f(1.0))));
  // +-0 stay as they are.
  return e.select(e.eq(x, e.f(0.0)), x,
                  e.withSignOf(e.select(small, near, far), x));
}

// Chebyshev coefficients of erf (scripts/fit-erf-f64.py, which says how
// they are made): kErfSmall for erf(x) / x in u = x^2 on [0, 4],
// kErfLarge for exp(x^2) erfc(x) in 1/x on [1/6, 1/2].
constexpr double kErfSmall[18] = {
    0.7415552820424018,      -0.30107107338659495,    0.06899483068983156,
    -0.013916271264722188,   0.0024207995224334636,   -0.0003658639685848086,
    4.862098443231905e-05,   -5.749256558035685e-06,  6.113243578434765e-07,
    -5.8991015312958435e-08, 5.2070090920686485e-09,  -4.2329758799655433e-10,
    3.188113506649175e-11,   -2.2361550188326843e-12, 1.467329847991085e-13,
    -9.044001985381747e-15,  5.254813715470919e-16,   -2.887426122284945e-17,
};
constexpr double kErfLarge[18] = {
    0.1765281179363382,     0.08137379533782715,    -0.0024575013733779674,
    -6.324093536658628e-05, 1.5519910419454142e-05, -1.010830675654802e-06,
    -1.319732774701922e-08, 1.063536598865954e-08,  -1.2284967356346472e-09,
    4.9703371897498055e-11, 7.773829791968737e-12,  -1.8655371570026014e-12,
    1.951320431027466e-13,  -5.514953789857361e-15, -2.066788515569011e-15,
    4.676537859503358e-16,  -5.316412861139965e-17, 2.0989625619858665e-18,
};

/// erf x: for |x| < 2, x S(t) with t = x^2 / 2 - 1; for |x| >= 2,
/// sign(x) (1 - e^(-x^2) L(t)) with t = 6 / |x| - 2 and |x| taken no
/// further than 6 (erfc(6) = 2e-17: erf is 1 in f64 beyond). S and L are
/// one Clenshaw recurrence whose coefficients each lane selects.
/// e^(-x^2) uses x^2 in two parts (x^2 = h + l exactly): e^-h (1 - l).
Value erfF64(Elementwise &e, Value x) {
  Value a = e.abs(x);
  Value small = e.lt(a, e.f(2.0));
  Value ac = e.clamp(a, 0.0, 6.0);
  Value t = e.select(small, e.fma(x, e.mul(x, e.f(0.5)), e.f(-1.0)),
                     e.sub(e.div(e.f(6.0), ac), e.f(2.0)));
  Value twoT = e.add(t, t);
  auto c = [&](int k) {
    return e.select(small, e.f(kErfSmall[k]), e.f(kErfLarge[k]));
  };
  Value b1 = e.f(0.0), b2 = e.f(0.0);
  for (int k = std::size(kErfSmall) - 1; k >= 1; --k) {
    Value b0 = e.fma(twoT, b1, e.sub(c(k), b2));
    b2 = b1;
    b1 = b0;
  }
  Value series = e.fma(t, b1, e.sub(c(0), b2));
  Value h = e.mul(ac, ac);
  Value l = e.fma(ac, ac, e.neg(h));
  Value ec = e.mul(expF64(e, e.neg(h)), series);
  Value erfc = e.fma(e.neg(ec), l, ec);
  Value far = e.withSignOf(e.sub(e.f(1.0), erfc), x);
  return e.select(small, e.mul(x, series), far);
}

/// x % y, C's fmod: exact (the remainder is representable). LLVM's NVPTX
/// lowering, x - trunc(x / y) * y, is not once the quotient's rounding
/// matters (1e10 % 3.0 gave 256 in f32). Here a loop per element, each
/// round taking up to K quotient bits off r (initially |x|):
///   s = max(ilogb(r) - ilogb(|y|) - K, 0), ys = |y| 2^s (exact),
///   q = round(r / ys) (< 2^(K+1), within 1/4 of r / ys),
///   r = r - q ys by a fused multiply-add (exact: |r - q ys| < ys with
///       ys's granularity), plus ys if negative,
/// until r < |y|; then r with x's sign. K = 50 in f64, 18 in f32 (whose
/// division may be 2 ulps, div.full on NVIDIA): at most 42 and 17 rounds,
/// one for quotients below 2^K. y = 0, x infinite or NaN give NaN; y
/// infinite gives x.
Value remainderOf(Elementwise &e, Value x, Value y) {
  bool f64 = e.isF64();
  int64_t quotientBits = f64 ? 50 : 18, step = f64 ? 1000 : 100;
  double inf = std::numeric_limits<double>::infinity();
  Value ax = e.abs(x), ay = e.abs(y);
  auto ilogb = [&](Value v) { return e.exponentOf(v).second; };
  Value ordinary = e.both(e.both(e.lt(ax, e.f(inf)), e.gt(ay, e.f(0.0))),
                          e.lt(ay, e.f(inf)));
  Value ey = ilogb(e.select(ordinary, ay, e.f(1.0)));
  auto anyOf = [&](Value cond) -> Value {
    if (isa<VectorType>(cond.getType()))
      return vector::ReductionOp::create(e.b, vector::CombiningKind::OR, cond);
    return cond;
  };
  // Lanes that are not ordinary never enter the loop.
  Value start = e.select(ordinary, ax, e.f(0.0));
  Value limit = e.select(ordinary, ay, e.f(inf));
  auto loop = scf::WhileOp::create(
      e.b, TypeRange{e.type}, ValueRange{start},
      [&](OpBuilder &, Location, ValueRange args) {
        Value r = args[0];
        scf::ConditionOp::create(
            e.b, anyOf(e.cmp(arith::CmpFPredicate::OGE, r, limit)), r);
      },
      [&](OpBuilder &, Location, ValueRange args) {
        Value r = args[0];
        Value active = e.cmp(arith::CmpFPredicate::OGE, r, limit);
        Value d = e.isub(ilogb(e.select(active, r, ay)), ey);
        Value shift = e.imax(e.isub(d, e.i(quotientBits)), e.i(0));
        // 2^shift in three exact steps: shift reaches 2 * bias + 1.
        Value a = e.imin(shift, e.i(step));
        Value rest = e.isub(shift, a);
        Value b2 = e.imin(rest, e.i(step));
        Value ys = e.mul(e.mul(e.mul(ay, e.powerOfTwo(a)), e.powerOfTwo(b2)),
                         e.powerOfTwo(e.isub(rest, b2)));
        // (f32: a subnormal ys and r scaled by 2^24 first, exactly, so that
        // a division that flushed subnormals would still see them.)
        Value num = r, den = ys;
        if (!f64) {
          Value tinyY = e.lt(ys, e.f(0x1p-125));
          num = e.select(tinyY, e.mul(r, e.f(0x1p24)), r);
          den = e.select(tinyY, e.mul(ys, e.f(0x1p24)), ys);
        }
        Value q = e.roundEven(e.div(num, den));
        Value next = e.fma(e.neg(q), ys, r);
        next = e.select(e.lt(next, e.f(0.0)), e.add(next, ys), next);
        scf::YieldOp::create(e.b, e.select(active, next, r));
      });
  Value remainder =
      e.select(e.lt(ax, ay), x, e.withSignOf(loop.getResult(0), x));
  // Not ordinary: x finite and y infinite give x, the rest NaN.
  Value keep = e.both(e.lt(ax, e.f(inf)), e.eq(ay, e.f(inf)));
  return e.select(
      ordinary, remainder,
      e.select(keep, x, e.f(std::numeric_limits<double>::quiet_NaN())));
}

/// arith.remf (f32, f64; f16 and bf16 through f32, where the exact
/// remainder is representable in the narrow type too) by remainderOf.
struct RemainderExpansion : OpRewritePattern<arith::RemFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::RemFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type element = getElementTypeOrSelf(type);
    if (!element.isF16() && !element.isBF16() && !element.isF32() &&
        !element.isF64())
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = op.getLhs(), y = op.getRhs();
    bool narrow = element.getIntOrFloatBitWidth() == 16;
    Type wide = narrow ? Elementwise(b, type).same(b.getF32Type()) : type;
    if (narrow) {
      x = arith::ExtFOp::create(b, wide, x);
      y = arith::ExtFOp::create(b, wide, y);
    }
    Elementwise e(b, wide);
    Value r = remainderOf(e, x, y);
    if (narrow)
      r = arith::TruncFOp::create(b, type, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Replaces `OpTy` on the element types `fn` is for (f64, or f32 too) by
/// `fn`'s expansion.
template <typename OpTy> struct Expansion : OpRewritePattern<OpTy> {
  using Fn = Value (*)(Elementwise &, Value);
  Expansion(MLIRContext *ctx, unsigned benefit, Fn fn, bool f32)
      : OpRewritePattern<OpTy>(ctx, benefit), fn(fn), f32(f32) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!element.isF64() && !(f32 && element.isF32()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Elementwise e(b, op.getType());
    rewriter.replaceOp(op, fn(e, op.getOperand()));
    return success();
  }
  Fn fn;
  bool f32;
};

} // namespace

void kiln::gpu::populateMathExpansionPatterns(RewritePatternSet &patterns,
                                              unsigned benefit) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<Expansion<math::SinOp>>(
      ctx, benefit,
      [](Elementwise &e, Value x) { return sinOrCos(e, x, false); }, true);
  patterns.add<Expansion<math::CosOp>>(
      ctx, benefit,
      [](Elementwise &e, Value x) { return sinOrCos(e, x, true); }, true);
  patterns.add<Expansion<math::ExpOp>>(ctx, benefit, expF64, false);
  patterns.add<Expansion<math::Exp2Op>>(ctx, benefit, exp2F64, false);
  patterns.add<Expansion<math::LogOp>>(ctx, benefit, logF64, false);
  patterns.add<Expansion<math::Log2Op>>(ctx, benefit, log2F64, false);
  patterns.add<Expansion<math::TanhOp>>(ctx, benefit, tanhF64, false);
  patterns.add<Expansion<math::ErfOp>>(ctx, benefit, erfF64, false);
  patterns.add<RemainderExpansion>(ctx, benefit);
}

LogicalResult kiln::gpu::lowerGPUMath(
    ModuleOp module, ArrayRef<StringRef> native, StringRef backend,
    StringRef library,
    function_ref<void(RewritePatternSet &)> addBackendPatterns) {
  static const char *const instructions[] = {"sqrt", "rsqrt", "fma", "absf",
                                             "floor", "ceil"};
  auto isNative = [&](StringRef name) {
    return llvm::is_contained(instructions, name) ||
           llvm::is_contained(native, name);
  };
  RewritePatternSet patterns(module.getContext());
  if (addBackendPatterns)
    addBackendPatterns(patterns);
  populateMathExpansionPatterns(patterns, /*benefit=*/2);
  math::populateExpansionPatterns(
      patterns, {"powf", "fpowi", "tan", "sinh", "cosh", "asinh", "acosh",
                 "atanh", "ctlz", "roundeven"});
  // MLIR's predicates get full op names ("math.exp").
  auto needsExpansion = [&](StringRef name) {
    name.consume_front("math.");
    return !isNative(name);
  };
  populateMathF32ExpansionPatterns(patterns, needsExpansion);
  // ceildiv, floordiv and friends as plain integer arithmetic (and nothing
  // else of arith-expand: maximumf/minimumf stay, for LLVM's
  // maximum/minimum, which order -0 below +0).
  arith::populateCeilFloorDivExpandOpsPatterns(patterns);
  populateMathPolynomialApproximationPatterns(patterns, needsExpansion);
  if (failed(applyPatternsGreedily(module, std::move(patterns))))
    return failure();

  // What is left of math must be an instruction: anything else would
  // become a library call. The backend's `native` functions are its
  // instructions for f32 and narrower types only.
  static const char *const leftovers[] = {
      "copysign", "trunc", "round", "roundeven", "absi", "ctpop", "ctlz",
      "cttz"};
  WalkResult r = module.walk([&](Operation *op) {
    if (!isa<math::MathDialect>(op->getDialect()))
      return WalkResult::advance();
    StringRef name = op->getName().stripDialect();
    bool f64 = llvm::any_of(op->getOperandTypes(), [](Type t) {
      return getElementTypeOrSelf(t).isF64();
    });
    if (llvm::is_contained(instructions, name) ||
        (!f64 && llvm::is_contained(native, name)) ||
        llvm::is_contained(leftovers, name))
      return WalkResult::advance();
    op->emitError("'") << op->getName() << "' on "
                       << getElementTypeOrSelf(op->getResult(0).getType())
                       << " is not supported by the " << backend
                       << " backend yet (it would need " << library << ")";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}
