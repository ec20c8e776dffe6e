//===- ThreadDataMovement.cpp - Tiles built and moved between layouts -------===//
//
// The per-thread form of tile construction (arange, splat, constants)
// and of every data movement (broadcast, expand_dims, trans, reshape,
// convert_layout): derived from the two linear layouts involved, as a
// register permutation when lanes and warps keep their elements, else a
// round trip through shared memory.
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

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

namespace {

/// Moves the registers `src` (held as `srcL` says) into the registers of
/// `dstL` (same outputs). `dstType` is the per-thread vector type.
class DataMover {
public:
  DataMover(ConversionPatternRewriter &b, Location loc, const GPUTarget &t)
      : b(b), loc(loc), target(t) {}

  /// `dstEncoding` (the result's layout attribute) lets the read side use
  /// the target's matrix loads for matrix-instruction operands.
  void setDestination(Attribute encoding) { dstEncoding = encoding; }

  FailureOr<Value> move(Value src, const LinearLayout &srcL,
                        const LinearLayout &dstL, VectorType dstType) {
    std::optional<LinearLayout> x = dstL.invertAndCompose(srcL);
    if (!x)
      return failure();
    if (std::optional<SmallVector<int64_t>> mask =
            getRegisterPermutation(srcL, dstL))
      return permuteRegisters(src, *mask, dstType);
    return throughShared(src, srcL, dstL, dstType);
  }

private:
  Value permuteRegisters(Value src, ArrayRef<int64_t> mask,
                         VectorType dstType) {
    auto srcType = cast<VectorType>(src.getType());
    if (srcType == dstType && llvm::all_of(llvm::enumerate(mask), [](auto p) {
          return int64_t(p.index()) == p.value();
        }))
      return src;
    return vector::ShuffleOp::create(b, loc, dstType, src, src,
                                     b.getDenseI64ArrayAttr(mask));
  }

  /// Stores the source tile into a new buffer, reads it back as `dstL`.
  Value throughShared(Value src, const LinearLayout &srcL,
                      const LinearLayout &dstL, VectorType dstType) {
    Type elem = dstType.getElementType();
    SmallVector<int64_t, 3> shape;
    for (const LinearLayout::OutDim &o : srcL.getOutDims())
      shape.push_back(o.size);
    // The dimension order in shared memory with the fewest accesses:
    // row-major, or another dimension fastest (V in attention: a B
    // operand wants runs down its columns).
    SharedTile tile = getSharedTile(Value(), Value(), shape, elem);
    int64_t best = countSharedAccesses(target, tile, srcL, dstL, dstEncoding);
    for (unsigned fast = 0; fast + 1 < shape.size(); ++fast) {
      SmallVector<unsigned, 3> order{fast};
      for (unsigned d = shape.size(); d-- > 0;)
        if (d != fast)
          order.push_back(d);
      SharedTile other = getSharedTile(Value(), Value(), shape, elem, order);
      int64_t n = countSharedAccesses(target, other, srcL, dstL, dstEncoding);
      if (n < best) {
        best = n;
        tile = std::move(other);
      }
    }
    // Whether it fits is tile-gpu-allocate-shared's to say, for all
    // buffers together.
    tile.buffer = allocShared(b, loc, srcL.getTotalOutSize() * tile.elemBytes,
                              std::max<int64_t>(16, tile.elemBytes));
    storeSharedTile(b, loc, target, tile, src, srcL);
    return loadSharedTile(b, loc, target, tile, dstL, dstType, dstEncoding);
  }

  ConversionPatternRewriter &b;
  Location loc;
  const GPUTarget &target;
  Attribute dstEncoding;
};

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
    relabel(op, srcL, dstL, srcType, dstType);
    DataMover mover(b, op.getLoc(), *this->c.target);
    mover.setDestination(dstType.getEncoding());
    FailureOr<Value> v = mover.move(adaptor.getOperands()[0], srcL, dstL,
                                    this->convertedType(dstType));
    if (failed(v))
      return op.emitOpError("moves between layouts that do not hold the "
                            "same elements");
    b.replaceOp(op, *v);
    return success();
  }

  /// Brings both layouts to the same outputs.
  static void relabel(OpTy op, LinearLayout &srcL, LinearLayout &dstL,
                      RankedTensorType srcType, RankedTensorType dstType) {
    if constexpr (std::is_same_v<OpTy, kiln::BroadcastOp>) {
      // Each result element reads the source element with the broadcast
      // coordinates at 0.
      dstL = cutTo(dstL, srcType.getShape());
    } else if constexpr (std::is_same_v<OpTy, kiln::ExpandDimsOp>) {
      unsigned axis = op.getAxis();
      LinearLayout l = srcL;
      for (unsigned d = srcType.getRank(); d-- > axis;)
        l = l.renameOut(dims::tileDim(d), dims::tileDim(d + 1));
      srcL = l.insertOut(axis, dims::tileDim(axis));
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
    } else if constexpr (std::is_same_v<OpTy, kiln::ReshapeOp>) {
      SmallVector<LinearLayout::OutDim, 3> outs;
      for (auto [d, s] : llvm::enumerate(dstType.getShape()))
        outs.push_back({dims::tileDim(d), int32_t(s)});
      srcL = srcL.reshapeOuts(outs);
    }
    // convert_layout: same tile, same outputs.
  }
};

