//===- LegalizeFloats.cpp - kiln-host-legalize-floats ---------------------===//
//
// Float code the portable host baselines would get wrong or would lower to
// libgcc calls:
//
// 1. f16 <-> f32 conversions without F16C and without libgcc. Both directions
// are computed on the bit patterns (float arithmetic is used only where it
// is exact or rounds like the target format, under the default
// round-to-nearest-even mode):
//
//   f16 -> f32: move the exponent and mantissa into place and rebias;
//               infinities/NaNs get the f32 all-ones exponent; subnormals
//               are normalized by a float subtraction of a magic number.
//   f32 -> f16: values at or above 65520 overflow to infinity (NaN stays
//               a quiet NaN); values below 2^-14 become subnormals by a
//               float addition that rounds at the right bit; normal values
//               round to nearest even by adding 0xfff + the kept LSB.
//
// 2. f64 -> f16/bf16 conversions rounded once: through f32 rounded to odd
//    (truncated, its last bit set when inexact), which f32 -> f16/bf16 then
//    rounds to nearest even exactly as a direct conversion would (f32 keeps
//    more than two extra bits). Round to nearest even twice would be wrong
//    near the narrow type's ties, and LLVM would call libgcc's missing
//    __truncdfbf2. bf16 -> f64 goes through f32 (exact; upstream's bf16
//    expansion only widens to f32). Both also used by the emulator backend.
//
// 3. maximumf/minimumf as LLVM's maximum/minimum intrinsics (upstream
//    arith-expand's compare-and-select form gets signed zeros wrong).
//
// The second pass of this file, kiln-host-half-as-i16, retypes the f16/bf16
// values that remain in the LLVM dialect.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostPasses.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNHOSTHALFASI16
#define GEN_PASS_DEF_KILNHOSTLEGALIZEFLOATS
#include "codegen/host/HostPasses.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

Value i32c(OpBuilder &b, Location l, uint32_t v) {
  return arith::ConstantOp::create(b, l, b.getI32IntegerAttr(int32_t(v)));
}

/// f64 (or a vector of f64) -> f32 rounded to odd: the f32 nearer zero,
/// with its last mantissa bit set when the conversion is inexact. A NaN
/// stays a NaN, and a value past f32's range stays infinite.
Value truncateToF32Odd(OpBuilder &b, Location l, Value x) {
  Type f32T = kiln::getTypeSameShape(x.getType(), b.getF32Type());
  Type i32T = kiln::getTypeSameShape(x.getType(), b.getI32Type());
  auto i32Like = [&](int64_t v) {
    return createScalarOrSplatConstant(b, l, i32T, v);
  };
  Value t = arith::TruncFOp::create(b, l, f32T, x);
  Value back = arith::ExtFOp::create(b, l, x.getType(), t);
  // Inexact (a NaN too: it gets the odd bit, and stays a NaN); rounded
  // away from zero: one step back.
  Value inexact =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, back, x);
  Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(x.getType()));
  Value positive =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
  Value away = arith::SelectOp::create(
      b, l, positive,
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, back, x),
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, back, x));
  Value bits = arith::BitcastOp::create(b, l, i32T, t);
  Value stepped = arith::SelectOp::create(
      b, l, away, arith::SubIOp::create(b, l, bits, i32Like(1)), bits);
  Value odd = arith::OrIOp::create(b, l, stepped, i32Like(1));
  Value magnitude = arith::AndIOp::create(b, l, bits, i32Like(0x7fffffff));
  Value infinite = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                         magnitude, i32Like(0x7f800000));
  Value r = arith::SelectOp::create(
      b, l, infinite, bits, arith::SelectOp::create(b, l, inexact, odd, bits));
  return arith::BitcastOp::create(b, l, f32T, r);
}

Value bitsToF32(OpBuilder &b, Location l, Value v) {
  return arith::BitcastOp::create(b, l, b.getF32Type(), v);
}
Value f32ToBits(OpBuilder &b, Location l, Value v) {
  return arith::BitcastOp::create(b, l, b.getI32Type(), v);
}

/// f16 (as a value of type f16) -> f32.
Value extendF16(OpBuilder &b, Location l, Value h) {
  Value h16 = arith::BitcastOp::create(b, l, b.getI16Type(), h);
  Value x = arith::ExtUIOp::create(b, l, b.getI32Type(), h16);
  Value sign = arith::ShLIOp::create(
      b, l, arith::AndIOp::create(b, l, x, i32c(b, l, 0x8000)), i32c(b, l, 16));
  Value o = arith::ShLIOp::create(
      b, l, arith::AndIOp::create(b, l, x, i32c(b, l, 0x7fff)), i32c(b, l, 13));
  Value shiftedExp = i32c(b, l, 0x7c00u << 13);
  Value exp = arith::AndIOp::create(b, l, o, shiftedExp);
  Value rebased = arith::AddIOp::create(b, l, o, i32c(b, l, (127 - 15) << 23));
  // Inf / NaN: all-ones exponent.
  Value infNan = arith::AddIOp::create(b, l, rebased, i32c(b, l, (128 - 16) << 23));
  // Zero / subnormal: renormalize through the FPU (exact).
  Value sub = arith::AddIOp::create(b, l, rebased, i32c(b, l, 1u << 23));
  Value subF = arith::SubFOp::create(b, l, bitsToF32(b, l, sub),
                                     bitsToF32(b, l, i32c(b, l, 113u << 23)));
  Value subBits = f32ToBits(b, l, subF);
  Value isInfNan = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, shiftedExp);
  Value isSub = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, i32c(b, l, 0));
  Value r = arith::SelectOp::create(b, l, isInfNan, infNan, rebased);
  r = arith::SelectOp::create(b, l, isSub, subBits, r);
  r = arith::OrIOp::create(b, l, r, sign);
  return bitsToF32(b, l, r);
}

