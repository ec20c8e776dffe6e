//===- MathExpansion.cpp - Math functions as arithmetic, for GPUs ---------===//

#include "compiler/GPU/MathExpansion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

/// sin(x) or cos(x) for f32 x. With k = round(x * 2/pi) and
/// r = x - k * pi/2 (pi/2 split into three f32 parts, each subtracted with
/// one rounding), |r| <= pi/4 and
///   sin(x) = [sin r, cos r, -sin r, -cos r][k mod 4],
///   cos(x) = [cos r, -sin r, -cos r, sin r][k mod 4].
/// The Taylor polynomials below (through r^9 and r^10) are within 2e-9 of
/// sin and cos on [-pi/4, pi/4]; the result is within a few f32 ulps of 1.
/// k mod 4 is computed in floating point (exact below 2^24; beyond, the
/// result is some value in [-1, 1]), so nothing converts to an integer.
/// Infinities and NaN give NaN.
template <typename OpTy, bool IsCos>
struct TrigExpansion : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    auto c = [&](double v) -> Value {
      FloatAttr f = b.getF32FloatAttr(float(v));
      if (auto shaped = dyn_cast<ShapedType>(type))
        return arith::ConstantOp::create(b, DenseElementsAttr::get(shaped, f));
      return arith::ConstantOp::create(b, f);
    };
    auto mul = [&](Value x, Value y) { return arith::MulFOp::create(b, x, y); };
    auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, x, y); };
    auto fma = [&](Value x, Value y, Value z) {
      return math::FmaOp::create(b, x, y, z);
    };
    auto select = [&](Value cond, Value x, Value y) {
      return arith::SelectOp::create(b, cond, x, y);
    };
    auto oeq = [&](Value x, Value y) {
      return arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x, y);
    };

    Value x = op.getOperand();
    Value k = math::RoundEvenOp::create(b, mul(x, c(0.63661977236758134)));
    Value negK = arith::NegFOp::create(b, k);
    // pi/2 = 1.5707963705062866 - 4.371138828673793e-08
    //        - 1.7151245100058819e-15 (+ 1.1e-23), each part an f32.
    Value r = fma(negK, c(1.5707963705062866), x);
    r = fma(negK, c(-4.371138828673793e-08), r);
    r = fma(negK, c(-1.7151245100058819e-15), r);
    Value r2 = mul(r, r);
    // sin r = r + r^3 (-1/3! + r^2 (1/5! + r^2 (-1/7! + r^2 / 9!)))
    Value ps = fma(r2, c(1.0 / 362880), c(-1.0 / 5040));
    ps = fma(r2, ps, c(1.0 / 120));
    ps = fma(r2, ps, c(-1.0 / 6));
    Value sinR = fma(mul(r2, r), ps, r);
    // cos r = 1 + r^2 (-1/2! + r^2 (1/4! + r^2 (-1/6! + r^2 (1/8! -
    //         r^2 / 10!))))
    Value pc = fma(r2, c(-1.0 / 3628800), c(1.0 / 40320));
    pc = fma(r2, pc, c(-1.0 / 720));
    pc = fma(r2, pc, c(1.0 / 24));
    pc = fma(r2, pc, c(-0.5));
    Value cosR = fma(r2, pc, c(1.0));
    // q = k mod 4 in {0, 1, 2, 3}; cos(x) = sin(x + pi/2): quadrant q + 1.
    Value q = arith::SubFOp::create(
        b, k, mul(c(4.0), math::FloorOp::create(b, mul(k, c(0.25)))));
    if (IsCos)
      q = select(oeq(q, c(3.0)), c(0.0), add(q, c(1.0)));
    Value odd = arith::OrIOp::create(b, oeq(q, c(1.0)), oeq(q, c(3.0)));
    Value value = select(odd, cosR, sinR);
    Value negative = arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, q,
                                           c(2.0));
    rewriter.replaceOp(op, select(negative, arith::NegFOp::create(b, value),
                                  value));
    return success();
  }
};

} // namespace

void kiln::gpu::populateTrigExpansionPatterns(RewritePatternSet &patterns,
                                              unsigned benefit) {
  patterns.add<TrigExpansion<math::SinOp, false>,
               TrigExpansion<math::CosOp, true>>(patterns.getContext(),
                                                 benefit);
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
  populateTrigExpansionPatterns(patterns, /*benefit=*/2);
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
  // become a library call (f64 transcendental functions, today).
  static const char *const leftovers[] = {
      "copysign", "trunc", "round", "roundeven", "absi", "ctpop", "ctlz",
      "cttz"};
  WalkResult r = module.walk([&](Operation *op) {
    if (!isa<math::MathDialect>(op->getDialect()))
      return WalkResult::advance();
    StringRef name = op->getName().stripDialect();
    if (isNative(name) || llvm::is_contained(leftovers, name))
      return WalkResult::advance();
    op->emitError("'") << op->getName() << "' on "
                       << getElementTypeOrSelf(op->getResult(0).getType())
                       << " is not supported by the " << backend
                       << " backend yet (it would need " << library << ")";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}
