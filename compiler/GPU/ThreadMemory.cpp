//===- ThreadMemory.cpp - Global memory, atomics and debugging ops ----------===//
//
// Loads and stores through tiles of pointers (as many consecutive
// elements per access as the layout and the axis analysis allow), pointer
// arithmetic, atomics, print and assert, in the per-thread form.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

//===----------------------------------------------------------------------===//
// Uniform base + 32-bit offsets (targets with range-checked accesses)
//===----------------------------------------------------------------------===//

namespace {

/// The scalar every element of `v` equals (through splats, broadcasts,
/// expand_dims, reshapes and layout conversions), or null.
Value uniformScalar(Value v) {
  for (int depth = 0; depth < 8; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return Value();
    if (auto splat = dyn_cast<kiln::SplatOp>(def))
      return splat.getSrc();
    if (!isa<kiln::BroadcastOp, kiln::ExpandDimsOp, kiln::ReshapeOp,
             ConvertLayoutOp>(def))
      return Value();
    v = def->getOperand(0);
  }
  return Value();
}

/// A tile of pointers as `P + U_1 + ... + L_1 + ...` (elements): P a
/// scalar pointer, U_i scalars, L_j tiles in the pointer tile's layout.
struct OffsetTerms {
  Value pointer;
  SmallVector<Value> uniform, lanes;
};

void collectOffsetTerms(Value offset, OffsetTerms &terms) {
  if (auto add = offset.getDefiningOp<arith::AddIOp>()) {
    collectOffsetTerms(add.getLhs(), terms);
    collectOffsetTerms(add.getRhs(), terms);
  } else if (Value u = uniformScalar(offset)) {
    terms.uniform.push_back(u);
  } else {
    terms.lanes.push_back(offset);
  }
}

bool collectPointerTerms(Value ptr, OffsetTerms &terms) {
  if (auto add = ptr.getDefiningOp<kiln::AddPtrOp>()) {
    if (!collectPointerTerms(add.getPtr(), terms))
      return false;
    collectOffsetTerms(add.getOffset(), terms);
    return true;
  }
  terms.pointer = uniformScalar(ptr);
  return bool(terms.pointer);
}

} // namespace

std::optional<OffsetAccess> kiln::gpu::threads::planOffsetAccess(
    ConversionPatternRewriter &b, Location loc, const Context &c,
    Value ptrTile, int32_t vector) {
  if (!c.target->hasRangeCheckedAccess)
    return std::nullopt;
  auto ptrType = cast<RankedTensorType>(ptrTile.getType());
  Type elem = getPointeeType(ptrType);
  if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t bytes = getElementBytes(elem);
  OffsetTerms terms;
  if (!collectPointerTerms(ptrTile, terms))
    return std::nullopt;
  // The lanes' offsets, with the widest access, stay below 2^31 bytes.
  int64_t reach = 0;
  for (Value l : terms.lanes) {
    std::optional<int64_t> m = getNonNegativeBound(l);
    if (!m)
      return std::nullopt;
    reach += *m;
  }
  if ((reach + vector) * bytes >= (int64_t(1) << 31))
    return std::nullopt;
  // Every term's per-thread value (converted before this op).
  Value base = b.getRemappedValue(terms.pointer);
  if (!base || !base.getType().isInteger(64))
    return std::nullopt;
  Type i64 = b.getI64Type();
  SmallVector<Value> uniform, lanes;
  for (Value u : terms.uniform) {
    Value v = b.getRemappedValue(u);
    if (!v || !v.getType().isSignlessInteger())
      return std::nullopt;
    uniform.push_back(v);
  }
  for (Value l : terms.lanes) {
    Value v = b.getRemappedValue(l);
    auto vt = v ? dyn_cast<VectorType>(v.getType()) : VectorType();
    if (!vt || vt.getNumElements() != getRegistersPerThread(ptrType) ||
        !vt.getElementType().isSignlessInteger())
      return std::nullopt;
    lanes.push_back(v);
  }
  OffsetAccess a;
  a.base = base;
  for (Value u : uniform) {
    if (u.getType() != i64)
      u = arith::ExtSIOp::create(b, loc, i64, u);
    Value scaled = arith::MulIOp::create(
        b, loc, u, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes)));
    a.base = arith::AddIOp::create(b, loc, a.base, scaled);
  }
  auto offsetType =
      VectorType::get({getRegistersPerThread(ptrType)}, b.getI32Type());
  a.offsets = arith::ConstantOp::create(
      b, loc, offsetType,
      DenseElementsAttr::get(offsetType, b.getI32IntegerAttr(0)));
  for (Value l : lanes) {
    auto vt = cast<VectorType>(l.getType());
    if (vt.getElementTypeBitWidth() > 32)
      l = arith::TruncIOp::create(b, loc, offsetType, l);
    else if (vt.getElementTypeBitWidth() < 32)
      l = arith::ExtSIOp::create(b, loc, offsetType, l);
    a.offsets = arith::AddIOp::create(b, loc, a.offsets, l);
  }
  a.offsets = arith::MulIOp::create(
      b, loc, a.offsets,
      arith::ConstantOp::create(
          b, loc, offsetType,
          DenseElementsAttr::get(offsetType,
                                 b.getI32IntegerAttr(int32_t(bytes)))));
  return a;
}

