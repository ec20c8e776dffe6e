//===- LowerViews.cpp - Views as bounds-checked tiles of pointers ---------===//
//
// tile-gpu-lower-views: the first pass of the GPU stage. A view is its
// parts, a base pointer and R sizes and R strides (i64); a box of it is a
// tile of pointers and a mask, which the rest of the stage handles like any
// other access. For `kiln.view_load %V [%o0, %o1] -> tensor<S0xS1xT>`:
//
//   c_d   = o_d + arange(0, S_d)          coordinates along d (1-d)
//   in_d  = c_d <u size_d                 0 <= c_d < size_d: sizes are >= 0
//                                         (a negative one is undefined), so
//                                         one unsigned comparison is both
//   ptrs  = splat(base) + c_0[:, None] * stride_0 + c_1[None, :] * stride_1
//   mask  = in_0[:, None] && in_1[None, :]
//   kiln.load ptrs, mask, other splat(other)
//
// and `kiln.view_store` likewise with `kiln.store`. Per dimension the
// coordinates, comparisons and products are computed on 1-d tiles and
// spread to the box's shape (expand_dims, broadcast) at the end.
//
// Widths. The element offset is i64 (coordinate times stride can pass
// 2^31 on a large tensor; a wider add costs less than a wrong address).
// The coordinates are i32 when that is exact: an i32 offset against a size
// that is the sign extension of an i32 (an `i32` parameter, the common
// case) or a small constant. Then `o + arange` may wrap only past 2^31 - 1,
// where the exact coordinate is out of bounds too, and the wrapped value
// (negative, so a large unsigned one) fails the comparison as well. The
// mask then compares i32 values, and the coordinates are widened (extsi)
// only for the address. Otherwise (i64 offsets, or an i32 offset against a
// size known only as an i64) the coordinates are computed in i64:
// extsi(o) + extsi(arange). The axis analysis keeps contiguity and
// divisibility through extsi and i64 arithmetic, so a view whose innermost
// stride is the constant 1 and whose base and other strides carry
// `@align`/`@div` promises still gets wide vector accesses. A stride that
// is the constant 1 adds the coordinates unmultiplied; one that is the
// constant 0 adds nothing.
//
// Relative offsets (the pass's `relative-offsets` option, set for targets
// with range-checked accesses): a box whose strides along its extents
// above 1 are bounded (non-negative constants, the fast path's clamped
// strides, FastPath.cpp) and whose reach stays under 2^31 bytes gets the
// same address split at its origin,
//
//   origin = base + sum_d o_d * stride_d      one scalar pointer
//   ptrs   = splat(origin) + sum_d arange(0, S_d) * stride_d
//
// so that the lanes' offsets depend on the strides and the box shape only:
// convert-tile-to-gpu-threads proves them below 2^31 bytes and accesses
// the box as a uniform base plus 32-bit offsets. The mask is computed from
// the coordinates as above. Other boxes keep the form above (relative
// offsets that are not bounded would only be loop-invariant 64-bit values
// held across the loop).
//
// Tensor copies. A view load that tile-gpu-fast-path chose for the
// target's tensor copies (marked `kiln_gpu.tensor_map = i`) becomes
// `kiln_gpu.tensor_box_load` of the kernel argument with the same mark, its
// offsets and the pointer form above: tile-gpu-pipeline copies it with the
// map, or falls back to the pointer form.
//
// Views carried by scf.for, scf.if and scf.while (a `var` view reassigned
// in a loop or a branch) travel as their parts: a 1:N type conversion of
// the structured control flow. A view anywhere else (a function argument,
// an unknown op) is a located error.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPULOWERVIEWS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln;

namespace {

//===----------------------------------------------------------------------===//
// Boxes
//===----------------------------------------------------------------------===//

/// A view as the values it converts to: the base, then the sizes, then the
/// strides (the operands of its `kiln.make_view`).
struct ViewParts {
  Value base;
  SmallVector<Value, 3> sizes;
  SmallVector<Value, 3> strides;

  static ViewParts unpack(ValueRange parts) {
    assert(parts.size() % 2 == 1 && "a view converts to 1 + 2R values");
    unsigned rank = parts.size() / 2;
    ViewParts view;
    view.base = parts.front();
    view.sizes.assign(parts.begin() + 1, parts.begin() + 1 + rank);
    view.strides.assign(parts.begin() + 1 + rank, parts.end());
    return view;
  }
};

/// The tile of pointers of a box and whether each element is in the view.
struct Box {
  Value ptrs;
  Value mask;
};

/// One dimension of a box, on 1-d tiles of its extent: whether each
/// coordinate is inside the view, and its term of the element offset (null
/// when the stride is the constant 0). With relative offsets, `offset` is
/// the lanes' part (`arange * stride`, null also for an extent of 1) and
/// `origin` the scalar part (`o * stride`, null when either is 0).
struct DimTerms {
  Value inBounds;
  Value offset;
  Value origin;
};

class BoxBuilder {
public:
  BoxBuilder(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
             bool relativeOffsets)
      : b(b), loc(loc), shape(shape), relativeOffsets(relativeOffsets) {}

