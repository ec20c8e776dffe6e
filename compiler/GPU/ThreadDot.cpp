//===- ThreadDot.cpp - Matrix products per warp -----------------------------===//
//
// kiln.dot in the per-thread form: one `kiln_gpu.mma` of the target's
// matrix instruction per instruction tile and K step. Instructions that
// read FNUZ fp8 get OCP operands re-encoded to half their value and an
// accumulator divided by 4 around them; a loop that carries such an
// accumulator then carries it divided (hoistAccumulatorScaling).
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <map>

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

namespace {

/// Marks the multiplications of an accumulator by 1/4 and 4 around
/// FNUZ instructions, the only ones hoistAccumulatorScaling moves.
constexpr llvm::StringLiteral kFnuzScaleAttr = "kiln_gpu.fnuz_scale";

/// `v` * `factor` (a power of two), marked as FNUZ accumulator scaling.
Value scaleAccumulator(OpBuilder &b, Location loc, Value v, double factor) {
  auto vt = cast<VectorType>(v.getType());
  Value k = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(
                  vt, b.getFloatAttr(vt.getElementType(), factor)));
  auto mul = arith::MulFOp::create(b, loc, v, k);
  mul->setAttr(kFnuzScaleAttr, b.getUnitAttr());
  return mul;
}

/// An fp8 operand (OCP E4M3FN or E5M2 bytes) re-encoded for an instruction
/// that reads FNUZ fp8: every byte unchanged reads as half its OCP value
/// (the FNUZ exponent bias is one higher, subnormals included) except -0
/// (0x80, the FNUZ NaN), which becomes 0, and OCP's NaNs and infinities,
/// which become the FNUZ NaN 0x80 (their bits are finite FNUZ values).
/// Computed on 32-bit words, four bytes at a time, with byte-replicated
/// masks (no carry crosses a byte: each sum stays below 0x100).
Value encodeFnuz(OpBuilder &b, Location loc, Value v) {
  auto vt = cast<VectorType>(v.getType());
  bool e4m3 = isa<Float8E4M3FNType>(vt.getElementType());
  int64_t n = vt.getNumElements();
  auto bytesType = VectorType::get({n}, b.getI8Type());
  Value x = arith::BitcastOp::create(b, loc, bytesType, v);
  bool words = n % 4 == 0;
  VectorType wordType =
      words ? VectorType::get({n / 4}, b.getI32Type()) : bytesType;
  if (words)
    x = vector::BitCastOp::create(b, loc, wordType, x);
  auto constant = [&](uint32_t word) -> Value {
    unsigned width = wordType.getElementTypeBitWidth();
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(
                    wordType, IntegerAttr::get(wordType.getElementType(),
                                               APInt(width, word & (width == 32
                                                                    ? ~0u
                                                                    : 0xffu)))));
  };
  // `byte` in every byte of a lane.
  auto splat = [&](uint8_t byte) {
    return constant(words ? byte * 0x01010101u : byte);
  };
  Value high = splat(0x80);
  Value low7 = arith::AndIOp::create(b, loc, x, splat(0x7f));
  // 0xff in each byte whose low 7 bits are not all zero, else 0x7f (so
  // -0 loses its sign): low7 + 0x7f carries into the high bit.
  Value keepSign = arith::OrIOp::create(
      b, loc, arith::AddIOp::create(b, loc, low7, splat(0x7f)), splat(0x7f));
  // High bit of each byte that is a NaN (E4M3: low 7 bits all ones) or,
  // for E5M2, a NaN or an infinity (exponent all ones).
  Value special = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, low7, splat(e4m3 ? 0x01 : 0x04)),
      high);
  // 0x7f in each special byte: cleared, then the byte is 0x80.
  Value fill = arith::SubIOp::create(
      b, loc, special, arith::ShRUIOp::create(b, loc, special, constant(7)));
  Value kept = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, x, keepSign),
      arith::XOrIOp::create(b, loc, fill, constant(~0u)));
  Value out = arith::OrIOp::create(b, loc, kept, special);
  if (words)
    out = vector::BitCastOp::create(b, loc, bytesType, out);
  return arith::BitcastOp::create(b, loc, vt, out);
}