/// The registers of a tile held as `l` whose elements the axis analysis
/// proves equal (`constancy`: aligned runs along each dimension): for each
/// register, the index of its group, groups numbered in the order of their
/// first registers. A run counts only as far as this thread's registers
/// decide it: where a lane or warp bit sets a coordinate bit inside the
/// run, the run is cut there, so every thread groups alike.
SmallVector<int32_t> equalRegisterGroups(const LinearLayout &l,
                                         ArrayRef<int64_t> constancy) {
  unsigned rank = l.getOutDims().size();
  SmallVector<int32_t, 3> runBits(rank, 0);
  for (unsigned d = 0; d < rank && d < constancy.size(); ++d) {
    int32_t bits = llvm::Log2_64(std::max<int64_t>(constancy[d], 1));
    for (StringRef hw : {dims::kLane, dims::kWarp}) {
      if (!l.hasInDim(hw))
        continue;
      for (int bit = 0; bit < l.getInDimSizeLog2(hw); ++bit)
        if (int32_t x = l.getBasis(hw, bit)[d])
          bits = std::min<int32_t>(bits, llvm::countr_zero(uint32_t(x)));
    }
    runBits[d] = bits;
  }
  std::map<SmallVector<int32_t, 3>, int32_t> groupOf;
  SmallVector<int32_t> groups;
  for (int32_t r = 0; r < l.getInDimSize(dims::kRegister); ++r) {
    SmallVector<int32_t, 3> key = registerCoords(l, r);
    for (unsigned d = 0; d < rank; ++d)
      key[d] >>= runBits[d];
    auto it = groupOf.insert({key, int32_t(groupOf.size())}).first;
    groups.push_back(it->second);
  }
  return groups;
}

/// arith and math ops on tiles: the same op on the per-thread vectors.
/// An integer result the axis analysis proves constant over runs of this
/// thread's registers (a mask `offs < n` with n a multiple of the
/// per-thread run: one value per 8 registers of a 16-byte bf16 row) gets
/// the runs as a `kiln_gpu.equal_runs` mark; the backends' lowering
/// computes it once per run (tile-gpu-compute-once-per-run). A mark, not
/// the narrower code itself: the fast-path trials compare per-thread code
/// without marks, so that an assumption which only lengthens runs (a mask
/// bound's divisibility) never becomes a launch condition.
struct ElementwisePattern : ConversionPattern {
  ElementwisePattern(const TypeConverter &tc, MLIRContext *ctx,
                     const Context &c)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/1, ctx), c(c) {}

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
    if (std::optional<SmallVector<int32_t>> runs = equalRuns(op, types))
      state.addAttribute(KilnGPUDialect::getEqualRunsAttrName(),
                         b.getDenseI32ArrayAttr(*runs));
    b.replaceOp(op, b.create(state)->getResults());
    return success();
  }

private:
  /// The groups of equal registers of `op`'s integer tile result, where
  /// some group has more than one.
  std::optional<SmallVector<int32_t>> equalRuns(Operation *op,
                                                ArrayRef<Type> types) const {
    if (!c.axis || op->getNumResults() != 1 || !isMemoryEffectFree(op))
      return std::nullopt;
    auto tile = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto vt = dyn_cast<VectorType>(types[0]);
    if (!tile || !vt || vt.getRank() != 1 ||
        !tile.getElementType().isIntOrIndex() || !tile.getEncoding())
      return std::nullopt;
    AxisInfo info = c.axis->lookup(op->getResult(0));
    if (llvm::all_of(info.constancy, [](int64_t k) { return k <= 1; }))
      return std::nullopt;
    // Operands as constant as the result: their registers are equal too,
    // and the backends' common-subexpression elimination already computes
    // the result once per group.
    auto asConstant = [&](Value v) {
      AxisInfo in = c.axis->lookup(v);
      for (auto [d, k] : llvm::enumerate(info.constancy))
        if (d >= in.constancy.size() || in.constancy[d] < k)
          return false;
      return true;
    };
    if (llvm::all_of(op->getOperands(), asConstant))
      return std::nullopt;
    SmallVector<int32_t> groups =
        equalRegisterGroups(getLinearLayout(tile), info.constancy);
    if (groups.empty() || int64_t(groups.size()) != vt.getNumElements() ||
        *llvm::max_element(groups) + 1 == int32_t(groups.size()))
      return std::nullopt;
    return groups;
  }

  const Context &c;
};

} // namespace

void kiln::gpu::threads::populateDataMovementPatterns(const TypeConverter &tc,
    RewritePatternSet &patterns, const Context &c) {
  patterns.add<ArangePattern, SplatPattern, ConstantPattern, MovePattern<kiln::BroadcastOp>, MovePattern<kiln::ExpandDimsOp>, MovePattern<kiln::TransOp>, MovePattern<kiln::ReshapeOp>, MovePattern<ConvertLayoutOp>>(tc, patterns.getContext(), c);
}

void kiln::gpu::threads::populateElementwisePatterns(
    const TypeConverter &tc, RewritePatternSet &patterns, const Context &c) {
  patterns.add<ElementwisePattern>(tc, patterns.getContext(), c);
}