  /// The box of this builder's shape at `offsets` in `view`.
  Box build(const ViewParts &view, ValueRange offsets) {
    relative = relativeOffsets && lanesFitOffsets(view);
    Box box;
    Value offset, origin;
    for (unsigned d = 0; d < shape.size(); ++d) {
      DimTerms terms =
          buildDim(view.sizes[d], view.strides[d], offsets[d], shape[d]);
      Value inBounds = spread(terms.inBounds, d);
      box.mask = box.mask ? arith::AndIOp::create(b, loc, box.mask, inBounds)
                          : inBounds;
      if (terms.origin)
        origin = origin ? arith::AddIOp::create(b, loc, origin, terms.origin)
                        : terms.origin;
      if (!terms.offset)
        continue;
      Value term = spread(terms.offset, d);
      offset = offset ? arith::AddIOp::create(b, loc, offset, term) : term;
    }
    Value base = view.base;
    if (origin)
      base = AddPtrOp::create(b, loc, base, origin);
    auto ptrTile = RankedTensorType::get(shape, base.getType());
    box.ptrs = SplatOp::create(b, loc, ptrTile, base);
    if (offset)
      box.ptrs = AddPtrOp::create(b, loc, box.ptrs, offset);
    return box;
  }

private:
  /// Whether the box's lanes' offsets, sum_d arange(0, S_d) * stride_d,
  /// are provably small enough for the offset form (docs/codegen-gpu.md,
  /// "Range-checked accesses"): every stride along an extent above 1 is
  /// bounded (a non-negative constant, or the fast path's clamp). Other
  /// boxes keep coordinates times strides: their lanes' offsets would be
  /// loop-invariant 64-bit values held across a loop for nothing.
  bool lanesFitOffsets(const ViewParts &view) {
    std::optional<int64_t> budget = kiln::gpu::getOffsetReachBudget(
        cast<PointerType>(view.base.getType()).getPointeeType());
    if (!budget)
      return false;
    int64_t reach = 0;
    for (unsigned d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      std::optional<int64_t> bound = kiln::gpu::getNonNegativeBound(
          view.strides[d]);
      // Bounds are at most 2^40 and extents far below 2^23: no overflow
      // before the reach is known to be too far.
      if (!bound || shape[d] >= (int64_t(1) << 22))
        return false;
      reach += (shape[d] - 1) * *bound;
      if (reach > *budget)
        return false;
    }
    return true;
  }

  RankedTensorType tile(int64_t extent, Type element) {
    return RankedTensorType::get({extent}, element);
  }
  Value i32Const(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }

  /// `size` as an i32 of the same value, when it is one: the sign extension
  /// of an integer of at most 32 bits, the zero extension of one of fewer,
  /// or a constant below 2^31. Null otherwise.
  Value getNarrowSize(Value size) {
    Type i32 = b.getI32Type();
    if (std::optional<int64_t> value = getConstantInt(size))
      return *value >= 0 && *value <= INT32_MAX ? i32Const(*value) : Value();
    Operation *def = size.getDefiningOp();
    if (!def || !isa<arith::ExtSIOp, arith::ExtUIOp>(def))
      return Value();
    Value narrow = def->getOperand(0);
    unsigned width = narrow.getType().getIntOrFloatBitWidth();
    bool isSigned = isa<arith::ExtSIOp>(def);
    if (width == 32 && isSigned)
      return narrow;
    if (width >= 32)
      return Value();
    if (isSigned)
      return arith::ExtSIOp::create(b, loc, i32, narrow);
    return arith::ExtUIOp::create(b, loc, i32, narrow);
  }

  /// 0, 1, ..., extent - 1 as i32; null for an extent of 1.
  Value getRange(int64_t extent) {
    if (extent == 1)
      return Value();
    return ArangeOp::create(b, loc, tile(extent, b.getI32Type()), i32Const(0),
                            i32Const(extent));
  }