/// kiln.dot with matrix-instruction layouts: for each (M tile, N tile) of
/// the warp's share of the accumulator and each K step, one
/// `kiln_gpu.mma` on the registers the operand layouts put there.
struct DotPattern : ThreadPattern<kiln::DotOp> {
  using ThreadPattern::ThreadPattern;

  LogicalResult
  matchAndRewrite(kiln::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    if (isa<BlockedAttr>(op.getType().getEncoding()))
      return lowerWithFMA(op, adaptor, b);
    auto mma = dyn_cast<MmaAttr>(op.getType().getEncoding());
    if (!mma)
      return op.emitOpError("has no matrix-instruction layout");
    const MatrixInstr *instr = lookupMatrixInstr(mma.getInstr());
    if (instr->groupWarps > 1)
      return lowerWarpgroupDot(op, adaptor.getA(), adaptor.getB(),
                               adaptor.getAcc(), b, c, *instr, mma);
    ArrayRef<int32_t> warps = mma.getWarpsPerBlock();
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    LinearLayout la = getLinearLayout(aType), lb = getLinearLayout(bType),
                 lc = getLinearLayout(op.getType());
    // The repeats of each operand start at multiples of the instruction
    // tile times the warps along that dimension. A transposed layout feeds
    // the instruction's A operand from B and its B operand from A.
    int32_t rowsA = mma.getTileRows() * warps[0], rowsC = rowsA;
    int32_t colsB = mma.getTileCols() * warps[1], colsC = colsB;
    auto regs = [](const LinearLayout &f) {
      return f.getInDimSize(dims::kRegister);
    };
    auto aTiles =
        instructionTiles(la, regs(mma.getFragment(0)), rowsA, instr->k);
    auto bTiles =
        instructionTiles(lb, regs(mma.getFragment(1)), instr->k, colsB);
    auto cTiles = instructionTiles(lc, regs(mma.getFragment(2)), rowsC, colsC);
    int32_t kSteps = int32_t(aType.getShape()[1] / instr->k);

    auto gather = [&](Value vec, ArrayRef<int64_t> regs) {
      return gatherRegisters(b, loc, vec, regs);
    };
    Value acc = adaptor.getAcc();
    auto accType = cast<VectorType>(acc.getType());
    // FNUZ fp8: the instruction computes (A / 2)(B / 2) + C, so C is the
    // accumulator / 4, and the result times 4.
    if (instr->fnuzOperands)
      acc = scaleAccumulator(b, loc, acc, 0.25);
    SmallVector<Value> accRegs;
    for (int64_t r = 0; r < accType.getNumElements(); ++r)
      accRegs.push_back(extractElement(b, loc, acc, r));
    // K steps outermost: each K step's operands feed every instruction
    // tile that reads them and are dead after it (a tile-by-tile order
    // keeps a row of tiles' A and a column's B live across the other
    // tiles, and chains dependent instructions back to back). Each tile
    // still accumulates its K steps in ascending order.
    SmallVector<Value> cs;
    for (auto &[mn, cRegs] : cTiles) {
      if (llvm::is_contained(cRegs, -1))
        return op.emitOpError("accumulator layout does not cover whole "
                              "instruction tiles");
      cs.push_back(gather(acc, cRegs));
    }
    for (int32_t k = 0; k < kSteps; ++k) {
      for (auto [t, tile] : llvm::enumerate(cTiles)) {
        const auto &mn = tile.first;
        auto ai = aTiles.find({mn.first, k});
        auto bi = bTiles.find({k, mn.second});
        if (ai == aTiles.end() || bi == bTiles.end())
          return op.emitOpError("operand layouts do not cover the tile");
        Value a = gather(adaptor.getA(), ai->second);
        Value bv = gather(adaptor.getB(), bi->second);
        if (getTestFault("swap-mma-lanes")) {
          // Test fault (docs/emulator.md): lanes 0 and 1 exchange their A
          // registers, as a wrong operand layout would.
          a = swapLanes01(b, loc, a);
        }
        if (instr->tf32) {
          // The instruction reads tf32 operands from f32 registers (the
          // hardware ignores their low bits); kiln rounds to nearest even
          // first, as the host and the FMA path do.
          a = buildRoundToTF32(b, loc, a);
          bv = buildRoundToTF32(b, loc, bv);
        }
        if (instr->fnuzOperands) {
          a = encodeFnuz(b, loc, a);
          bv = encodeFnuz(b, loc, bv);
        }
        if (mma.getTransposed())
          std::swap(a, bv);
        cs[t] = MmaOp::create(b, loc, cs[t].getType(), instr->name, a, bv,
                              cs[t]);
      }
    }
    for (auto [t, entry] : llvm::enumerate(cTiles))
      for (auto [j, r] : llvm::enumerate(entry.second))
        accRegs[r] = extractElement(b, loc, cs[t], j);
    Value result = vector::FromElementsOp::create(b, loc, accType, accRegs);
    if (instr->fnuzOperands)
      result = scaleAccumulator(b, loc, result, 4.0);
    b.replaceOp(op, result);
    return success();
  }