/// f32 -> f16 (round to nearest even).
Value truncateToF16(OpBuilder &b, Location l, Value f) {
  Value u = f32ToBits(b, l, f);
  Value sign = arith::AndIOp::create(b, l, u, i32c(b, l, 0x80000000u));
  Value a = arith::XOrIOp::create(b, l, u, sign); // |f|
  // Overflow (>= 65520 rounds to inf) and Inf/NaN.
  Value f32Inf = i32c(b, l, 255u << 23);
  Value f16Max = i32c(b, l, (127u + 16) << 23);
  Value isNan = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, a, f32Inf);
  Value big = arith::SelectOp::create(b, l, isNan, i32c(b, l, 0x7e00), i32c(b, l, 0x7c00));
  Value isBig = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, a, f16Max);
  // Subnormal results: let the FPU round at the f16 subnormal LSB.
  Value denormMagic = i32c(b, l, ((127u - 15) + (23 - 10) + 1) << 23);
  Value sum = arith::AddFOp::create(b, l, bitsToF32(b, l, a), bitsToF32(b, l, denormMagic));
  Value small = arith::SubIOp::create(b, l, f32ToBits(b, l, sum), denormMagic);
  Value isSmall = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, a,
                                        i32c(b, l, 113u << 23));
  // Normal results: rebias and round to nearest even.
  Value mantOdd = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, a, i32c(b, l, 13)), i32c(b, l, 1));
  Value n = arith::AddIOp::create(b, l, a, i32c(b, l, (uint32_t(15 - 127) << 23) + 0xfff));
  n = arith::AddIOp::create(b, l, n, mantOdd);
  n = arith::ShRUIOp::create(b, l, n, i32c(b, l, 13));
  Value r = arith::SelectOp::create(b, l, isSmall, small, n);
  r = arith::SelectOp::create(b, l, isBig, big, r);
  r = arith::OrIOp::create(b, l, r, arith::ShRUIOp::create(b, l, sign, i32c(b, l, 16)));
  Value r16 = arith::TruncIOp::create(b, l, b.getI16Type(), r);
  return arith::BitcastOp::create(b, l, b.getF16Type(), r16);
}

struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &r) const override {
    if (!op.getIn().getType().isF16())
      return failure();
    Value f = extendF16(r, op.getLoc(), op.getIn());
    if (!op.getType().isF32())
      f = arith::ExtFOp::create(r, op.getLoc(), op.getType(), f);
    r.replaceOp(op, f);
    return success();
  }
};

struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &r) const override {
    // f64 sources first go through f32 rounded to odd (TruncF64ToHalf).
    if (!op.getType().isF16() || !op.getIn().getType().isF32())
      return failure();
    r.replaceOp(op, truncateToF16(r, op.getLoc(), op.getIn()));
    return success();
  }
};

/// f64 -> f16/bf16 (scalars or vectors) as f64 -> f32 rounded to odd, then
/// f32 -> f16/bf16: one rounding to nearest even, as the direct conversion.
struct TruncF64ToHalf : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &r) const override {
    Type to = getElementTypeOrSelf(op.getType());
    if (!getElementTypeOrSelf(op.getIn().getType()).isF64() ||
        !(to.isF16() || to.isBF16()))
      return failure();
    Value odd = truncateToF32Odd(r, op.getLoc(), op.getIn());
    r.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), odd);
    return success();
  }
};

/// Integer <-> f16 conversions go through f32.
template <typename Op>
struct ViaF32 : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &r) const override {
    Location l = op.getLoc();
    if constexpr (std::is_same_v<Op, arith::FPToSIOp> ||
                  std::is_same_v<Op, arith::FPToUIOp>) {
      if (!op.getIn().getType().isF16())
        return failure();
      Value f = arith::ExtFOp::create(r, l, r.getF32Type(), op.getIn());
      r.replaceOpWithNewOp<Op>(op, op.getType(), f);
    } else {
      if (!op.getType().isF16())
        return failure();
      Value f = Op::create(r, l, r.getF32Type(), op.getIn());
      r.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), f);
    }
    return success();
  }
};

