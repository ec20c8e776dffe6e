//===- ConvertToThreads.cpp - Tiles with layouts to per-thread code -------===//
//
// convert-tile-to-gpu-threads: the last pass of the GPU stage. Each tile
// (a ranked tensor with a distributed layout) becomes the vector of the
// registers one thread holds; pointers become i64 byte addresses. Every
// data movement — broadcasts, expand_dims, transposes, reshapes, layout
// conversions — is derived from the two linear layouts involved: registers
// permuted within the thread when the layouts agree on lanes and warps,
// else a round trip through shared memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>

namespace kiln::gpu {
#define GEN_PASS_DEF_CONVERTTILETOGPUTHREADS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type scalarType(Type t) {
  if (isa<kiln::PointerType>(t))
    return IntegerType::get(t.getContext(), 64);
  return t;
}

class ThreadTypeConverter : public TypeConverter {
public:
  ThreadTypeConverter() {
    addConversion([](Type t) { return t; });
    addConversion([](kiln::PointerType t) -> Type {
      return IntegerType::get(t.getContext(), 64);
    });
    addConversion([](RankedTensorType t) -> std::optional<Type> {
      if (!getLayout(t))
        return std::nullopt;
      return VectorType::get({getRegistersPerThread(t)},
                             scalarType(t.getElementType()));
    });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                   Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs)
          .getResult(0);
    };
    addSourceMaterialization(cast);
    addTargetMaterialization(cast);
  }
};

bool isLegalType(Type t) {
  return !isa<RankedTensorType, kiln::PointerType>(t);
}

//===----------------------------------------------------------------------===//
// Per-thread helpers
//===----------------------------------------------------------------------===//

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
}