  /// `offset + range` on 1-d tiles of `type` (`range` null: all zeros);
  /// `range` itself for an offset that is the constant 0.
  Value addRange(Value offset, bool isZero, Value range,
                 RankedTensorType type) {
    if (!range)
      return SplatOp::create(b, loc, type, offset);
    if (isZero)
      return range;
    return arith::AddIOp::create(b, loc, SplatOp::create(b, loc, type, offset),
                                 range);
  }

  /// The coordinates `offset + [0, extent)` of one dimension of the box,
  /// compared with `size` and multiplied by `stride`.
  DimTerms buildDim(Value size, Value stride, Value offset, int64_t extent) {
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value range = getRange(extent);
    bool isZero = getConstantInt(offset) == 0;
    std::optional<int64_t> constantStride = getConstantInt(stride);
    Value narrowSize = offset.getType().isInteger(32) ? getNarrowSize(size)
                                                      : Value();
    DimTerms terms;
    Value coords;
    if (narrowSize) {
      // i32 coordinates: exact against an i32 size (see the file comment);
      // widened for the address only.
      Value narrow = addRange(offset, isZero, range, tile(extent, i32));
      terms.inBounds = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, narrow,
          SplatOp::create(b, loc, tile(extent, i32), narrowSize));
      if (constantStride != 0 && !relative)
        coords = arith::ExtSIOp::create(b, loc, tile(extent, i64), narrow);
    } else {
      if (!offset.getType().isInteger(64) && !(isZero && range))
        offset = arith::ExtSIOp::create(b, loc, i64, offset);
      if (range)
        range = arith::ExtSIOp::create(b, loc, tile(extent, i64), range);
      coords = addRange(offset, isZero, range, tile(extent, i64));
      terms.inBounds = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, coords,
          SplatOp::create(b, loc, tile(extent, i64), size));
    }
    if (constantStride == 0)
      return terms;
    if (relative)
      return splitAtOrigin(terms, stride, offset, isZero, range, extent);
    terms.offset = coords;
    if (constantStride != 1)
      terms.offset = arith::MulIOp::create(
          b, loc, coords, SplatOp::create(b, loc, tile(extent, i64), stride));
    return terms;
  }

  /// `terms` with the address split at the box's origin: `offset * stride`
  /// (a scalar) and `range * stride` (the lanes').
  DimTerms splitAtOrigin(DimTerms terms, Value stride, Value offset,
                         bool isZero, Value range, int64_t extent) {
    Type i64 = b.getI64Type();
    bool unit = getConstantInt(stride) == 1;
    if (!isZero) {
      Value o = offset.getType().isInteger(64)
                    ? offset
                    : arith::ExtSIOp::create(b, loc, i64, offset);
      terms.origin = unit ? o : arith::MulIOp::create(b, loc, o, stride);
    }
    if (!range)
      return terms;
    if (!getElementTypeOrSelf(range.getType()).isInteger(64))
      range = arith::ExtSIOp::create(b, loc, tile(extent, i64), range);
    terms.offset =
        unit ? range
             : arith::MulIOp::create(
                   b, loc, range,
                   SplatOp::create(b, loc, tile(extent, i64), stride));
    return terms;
  }

  /// A 1-d tile along dimension `d` of the box, broadcast to its shape.
  Value spread(Value value, unsigned d) {
    unsigned rank = shape.size();
    for (unsigned k = 0; k < d; ++k)
      value = ExpandDimsOp::create(b, loc, value, 0);
    for (unsigned k = d + 1; k < rank; ++k)
      value = ExpandDimsOp::create(b, loc, value, k);
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getShape() == shape)
      return value;
    return BroadcastOp::create(b, loc, type.clone(shape), value);
  }

  OpBuilder &b;
  Location loc;
  ArrayRef<int64_t> shape;
  bool relativeOffsets; ///< the option
  bool relative = false; ///< the option, and this box qualifies
};

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// The values of a 1:N adaptor's operands, flattened.
SmallVector<Value> flatten(ArrayRef<ValueRange> ranges) {
  SmallVector<Value> values;
  for (ValueRange range : ranges)
    llvm::append_range(values, range);
  return values;
}

/// A view is replaced by its operands.
struct MakeViewLowering : OpConversionPattern<MakeViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MakeViewOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<SmallVector<Value>> parts;
    parts.push_back(flatten(adaptor.getOperands()));
    rewriter.replaceOpWithMultiple(op, std::move(parts));
    return success();
  }
};

/// The lowering of the view accesses; `relative`: the pass's
/// `relative-offsets` option.
template <typename Op>
struct BoxLowering : OpConversionPattern<Op> {
  BoxLowering(const TypeConverter &converter, MLIRContext *ctx, bool relative)
      : OpConversionPattern<Op>(converter, ctx), relative(relative) {}
  bool relative;
};