Value kiln::gpu::threads::loadRegisters(ConversionPatternRewriter &b,
                                        Location loc, const Context &c,
                                        Value ptrTile, Value maskTile,
                                        Value ptr, Value mask, Value other,
                                        VectorType type) {
  auto ptrType = cast<RankedTensorType>(ptrTile.getType());
  AccessPlan p = planAccess(c, ptrTile, maskTile, ptrType);
  std::optional<OffsetAccess> at =
      planOffsetAccess(b, loc, c, ptrTile, p.vector);
  auto part = VectorType::get({p.vector}, type.getElementType());
  Value result = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (int64_t r = 0; r < type.getNumElements(); r += p.vector) {
    Value v = GlobalLoadOp::create(
        b, loc, part, at ? at->base : extractElement(b, loc, ptr, r),
        at ? extractElement(b, loc, at->offsets, r) : Value(),
        mask ? extractElement(b, loc, mask, r) : Value(),
        other ? extractSlice(b, loc, other, r, p.vector) : Value(),
        b.getI64IntegerAttr(p.alignment));
    result = vector::InsertStridedSliceOp::create(
        b, loc, v, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
  }
  return result;
}

namespace {

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

} // namespace

AccessPlan kiln::gpu::threads::planAccess(const Context &c, Value ptr,
                                          Value mask,
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

namespace {

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
          b, loc, vt, adaptor.getPtr(), Value(), adaptor.getMask(), other,
          b.getI64IntegerAttr(getElementBytes(op.getType())));
      b.replaceOp(op, extractElement(b, loc, v, 0));
      return success();
    }
    b.replaceOp(op, loadRegisters(b, loc, c, op.getPtr(), op.getMask(),
                                  adaptor.getPtr(), adaptor.getMask(),
                                  adaptor.getOther(),
                                  convertedType(op.getType())));
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
          b, loc, adaptor.getPtr(), Value(), v, adaptor.getMask(),
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
    std::optional<OffsetAccess> at =
        planOffsetAccess(b, loc, c, op.getPtr(), p.vector);
    for (int64_t r = 0; r < vt.getNumElements(); r += p.vector) {
      if (uint32_t(r) & copies)
        continue;
      Value addr = at ? at->base : extractElement(b, loc, adaptor.getPtr(), r);
      Value offset = at ? extractElement(b, loc, at->offsets, r) : Value();
      Value mask = adaptor.getMask()
                       ? extractElement(b, loc, adaptor.getMask(), r)
                       : Value();
      Value v = extractSlice(b, loc, adaptor.getValue(), r, p.vector);
      GlobalStoreOp::create(b, loc, addr, offset, v, mask,
                            b.getI64IntegerAttr(p.alignment));
    }
    b.eraseOp(op);
    return success();
  }
};