  /// Each register of lane 0 and lane 1 taken from the other one.
  static Value swapLanes01(ConversionPatternRewriter &b, Location loc,
                           Value vec) {
    Value lane = HwIdOp::create(b, loc, HwIdKind::lane);
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                      i32Const(b, loc, 2));
    Value src = arith::SelectOp::create(
        b, loc, low,
        arith::XOrIOp::create(b, loc, lane, i32Const(b, loc, 1)), lane);
    auto vt = cast<VectorType>(vec.getType());
    SmallVector<Value> regs;
    for (int64_t r = 0; r < vt.getNumElements(); ++r)
      regs.push_back(ShuffleOp::create(b, loc, vt.getElementType(),
                                       ShuffleKind::idx,
                                       extractElement(b, loc, vec, r), src));
    return vector::FromElementsOp::create(b, loc, vt, regs);
  }

  /// Scalar FMAs: each accumulator register adds the products over K of
  /// the A row and B column this thread holds (DotOperandAttr puts them in
  /// its registers), in K order, computed in the accumulator's type.
  LogicalResult lowerWithFMA(kiln::DotOp op, OpAdaptor adaptor,
                             ConversionPatternRewriter &b) const {
    Location loc = op.getLoc();
    auto aType = cast<RankedTensorType>(op.getA().getType());
    LinearLayout la = getLinearLayout(aType),
                 lb = getLinearLayout(cast<RankedTensorType>(op.getB().getType())),
                 lc = getLinearLayout(op.getType());
    // The register holding each element's register part of the coordinates.
    auto index = [](const LinearLayout &l) {
      std::map<std::pair<int32_t, int32_t>, int64_t> regs;
      for (int32_t r = 0; r < l.getInDimSize(dims::kRegister); ++r) {
        SmallVector<int32_t, 3> c = registerCoords(l, r);
        regs.insert({{c[0], c[1]}, r});
      }
      return regs;
    };
    auto aRegs = index(la), bRegs = index(lb);
    int64_t k = aType.getShape()[1];
    Type accElem = getElementTypeOrSelf(op.getType());
    bool isFloat = isa<FloatType>(accElem);
    auto widen = [&](Value v) -> Value {
      if (v.getType() == accElem)
        return v;
      if (isFloat)
        return arith::ExtFOp::create(b, loc, accElem, v);
      return arith::ExtSIOp::create(b, loc, accElem, v);
    };
    Value acc = adaptor.getAcc();
    auto accType = cast<VectorType>(acc.getType());
    // The A and B registers each accumulator register reads, per K step.
    int64_t numAcc = accType.getNumElements();
    SmallVector<std::pair<int64_t, int64_t>> operands(numAcc * k);
    for (int64_t r = 0; r < numAcc; ++r) {
      SmallVector<int32_t, 3> c = registerCoords(lc, int32_t(r));
      for (int32_t kk = 0; kk < k; ++kk) {
        auto ai = aRegs.find({c[0], kk});
        auto bi = bRegs.find({kk, c[1]});
        if (ai == aRegs.end() || bi == bRegs.end())
          return op.emitOpError("operand layouts do not cover the product");
        operands[kk * numAcc + r] = {ai->second, bi->second};
      }
    }
    // K steps outermost, each operand register widened (and rounded) once
    // where it is first read: a K step's A column and B row are dead after
    // it, so the operands live for one step rather than the whole product
    // (an accumulator-by-accumulator order keeps every operand register
    // live to the end, which spilled from K = 64 on). Each accumulator
    // still adds its products in ascending K order.
    auto operand = [&](Value vec, int64_t reg,
                       DenseMap<int64_t, Value> &cache) -> Value {
      Value &v = cache[reg];
      if (!v) {
        v = widen(extractElement(b, loc, vec, reg));
        if (op.getPrecision() == DotPrecision::tf32)
          // Round f32 operands to tf32 (10 mantissa bits, to nearest even)
          // as the host does: kiln's tf32 semantics on every target.
          v = buildRoundToTF32(b, loc, v);
      }
      return v;
    };
    DenseMap<int64_t, Value> aCache, bCache;
    SmallVector<Value> out;
    for (int64_t r = 0; r < numAcc; ++r)
      out.push_back(extractElement(b, loc, acc, r));
    for (int32_t kk = 0; kk < k; ++kk) {
      for (int64_t r = 0; r < numAcc; ++r) {
        auto [aReg, bReg] = operands[kk * numAcc + r];
        Value x = operand(adaptor.getA(), aReg, aCache);
        Value y = operand(adaptor.getB(), bReg, bCache);
        Value &sum = out[r];
        sum = isFloat ? Value(math::FmaOp::create(b, loc, x, y, sum))
                      : Value(arith::AddIOp::create(
                            b, loc, sum, arith::MulIOp::create(b, loc, x, y)));
      }
    }
    b.replaceOpWithNewOp<vector::FromElementsOp>(op, accType, out);
    return success();
  }

};

} // namespace