/// This thread's part of a layout's coordinates: for each output dim, the
/// XOR of the lane and warp bases of the bits set in this thread's ids.
SmallVector<Value, 3> hardwareCoords(OpBuilder &b, Location loc,
                                     const LinearLayout &l) {
  SmallVector<Value, 3> coords;
  Value zero = i32Const(b, loc, 0);
  for (size_t d = 0; d < l.getOutDims().size(); ++d)
    coords.push_back(zero);
  for (auto [kind, name] : {std::pair{HwIdKind::lane, dims::kLane},
                            std::pair{HwIdKind::warp, dims::kWarp}}) {
    if (!l.hasInDim(name))
      continue;
    Value id = HwIdOp::create(b, loc, kind);
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

/// Moves the registers `src` (held as `srcL` says) into the registers of
/// `dstL` (same outputs). `dstType` is the per-thread vector type.
class DataMover {
public:
  DataMover(ConversionPatternRewriter &b, Location loc, const GPUTarget &t)
      : b(b), loc(loc), target(t) {}

  FailureOr<Value> move(Value src, const LinearLayout &srcL,
                        const LinearLayout &dstL, VectorType dstType) {
    std::optional<LinearLayout> x = dstL.invertAndCompose(srcL);
    if (!x)
      return failure();
    if (isRegisterOnly(*x, srcL, dstL))
      return permuteRegisters(src, *x, dstL, dstType);
    return throughShared(src, srcL, dstL, dstType);
  }

private:
  /// True when every thread of dst finds its elements in its own src
  /// registers: lane and warp bits map to themselves.
  bool isRegisterOnly(const LinearLayout &x, const LinearLayout &srcL,
                      const LinearLayout &dstL) {
    for (StringRef hw : {dims::kLane, dims::kWarp}) {
      for (int bit = 0; bit < dstL.getInDimSizeLog2(hw); ++bit) {
        auto out = x.apply({{hw, int32_t(1) << bit}});
        for (auto [k, od] : llvm::enumerate(x.getOutDims())) {
          int32_t expected = od.name == hw ? (int32_t(1) << bit) : 0;
          if (out[k] != expected)
            return false;
        }
      }
    }
    return true;
  }

  Value permuteRegisters(Value src, const LinearLayout &x,
                         const LinearLayout &dstL, VectorType dstType) {
    int32_t n = dstL.getInDimSize(dims::kRegister);
    int regOut = -1;
    for (auto [k, od] : llvm::enumerate(x.getOutDims()))
      if (od.name == dims::kRegister)
        regOut = k;
    SmallVector<int64_t> mask;
    for (int32_t r = 0; r < n; ++r)
      mask.push_back(regOut < 0 || !dstL.hasInDim(dims::kRegister)
                         ? 0
                         : x.apply({{dims::kRegister, r}})[regOut]);
    auto srcType = cast<VectorType>(src.getType());
    if (srcType == dstType && llvm::all_of(llvm::enumerate(mask), [](auto p) {
          return int64_t(p.index()) == p.value();
        }))
      return src;
    return vector::ShuffleOp::create(b, loc, dstType, src, src,
                                     b.getDenseI64ArrayAttr(mask));
  }

  /// Row-major element offset (in elements) of coordinates.
  Value flatIndex(ArrayRef<Value> coords, ArrayRef<LinearLayout::OutDim> o) {
    Value flat = i32Const(b, loc, 0);
    for (auto [c, d] : llvm::zip(coords, o))
      flat = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, flat, i32Const(b, loc, d.size)),
          c);
    return flat;
  }

  FailureOr<Value> throughShared(Value src, const LinearLayout &srcL,
                                 const LinearLayout &dstL,
                                 VectorType dstType) {
    Type elem = dstType.getElementType();
    int64_t elemBytes = getElementBytes(elem);
    int64_t bytes = srcL.getTotalOutSize() * elemBytes;
    if (bytes > target.maxSharedBytes)
      return failure();
    Value buf = SharedAllocOp::create(
        b, loc, SharedBufferType::get(b.getContext()), b.getI64IntegerAttr(bytes),
        b.getI64IntegerAttr(std::max<int64_t>(16, elemBytes)), IntegerAttr());
    // Row-major offsets of power-of-two tiles are the coordinates' bits
    // side by side, so offset(hw ^ reg) = offset(hw) ^ offset(reg): one
    // XOR with a constant per access. Consecutive registers holding
    // consecutive elements of the last dimension move as one vector.
    auto access = [&](const LinearLayout &l, Value vec, bool isStore,
                      SmallVector<std::pair<int64_t, Value>> *loaded) {
      SmallVector<Value, 3> hw = hardwareCoords(b, loc, l);
      Value hwFlat = flatIndex(hw, l.getOutDims());
      uint32_t copies = l.getFreeVariableMask(dims::kRegister);
      int32_t regs = l.getInDimSize(dims::kRegister);
      std::string last = l.getOutDims().back().name;
      int32_t width = std::min<int32_t>(
          {l.getNumConsecutive(dims::kRegister, last), regs,
           int32_t(std::max<int64_t>(1, target.maxVectorBytes / elemBytes))});
      auto part = VectorType::get({width}, elem);
      for (int32_t r = 0; r < regs; r += width) {
        if (isStore && (uint32_t(r) & copies))
          continue; // a copy of an earlier register
        SmallVector<int32_t, 3> rc = registerCoords(l, r);
        int64_t regFlat = 0;
        for (auto [c, o] : llvm::zip(rc, l.getOutDims()))
          regFlat = regFlat * o.size + c;
        Value element = arith::XOrIOp::create(b, loc, hwFlat,
                                              i32Const(b, loc, regFlat));
        Value offset = arith::MulIOp::create(b, loc, element,
                                             i32Const(b, loc, elemBytes));
        if (isStore) {
          Value e = vector::ExtractStridedSliceOp::create(
              b, loc, vec, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{width},
              ArrayRef<int64_t>{1});
          SharedStoreOp::create(b, loc, buf, offset, e);
        } else {
          loaded->push_back(
              {r, SharedLoadOp::create(b, loc, part, buf, offset)});
        }
      }
    };
    // Copies of one element held by several lanes or warps write the same
    // value; writes are kept (a benign duplicate) only from the thread
    // whose free bits are zero.
    Value pred = ownerPredicate(srcL);
    if (pred) {
      auto ifOp = scf::IfOp::create(b, loc, pred, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      access(srcL, src, true, nullptr);
    } else {
      access(srcL, src, true, nullptr);
    }
    BarrierOp::create(b, loc);
    SmallVector<std::pair<int64_t, Value>> parts;
    access(dstL, Value(), false, &parts);
    Value result = arith::ConstantOp::create(
        b, loc, dstType, b.getZeroAttr(dstType));
    for (auto [r, p] : parts)
      result = vector::InsertStridedSliceOp::create(
          b, loc, p, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
    // The buffer may be reused after this point.
    BarrierOp::create(b, loc);
    return result;
  }

  /// True for the one thread among copies (free lane/warp bits zero).
  Value ownerPredicate(const LinearLayout &l) {
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

  ConversionPatternRewriter &b;
  Location loc;
  const GPUTarget &target;
};

/// Shared state of the patterns.
struct Context {
  const GPUTarget *target;
  const AxisInfoAnalysis *axis;
};

template <typename OpTy>
class ThreadPattern : public OpConversionPattern<OpTy> {
public:
  ThreadPattern(const TypeConverter &tc, MLIRContext *ctx, const Context &c)
      : OpConversionPattern<OpTy>(tc, ctx), c(c) {}

protected:
  VectorType convertedType(Type t) const {
    return cast<VectorType>(this->getTypeConverter()->convertType(t));
  }
  const Context &c;
};

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct ArangePattern : ThreadPattern<kiln::ArangeOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::ArangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    LinearLayout l = getLinearLayout(op.getType());
    VectorType vt = convertedType(op.getType());
    SmallVector<Value, 3> hw = hardwareCoords(b, loc, l);
    SmallVector<int32_t> regs;
    for (int32_t r = 0; r < vt.getNumElements(); ++r)
      regs.push_back(registerCoords(l, r)[0]);
    Value regConst = arith::ConstantOp::create(
        b, loc, vt, DenseElementsAttr::get(vt, ArrayRef<int32_t>(regs)));
    Value coords = arith::XOrIOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, vt, hw[0]), regConst);
    Value lo = vector::BroadcastOp::create(b, loc, vt, adaptor.getLo());
    b.replaceOpWithNewOp<arith::AddIOp>(op, coords, lo);
    return success();
  }
};

