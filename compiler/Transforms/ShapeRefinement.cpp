//===- ShapeRefinement.cpp - tile-refine-shapes --------------------------===//
//
// After const params become constants, every dynamically shaped tile can be
// given its static shape. The refiner walks a function in order (defs
// before uses), computing each op's result shape from its operands' shapes
// and its constant size operands, rebuilding the ops whose size operands
// became constant, and propagating through the region arguments and
// results of scf.for and scf.if. It then checks that every tile is static,
// with power-of-two dimensions, within the size limit.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpDefinition.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_TILEREFINESHAPES
#include "compiler/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// Tiles larger than this many elements are refused (docs/language.md).
static constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// The value of an integer size operand when it folds to a constant
/// through the ops that MLIRGen uses to compute sizes.
static std::optional<int64_t> foldSize(Value v, int depth = 0) {
  if (!v || depth > 32)
    return std::nullopt;
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(def))
    return foldSize(def->getOperand(0), depth + 1);
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    auto idx = foldSize(dim.getIndex(), depth + 1);
    auto tt = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (idx && tt && *idx >= 0 && *idx < tt.getRank() && !tt.isDynamicDim(*idx))
      return tt.getDimSize(*idx);
    return std::nullopt;
  }
  if (def->getNumOperands() != 2)
    return std::nullopt;
  auto a = foldSize(def->getOperand(0), depth + 1);
  auto b = foldSize(def->getOperand(1), depth + 1);
  if (!a || !b)
    return std::nullopt;
  // Sizes are small non-negative numbers in valid programs; the signed and
  // unsigned forms of an op agree on them. Anything that would overflow or
  // trap is left alone (the size then stays dynamic and is reported).
  int64_t x = *a, y = *b;
  bool divisible = y != 0 && !(x == INT64_MIN && y == -1);
  bool shiftable = y >= 0 && y < 63;
  using R = std::optional<int64_t>;
  return llvm::TypeSwitch<Operation *, R>(def)
      .Case<arith::AddIOp>([&](auto) -> R {
        int64_t r;
        return llvm::AddOverflow(x, y, r) ? R() : R(r);
      })
      .Case<arith::SubIOp>([&](auto) -> R {
        int64_t r;
        return llvm::SubOverflow(x, y, r) ? R() : R(r);
      })
      .Case<arith::MulIOp>([&](auto) -> R {
        int64_t r;
        return llvm::MulOverflow(x, y, r) ? R() : R(r);
      })
      .Case<arith::DivSIOp, arith::DivUIOp>(
          [&](auto) { return divisible ? R(x / y) : R(); })
      .Case<arith::RemSIOp, arith::RemUIOp>(
          [&](auto) { return divisible ? R(x % y) : R(); })
      .Case<arith::CeilDivSIOp, arith::CeilDivUIOp>([&](auto) -> R {
        if (!divisible)
          return std::nullopt;
        return x / y + ((x % y != 0 && (x < 0) == (y < 0)) ? 1 : 0);
      })
      .Case<arith::MaxSIOp, arith::MaxUIOp>(
          [&](auto) { return std::max(x, y); })
      .Case<arith::MinSIOp, arith::MinUIOp>(
          [&](auto) { return std::min(x, y); })
      .Case<arith::ShLIOp>([&](auto) {
        return shiftable && x >= 0 && x <= (INT64_MAX >> y) ? R(x << y) : R();
      })
      .Case<arith::ShRSIOp, arith::ShRUIOp>(
          [&](auto) { return shiftable && x >= 0 ? R(x >> y) : R(); })
      .Case<arith::AndIOp>([&](auto) { return x & y; })
      .Case<arith::OrIOp>([&](auto) { return x | y; })
      .Case<arith::XOrIOp>([&](auto) { return x ^ y; })
      .Default([](Operation *) { return std::nullopt; });
}

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

static std::string shapeText(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  if (!tt)
    return "scalar";
  return shapeText(tt.getShape());
}