/// Atomics: one `kiln_gpu.atomic_rmw` / `atomic_cas` per register. An
/// element held in copies by several threads is updated once, by its owner
/// (a copy compare-and-swapping again would see the owner's swap), and the
/// copies take the owner's old value; a scalar atomic happens once per
/// program, in thread 0, and every thread gets the old value.
template <typename OpTy>
struct AtomicPattern : ThreadPattern<OpTy> {
  using ThreadPattern<OpTy>::ThreadPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  /// The operands of one element's atomic, pointer first, and the mask.
  virtual SmallVector<Value> operands(OpAdaptor adaptor) const = 0;
  virtual Value mask(OpAdaptor adaptor) const = 0;
  /// One element's atomic on `ops` (scalars) under `mask` (may be null).
  virtual Value atomic(OpBuilder &b, Location loc, OpTy op, Type type,
                       ArrayRef<Value> ops, Value mask) const = 0;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    SmallVector<Value> ops = operands(adaptor);
    Value userMask = mask(adaptor);
    auto ptrType = dyn_cast<RankedTensorType>(op.getPtr().getType());
    if (!ptrType) {
      b.replaceOp(op, broadcastFromThreadZero(b, loc, [&](OpBuilder &bb) {
        return atomic(bb, loc, op, ops.back().getType(), ops, userMask);
      }));
      return success();
    }
    LinearLayout l = getLinearLayout(ptrType);
    Value owner = ownerPredicate(b, loc, l);
    uint32_t copies = l.getFreeVariableMask(dims::kRegister);
    auto vt = cast<VectorType>(ops.back().getType());
    SmallVector<Value> results;
    for (int64_t r = 0; r < vt.getNumElements(); ++r) {
      int64_t first = int64_t(uint32_t(r) & ~copies);
      if (first != r) {
        results.push_back(results[first]);
        continue;
      }
      SmallVector<Value> scalars;
      for (Value v : ops)
        scalars.push_back(extractElement(b, loc, v, r));
      Value m = userMask ? extractElement(b, loc, userMask, r) : Value();
      if (owner)
        m = m ? arith::AndIOp::create(b, loc, m, owner) : owner;
      results.push_back(
          atomic(b, loc, op, vt.getElementType(), scalars, m));
    }
    Value old = vector::FromElementsOp::create(b, loc, vt, results);
    // The copies' old values come through shared memory: only when the
    // program reads them.
    if (!op->use_empty())
      old = broadcastFromOwners(b, loc, *this->c.target, old, l);
    b.replaceOp(op, old);
    return success();
  }
};

struct AtomicRMWPattern : AtomicPattern<kiln::AtomicRMWOp> {
  using AtomicPattern::AtomicPattern;
  SmallVector<Value> operands(OpAdaptor adaptor) const override {
    return {adaptor.getPtr(), adaptor.getVal()};
  }
  Value mask(OpAdaptor adaptor) const override { return adaptor.getMask(); }
  Value atomic(OpBuilder &b, Location loc, kiln::AtomicRMWOp op, Type type,
               ArrayRef<Value> ops, Value mask) const override {
    return kiln::gpu::AtomicRMWOp::create(
        b, loc, type,
        b.getStringAttr(kiln::stringifyAtomicRMWKind(op.getKind())), ops[0],
        ops[1], mask);
  }
};

struct AtomicCASPattern : AtomicPattern<kiln::AtomicCASOp> {
  using AtomicPattern::AtomicPattern;
  SmallVector<Value> operands(OpAdaptor adaptor) const override {
    return {adaptor.getPtr(), adaptor.getCmp(), adaptor.getVal()};
  }
  Value mask(OpAdaptor) const override { return Value(); }
  Value atomic(OpBuilder &b, Location loc, kiln::AtomicCASOp, Type type,
               ArrayRef<Value> ops, Value mask) const override {
    return kiln::gpu::AtomicCASOp::create(b, loc, type, ops[0], ops[1],
                                          ops[2], mask);
  }
};

/// The C printf conversion of a scalar type, after widening.
std::string printfSpec(Type t) {
  if (isa<FloatType>(t))
    return "%g";
  if (t.isInteger(1))
    return "%d";
  return t.getIntOrFloatBitWidth() > 32 ? "%lld" : "%d";
}