struct ViewLoadLowering : BoxLowering<ViewLoadOp> {
  using BoxLowering::BoxLowering;
  LogicalResult
  matchAndRewrite(ViewLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    BoxBuilder builder(rewriter, op.getLoc(), type.getShape(), relative);
    Box box = builder.build(ViewParts::unpack(adaptor.getView()),
                            flatten(adaptor.getOffsets()));
    Value other;
    if (ValueRange given = adaptor.getOther(); !given.empty())
      other = SplatOp::create(rewriter, op.getLoc(), type, given.front());
    // A box tile-gpu-fast-path chose for tensor copies keeps its map and
    // offsets beside the pointer form (file comment).
    if (auto index = op->getAttrOfType<IntegerAttr>(gpu::kTensorMapAttr)) {
      auto fn = op->getParentOfType<func::FuncOp>();
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (fn.getArgAttr(i, gpu::kTensorMapAttr) == index) {
          rewriter.replaceOpWithNewOp<gpu::TensorBoxLoadOp>(
              op, type, fn.getArgument(i), flatten(adaptor.getOffsets()),
              box.ptrs, box.mask, other, index);
          return success();
        }
      return op->emitOpError("has no kernel argument for tensor map ")
             << index.getInt();
    }
    rewriter.replaceOpWithNewOp<LoadOp>(op, box.ptrs, box.mask, other);
    return success();
  }
};

struct ViewStoreLowering : BoxLowering<ViewStoreOp> {
  using BoxLowering::BoxLowering;
  LogicalResult
  matchAndRewrite(ViewStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getValue().getType());
    BoxBuilder builder(rewriter, op.getLoc(), type.getShape(), relative);
    Box box = builder.build(ViewParts::unpack(adaptor.getView()),
                            flatten(adaptor.getOffsets()));
    Value value = adaptor.getValue().front();
    rewriter.replaceOpWithNewOp<StoreOp>(op, box.ptrs, value, box.mask);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

bool isView(Type type) { return isa<ViewType>(type); }

/// Ops that may take or give views: those this pass lowers and the
/// structured control flow that carries them.
bool mayHoldViews(Operation *op) {
  return isa<MakeViewOp, ViewLoadOp, ViewStoreOp, scf::ForOp, scf::IfOp,
             scf::WhileOp, scf::YieldOp, scf::ConditionOp>(op);
}

/// Located errors for what the conversion cannot lower: views outside the
/// ops above, boxes of unknown shape.
LogicalResult checkViews(ModuleOp module) {
  WalkResult result = module.walk([&](Operation *op) {
    if (auto func = dyn_cast<FunctionOpInterface>(op)) {
      if (llvm::any_of(func.getArgumentTypes(), isView) ||
          llvm::any_of(func.getResultTypes(), isView)) {
        op->emitError("views cannot cross function boundaries in the GPU "
                      "stage (helpers taking views are inlined before it)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (!mayHoldViews(op) && (llvm::any_of(op->getOperandTypes(), isView) ||
                              llvm::any_of(op->getResultTypes(), isView))) {
      op->emitError("'") << op->getName()
                         << "' on a view is not supported by the GPU stage: "
                            "views are made, loaded, stored and carried by "
                            "scf.for, scf.if and scf.while only";
      return WalkResult::interrupt();
    }
    Type box;
    if (auto load = dyn_cast<ViewLoadOp>(op))
      box = load.getType();
    if (auto store = dyn_cast<ViewStoreOp>(op))
      box = store.getValue().getType();
    if (box && !cast<RankedTensorType>(box).hasStaticShape()) {
      op->emitError("view box of dynamic shape ")
          << box << ": the GPU stage runs on specialized variants";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct LowerViewsPass
    : public kiln::gpu::impl::TileGPULowerViewsBase<LowerViewsPass> {
  using TileGPULowerViewsBase::TileGPULowerViewsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkViews(module)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion(
        [](ViewType view, SmallVectorImpl<Type> &parts) -> LogicalResult {
          parts.push_back(PointerType::get(view.getElementType()));
          parts.append(2 * view.getRank(),
                       IntegerType::get(view.getContext(), 64));
          return success();
        });

    ConversionTarget target(*ctx);
    target.addIllegalOp<MakeViewOp, ViewLoadOp, ViewStoreOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    patterns.add<MakeViewLowering>(converter, ctx);
    patterns.add<ViewLoadLowering, ViewStoreLowering>(converter, ctx,
                                                      relativeOffsets);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