/// The factor of a marked accumulator scaling `op` (a splat constant), or 0.
static double fnuzScaleFactor(Operation *op) {
  auto mul = dyn_cast_or_null<arith::MulFOp>(op);
  if (!mul || !mul->hasAttr(kFnuzScaleAttr))
    return 0;
  DenseElementsAttr k;
  if (!matchPattern(mul.getRhs(), m_Constant(&k)) || !k.isSplat())
    return 0;
  return k.getSplatValue<APFloat>().convertToDouble();
}

void kiln::gpu::threads::hoistAccumulatorScaling(Operation *root) {
  // Back-to-back products on one accumulator: (x * 4) / 4 is x.
  auto cancelPairs = [root] {
    root->walk([](arith::MulFOp quarter) {
      Operation *times4 = quarter.getLhs().getDefiningOp();
      if (fnuzScaleFactor(quarter) != 0.25 || fnuzScaleFactor(times4) != 4.0)
        return;
      quarter.replaceAllUsesWith(times4->getOperand(0));
      quarter.erase();
      if (times4->use_empty())
        times4->erase();
    });
  };
  cancelPairs();
  // Inner loops first: an outer loop then sees the scaling moved out of
  // the inner one around its own accumulator.
  root->walk<WalkOrder::PostOrder>([](scf::ForOp loop) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
      BlockArgument arg = loop.getRegionIterArgs()[i];
      Operation *yielded = yield.getOperand(i).getDefiningOp();
      if (!arg.hasOneUse() || !yielded || !yielded->hasOneUse())
        continue;
      Operation *entry = *arg.getUsers().begin();
      if (fnuzScaleFactor(entry) != 0.25 || fnuzScaleFactor(yielded) != 4.0 ||
          entry->getOperand(0) != arg)
        continue;
      // Carry the accumulator / 4: scale the initial value, drop both
      // scalings inside, scale the result back after the loop.
      OpBuilder b(loop);
      Value init = loop.getInitArgs()[i];
      loop.getInitArgsMutable()[i].assign(
          scaleAccumulator(b, loop.getLoc(), init, 0.25));
      entry->getResult(0).replaceAllUsesWith(arg);
      entry->erase();
      yield.setOperand(i, yielded->getOperand(0));
      yielded->erase();
      b.setInsertionPointAfter(loop);
      Value result = loop.getResult(i);
      Value scaled = scaleAccumulator(b, loop.getLoc(), result, 4.0);
      result.replaceAllUsesExcept(scaled, scaled.getDefiningOp());
    }
  });
  // Pairs the hoisting made: a loop's result feeding the next loop's
  // initial value, or a product after the loop.
  cancelPairs();
}

void kiln::gpu::threads::populateDotPatterns(const TypeConverter &tc,
    RewritePatternSet &patterns, const Context &c) {
  patterns.add<DotPattern>(tc, patterns.getContext(), c);
}
