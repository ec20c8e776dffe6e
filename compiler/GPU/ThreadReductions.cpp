//===- ThreadReductions.cpp - Reductions and scans per thread ---------------===//
//
// kiln.reduce and kiln.scan in the per-thread form: within a thread's
// registers, across the lanes of a warp with shuffles, across warps
// through shared memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

namespace {

/// kiln.reduce: within each thread over its registers, then across the
/// lanes along the axis with xor shuffles, then across the warps along the
/// axis through shared memory. Every thread ends with the result elements
/// its slice layout gives it (all of them for a 1-d reduction).
struct ReducePattern : ThreadPattern<kiln::ReduceOp> {
  using ThreadPattern::ThreadPattern;

  LogicalResult
  matchAndRewrite(kiln::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RankedTensorType>(op.getSrcs()[0].getType());
    LinearLayout l = getLinearLayout(srcType);
    unsigned axis = op.getAxis();
    std::string axisDim = dims::tileDim(axis);
    int axisOut = -1;
    for (auto [k, o] : llvm::enumerate(l.getOutDims()))
      if (o.name == axisDim)
        axisOut = k;
    assert(axisOut >= 0 && "the axis is an output of the layout");
    unsigned n = op.getSrcs().size();
    Region &combiner = op.getCombiner();

    // Bits of an input that move along the axis only (reduced over), or
    // across it only (kept); a basis doing both needs another layout.
    auto alongAxis = [&](StringRef in, int bit) {
      const LinearLayout::Basis &basis = l.getBasis(in, bit);
      bool along = basis[axisOut] != 0, across = false;
      for (auto [k, c] : llvm::enumerate(basis))
        if (int(k) != axisOut && c != 0)
          across = true;
      return std::pair{along, across};
    };
    for (StringRef in : {dims::kRegister, dims::kLane, dims::kWarp})
      for (int bit = 0; bit < l.getInDimSizeLog2(in); ++bit) {
        auto [along, across] = alongAxis(in, bit);
        if (along && across)
          return op.emitOpError("reduces a tile whose layout mixes the "
                                "reduced axis with others");
      }

    // 1. In-thread: registers that differ only along the axis.
    SmallVector<SmallVector<Value>> srcs;
    for (Value v : adaptor.getSrcs()) {
      SmallVector<Value> regs;
      auto vt = cast<VectorType>(v.getType());
      for (int64_t r = 0; r < vt.getNumElements(); ++r)
        regs.push_back(extractElement(b, loc, v, r));
      srcs.push_back(std::move(regs));
    }
    uint32_t axisRegs = 0;
    for (int bit = 0; bit < l.getInDimSizeLog2(dims::kRegister); ++bit)
      if (alongAxis(dims::kRegister, bit).first)
        axisRegs |= uint32_t(1) << bit;
    // key: the register index with the axis bits cleared.
    llvm::MapVector<uint32_t, SmallVector<Value>> acc;
    int32_t numRegs = l.getInDimSize(dims::kRegister);
    for (int32_t r = 0; r < numRegs; ++r) {
      uint32_t key = uint32_t(r) & ~axisRegs;
      SmallVector<Value> fresh;
      for (unsigned i = 0; i < n; ++i)
        fresh.push_back(srcs[i][r]);
      auto it = acc.find(key);
      if (it == acc.end())
        acc.insert({key, fresh});
      else
        it->second = cloneCombiner(b, combiner, it->second, fresh);
    }

    // 2. Across lanes: xor shuffles over the lane bits along the axis.
    for (int bit = 0; bit < l.getInDimSizeLog2(dims::kLane); ++bit) {
      if (!alongAxis(dims::kLane, bit).first)
        continue;
      Value offset = i32Const(b, loc, int64_t(1) << bit);
      for (auto &[key, vals] : acc) {
        SmallVector<Value> other;
        for (Value v : vals)
          other.push_back(
              ShuffleOp::create(b, loc, v.getType(), ShuffleKind::xor_, v, offset));
        vals = cloneCombiner(b, combiner, vals, other);
      }
    }

    // 3. Across warps: each warp's partials through shared memory.
    SmallVector<int, 4> warpBits;
    for (int bit = 0; bit < l.getInDimSizeLog2(dims::kWarp); ++bit)
      if (alongAxis(dims::kWarp, bit).first)
        warpBits.push_back(bit);
    if (!warpBits.empty()) {
      if (failed(combineWarps(b, loc, op, l, axisOut, warpBits, acc)))
        return failure();
    }

    // 4. Results: each result register reads the key it corresponds to.
    SmallVector<Value> results;
    for (unsigned i = 0; i < n; ++i) {
      Type resType = op.getResult(i).getType();
      auto tile = dyn_cast<RankedTensorType>(resType);
      if (!tile) {
        results.push_back(acc.begin()->second[i]);
        continue;
      }
      VectorType vt = convertedType(tile);
      Value vec = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
      // The slice layout keeps the registers with no axis and no copy bit.
      SmallVector<uint32_t> keys =
          compressKeys(l, axisRegs, vt.getNumElements());
      for (auto [r, key] : llvm::enumerate(keys))
        vec = vector::InsertOp::create(b, loc, acc[key][i], vec,
                                       ArrayRef<int64_t>{int64_t(r)});
      results.push_back(vec);
    }
    b.replaceOp(op, results);
    return success();
  }

private:
  /// The keys of the registers the slice layout keeps: registers with no
  /// axis bit and no zero-basis (copy) bit, in order.
  static SmallVector<uint32_t> compressKeys(const LinearLayout &l,
                                            uint32_t axisRegs, int64_t n) {
    uint32_t zero = l.getZeroBasesMask(dims::kRegister);
    SmallVector<uint32_t> keys;
    for (int32_t r = 0; r < l.getInDimSize(dims::kRegister); ++r)
      if (!(uint32_t(r) & (axisRegs | zero)))
        keys.push_back(uint32_t(r));
    assert(int64_t(keys.size()) == n && "slice keeps the non-axis registers");
    return keys;
  }