struct SplatPattern : ThreadPattern<kiln::SplatOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    b.replaceOpWithNewOp<vector::BroadcastOp>(op, convertedType(op.getType()),
                                              adaptor.getSrc());
    return success();
  }
};

struct ConstantPattern : ThreadPattern<arith::ConstantOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense || !isa<RankedTensorType>(op.getType()))
      return b.notifyMatchFailure(op, "only splat tile constants");
    VectorType vt = convertedType(op.getType());
    b.replaceOpWithNewOp<arith::ConstantOp>(
        op, vt, SplatElementsAttr::get(vt, dense.getSplatValue<Attribute>()));
    return success();
  }
};

struct AddPtrPattern : ThreadPattern<kiln::AddPtrOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::AddPtrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Type resType = getTypeConverter()->convertType(op.getType());
    int64_t bytes = getElementBytes(getPointeeType(op.getType()));
    Value offset = adaptor.getOffset();
    Type i64 = resType;
    if (getElementTypeOrSelf(offset.getType()).getIntOrFloatBitWidth() < 64)
      offset = arith::ExtSIOp::create(b, loc, i64, offset);
    Value scale = arith::ConstantOp::create(
        b, loc, i64,
        isa<VectorType>(i64)
            ? TypedAttr(SplatElementsAttr::get(cast<VectorType>(i64),
                                               b.getI64IntegerAttr(bytes)))
            : TypedAttr(b.getI64IntegerAttr(bytes)));
    Value scaled = arith::MulIOp::create(b, loc, offset, scale);
    b.replaceOpWithNewOp<arith::AddIOp>(op, adaptor.getPtr(), scaled);
    return success();
  }
};