namespace {
class ShapeRefiner {
public:
  explicit ShapeRefiner(StringRef context) : context(context) {}

  LogicalResult run(func::FuncOp f) {
    if (f.getBody().empty())
      return success();
    if (failed(refineBlock(f.getBody().front())))
      return failure();
    return checkStatic(f);
  }

private:
  LogicalResult fail(Operation *op, const Twine &msg) {
    InFlightDiagnostic d = op->emitError(msg);
    if (!context.empty())
      d.attachNote() << context;
    return d;
  }

  LogicalResult refineBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block))
      if (failed(refineOp(&op)))
        return failure();
    return success();
  }

  static void setType(Value v, Type t) {
    if (v.getType() != t)
      v.setType(t);
  }

  static Type withShape(Type like, ArrayRef<int64_t> shape) {
    Type elem = getElementTypeOrSelf(like);
    if (shape.empty())
      return elem;
    auto tt = dyn_cast<RankedTensorType>(like);
    return RankedTensorType::get(shape, elem, tt ? tt.getEncoding() : Attribute());
  }

  static SmallVector<int64_t> shapeOf(Value v) {
    if (auto tt = dyn_cast<RankedTensorType>(v.getType()))
      return SmallVector<int64_t>(tt.getShape());
    return {};
  }

  /// The result type with dynamic dims filled from constant size operands,
  /// and the size operands that remain.
  static std::pair<RankedTensorType, SmallVector<Value>>
  refineSized(RankedTensorType type, ValueRange sizes) {
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<Value> remaining;
    size_t next = 0;
    for (int64_t &d : shape) {
      if (!ShapedType::isDynamic(d))
        continue;
      Value size = next < sizes.size() ? sizes[next++] : Value();
      if (auto c = foldSize(size))
        d = *c;
      else if (size)
        remaining.push_back(size);
    }
    return {RankedTensorType::get(shape, type.getElementType(), type.getEncoding()),
            remaining};
  }

  LogicalResult refineFor(scf::ForOp op) {
    Block *body = op.getBody();
    for (auto [init, arg] : llvm::zip(op.getInitArgs(), op.getRegionIterArgs()))
      setType(arg, init.getType());
    if (failed(refineBlock(*body)))
      return failure();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    for (auto [i, pair] :
         llvm::enumerate(llvm::zip(yield.getOperands(), op.getRegionIterArgs()))) {
      auto [yielded, arg] = pair;
      if (yielded.getType() != arg.getType())
        return fail(op, "a loop-carried variable changes shape in the loop "
                        "body: " +
                            shapeText(arg.getType()) + " before, " +
                            shapeText(yielded.getType()) + " after");
      setType(op.getResult(i), arg.getType());
    }
    return success();
  }

  LogicalResult refineIf(scf::IfOp op) {
    for (Region *r : {&op.getThenRegion(), &op.getElseRegion()})
      if (!r->empty() && failed(refineBlock(r->front())))
        return failure();
    if (op.getNumResults() == 0)
      return success();
    auto thenYield = op.thenYield(), elseYield = op.elseYield();
    for (auto [i, pair] : llvm::enumerate(
             llvm::zip(thenYield.getOperands(), elseYield.getOperands()))) {
      auto [a, b] = pair;
      if (a.getType() != b.getType())
        return fail(op, "the branches of 'if' give a variable different "
                        "shapes: " +
                            shapeText(a.getType()) + " and " +
                            shapeText(b.getType()));
      setType(op.getResult(i), a.getType());
    }
    return success();
  }

  /// Elementwise ops: every tile operand must have the same shape, which
  /// the results take.
  LogicalResult refineElementwise(Operation *op) {
    Value first;
    for (Value v : op->getOperands()) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      if (!first) {
        first = v;
        continue;
      }
      auto a = cast<RankedTensorType>(first.getType());
      auto b = cast<RankedTensorType>(v.getType());
      if (a.hasStaticShape() && b.hasStaticShape() && a.getShape() != b.getShape())
        return fail(op, "operands have different shapes " + shapeText(a) +
                            " and " + shapeText(b) +
                            " in this variant (their sizes depend on const "
                            "params)");
    }
    if (!first)
      return success();
    for (Value r : op->getResults())
      if (isa<RankedTensorType>(r.getType()))
        setType(r, withShape(r.getType(), shapeOf(first)));
    return success();
  }

  template <typename OpTy>
  LogicalResult rebuildSized(OpTy op) {
    auto type = cast<RankedTensorType>(op.getType());
    auto [refined, remaining] = refineSized(type, op.getSizes());
    if (refined == type)
      return success();
    OpBuilder b(op);
    Operation *newOp;
    if constexpr (std::is_same_v<OpTy, ViewLoadOp>)
      newOp = ViewLoadOp::create(b, op.getLoc(), refined, op.getView(),
                                 op.getOffsets(), remaining, op.getOther());
    else
      newOp = OpTy::create(b, op.getLoc(), refined, op.getSrc(), remaining);
    newOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op->replaceAllUsesWith(newOp);
    op->erase();
    return success();
  }

  LogicalResult refineOp(Operation *op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<scf::ForOp>([&](auto o) { return refineFor(o); })
        .Case<scf::IfOp>([&](auto o) { return refineIf(o); })
        .Case<ArangeOp>([&](ArangeOp o) -> LogicalResult {
          auto lo = foldSize(o.getLo()), hi = foldSize(o.getHi());
          if (!lo || !hi)
            return success();
          int64_t n = *hi - *lo;
          if (n <= 0)
            return fail(o, "arange needs end > start, found arange(" +
                               Twine(*lo) + ", " + Twine(*hi) + ")");
          if (!llvm::isPowerOf2_64(uint64_t(n)))
            return fail(o, "arange length " + Twine(n) + " (from " +
                               Twine(*lo) + " to " + Twine(*hi) +
                               ") is not a power of two");
          setType(o.getResult(), RankedTensorType::get({n}, o.getType().getElementType()));
          return success();
        })
        .Case<SplatOp>([&](auto o) { return rebuildSized(o); })
        .Case<BroadcastOp>([&](BroadcastOp o) -> LogicalResult {
          // Check before rebuilding: the op's location names the source.
          auto [refined, remaining] = refineSized(o.getType(), o.getSizes());
          ArrayRef<int64_t> src =
              cast<RankedTensorType>(o.getSrc().getType()).getShape();
          ArrayRef<int64_t> dst = refined.getShape();
          for (auto [s, d] : llvm::zip(src, dst))
            if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(d) &&
                s != 1 && s != d)
              return fail(o, "cannot broadcast shape " + shapeText(src) +
                                 " to " + shapeText(dst) +
                                 " in this variant: each dimension must be 1 "
                                 "or equal");
          return rebuildSized(o);
        })
        .Case<ReshapeOp>([&](ReshapeOp o) -> LogicalResult {
          auto [refined, remaining] = refineSized(o.getType(), o.getSizes());
          auto src = cast<RankedTensorType>(o.getSrc().getType());
          if (src.hasStaticShape() && refined.hasStaticShape() &&
              src.getNumElements() != refined.getNumElements())
            return fail(o, "reshape from " + shapeText(src) + " to " +
                               shapeText(refined) +
                               " changes the number of elements (" +
                               Twine(src.getNumElements()) + " vs " +
                               Twine(refined.getNumElements()) + ")");
          return rebuildSized(o);
        })
        .Case<ViewLoadOp>([&](auto o) { return rebuildSized(o); })
        .Case<ExpandDimsOp>([&](ExpandDimsOp o) {
          SmallVector<int64_t> s = shapeOf(o.getSrc());
          s.insert(s.begin() + o.getAxis(), 1);
          setType(o.getResult(), withShape(o.getType(), s));
          return success();
        })
        .Case<TransOp>([&](TransOp o) {
          SmallVector<int64_t> src = shapeOf(o.getSrc()), s;
          for (int32_t i : o.getOrder())
            s.push_back(src[i]);
          setType(o.getResult(), withShape(o.getType(), s));
          return success();
        })
        .Case<DotOp>([&](DotOp o) -> LogicalResult {
          SmallVector<int64_t> a = shapeOf(o.getA()), b = shapeOf(o.getB());
          if (a.size() != 2 || b.size() != 2)
            return success(); // The verifier reports it.
          if (!ShapedType::isDynamic(a[1]) && !ShapedType::isDynamic(b[0]) &&
              a[1] != b[0])
            return fail(o, "dot: inner dimensions differ: " + shapeText(a) +
                               " x " + shapeText(b));
          SmallVector<int64_t> acc = shapeOf(o.getAcc());
          SmallVector<int64_t> result{a[0], b[1]};
          for (auto [r, c] : llvm::zip(result, acc))
            if (!ShapedType::isDynamic(r) && !ShapedType::isDynamic(c) &&
                r != c)
              return fail(o, "dot: the accumulator has shape " +
                                 shapeText(acc) + " but " + shapeText(a) +
                                 " x " + shapeText(b) + " gives " +
                                 shapeText(result));
          setType(o.getResult(), withShape(o.getType(), result));
          return success();
        })
        .Case<ReduceOp>([&](ReduceOp o) {
          for (auto [src, res] : llvm::zip(o.getSrcs(), o.getResults())) {
            SmallVector<int64_t> s = shapeOf(src);
            s.erase(s.begin() + o.getAxis());
            setType(res, withShape(res.getType(), s));
          }
          return success();
        })
        .Case<ScanOp>([&](ScanOp o) {
          for (auto [src, res] : llvm::zip(o.getSrcs(), o.getResults()))
            setType(res, withShape(res.getType(), shapeOf(src)));
          return success();
        })
        .Case<AddPtrOp, LoadOp, AtomicCASOp>(
            [&](Operation *o) { return refineElementwise(o); })
        .Case<AtomicRMWOp>([&](Operation *o) { return refineElementwise(o); })
        .Default([&](Operation *o) -> LogicalResult {
          if (o->hasTrait<OpTrait::Elementwise>() ||
              o->hasTrait<OpTrait::SameOperandsAndResultShape>())
            return refineElementwise(o);
          return success();
        });
  }

  LogicalResult checkType(Operation *op, Type t) {
    auto tt = dyn_cast<RankedTensorType>(t);
    if (!tt)
      return success();
    if (!tt.hasStaticShape())
      return fail(op, "the shape of this tile, " + shapeText(tt) +
                          ", does not become constant; tile sizes must "
                          "depend only on const params and literals");
    int64_t elems = 1;
    for (int64_t d : tt.getShape()) {
      if (d <= 0 || !llvm::isPowerOf2_64(uint64_t(d)))
        return fail(op, "tile dimension " + Twine(d) +
                            " is not a power of two (shape " + shapeText(tt) +
                            ")");
      elems *= d;
      if (elems > kMaxTileElements)
        return fail(op, "tile too large: " + shapeText(tt) + " has more than " +
                            Twine(kMaxTileElements) + " elements");
    }
    return success();
  }

  LogicalResult checkStatic(func::FuncOp f) {
    WalkResult r = f.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (failed(checkType(op, t)))
          return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &b : region)
          for (BlockArgument a : b.getArguments())
            if (failed(checkType(op, a.getType())))
              return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  std::string context;
};

struct TileRefineShapesPass
    : kiln::impl::TileRefineShapesBase<TileRefineShapesPass> {
  void runOnOperation() override {
    if (failed(refineShapes(getOperation(), "")))
      signalPassFailure();
  }
};
} // namespace

LogicalResult kiln::refineShapes(func::FuncOp f, StringRef context) {
  return ShapeRefiner(context).run(f);
}
