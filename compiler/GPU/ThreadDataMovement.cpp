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
    if (isRegisterOnly(*x, dstL))
      return permuteRegisters(src, *x, dstL, dstType);
    return throughShared(src, srcL, dstL, dstType);
  }

private:
  /// True when every thread of dst finds its elements in its own src
  /// registers: lane and warp bits map to themselves.
  bool isRegisterOnly(const LinearLayout &x, const LinearLayout &dstL) {
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

  FailureOr<Value> throughShared(Value src, const LinearLayout &srcL,
                                 const LinearLayout &dstL,
                                 VectorType dstType) {
    Type elem = dstType.getElementType();
    int64_t elemBytes = getElementBytes(elem);
    // Whether it fits is tile-gpu-allocate-shared's to say, for all
    // buffers together.
    int64_t bytes = srcL.getTotalOutSize() * elemBytes;
    Value buf = SharedAllocOp::create(
        b, loc, SharedBufferType::get(b.getContext()), b.getI64IntegerAttr(bytes),
        b.getI64IntegerAttr(std::max<int64_t>(16, elemBytes)), IntegerAttr());
    // Row-major offsets of power-of-two tiles are the coordinates' bits
    // side by side, so offset(hw ^ reg) = offset(hw) ^ offset(reg): one
    // XOR with a constant per access. Consecutive registers holding
    // consecutive elements of the last dimension move as one vector.
    // Where each element lives: the swizzled shared layout's inverse,
    // composed with each side's layout, maps (register, lane, warp) to an
    // offset — XOR-linear, so a register's offset is the thread's part XOR
    // a constant. Consecutive registers at consecutive offsets move as one
    // vector (a 16-byte chunk stays whole under the swizzle).
    SmallVector<int32_t, 3> shape;
    for (const LinearLayout::OutDim &o : srcL.getOutDims())
      shape.push_back(o.size);
    std::optional<LinearLayout> where =
        getSharedLayout(shape, elemBytes).invert();
    assert(where && "shared layouts are bijections");
    auto access = [&](const LinearLayout &l, Value vec, bool isStore,
                      SmallVector<std::pair<int64_t, Value>> *loaded) {
      LinearLayout toOffset = l.compose(*where);
      Value hwOffset = hardwareCoords(b, loc, toOffset)[0];
      uint32_t copies = l.getFreeVariableMask(dims::kRegister);
      int32_t regs = l.getInDimSize(dims::kRegister);
      int32_t width = std::min<int32_t>(
          {toOffset.getNumConsecutive(dims::kRegister, dims::kOffset), regs,
           int32_t(std::max<int64_t>(1, target.maxVectorBytes / elemBytes))});
      auto part = VectorType::get({width}, elem);
      for (int32_t r = 0; r < regs; r += width) {
        if (isStore && (uint32_t(r) & copies))
          continue; // a copy of an earlier register
        Value element = arith::XOrIOp::create(
            b, loc, hwOffset, i32Const(b, loc, registerCoords(toOffset, r)[0]));
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
    Value pred = ownerPredicate(b, loc, srcL);
    if (pred) {
      auto ifOp = scf::IfOp::create(b, loc, pred, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      access(srcL, src, true, nullptr);
    } else {
      access(srcL, src, true, nullptr);
    }
    SmallVector<std::pair<int64_t, Value>> parts;
    if (!readMatrixOperand(buf, *where, dstL, dstType, parts))
      access(dstL, Value(), false, &parts);
    Value result = arith::ConstantOp::create(
        b, loc, dstType, b.getZeroAttr(dstType));
    for (auto [r, p] : parts)
      result = vector::InsertStridedSliceOp::create(
          b, loc, p, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
    return result;
  }

  /// Reads a 16-bit operand of a k=16 matrix instruction (8 registers per
  /// A tile, 4 per B tile) from the row-major buffer with one
  /// `shared_load_matrix` per instruction tile (A: 4 matrices; B: 2,
  /// transposed), when the target has matrix loads. False if it does not
  /// apply; the generic element reads are used then.
  bool readMatrixOperand(Value buf, const LinearLayout &where,
                         const LinearLayout &dstL, VectorType dstType,
                         SmallVector<std::pair<int64_t, Value>> &parts) {
    auto operand = dyn_cast_or_null<OperandAttr>(dstEncoding);
    if (!operand || !target.hasMatrixLoad ||
        dstType.getElementTypeBitWidth() != 16)
      return false;
    const MatrixInstr *instr = lookupMatrixInstr(operand.getParent().getInstr());
    bool isA = operand.getIndex() == 0;
    int32_t frag = isA ? 8 : 4;
    if (!instr || instr->k != 16 ||
        (isA ? instr->getARegisters() : instr->getBRegisters()) != frag)
      return false;
    int64_t elemBytes = 2;
    // The row each lane addresses inside an instruction tile, as a layout:
    // A, matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k
    // 8-15), (rows 8-15, k 8-15): lane bits 0-3 walk rows, bit 4 moves 8
    // columns. B, transposed, (k 0-7), (k 8-15) of 8 columns: lane bits 0-3
    // walk rows (k), bit 4 does nothing.
    std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
    int32_t rows = dstL.getOutDims()[0].size, cols = dstL.getOutDims()[1].size;
    LinearLayout laneRows(
        {{dims::kLane.str(),
          {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, isA ? 8 : 0}}}},
        {{d0, rows}, {d1, cols}});
    LinearLayout laneOffset = laneRows.compose(where);
    LinearLayout toOffset = dstL.compose(where);
    Value lanePart = hardwareCoords(b, loc, laneOffset)[0];
    // The warp's part of the tile's corner (lane 0).
    Value warpPart = hardwareCoords(
        b, loc, toOffset.sublayout({dims::kWarp}, {dims::kOffset}))[0];
    Value base = arith::XOrIOp::create(b, loc, lanePart, warpPart);
    auto part = VectorType::get({frag}, dstType.getElementType());
    int32_t regs = dstL.getInDimSize(dims::kRegister);
    for (int32_t r0 = 0; r0 < regs; r0 += frag) {
      // Offsets are XOR-linear in the coordinates, and a tile's corner, the
      // warp's share and a lane's row within the tile use disjoint bits.
      Value element = arith::XOrIOp::create(
          b, loc, base, i32Const(b, loc, registerCoords(toOffset, r0)[0]));
      Value offset =
          arith::MulIOp::create(b, loc, element, i32Const(b, loc, elemBytes));
      Value v = SharedLoadMatrixOp::create(
          b, loc, part, buf, offset, b.getI32IntegerAttr(frag / 2),
          isA ? UnitAttr() : b.getUnitAttr());
      // Fragment register j of this tile is register r0 + j: the operand
      // layouts put the fragment's bits lowest.
      parts.push_back({r0, v});
    }
    return true;
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

} // namespace

void kiln::gpu::threads::populateDataMovementPatterns(const TypeConverter &tc,
    RewritePatternSet &patterns, const Context &c) {
  patterns.add<ArangePattern, SplatPattern, ConstantPattern, MovePattern<kiln::BroadcastOp>, MovePattern<kiln::ExpandDimsOp>, MovePattern<kiln::TransOp>, MovePattern<kiln::ReshapeOp>, MovePattern<ConvertLayoutOp>>(tc, patterns.getContext(), c);
}

void kiln::gpu::threads::populateElementwisePatterns(
    const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<ElementwisePattern>(tc, patterns.getContext());
}