  LogicalResult
  combineWarps(ConversionPatternRewriter &b, Location loc, kiln::ReduceOp op,
               const LinearLayout &l, int axisOut, ArrayRef<int> warpBits,
               llvm::MapVector<uint32_t, SmallVector<Value>> &acc) const {
    int64_t warpsAlong = int64_t(1) << warpBits.size();
    // Slot of a partial: (its coordinates without the axis, row-major) *
    // warpsAlong + the warp's index along the axis.
    int64_t elems = 1;
    for (auto [k, o] : llvm::enumerate(l.getOutDims()))
      if (int(k) != axisOut)
        elems *= o.size;
    Value warp = HwIdOp::create(b, loc, HwIdKind::warp);
    Value lane = HwIdOp::create(b, loc, HwIdKind::lane);
    Value warpIdx = i32Const(b, loc, 0);
    for (auto [i, bit] : llvm::enumerate(warpBits)) {
      Value set = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, warp, i32Const(b, loc, bit)),
          i32Const(b, loc, 1));
      warpIdx = arith::OrIOp::create(
          b, loc, warpIdx,
          arith::ShLIOp::create(b, loc, set, i32Const(b, loc, int64_t(i))));
    }
    // This thread's coordinates off the axis, for each of its keys.
    SmallVector<Value, 3> hw = hardwareCoords(b, loc, l);
    auto slotOf = [&](uint32_t key) {
      SmallVector<int32_t, 3> rc = registerCoords(l, int32_t(key));
      Value flat = i32Const(b, loc, 0);
      for (auto [k, o] : llvm::enumerate(l.getOutDims())) {
        if (int(k) == axisOut)
          continue;
        Value c = arith::XOrIOp::create(b, loc, hw[k], i32Const(b, loc, rc[k]));
        flat = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, flat, i32Const(b, loc, o.size)),
            c);
      }
      return arith::MulIOp::create(b, loc, flat, i32Const(b, loc, warpsAlong));
    };
    // Lanes along the axis hold the same partial now; lanes and warps off
    // the axis that hold copies write the same value. Only the thread with
    // its axis lane bits at zero writes.
    uint32_t quietLanes = l.getZeroBasesMask(dims::kLane);
    for (int bit = 0; bit < l.getInDimSizeLog2(dims::kLane); ++bit)
      if (l.getBasis(dims::kLane, bit)[axisOut] != 0)
        quietLanes |= uint32_t(1) << bit;
    Value writer = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, lane, i32Const(b, loc, quietLanes)),
        i32Const(b, loc, 0));
    if (uint32_t quietWarps = l.getZeroBasesMask(dims::kWarp))
      writer = arith::AndIOp::create(
          b, loc, writer,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              arith::AndIOp::create(b, loc, warp,
                                    i32Const(b, loc, quietWarps)),
              i32Const(b, loc, 0)));
    unsigned n = op.getSrcs().size();
    SmallVector<Value> buffers;
    for (unsigned i = 0; i < n; ++i) {
      Type elem = getElementTypeOrSelf(op.getSrcs()[i].getType());
      int64_t bytes = elems * warpsAlong * getElementBytes(elem);
      buffers.push_back(SharedAllocOp::create(
          b, loc, SharedBufferType::get(b.getContext()),
          b.getI64IntegerAttr(bytes), b.getI64IntegerAttr(16), IntegerAttr()));
    }
    auto ifOp = scf::IfOp::create(b, loc, writer, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (auto &[key, vals] : acc) {
        Value slot = arith::AddIOp::create(b, loc, slotOf(key), warpIdx);
        for (unsigned i = 0; i < n; ++i) {
          int64_t eb = getElementBytes(vals[i].getType());
          Value off = arith::MulIOp::create(b, loc, slot, i32Const(b, loc, eb));
          Value one = vector::BroadcastOp::create(
              b, loc, VectorType::get({1}, vals[i].getType()), vals[i]);
          SharedStoreOp::create(b, loc, buffers[i], off, one);
        }
      }
    }
        for (auto &[key, vals] : acc) {
      Value base = slotOf(key);
      SmallVector<Value> total;
      for (int64_t w = 0; w < warpsAlong; ++w) {
        Value slot = arith::AddIOp::create(b, loc, base, i32Const(b, loc, w));
        SmallVector<Value> part;
        for (unsigned i = 0; i < n; ++i) {
          Type t = vals[i].getType();
          Value off = arith::MulIOp::create(
              b, loc, slot, i32Const(b, loc, getElementBytes(t)));
          Value v = SharedLoadOp::create(b, loc, VectorType::get({1}, t),
                                         buffers[i], off);
          part.push_back(extractElement(b, loc, v, 0));
        }
        total = total.empty()
                    ? part
                    : cloneCombiner(b, op.getCombiner(), total, part);
      }
      vals = total;
    }
        return success();
  }
};

