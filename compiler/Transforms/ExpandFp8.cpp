//===- ExpandFp8.cpp - tile-expand-fp8 ------------------------------------===//
//
// LLVM has no fp8 types: the LLVM type converter turns f8E4M3FN/f8E5M2 into
// i8, which is right for loads, stores, selects and the matrix
// instructions' packed operands, but nothing lowers a conversion from or to
// them. This pass computes those conversions on the bit patterns, the same
// way on every backend (and so in the GPU stage's per-thread form, which the
// CPU emulator runs):
//
//   f8 -> f32:  the magnitude's exponent and mantissa move into place and
//               are rebiased; subnormals are their integer mantissa times
//               2^(1 - bias - mantissa bits) (exact in f32, no f32
//               subnormal involved); E4M3FN's S.1111.111 is a quiet NaN,
//               E5M2's all-ones exponent is an infinity or a quiet NaN.
//               Other wider types extend or truncate the f32 (exact: every
//               fp8 value is an f16 and a bf16 value).
//   f32/f64 -> f8: round to nearest even at the fp8 mantissa's LSB (add
//               half an LSB minus one plus the kept LSB, shift); results
//               below the fp8 normal range round through one float
//               addition of 2^(source mantissa bits), which rounds at the
//               integer boundary; finite values beyond the largest finite
//               fp8 value saturate to it (docs/language.md, conversions),
//               E5M2 keeps infinities, NaN stays a NaN. f16/bf16 extend to
//               f32 first (exact, so the rounding happens once); f64
//               rounds from its own bits (no double rounding).
//
// Constants need nothing: the LLVM dialect keeps an fp8 constant's value
// on its i8 and the translation writes its bits.
//
// MLIRGen routes every other conversion that involves fp8 (integers, bool,
// f16/bf16) through f32, so extf and truncf are all there is to expand.
// The patterns build elementwise arith ops, so they apply to scalars,
// vectors and tensors alike.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_TILEEXPANDFP8
#include "compiler/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The two OCP formats.
struct Fp8Format {
  unsigned mantBits;
  int bias;
  bool hasInf;
  uint64_t maxFinite; // encoding of the largest finite magnitude
};

std::optional<Fp8Format> fp8Format(Type elem) {
  if (isa<Float8E4M3FNType>(elem))
    return Fp8Format{3, 7, false, 0x7e};
  if (isa<Float8E5M2Type>(elem))
    return Fp8Format{2, 15, true, 0x7b};
  return std::nullopt;
}

/// Builds elementwise ops of the shape of `like` (scalar, vector or
/// tensor).
struct Emitter {
  PatternRewriter &b;
  Location l;
  Type like;

  Type of(Type elem) const {
    if (auto s = dyn_cast<ShapedType>(like))
      return s.clone(elem);
    return elem;
  }
  Value constant(Type elem, TypedAttr scalar) const {
    Type t = of(elem);
    if (auto s = dyn_cast<ShapedType>(t))
      return arith::ConstantOp::create(b, l, DenseElementsAttr::get(s, scalar));
    return arith::ConstantOp::create(b, l, scalar);
  }
  Value ints(unsigned width, uint64_t v) const {
    return constant(b.getIntegerType(width),
                    b.getIntegerAttr(b.getIntegerType(width), APInt(width, v)));
  }
  Value floats(FloatType t, double v) const {
    return constant(t, b.getFloatAttr(t, v));
  }
  Value bitcast(Type elem, Value v) const {
    return arith::BitcastOp::create(b, l, of(elem), v);
  }
  template <typename Op> Value op(Value x, Value y) const {
    return Op::create(b, l, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, l, p, x, y);
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, l, c, x, y);
  }
};

/// fp8 value -> f32.
Value decode(const Emitter &e, const Fp8Format &f, Value x) {
  Type i8 = e.b.getI8Type(), i32 = e.b.getI32Type();
  Value u = arith::ExtUIOp::create(e.b, e.l, e.of(i32), e.bitcast(i8, x));
  Value mag = e.op<arith::AndIOp>(u, e.ints(32, 0x7f));
  Value sign = e.op<arith::ShLIOp>(e.op<arith::AndIOp>(u, e.ints(32, 0x80)),
                                   e.ints(32, 24));
  Value normal =
      e.op<arith::AddIOp>(e.op<arith::ShLIOp>(mag, e.ints(32, 23 - f.mantBits)),
                          e.ints(32, uint64_t(127 - f.bias) << 23));
  // Subnormals (and zero): mantissa * 2^(1 - bias - mantBits).
  Value subF = arith::MulFOp::create(
      e.b, e.l, arith::UIToFPOp::create(e.b, e.l, e.of(e.b.getF32Type()), mag),
      e.floats(e.b.getF32Type(),
               std::ldexp(1.0, 1 - f.bias - int(f.mantBits))));
  Value isSub = e.cmp(arith::CmpIPredicate::ult, mag,
                      e.ints(32, uint64_t(1) << f.mantBits));
  Value bits = e.select(isSub, e.bitcast(i32, subF), normal);
  if (f.hasInf) {
    Value infCode = e.ints(32, 0x7c);
    bits = e.select(e.cmp(arith::CmpIPredicate::eq, mag, infCode),
                    e.ints(32, 0x7f800000), bits);
    bits = e.select(e.cmp(arith::CmpIPredicate::ugt, mag, infCode),
                    e.ints(32, 0x7fc00000), bits);
  } else {
    bits = e.select(e.cmp(arith::CmpIPredicate::eq, mag, e.ints(32, 0x7f)),
                    e.ints(32, 0x7fc00000), bits);
  }
  return e.bitcast(e.b.getF32Type(), e.op<arith::OrIOp>(bits, sign));
}