/// arith.maximumf / arith.minimumf on scalar f32/f64 -> llvm.intr.maximum /
/// llvm.intr.minimum (arith-expand's select form gets signed zero wrong).
template <typename Op, typename LLVMOp>
struct MinMaxToIntrinsic : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &r) const override {
    Type t = op.getType();
    if (!t.isF32() && !t.isF64())
      return failure();
    r.replaceOpWithNewOp<LLVMOp>(op, t, op.getLhs(), op.getRhs());
    return success();
  }
};

/// bf16 -> f64 (scalars or vectors) as bf16 -> f32 -> f64, both exact.
struct ExtBF16ToF64 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &r) const override {
    if (!getElementTypeOrSelf(op.getIn().getType()).isBF16() ||
        !getElementTypeOrSelf(op.getType()).isF64())
      return failure();
    Value f = arith::ExtFOp::create(
        r, op.getLoc(), kiln::getTypeSameShape(op.getType(), r.getF32Type()),
        op.getIn());
    r.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), f);
    return success();
  }
};

struct KilnHostLegalizeFloatsPass
    : kiln::impl::KilnHostLegalizeFloatsBase<KilnHostLegalizeFloatsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExtF, ExpandTruncF, TruncF64ToHalf, ExtBF16ToF64,
                 ViaF32<arith::FPToSIOp>,
                 ViaF32<arith::FPToUIOp>, ViaF32<arith::SIToFPOp>,
                 ViaF32<arith::UIToFPOp>,
                 MinMaxToIntrinsic<arith::MaximumFOp, LLVM::MaximumOp>,
                 MinMaxToIntrinsic<arith::MinimumFOp, LLVM::MinimumOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void kiln::populateHalfF64ConversionPatterns(RewritePatternSet &patterns) {
  patterns.add<TruncF64ToHalf, ExtBF16ToF64>(patterns.getContext(),
                                             /*benefit=*/2);
}

namespace {
struct KilnHostHalfAsI16Pass
    : kiln::impl::KilnHostHalfAsI16Base<KilnHostHalfAsI16Pass> {
  using Base::Base;

  bool isHalf(Type t) const { return t.isBF16() || (!bf16Only && t.isF16()); }
  /// The i16 form of a half type or a vector of one; null otherwise.
  Type asI16(Type t) const {
    Type i16 = IntegerType::get(t.getContext(), 16);
    if (isHalf(t))
      return i16;
    if (auto v = dyn_cast<VectorType>(t))
      if (isHalf(v.getElementType()))
        return v.clone(i16);
    return Type();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto retype = [&](Type t) {
      Type r = asI16(t);
      return r ? r : t;
    };
    bool failedOp = false;
    // Signatures first, so that calls and returns stay consistent.
    module.walk([&](LLVM::LLVMFuncOp fn) {
      auto type = fn.getFunctionType();
      SmallVector<Type> params;
      for (Type t : type.getParams())
        params.push_back(retype(t));
      fn.setFunctionType(LLVM::LLVMFunctionType::get(
          retype(type.getReturnType()), params, type.isVarArg()));
    });
    module.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(retype(arg.getType()));
      if (auto c = dyn_cast<LLVM::ConstantOp>(op)) {
        Type to = asI16(c.getType());
        if (!to)
          return;
        Attribute bits;
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          bits = IntegerAttr::get(to, f.getValue().bitcastToAPInt());
        else if (auto d = dyn_cast<DenseFPElementsAttr>(c.getValue()))
          bits = d.bitcast(IntegerType::get(&getContext(), 16));
        if (!bits) {
          op->emitError("f16/bf16 constant left after expansion");
          failedOp = true;
          return;
        }
        OpBuilder b(c);
        auto replacement = LLVM::ConstantOp::create(b, c.getLoc(), to,
                                                    cast<TypedAttr>(bits));
        c.replaceAllUsesWith(replacement.getResult());
        c.erase();
        return;
      }
      if (auto cast = dyn_cast<LLVM::BitcastOp>(op)) {
        Type from = retype(cast.getArg().getType());
        Type to = retype(cast.getType());
        if (from == to) {
          cast.replaceAllUsesWith(cast.getArg());
          cast.erase();
        } else {
          cast.getResult().setType(to);
        }
        return;
      }
      for (Value r : op->getResults()) {
        Type to = asI16(r.getType());
        if (!to)
          continue;
        if (!isa<LLVM::LoadOp, LLVM::SelectOp, LLVM::CallOp,
                 LLVM::ExtractValueOp, LLVM::UndefOp, LLVM::PoisonOp,
                 LLVM::FreezeOp, LLVM::ZeroOp, LLVM::ShuffleVectorOp,
                 LLVM::ExtractElementOp, LLVM::InsertElementOp>(op)) {
          op->emitError("f16/bf16 value left after expansion: ")
              << op->getName();
          failedOp = true;
          continue;
        }
        r.setType(to);
      }
    });
    if (failedOp)
      signalPassFailure();
  }
};
} // namespace