/// Broadcast, expand_dims, trans, reshape and convert_layout: data moves
/// given the two layouts, relabelled to the same outputs.
template <typename OpTy>
struct MovePattern : ThreadPattern<OpTy> {
  using ThreadPattern<OpTy>::ThreadPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
    auto dstType = cast<RankedTensorType>(op->getResult(0).getType());
    LinearLayout srcL = getLinearLayout(srcType);
    LinearLayout dstL = getLinearLayout(dstType);
    if (!relabel(op, srcL, dstL, srcType, dstType))
      return op.emitOpError("has layouts the GPU stage cannot relate");
    DataMover mover(b, op.getLoc(), *this->c.target);
    FailureOr<Value> v = mover.move(adaptor.getOperands()[0], srcL, dstL,
                                    this->convertedType(dstType));
    if (failed(v))
      return op.emitOpError("needs more shared memory than ")
             << this->c.target->arch << " has to change layouts";
    b.replaceOp(op, *v);
    return success();
  }

  /// Brings both layouts to the same outputs; false if impossible.
  static bool relabel(OpTy op, LinearLayout &srcL, LinearLayout &dstL,
                      RankedTensorType srcType, RankedTensorType dstType) {
    if constexpr (std::is_same_v<OpTy, kiln::BroadcastOp>) {
      // Each result element reads the source element with the broadcast
      // coordinates at 0.
      dstL = cutTo(dstL, srcType.getShape());
      return true;
    } else if constexpr (std::is_same_v<OpTy, kiln::ExpandDimsOp>) {
      unsigned axis = op.getAxis();
      LinearLayout l = srcL;
      for (unsigned d = srcType.getRank(); d-- > axis;)
        l = l.renameOut(dims::tileDim(d), dims::tileDim(d + 1));
      srcL = l.insertOut(axis, dims::tileDim(axis));
      return true;
    } else if constexpr (std::is_same_v<OpTy, kiln::TransOp>) {
      // Result dim i is source dim order[i].
      LinearLayout l = srcL;
      for (unsigned d = 0; d < srcType.getRank(); ++d)
        l = l.renameOut(dims::tileDim(d), "t" + std::to_string(d));
      SmallVector<std::string, 3> names;
      for (int32_t o : op.getOrder())
        names.push_back("t" + std::to_string(o));
      SmallVector<StringRef, 3> refs(names.begin(), names.end());
      l = l.transposeOuts(refs);
      for (auto [i, o] : llvm::enumerate(op.getOrder()))
        l = l.renameOut("t" + std::to_string(o), dims::tileDim(i));
      srcL = l;
      return true;
    } else if constexpr (std::is_same_v<OpTy, kiln::ReshapeOp>) {
      SmallVector<LinearLayout::OutDim, 3> outs;
      for (auto [d, s] : llvm::enumerate(dstType.getShape()))
        outs.push_back({dims::tileDim(d), int32_t(s)});
      srcL = srcL.reshapeOuts(outs);
      return true;
    } else {
      return true; // convert_layout: same tile, same outputs.
    }
  }
};

/// Loads and stores through tiles of pointers, `vector` elements at once.
struct AccessPlan {
  int32_t vector = 1;
  int64_t alignment = 1;
  int64_t elemBytes = 1;
};

AccessPlan planAccess(const Context &c, Value ptr, Value mask,
                      RankedTensorType ptrType) {
  AccessPlan p;
  p.elemBytes = getElementBytes(getPointeeType(ptrType));
  LinearLayout l = getLinearLayout(ptrType);
  unsigned last = ptrType.getRank() - 1;
  // Consecutive registers along the fastest dimension of the layout...
  int32_t regs = 1;
  for (unsigned d = 0; d <= last; ++d)
    regs = std::max(regs, l.getNumConsecutive(dims::kRegister, dims::tileDim(d)));
  unsigned dim = last;
  for (unsigned d = 0; d <= last; ++d)
    if (l.getNumConsecutive(dims::kRegister, dims::tileDim(d)) == regs)
      dim = d;
  // ... that the axis analysis proves contiguous and aligned.
  int64_t proven = c.axis->getVectorizableElements(ptr, dim, mask);
  int64_t widest = std::max<int64_t>(1, c.target->maxVectorBytes / p.elemBytes);
  p.vector = int32_t(std::max<int64_t>(
      1, std::min<int64_t>({int64_t(regs), proven, widest})));
  p.alignment = p.vector * p.elemBytes;
  return p;
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

struct LoadPattern : ThreadPattern<kiln::LoadOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ptrType = dyn_cast<RankedTensorType>(op.getPtr().getType());
    if (!ptrType) {
      // A scalar load: one element.
      auto vt = VectorType::get({1}, op.getType());
      Value other;
      if (adaptor.getOther())
        other = vector::BroadcastOp::create(b, loc, vt, adaptor.getOther());
      Value v = GlobalLoadOp::create(
          b, loc, vt, adaptor.getPtr(), adaptor.getMask(), other,
          b.getI64IntegerAttr(getElementBytes(op.getType())));
      b.replaceOp(op, extractElement(b, loc, v, 0));
      return success();
    }
    AccessPlan p = planAccess(c, op.getPtr(), op.getMask(), ptrType);
    VectorType vt = convertedType(op.getType());
    auto part = VectorType::get({p.vector}, vt.getElementType());
    Value result = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
    for (int64_t r = 0; r < vt.getNumElements(); r += p.vector) {
      Value addr = extractElement(b, loc, adaptor.getPtr(), r);
      Value mask = adaptor.getMask()
                       ? extractElement(b, loc, adaptor.getMask(), r)
                       : Value();
      Value other = adaptor.getOther()
                        ? extractSlice(b, loc, adaptor.getOther(), r, p.vector)
                        : Value();
      Value v = GlobalLoadOp::create(b, loc, part, addr, mask, other,
                                     b.getI64IntegerAttr(p.alignment));
      result = vector::InsertStridedSliceOp::create(
          b, loc, v, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
    }
    b.replaceOp(op, result);
    return success();
  }
};