/// f32 or f64 value -> fp8 of `to` (round to nearest even, saturating).
Value encode(const Emitter &e, const Fp8Format &f, Value x, Type to) {
  auto src = cast<FloatType>(getElementTypeOrSelf(x.getType()));
  unsigned w = src.getWidth();
  unsigned p = src.getFPMantissaWidth() - 1; // stored mantissa bits
  int srcBias = (1 << (w - p - 2)) - 1;
  Type iw = e.b.getIntegerType(w);
  Value u = e.bitcast(iw, x);
  Value signBit = e.op<arith::ShRUIOp>(u, e.ints(w, w - 1));
  Value a = e.op<arith::AndIOp>(u, e.ints(w, (uint64_t(1) << (w - 1)) - 1));
  uint64_t infBits = ((uint64_t(1) << (w - p - 1)) - 1) << p;
  // Normal fp8 results: round at bit (p - mantBits), rebias.
  unsigned shift = p - f.mantBits;
  Value lsb = e.op<arith::AndIOp>(e.op<arith::ShRUIOp>(a, e.ints(w, shift)),
                                  e.ints(w, 1));
  Value r = e.op<arith::AddIOp>(
      e.op<arith::AddIOp>(a, e.ints(w, (uint64_t(1) << (shift - 1)) - 1)), lsb);
  Value q = e.op<arith::SubIOp>(
      e.op<arith::ShRUIOp>(r, e.ints(w, shift)),
      e.ints(w, uint64_t(srcBias - f.bias) << f.mantBits));
  // Below the fp8 normal range: |x| * 2^(bias - 1 + mantBits) + 2^p
  // rounds to an integer in the float adder.
  Value scaled = arith::MulFOp::create(
      e.b, e.l, e.bitcast(src, a),
      e.floats(src, std::ldexp(1.0, f.bias - 1 + int(f.mantBits))));
  Value magic = e.floats(src, std::ldexp(1.0, int(p)));
  Value sub = e.op<arith::SubIOp>(
      e.bitcast(iw, arith::AddFOp::create(e.b, e.l, scaled, magic)),
      e.bitcast(iw, magic));
  Value minNormal = e.ints(w, uint64_t(srcBias + 1 - f.bias) << p);
  q = e.select(e.cmp(arith::CmpIPredicate::ult, a, minNormal), sub, q);
  q = arith::MinUIOp::create(e.b, e.l, q, e.ints(w, f.maxFinite));
  if (f.hasInf)
    q = e.select(e.cmp(arith::CmpIPredicate::eq, a, e.ints(w, infBits)),
                 e.ints(w, 0x7c), q);
  q = e.select(e.cmp(arith::CmpIPredicate::ugt, a, e.ints(w, infBits)),
               e.ints(w, 0x7f), q);
  q = e.op<arith::OrIOp>(q, e.op<arith::ShLIOp>(signBit, e.ints(w, 7)));
  Value q8 = arith::TruncIOp::create(e.b, e.l, e.of(e.b.getI8Type()), q);
  return e.bitcast(to, q8);
}

/// The source of a conversion to fp8 as f32 or f64, what encode takes:
/// truncf's f16/bf16 widened (exact), an integer converted to f32 (the one
/// rounding; arith's canonicalization folds the front end's integer -> f32
/// -> fp8, a truncf of a sitofp, into one sitofp to fp8); null for any
/// other source.
Value wideSource(Emitter &e, arith::TruncFOp op) {
  Value in = op.getIn();
  Type src = getElementTypeOrSelf(in.getType());
  if (src.isF16() || src.isBF16())
    return arith::ExtFOp::create(e.b, e.l, e.of(e.b.getF32Type()), in);
  return src.isF32() || src.isF64() ? in : Value();
}
template <typename IntToFloat>
Value wideSource(Emitter &e, IntToFloat op) {
  return IntToFloat::create(e.b, e.l, e.of(e.b.getF32Type()), op.getIn());
}

/// An fp8 value decoded to f32 (exact) as the result of the conversion
/// `op` from fp8: extf widened or rounded to its type, an integer
/// conversion (the same folding, the other way) applied to it.
Value fromDecoded(Emitter &e, arith::ExtFOp op, Value v) {
  Type dst = getElementTypeOrSelf(op.getType());
  if (dst.getIntOrFloatBitWidth() > 32)
    return arith::ExtFOp::create(e.b, e.l, op.getType(), v);
  if (!dst.isF32())
    return arith::TruncFOp::create(e.b, e.l, op.getType(), v);
  return v;
}
template <typename FloatToInt>
Value fromDecoded(Emitter &e, FloatToInt op, Value v) {
  return FloatToInt::create(e.b, e.l, op.getType(), v);
}