/// kiln.scan: an inclusive scan over the bits of the axis coordinate, from
/// the lowest: at the level of bit `b`, every element whose bit b is set
/// (clear, for `reverse`) combines the total of the sibling block below it
/// — the element with bit b flipped and every lower axis bit set (clear).
/// Whoever owns bit b decides how that total is fetched: the same thread's
/// register (register bits), a shuffle (lane bits), shared memory (warp
/// bits). Needs every axis bit owned by one register, lane or warp bit.
struct ScanPattern : ThreadPattern<kiln::ScanOp> {
  using ThreadPattern::ThreadPattern;

  struct Owner {
    StringRef in; ///< register, lane or warp
    int bit;
  };

  LogicalResult
  matchAndRewrite(kiln::ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    LinearLayout l = getLinearLayout(type);
    unsigned axis = op.getAxis();
    bool reverse = op.getReverse();
    int axisBits = llvm::Log2_64(type.getShape()[axis]);
    SmallVector<std::optional<Owner>> owners(axisBits);
    for (StringRef in : {dims::kRegister, dims::kLane, dims::kWarp})
      for (int bit = 0; bit < l.getInDimSizeLog2(in); ++bit) {
        const LinearLayout::Basis &basis = l.getBasis(in, bit);
        int32_t c = basis[axis];
        bool other = false;
        for (auto [k, v] : llvm::enumerate(basis))
          if (k != axis && v != 0)
            other = true;
        if (c == 0)
          continue;
        if (other || !llvm::isPowerOf2_32(c) || owners[llvm::Log2_32(c)])
          return op.emitOpError("scans a tile whose layout the GPU stage "
                                "cannot scan along axis ")
                 << axis;
        owners[llvm::Log2_32(c)] = Owner{in, bit};
      }
    for (auto &o : owners)
      if (!o)
        return op.emitOpError("scans a tile whose layout does not cover "
                              "the axis");

    unsigned n = op.getSrcs().size();
    int32_t regs = l.getInDimSize(dims::kRegister);
    // cur[i][r]: the running value of input i in register r.
    SmallVector<SmallVector<Value>> cur(n);
    for (auto [i, v] : llvm::enumerate(adaptor.getSrcs()))
      for (int32_t r = 0; r < regs; ++r)
        cur[i].push_back(extractElement(b, loc, v, r));
    Value lane = HwIdOp::create(b, loc, HwIdKind::lane);
    Value warp = HwIdOp::create(b, loc, HwIdKind::warp);

    uint32_t lowerReg = 0, lowerLane = 0, lowerWarp = 0;
    for (int level = 0; level < axisBits; ++level) {
      Owner o = *owners[level];
      uint32_t bitMask = uint32_t(1) << o.bit;
      // The source's bits of kind `in` for a thread whose bits are `mine`.
      auto srcBits = [&](uint32_t mine, uint32_t lower, bool owns) {
        uint32_t v = mine & ~lower;
        if (owns)
          v &= ~bitMask;
        if (!reverse)
          v |= lower;
        if (owns && reverse)
          v |= bitMask;
        return v;
      };
      auto srcRuntime = [&](Value id, uint32_t lower, bool owns) -> Value {
        uint32_t clear = lower | (owns ? bitMask : 0);
        uint32_t set = (reverse ? 0 : lower) | (owns && reverse ? bitMask : 0);
        Value v = arith::AndIOp::create(b, loc, id, i32Const(b, loc, ~clear));
        return arith::OrIOp::create(b, loc, v, i32Const(b, loc, set));
      };
      bool ownsReg = o.in == dims::kRegister, ownsLane = o.in == dims::kLane,
           ownsWarp = o.in == dims::kWarp;
      bool needWarp = ownsWarp || lowerWarp;
      bool needLane = ownsLane || lowerLane;
      // Fetch, for each register r, the sibling total.
      SmallVector<SmallVector<Value>> fetched(n);
      if (!needWarp) {
        Value srcLane =
            needLane ? srcRuntime(lane, lowerLane, ownsLane) : Value();
        for (int32_t r = 0; r < regs; ++r) {
          int32_t src = int32_t(srcBits(uint32_t(r), lowerReg, ownsReg));
          for (unsigned i = 0; i < n; ++i)
            fetched[i].push_back(
                needLane ? Value(ShuffleOp::create(
                               b, loc, cur[i][src].getType(),
                               ShuffleKind::idx, cur[i][src], srcLane))
                         : cur[i][src]);
        }
      } else {
        fetched = throughShared(b, loc, op, l, cur, [&](int32_t r) {
          return int32_t(srcBits(uint32_t(r), lowerReg, ownsReg));
        }, srcRuntime(lane, lowerLane, ownsLane),
                                srcRuntime(warp, lowerWarp, ownsWarp));
        if (fetched.empty())
          return failure();
      }
      // Participate: bit b of the element's axis coordinate set (clear).
      Value idBit;
      if (ownsLane || ownsWarp) {
        Value id = ownsLane ? lane : warp;
        Value set = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ne,
            arith::AndIOp::create(b, loc, id, i32Const(b, loc, bitMask)),
            i32Const(b, loc, 0));
        idBit = reverse ? arith::XOrIOp::create(
                              b, loc, set,
                              arith::ConstantOp::create(b, loc,
                                                        b.getBoolAttr(true)))
                        : set;
      }
      for (int32_t r = 0; r < regs; ++r) {
        if (ownsReg && ((uint32_t(r) & bitMask) != 0) == reverse)
          continue; // this register does not take the sibling's total
        SmallVector<Value> total, mine;
        for (unsigned i = 0; i < n; ++i) {
          total.push_back(fetched[i][r]);
          mine.push_back(cur[i][r]);
        }
        SmallVector<Value> combined =
            cloneCombiner(b, op.getCombiner(), total, mine);
        for (unsigned i = 0; i < n; ++i)
          cur[i][r] = idBit ? arith::SelectOp::create(b, loc, idBit,
                                                      combined[i], mine[i])
                            : combined[i];
      }
      if (ownsReg)
        lowerReg |= bitMask;
      else if (ownsLane)
        lowerLane |= bitMask;
      else
        lowerWarp |= bitMask;
    }
    SmallVector<Value> results;
    for (unsigned i = 0; i < n; ++i)
      results.push_back(vector::FromElementsOp::create(
          b, loc, convertedType(op.getResult(i).getType()), cur[i]));
    b.replaceOp(op, results);
    return success();
  }

  /// Every thread publishes its registers in shared memory (by element),
  /// then reads, for each register r, the element held by register
  /// srcReg(r) of lane `srcLane` in warp `srcWarp`.
  SmallVector<SmallVector<Value>>
  throughShared(ConversionPatternRewriter &b, Location loc, kiln::ScanOp op,
                const LinearLayout &l, ArrayRef<SmallVector<Value>> cur,
                function_ref<int32_t(int32_t)> srcReg, Value srcLane,
                Value srcWarp) const {
    unsigned n = cur.size();
    int32_t regs = l.getInDimSize(dims::kRegister);
    int64_t elems = l.getTotalOutSize();
    SmallVector<Value> buffers;
    for (unsigned i = 0; i < n; ++i) {
      int64_t bytes = elems * getElementBytes(cur[i][0].getType());
      buffers.push_back(SharedAllocOp::create(
          b, loc, SharedBufferType::get(b.getContext()),
          b.getI64IntegerAttr(bytes), b.getI64IntegerAttr(16), IntegerAttr()));
    }
    // Publish (one copy of each element).
    SmallVector<Value, 3> hw = hardwareCoords(b, loc, l);
    Value hwFlat = flatOf(b, loc, hw, l.getOutDims());
    uint32_t copies = l.getFreeVariableMask(dims::kRegister);
    auto publish = [&](OpBuilder &bb) {
      for (int32_t r = 0; r < regs; ++r) {
        if (uint32_t(r) & copies)
          continue;
        Value elem = arith::XOrIOp::create(bb, loc, hwFlat,
                                           i32Const(bb, loc, registerFlat(l, r)));
        for (unsigned i = 0; i < n; ++i) {
          Type t = cur[i][r].getType();
          Value off = arith::MulIOp::create(
              bb, loc, elem, i32Const(bb, loc, getElementBytes(t)));
          SharedStoreOp::create(
              bb, loc, buffers[i], off,
              vector::BroadcastOp::create(bb, loc, VectorType::get({1}, t),
                                          cur[i][r]));
        }
      }
    };
    if (Value pred = ownerPredicate(b, loc, l)) {
      auto ifOp = scf::IfOp::create(b, loc, pred, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      publish(b);
    } else {
      publish(b);
    }
        // The source thread's part of the coordinates, then each register's.
    LinearLayout hwOnly = l.sublayout({dims::kLane, dims::kWarp},
                                      [&] {
                                        SmallVector<StringRef, 3> names;
                                        for (auto &o : l.getOutDims())
                                          names.push_back(o.name);
                                        return names;
                                      }());
    SmallVector<Value, 3> srcHw =
        hardwareCoords(b, loc, hwOnly, srcLane, srcWarp);
    Value srcFlat = flatOf(b, loc, srcHw, l.getOutDims());
    SmallVector<SmallVector<Value>> fetched(n);
    for (int32_t r = 0; r < regs; ++r) {
      Value elem = arith::XOrIOp::create(
          b, loc, srcFlat, i32Const(b, loc, registerFlat(l, srcReg(r))));
      for (unsigned i = 0; i < n; ++i) {
        Type t = cur[i][r].getType();
        Value off = arith::MulIOp::create(b, loc, elem,
                                          i32Const(b, loc, getElementBytes(t)));
        Value v = SharedLoadOp::create(b, loc, VectorType::get({1}, t),
                                       buffers[i], off);
        fetched[i].push_back(extractElement(b, loc, v, 0));
      }
    }
        return fetched;
  }
};

} // namespace

void kiln::gpu::threads::populateReductionPatterns(const TypeConverter &tc,
    RewritePatternSet &patterns, const Context &c) {
  patterns.add<ReducePattern, ScanPattern>(tc, patterns.getContext(), c);
}