struct StorePattern : ThreadPattern<kiln::StoreOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ptrType = dyn_cast<RankedTensorType>(op.getPtr().getType());
    if (!ptrType) {
      auto vt = VectorType::get({1}, adaptor.getValue().getType());
      Value v = vector::BroadcastOp::create(b, loc, vt, adaptor.getValue());
      GlobalStoreOp::create(
          b, loc, adaptor.getPtr(), v, adaptor.getMask(),
          b.getI64IntegerAttr(getElementBytes(op.getValue().getType())));
      b.eraseOp(op);
      return success();
    }
    AccessPlan p = planAccess(c, op.getPtr(), op.getMask(), ptrType);
    auto vt = cast<VectorType>(adaptor.getValue().getType());
    // Copies of an element (zero register bases, or lanes and warps that
    // hold the same elements) all store the same value: harmless, and the
    // hardware merges them; registers that repeat are skipped.
    uint32_t copies =
        getLinearLayout(ptrType).getFreeVariableMask(dims::kRegister);
    for (int64_t r = 0; r < vt.getNumElements(); r += p.vector) {
      if (uint32_t(r) & copies)
        continue;
      Value addr = extractElement(b, loc, adaptor.getPtr(), r);
      Value mask = adaptor.getMask()
                       ? extractElement(b, loc, adaptor.getMask(), r)
                       : Value();
      Value v = extractSlice(b, loc, adaptor.getValue(), r, p.vector);
      GlobalStoreOp::create(b, loc, addr, v, mask,
                            b.getI64IntegerAttr(p.alignment));
    }
    b.eraseOp(op);
    return success();
  }
};

/// arith and math ops on tiles: the same op on the per-thread vectors.
struct ElementwisePattern : ConversionPattern {
  ElementwisePattern(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &b) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
        !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, types,
                         op->getAttrs());
    b.replaceOp(op, b.create(state)->getResults());
    return success();
  }
};

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
      if (bytes > c.target->maxSharedBytes)
        return op.emitOpError("needs more shared memory than ")
               << c.target->arch << " has";
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
    BarrierOp::create(b, loc);
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
    BarrierOp::create(b, loc);
    return success();
  }
};

/// kiln.dot with matrix-instruction layouts: for each (M tile, N tile) of
/// the warp's share of the accumulator and each K step, one
/// `kiln_gpu.mma` on the registers the operand layouts put there.
struct DotPattern : ThreadPattern<kiln::DotOp> {
  using ThreadPattern::ThreadPattern;