/// A conversion to fp8 (truncf, sitofp, uitofp): encoded from f32 or f64.
template <typename Op>
struct ExpandToFp8 : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &r) const override {
    Type dst = getElementTypeOrSelf(op.getType());
    auto f = fp8Format(dst);
    if (!f)
      return failure();
    Emitter e{r, op.getLoc(), op.getType()};
    Value in = wideSource(e, op);
    if (!in)
      return op.emitOpError("cannot expand a conversion from ")
             << getElementTypeOrSelf(op.getIn().getType()) << " to " << dst;
    r.replaceOp(op, encode(e, *f, in, dst));
    return success();
  }
};

/// A conversion from fp8 (extf, fptosi, fptoui): decoded to f32 first.
template <typename Op>
struct ExpandFromFp8 : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &r) const override {
    auto f = fp8Format(getElementTypeOrSelf(op.getIn().getType()));
    if (!f)
      return failure();
    Emitter e{r, op.getLoc(), op.getType()};
    r.replaceOp(op, fromDecoded(e, op, decode(e, *f, op.getIn())));
    return success();
  }
};

} // namespace

Type kiln::getFp8Carrier(Type t) {
  Type i8 = IntegerType::get(t.getContext(), 8);
  if (fp8Format(t))
    return i8;
  if (auto s = dyn_cast<ShapedType>(t))
    if (s.hasRank() && fp8Format(s.getElementType()))
      return s.clone(i8);
  return Type();
}

namespace {

/// Retypes every fp8 value to i8 (see the pass's `as-i8`).
LogicalResult carryAsI8(Operation *root) {
  auto retype = [](Type t) {
    Type c = kiln::getFp8Carrier(t);
    return c ? c : t;
  };
  auto retypeAll = [&](TypeRange types) {
    SmallVector<Type> out;
    for (Type t : types)
      out.push_back(retype(t));
    return out;
  };
  LogicalResult result = success();
  root->walk([&](Operation *op) {
    if (auto fn = dyn_cast<FunctionOpInterface>(op))
      if (auto type = dyn_cast<FunctionType>(fn.getFunctionType()))
        fn.setType(FunctionType::get(op->getContext(),
                                     retypeAll(type.getInputs()),
                                     retypeAll(type.getResults())));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(retype(arg.getType()));
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      Type to = kiln::getFp8Carrier(c.getType());
      if (!to)
        return;
      TypedAttr bits;
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        bits = IntegerAttr::get(to, f.getValue().bitcastToAPInt());
      else if (auto d = dyn_cast<DenseElementsAttr>(c.getValue()))
        bits = d.bitcast(getElementTypeOrSelf(to));
      if (!bits) {
        result = c.emitOpError("has an fp8 value of an unexpected form");
        return;
      }
      OpBuilder b(c);
      c.replaceAllUsesWith(
          arith::ConstantOp::create(b, c.getLoc(), bits).getResult());
      c.erase();
      return;
    }
    if (auto cast = dyn_cast<arith::BitcastOp>(op)) {
      if (retype(cast.getIn().getType()) == retype(cast.getType())) {
        cast.getOut().replaceAllUsesWith(cast.getIn());
        cast.erase();
        return;
      }
    }
    for (Value r : op->getResults())
      r.setType(retype(r.getType()));
  });
  return result;
}

struct TileExpandFp8Pass
    : kiln::impl::TileExpandFp8Base<TileExpandFp8Pass> {
  using Base::Base;
  void runOnOperation() override {
    // Nothing to expand or retype without an fp8 value: skip the rewrite
    // driver, whose folding sweep over the whole module is most of this
    // pass's time (it runs on every variant, fp8 or not).
    auto hasFp8 = [](TypeRange types) {
      return llvm::any_of(types,
                          [](Type t) { return kiln::getFp8Carrier(t); });
    };
    WalkResult found = getOperation()->walk([&](Operation *op) {
      if (hasFp8(op->getResultTypes()))
        return WalkResult::interrupt();
      if (auto fn = dyn_cast<FunctionOpInterface>(op))
        if (hasFp8(fn.getArgumentTypes()) || hasFp8(fn.getResultTypes()))
          return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (hasFp8(block.getArgumentTypes()))
            return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!found.wasInterrupted())
      return;
    RewritePatternSet patterns(&getContext());
    kiln::populateExpandFp8Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (asI8 && failed(carryAsI8(getOperation())))
      signalPassFailure();
  }
};

} // namespace

void kiln::populateExpandFp8Patterns(RewritePatternSet &patterns) {
  patterns.add<ExpandToFp8<arith::TruncFOp>, ExpandToFp8<arith::SIToFPOp>,
               ExpandToFp8<arith::UIToFPOp>, ExpandFromFp8<arith::ExtFOp>,
               ExpandFromFp8<arith::FPToSIOp>, ExpandFromFp8<arith::FPToUIOp>>(
      patterns.getContext());
}