/// print: every element once per program, from the thread that owns it,
/// one line per element: `text[pid x, y, z][i, j] = value`; scalars from
/// thread 0 only.
struct PrintPattern : ThreadPattern<kiln::PrintOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    std::string text = escape(op.getFormat());
    Value pid[3];
    for (unsigned a = 0; a < 3; ++a)
      pid[a] = kiln::ProgramIdOp::create(b, loc, a);
    Value thread0 = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        HwIdOp::create(b, loc, HwIdKind::thread), i32Const(b, loc, 0));
    auto emit = [&](Value pred, const std::string &fmt,
                    SmallVector<Value> args) {
      auto ifOp = scf::IfOp::create(b, loc, pred, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      PrintfOp::create(b, loc, b.getStringAttr(fmt), args);
    };
    if (op.getArgs().empty()) {
      emit(thread0, text + " [pid %d, %d, %d]\n", {pid[0], pid[1], pid[2]});
    }
    for (auto [value, converted] :
         llvm::zip(op.getArgs(), adaptor.getArgs())) {
      auto tile = dyn_cast<RankedTensorType>(value.getType());
      if (!tile) {
        emit(thread0,
             text + " [pid %d, %d, %d] " + printfSpec(converted.getType()) +
                 "\n",
             {pid[0], pid[1], pid[2], converted});
        continue;
      }
      LinearLayout l = getLinearLayout(tile);
      Value owner = ownerPredicate(b, loc, l);
      if (!owner)
        owner = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      SmallVector<Value, 3> hw = hardwareCoords(b, loc, l);
      uint32_t copies = l.getFreeVariableMask(dims::kRegister);
      std::string idx;
      for (unsigned d = 0; d < tile.getRank(); ++d)
        idx += d ? ", %d" : "%d";
      auto vt = cast<VectorType>(converted.getType());
      for (int64_t r = 0; r < vt.getNumElements(); ++r) {
        if (uint32_t(r) & copies)
          continue;
        SmallVector<int32_t, 3> rc = registerCoords(l, int32_t(r));
        SmallVector<Value> args = {pid[0], pid[1], pid[2]};
        for (auto [h, cst] : llvm::zip(hw, rc))
          args.push_back(arith::XOrIOp::create(b, loc, h, i32Const(b, loc, cst)));
        args.push_back(extractElement(b, loc, converted, r));
        emit(owner,
             text + " [pid %d, %d, %d][" + idx + "] " +
                 printfSpec(vt.getElementType()) + "\n",
             args);
      }
    }
    b.eraseOp(op);
    return success();
  }

  /// `%` in the language's text is an ordinary character.
  static std::string escape(StringRef text) {
    std::string out;
    for (char ch : text) {
      if (ch == '%')
        out += "%%";
      else
        out += ch;
    }
    return out;
  }
};

/// assert: compiled in checked builds only (docs/language.md); a false
/// element prints the location and the program, then traps.
struct AssertPattern : ThreadPattern<kiln::AssertOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(kiln::AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    if (!c.checked) {
      b.eraseOp(op);
      return success();
    }
    Location loc = op.getLoc();
    Value cond = adaptor.getCondition();
    Value failed;
    if (auto vt = dyn_cast<VectorType>(cond.getType())) {
      Value all = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::AND, cond);
      failed = arith::XOrIOp::create(
          b, loc, all, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    } else {
      failed = arith::XOrIOp::create(
          b, loc, cond, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    }
    std::string text = kiln::assertionText(loc, op.getMessage());
    auto ifOp = scf::IfOp::create(b, loc, failed, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> pid;
      for (unsigned a = 0; a < 3; ++a)
        pid.push_back(kiln::ProgramIdOp::create(b, loc, a));
      PrintfOp::create(b, loc,
                       b.getStringAttr(PrintPattern::escape(text) +
                                       " (in program %d, %d, %d)\n"),
                       pid);
      TrapOp::create(b, loc);
    }
    b.eraseOp(op);
    return success();
  }
};

/// A pipeline slot of `buffer` holding tiles of `type`'s shape and
/// element: where it starts (slot × tile bytes) and how it is laid out.
SharedTile slotTile(OpBuilder &b, Location loc, Value buffer, Value slot,
                    ArrayRef<int64_t> shape, Type elem) {
  int64_t bytes = getElementBytes(elem);
  for (int64_t d : shape)
    bytes *= d;
  Value base = arith::MulIOp::create(b, loc, slot, i32Const(b, loc, bytes));
  return getSharedTile(buffer, base, shape, elem);
}

/// The result coordinates of a `kiln_gpu.read_tile` of a view -> the
/// stored tile's coordinates: undo the transposition, then the reshape.
LinearLayout viewToTile(ArrayRef<int64_t> resultShape, ArrayRef<int32_t> order,
                        ArrayRef<int64_t> tileShape) {
  LinearLayout f;
  for (auto [d, size] : llvm::enumerate(resultShape))
    f = f * LinearLayout::identity1D(int32_t(size), dims::tileDim(d),
                                     dims::tileDim(d));
  if (!order.empty()) {
    // Result dimension i is dimension order[i] of the reshaped tile.
    for (auto [i, o] : llvm::enumerate(order))
      f = f.renameOut(dims::tileDim(i), "t" + std::to_string(o));
    SmallVector<std::string> names;
    for (size_t i = 0; i < order.size(); ++i) {
      f = f.renameOut("t" + std::to_string(i), dims::tileDim(i));
      names.push_back(dims::tileDim(i));
    }
    SmallVector<StringRef> refs(names.begin(), names.end());
    f = f.transposeOuts(refs);
  }
  SmallVector<LinearLayout::OutDim> outs;
  for (auto [d, size] : llvm::enumerate(tileShape))
    outs.push_back({dims::tileDim(d), int32_t(size)});
  return f.reshapeOuts(outs);
}

} // namespace

