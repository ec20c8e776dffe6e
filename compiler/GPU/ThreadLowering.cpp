//===- ThreadLowering.cpp - Helpers of the per-thread conversion ----------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln::gpu;

namespace kiln::gpu::threads {

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
}

SmallVector<Value, 3> hardwareCoords(OpBuilder &b, Location loc,
                                     const LinearLayout &l, Value lane,
                                     Value warp) {
  SmallVector<Value, 3> coords;
  Value zero = i32Const(b, loc, 0);
  for (size_t d = 0; d < l.getOutDims().size(); ++d)
    coords.push_back(zero);
  for (auto [kind, name] : {std::pair{HwIdKind::lane, dims::kLane},
                            std::pair{HwIdKind::warp, dims::kWarp}}) {
    if (!l.hasInDim(name))
      continue;
    Value id = kind == HwIdKind::lane ? lane : warp;
    if (!id)
      id = HwIdOp::create(b, loc, kind);
    for (int bit = 0; bit < l.getInDimSizeLog2(name); ++bit) {
      const LinearLayout::Basis &basis = l.getBasis(name, bit);
      // set = (id >> bit) & 1; coord ^= set * basis (a select of consts).
      Value set = arith::AndIOp::create(
          b, loc,
          arith::ShRUIOp::create(b, loc, id, i32Const(b, loc, bit)),
          i32Const(b, loc, 1));
      Value isSet = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          set, i32Const(b, loc, 0));
      for (auto [d, c] : llvm::enumerate(basis)) {
        if (c == 0)
          continue;
        Value term = arith::SelectOp::create(b, loc, isSet, i32Const(b, loc, c),
                                             i32Const(b, loc, 0));
        coords[d] = arith::XOrIOp::create(b, loc, coords[d], term);
      }
    }
  }
  return coords;
}

uint32_t hardwareBits(const LinearLayout &l) {
  uint32_t bits = 0;
  for (StringRef hw : {dims::kLane, dims::kWarp}) {
    if (!l.hasInDim(hw))
      continue;
    for (int bit = 0; bit < l.getInDimSizeLog2(hw); ++bit)
      bits |= uint32_t(l.getBasis(hw, bit)[0]);
  }
  return bits;
}

Value xorConstantSplit(OpBuilder &b, Location loc, Value hw, uint32_t hwBits,
                       int64_t c, int64_t scale) {
  int64_t overlap = c & int64_t(hwBits), rest = c & ~int64_t(hwBits);
  Value v = overlap ? arith::XOrIOp::create(b, loc, hw, i32Const(b, loc, overlap))
                          .getResult()
                    : hw;
  if (scale != 1)
    v = arith::MulIOp::create(b, loc, v, i32Const(b, loc, scale));
  if (rest)
    v = arith::AddIOp::create(b, loc, v, i32Const(b, loc, rest * scale));
  return v;
}

/// True for the one thread among the copies of each element (its lane and
/// warp bits that hold copies are zero); null when no thread holds copies.
Value ownerPredicate(OpBuilder &b, Location loc, const LinearLayout &l) {
  Value pred;
  for (auto [kind, name] : {std::pair{HwIdKind::lane, dims::kLane},
                            std::pair{HwIdKind::warp, dims::kWarp}}) {
    uint32_t free = l.getFreeVariableMask(name);
    if (!free)
      continue;
    Value id = HwIdOp::create(b, loc, kind);
    Value bits = arith::AndIOp::create(b, loc, id, i32Const(b, loc, free));
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         bits, i32Const(b, loc, 0));
    pred = pred ? arith::AndIOp::create(b, loc, pred, isZero) : isZero;
  }
  return pred;
}

/// Row-major element index (i32) of this thread's element in register
/// `r`, given the thread's part `hwFlat` (flatOf of hardwareCoords).
int64_t registerFlat(const LinearLayout &l, int32_t r) {
  SmallVector<int32_t, 3> rc = l.hasInDim(dims::kRegister)
                                   ? l.apply({{dims::kRegister, r}})
                                   : SmallVector<int32_t, 3>(
                                         l.getOutDims().size(), 0);
  int64_t flat = 0;
  for (auto [c, o] : llvm::zip(rc, l.getOutDims()))
    flat = flat * o.size + c;
  return flat;
}

/// Row-major element index of `coords` (one i32 per output of `l`).
Value flatOf(OpBuilder &b, Location loc, ArrayRef<Value> coords,
             ArrayRef<LinearLayout::OutDim> outs) {
  Value flat = i32Const(b, loc, 0);
  for (auto [c, d] : llvm::zip(coords, outs))
    flat = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, flat, i32Const(b, loc, d.size)),
        c);
  return flat;
}

/// The register part of register `r`'s coordinates.
SmallVector<int32_t, 3> registerCoords(const LinearLayout &l, int32_t r) {
  if (!l.hasInDim(dims::kRegister))
    return SmallVector<int32_t, 3>(l.getOutDims().size(), 0);
  return l.apply({{dims::kRegister, r}});
}

/// The layout of `type` with its outputs cut to `sizes` (coordinates
/// beyond them wrap: those threads read copies).
LinearLayout cutTo(const LinearLayout &l, ArrayRef<int64_t> sizes) {
  SmallVector<int32_t, 3> s(sizes.begin(), sizes.end());
  return l.fitToShape(s, dims::kRegister);
}

Value extractElement(OpBuilder &b, Location loc, Value vec, int64_t i) {
  return vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{i});
}

Value extractSlice(OpBuilder &b, Location loc, Value vec, int64_t i,
                   int64_t n) {
  return vector::ExtractStridedSliceOp::create(
      b, loc, vec, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{n},
      ArrayRef<int64_t>{1});
}

std::map<std::pair<int32_t, int32_t>, SmallVector<int64_t>>
instructionTiles(const LinearLayout &l, int32_t fragRegs, int32_t tileRows,
                 int32_t tileCols) {
  std::map<std::pair<int32_t, int32_t>, SmallVector<int64_t>> out;
  int32_t n = l.getInDimSize(dims::kRegister);
  for (int32_t r = 0; r < n; ++r) {
    SmallVector<int32_t, 3> rep = registerCoords(l, r & ~(fragRegs - 1));
    auto &regs = out[{rep[0] / tileRows, rep[1] / tileCols}];
    regs.resize(fragRegs, -1);
    regs[r & (fragRegs - 1)] = r;
  }
  return out;
}

Value gatherRegisters(OpBuilder &b, Location loc, Value vec,
                      ArrayRef<int64_t> regs) {
  auto vt = cast<VectorType>(vec.getType());
  auto part = VectorType::get({int64_t(regs.size())}, vt.getElementType());
  return vector::ShuffleOp::create(b, loc, part, vec, vec,
                                   b.getDenseI64ArrayAttr(regs));
}

} // namespace kiln::gpu::threads