  /// Register indices of each instruction tile of an operand: tiles keyed
  /// by (row tile, column tile), registers in fragment order.
  static std::map<std::pair<int32_t, int32_t>, SmallVector<int64_t>>
  tiles(const LinearLayout &l, int32_t fragRegs, int32_t tileRows,
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

  LogicalResult
  matchAndRewrite(kiln::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto mma = dyn_cast<MmaAttr>(op.getType().getEncoding());
    if (!mma)
      return op.emitOpError("has no matrix-instruction layout");
    const MatrixInstr *instr = lookupMatrixInstr(mma.getInstr());
    ArrayRef<int32_t> warps = mma.getWarpsPerBlock();
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    LinearLayout la = getLinearLayout(aType), lb = getLinearLayout(bType),
                 lc = getLinearLayout(op.getType());
    // The repeats of each operand start at multiples of the instruction
    // tile times the warps along that dimension.
    int32_t rowsA = instr->m * warps[0], rowsC = rowsA;
    int32_t colsB = instr->n * warps[1], colsC = colsB;
    auto aTiles = tiles(la, instr->getARegisters(), rowsA, instr->k);
    auto bTiles = tiles(lb, instr->getBRegisters(), instr->k, colsB);
    auto cTiles = tiles(lc, instr->getCRegisters(), rowsC, colsC);
    int32_t kSteps = int32_t(aType.getShape()[1] / instr->k);

    auto gather = [&](Value vec, ArrayRef<int64_t> regs) -> Value {
      auto vt = cast<VectorType>(vec.getType());
      auto part = VectorType::get({int64_t(regs.size())}, vt.getElementType());
      return vector::ShuffleOp::create(b, loc, part, vec, vec,
                                       b.getDenseI64ArrayAttr(regs));
    };
    Value acc = adaptor.getAcc();
    auto accType = cast<VectorType>(acc.getType());
    SmallVector<Value> accRegs;
    for (int64_t r = 0; r < accType.getNumElements(); ++r)
      accRegs.push_back(extractElement(b, loc, acc, r));
    for (auto &[mn, cRegs] : cTiles) {
      if (llvm::is_contained(cRegs, -1))
        return op.emitOpError("accumulator layout does not cover whole "
                              "instruction tiles");
      Value c = gather(acc, cRegs);
      for (int32_t k = 0; k < kSteps; ++k) {
        auto ai = aTiles.find({mn.first, k});
        auto bi = bTiles.find({k, mn.second});
        if (ai == aTiles.end() || bi == bTiles.end())
          return op.emitOpError("operand layouts do not cover the tile");
        c = MmaOp::create(b, loc, c.getType(), instr->name,
                          gather(adaptor.getA(), ai->second),
                          gather(adaptor.getB(), bi->second), c);
      }
      for (auto [j, r] : llvm::enumerate(cRegs))
        accRegs[r] = extractElement(b, loc, c, j);
    }
    b.replaceOpWithNewOp<vector::FromElementsOp>(op, accType, accRegs);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertToThreadsPass
    : public kiln::gpu::impl::ConvertTileToGPUThreadsBase<ConvertToThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StageConfig> config = getStageConfig(module, "", 0);
    if (failed(config))
      return signalPassFailure();
    AxisInfoAnalysis axis(module);
    Context c{config->target, &axis};

    // Ops the stage does not lower yet: a clear error, not a crash.
    WalkResult unsupported = module.walk([&](Operation *op) {
      if (isa<kiln::ScanOp, kiln::AtomicRMWOp,
              kiln::AtomicCASOp, kiln::MakeViewOp, kiln::ViewLoadOp,
              kiln::ViewStoreOp, kiln::PrintOp, kiln::AssertOp>(op)) {
        op->emitError("'") << op->getName()
                           << "' is not lowered by the GPU stage yet (target "
                           << config->target->arch << ")";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    ThreadTypeConverter tc;
    ConversionTarget target(*ctx);
    target.addLegalDialect<KilnGPUDialect, vector::VectorDialect>();
    target.addIllegalOp<ConvertLayoutOp>();
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      if (auto fn = dyn_cast<func::FuncOp>(op))
        return llvm::all_of(fn.getArgumentTypes(), isLegalType);
      return llvm::all_of(op->getOperandTypes(), isLegalType) &&
             llvm::all_of(op->getResultTypes(), isLegalType);
    });
    RewritePatternSet patterns(ctx);
    patterns.add<ArangePattern, SplatPattern, ConstantPattern, AddPtrPattern,
                 LoadPattern, StorePattern, MovePattern<kiln::BroadcastOp>,
                 MovePattern<kiln::ExpandDimsOp>, MovePattern<kiln::TransOp>,
                 MovePattern<kiln::ReshapeOp>, MovePattern<ConvertLayoutOp>,
                 ReducePattern, DotPattern>(
        tc, ctx, c);
    patterns.add<ElementwisePattern>(tc, ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   tc);
    populateReturnOpTypeConversionPattern(patterns, tc);
    scf::populateSCFStructuralTypeConversions(tc, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Pointer arguments are i64 addresses now: their promises move to the
    // kiln_gpu names (the kiln dialect allows `kiln.align` on pointers).
    module.walk([&](func::FuncOp fn) {
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (auto a = fn.getArgAttr(i, KilnDialect::getAlignAttrName())) {
          fn.removeArgAttr(i, KilnDialect::getAlignAttrName());
          fn.setArgAttr(i, "kiln_gpu.align", a);
        }
    });
  }
};

} // namespace