SharedTile kiln::gpu::threads::readTileSource(OpBuilder &b, Location loc,
                                              ReadTileOp op, Type elem) {
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> tileShape =
      op.getTileShape() ? *op.getTileShape() : type.getShape();
  SharedTile tile =
      slotTile(b, loc, op.getBuffer(), op.getSlot(), tileShape, elem);
  if (op.getTileShape() || op.getOrder())
    tile.where = viewToTile(type.getShape(),
                            op.getOrder() ? *op.getOrder() : ArrayRef<int32_t>(),
                            tileShape)
                     .compose(tile.where);
  return tile;
}

namespace {

/// kiln_gpu.async_copy_tile: one `kiln_gpu.async_copy` per run of
/// registers that is contiguous and aligned in global memory (planAccess)
/// and in the slot, by the one thread among the copies of each element.
/// Where the target has no asynchronous copies or a run is under 4 bytes,
/// the registers are loaded and stored synchronously (same result, no
/// overlap).
struct AsyncCopyTilePattern : ThreadPattern<AsyncCopyTileOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(AsyncCopyTileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ptrType = cast<RankedTensorType>(op.getPtr().getType());
    Type elem = getPointeeType(ptrType);
    SharedTile tile = slotTile(b, loc, adaptor.getBuffer(), adaptor.getSlot(),
                               ptrType.getShape(), elem);
    LinearLayout l = getLinearLayout(ptrType);
    AccessPlan p = planAccess(c, op.getPtr(), op.getMask(), ptrType);
    int32_t width = getSharedRunWidth(tile, l, p.vector);
    int64_t bytes = width * tile.elemBytes;
    if (!c.target->hasAsyncCopy || bytes < 4) {
      auto vt = VectorType::get({getRegistersPerThread(ptrType)}, elem);
      Value v = loadRegisters(b, loc, c, op.getPtr(), op.getMask(),
                              adaptor.getPtr(), adaptor.getMask(), Value(), vt);
      storeSharedTile(b, loc, *c.target, tile, v, l);
      b.eraseOp(op);
      return success();
    }
    inOwnerThreads(b, loc, l, [&](OpBuilder &bb) {
      forEachSharedRun(
          bb, loc, tile, l, width, /*skipCopies=*/true,
          [&](int32_t r, Value offset) {
            Value mask = adaptor.getMask()
                             ? extractElement(bb, loc, adaptor.getMask(), r)
                             : Value();
            AsyncCopyOp::create(bb, loc, tile.buffer, offset,
                                extractElement(bb, loc, adaptor.getPtr(), r),
                                mask, bb.getI32IntegerAttr(int32_t(bytes)));
          });
    });
    b.eraseOp(op);
    return success();
  }
};

/// kiln_gpu.read_tile: the slot's tile (or the view of it the op names)
/// read into the result's layout.
struct ReadTilePattern : ThreadPattern<ReadTileOp> {
  using ThreadPattern::ThreadPattern;
  LogicalResult
  matchAndRewrite(ReadTileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    VectorType vt = convertedType(type);
    SharedTile tile = readTileSource(b, loc, op, vt.getElementType());
    b.replaceOp(op, loadSharedTile(b, loc, *c.target, tile,
                                   getLinearLayout(type), vt,
                                   type.getEncoding()));
    return success();
  }
};

} // namespace

void kiln::gpu::threads::populateMemoryPatterns(const TypeConverter &tc,
    RewritePatternSet &patterns, const Context &c) {
  patterns.add<AddPtrPattern, LoadPattern, StorePattern, AtomicRMWPattern, AtomicCASPattern, PrintPattern, AssertPattern, AsyncCopyTilePattern, ReadTilePattern>(
      tc, patterns.getContext(), c);
}
