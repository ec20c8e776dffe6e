//===- AxisInfoRules.cpp - Transfer functions of the axis analysis --------===//
//
// One transfer function per op family: the fact of an op's result from the
// facts of its operands. Each rule is exact or errs on the pessimistic
// side; the comment on each says why it holds (the meaning of a fact is
// written at the top of AxisInfo.cpp). Results are normalized afterwards
// (powers of two, capped at the tile size and 2^30).
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/AxisInfoRules.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::axis;

/// Dense constants with more elements are not inspected element by element.
static constexpr int64_t kMaxInspectedElements = int64_t(1) << 16;

//===----------------------------------------------------------------------===//
// Types and facts
//===----------------------------------------------------------------------===//

// Shared with AxisInfo.cpp: see AxisInfoRules.h.
SmallVector<int64_t, 3> axis::getTileShape(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t, 3>(tile.getShape());
  return {1};
}

bool axis::isTracked(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type)) {
    if (tile.getRank() == 0)
      return false;
    type = tile.getElementType();
  }
  return isa<IntegerType, IndexType, FloatType, PointerType>(type);
}

int64_t axis::getStep(Type type) {
  if (auto ptr = dyn_cast<PointerType>(getElementTypeOrSelf(type)))
    return getElementBytes(ptr.getPointeeType());
  return 1;
}

unsigned axis::getIntegerWidth(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (isa<IndexType>(element))
    return IndexType::kInternalStorageBitWidth;
  if (auto integer = dyn_cast<IntegerType>(element))
    return integer.getWidth() <= 64 ? integer.getWidth() : 0;
  return 0;
}

/// The longest run of a `width`-bit integer that cannot straddle a wrap of
/// the type once extended (signed or unsigned), if it starts at a multiple
/// of its length.
static int64_t getRunLimit(unsigned width) {
  if (width == 0 || width >= 32)
    return int64_t(1) << 31;
  return int64_t(1) << (width - 1);
}

/// The largest power of two dividing `value` (a width-bit integer), capped;
/// zero is divisible by everything.
static int64_t getDivisibilityOf(const APInt &value) {
  if (value.isZero())
    return kMaxDivisibility;
  unsigned zeros = value.countr_zero();
  return zeros >= 30 ? kMaxDivisibility : int64_t(1) << zeros;
}

/// Constants are kept sign-extended to 64 bits, i1 zero-extended (true is 1).
static APInt toAPInt(int64_t value, unsigned width) {
  return APInt(64, uint64_t(value), /*isSigned=*/true).trunc(width);
}
static int64_t fromAPInt(const APInt &value) {
  return value.getBitWidth() == 1 ? int64_t(value.getZExtValue())
                                  : value.getSExtValue();
}

static int64_t mulCapped(int64_t lhs, int64_t rhs) {
  return std::min(lhs * rhs, kMaxDivisibility);
}

template <typename... Ts> static int64_t minOf(int64_t first, Ts... rest) {
  int64_t result = first;
  ((result = std::min<int64_t>(result, rest)), ...);
  return result;
}

int64_t axis::divisibilityAt(const AxisInfo &info, unsigned d, int64_t stride,
                             int64_t step) {
  if (info.contiguity[d] <= stride)
    return info.divisibility[d];
  return std::min(info.divisibility[d], stride * step);
}

int64_t axis::divisibilityOfAll(const AxisInfo &info, int64_t step) {
  int64_t result = 1;
  for (unsigned d = 0; d < info.getRank(); ++d)
    result = std::max(result, divisibilityAt(info, d, 1, step));
  return result;
}

//===----------------------------------------------------------------------===//
// Transfer functions
//===----------------------------------------------------------------------===//

namespace {

/// Computes the fact of the single result of one op from its operands'
/// facts. Every method returns std::nullopt when it knows nothing.
class Transfer {
public:
  Transfer(Operation *op, ArrayRef<AxisInfo> in)
      : op(op), in(in), shape(getTileShape(op->getResult(0).getType())),
        step(getStep(op->getResult(0).getType())),
        width(getIntegerWidth(op->getResult(0).getType())) {}

  std::optional<AxisInfo> run();

private:
  unsigned rank() const { return shape.size(); }
  int64_t size(unsigned d) const {
    return ShapedType::isDynamic(shape[d]) ? 1 : shape[d];
  }
  unsigned widthOf(unsigned i) const {
    return getIntegerWidth(op->getOperand(i).getType());
  }
  /// Operand `i`'s constant, when its facts say it has one.
  std::optional<APInt> constantOf(unsigned i) const {
    unsigned w = widthOf(i);
    if (!w || !in[i].constantValue)
      return std::nullopt;
    return toAPInt(*in[i].constantValue, w);
  }
  /// A fact for a result equal to `value` everywhere.
  AxisInfo constant(const APInt &value) const {
    AxisInfo out = AxisInfo::getPessimistic(rank());
    for (unsigned d = 0; d < rank(); ++d) {
      out.constancy[d] = size(d);
      out.divisibility[d] = getDivisibilityOf(value);
    }
    out.constantValue = fromAPInt(value);
    return out;
  }
  AxisInfo pessimistic() const { return AxisInfo::getPessimistic(rank()); }
  /// The longest run of operand `i`'s values, groups of which aligned to
  /// their own length are both contiguous and start at a multiple of it.
  int64_t alignedRun(unsigned i, unsigned d) const {
    return minOf(in[i].contiguity[d], in[i].divisibility[d],
                 getRunLimit(widthOf(i)));
  }

  std::optional<AxisInfo> visitConstant(arith::ConstantOp constOp);
  std::optional<AxisInfo> visitDenseConstant(DenseIntElementsAttr attr);
  std::optional<AxisInfo> visitArange();
  std::optional<AxisInfo> visitSplat();
  std::optional<AxisInfo> visitBroadcast(BroadcastOp broadcast);
  std::optional<AxisInfo> visitExpandDims(ExpandDimsOp expand);
  std::optional<AxisInfo> visitTrans(TransOp trans);
  std::optional<AxisInfo> visitReshape(ReshapeOp reshape);
  std::optional<AxisInfo> visitAddPtr();
  std::optional<AxisInfo> visitAddSub(bool isSub);
  std::optional<AxisInfo> visitMul();
  std::optional<AxisInfo> visitDiv(bool isUnsigned);
  std::optional<AxisInfo> visitRem(bool isUnsigned);
  std::optional<AxisInfo> visitAnd();
  std::optional<AxisInfo> visitOrXor();
  std::optional<AxisInfo> visitShl();
  std::optional<AxisInfo> visitShr();
  std::optional<AxisInfo> visitMinMax();
  std::optional<AxisInfo> visitSelect(arith::SelectOp select);
  std::optional<AxisInfo> visitCmp(arith::CmpIOp cmp);
  std::optional<AxisInfo> visitCast();
  std::optional<AxisInfo> visitElementwise();
  std::optional<APInt> fold();

  Operation *op;
  ArrayRef<AxisInfo> in;
  SmallVector<int64_t, 3> shape;
  int64_t step;
  unsigned width;
};

} // namespace

std::optional<AxisInfo> axis::inferAxisInfo(Operation *op,
                                            ArrayRef<AxisInfo> operands) {
  return Transfer(op, operands).run();
}

std::optional<AxisInfo> Transfer::run() {
  using R = std::optional<AxisInfo>;
  // Binary integer ops on two constants fold.
  if (op->getNumOperands() == 2 && width &&
      isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
          arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::AndIOp,
          arith::OrIOp, arith::XOrIOp, arith::ShLIOp, arith::ShRSIOp,
          arith::ShRUIOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
          arith::MinUIOp, arith::CmpIOp>(op))
    if (std::optional<APInt> value = fold())
      return constant(*value);

  return llvm::TypeSwitch<Operation *, R>(op)
      .Case([&](arith::ConstantOp c) { return visitConstant(c); })
      .Case([&](ArangeOp) { return visitArange(); })
      .Case([&](SplatOp) { return visitSplat(); })
      .Case([&](BroadcastOp b) { return visitBroadcast(b); })
      .Case([&](ExpandDimsOp e) { return visitExpandDims(e); })
      .Case([&](TransOp t) { return visitTrans(t); })
      .Case([&](ReshapeOp r) { return visitReshape(r); })
      .Case([&](AddPtrOp) { return visitAddPtr(); })
      .Case([&](arith::AddIOp) { return visitAddSub(false); })
      .Case([&](arith::SubIOp) { return visitAddSub(true); })
      .Case([&](arith::MulIOp) { return visitMul(); })
      .Case([&](arith::DivSIOp) { return visitDiv(false); })
      .Case([&](arith::DivUIOp) { return visitDiv(true); })
      .Case([&](arith::RemSIOp) { return visitRem(false); })
      .Case([&](arith::RemUIOp) { return visitRem(true); })
      .Case([&](arith::AndIOp) { return visitAnd(); })
      .Case<arith::OrIOp, arith::XOrIOp>([&](auto) { return visitOrXor(); })
      .Case([&](arith::ShLIOp) { return visitShl(); })
      .Case<arith::ShRSIOp, arith::ShRUIOp>([&](auto) { return visitShr(); })
      .Case<arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(
          [&](auto) { return visitMinMax(); })
      .Case([&](arith::SelectOp s) { return visitSelect(s); })
      .Case([&](arith::CmpIOp c) { return visitCmp(c); })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp, arith::BitcastOp>(
          [&](auto) { return visitCast(); })
      .Default([&](Operation *) { return visitElementwise(); });
}

/// Folds a binary integer op (or an integer comparison) of two constants
/// in the width of its operands; nothing for undefined cases.
std::optional<APInt> Transfer::fold() {
  std::optional<APInt> a = constantOf(0), b = constantOf(1);
  if (!a || !b)
    return std::nullopt;
  const APInt &x = *a, &y = *b;
  using R = std::optional<APInt>;
  bool divisible = !y.isZero() && !(x.isMinSignedValue() && y.isAllOnes());
  bool shiftable = y.ult(x.getBitWidth());
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case([&](arith::AddIOp) { return x + y; })
      .Case([&](arith::SubIOp) { return x - y; })
      .Case([&](arith::MulIOp) { return x * y; })
      .Case([&](arith::DivSIOp) { return divisible ? R(x.sdiv(y)) : R(); })
      .Case([&](arith::DivUIOp) { return y.isZero() ? R() : R(x.udiv(y)); })
      .Case([&](arith::RemSIOp) { return divisible ? R(x.srem(y)) : R(); })
      .Case([&](arith::RemUIOp) { return y.isZero() ? R() : R(x.urem(y)); })
      .Case([&](arith::AndIOp) { return x & y; })
      .Case([&](arith::OrIOp) { return x | y; })
      .Case([&](arith::XOrIOp) { return x ^ y; })
      .Case([&](arith::ShLIOp) { return shiftable ? R(x.shl(y)) : R(); })
      .Case([&](arith::ShRSIOp) { return shiftable ? R(x.ashr(y)) : R(); })
      .Case([&](arith::ShRUIOp) { return shiftable ? R(x.lshr(y)) : R(); })
      .Case([&](arith::MaxSIOp) { return llvm::APIntOps::smax(x, y); })
      .Case([&](arith::MinSIOp) { return llvm::APIntOps::smin(x, y); })
      .Case([&](arith::MaxUIOp) { return llvm::APIntOps::umax(x, y); })
      .Case([&](arith::MinUIOp) { return llvm::APIntOps::umin(x, y); })
      .Case([&](arith::CmpIOp cmp) {
        return APInt(1, arith::applyCmpPredicate(cmp.getPredicate(), x, y));
      })
      .Default([](Operation *) { return R(); });
}

std::optional<AxisInfo> Transfer::visitConstant(arith::ConstantOp constOp) {
  Attribute value = constOp.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(value))
    return width ? std::optional(constant(integer.getValue())) : std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !isa<RankedTensorType>(dense.getType()))
    return std::nullopt;
  if (dense.isSplat()) {
    if (width)
      return constant(dense.getSplatValue<APInt>());
    // A float splat: constant, value unknown to this analysis.
    AxisInfo out = pessimistic();
    for (unsigned d = 0; d < rank(); ++d)
      out.constancy[d] = size(d);
    return out;
  }
  if (auto ints = dyn_cast<DenseIntElementsAttr>(dense); ints && width)
    return visitDenseConstant(ints);
  return std::nullopt;
}

/// Exact facts of a small non-splat integer constant: along each dimension,
/// the run lengths are the largest powers of two that every break in
/// consecutiveness (equality) falls on a boundary of.
std::optional<AxisInfo>
Transfer::visitDenseConstant(DenseIntElementsAttr attr) {
  int64_t count = attr.getNumElements();
  if (count > kMaxInspectedElements || llvm::is_contained(shape, 0))
    return std::nullopt;
  SmallVector<APInt> values(attr.getValues<APInt>());
  AxisInfo out = pessimistic();
  int64_t stride = 1;
  for (unsigned d = rank(); d-- > 0;) {
    int64_t contiguity = int64_t(1) << 62, constancy = contiguity;
    for (int64_t flat = 0; flat < count; ++flat) {
      int64_t i = (flat / stride) % shape[d];
      if (i + 1 == shape[d])
        continue;
      const APInt &x = values[flat], &next = values[flat + stride];
      int64_t boundary = (i + 1) & -(i + 1);
      if (next != x + 1)
        contiguity = std::min(contiguity, boundary);
      if (next != x)
        constancy = std::min(constancy, boundary);
    }
    out.contiguity[d] = contiguity;
    out.constancy[d] = constancy;
    int64_t run = std::min(contiguity, size(d));
    int64_t divisibility = kMaxDivisibility;
    for (int64_t flat = 0; flat < count; ++flat)
      if (((flat / stride) % shape[d]) % run == 0)
        divisibility = std::min(divisibility, getDivisibilityOf(values[flat]));
    out.divisibility[d] = divisibility;
    stride *= shape[d];
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitArange() {
  // lo, lo + 1, ..., each run starting at lo.
  AxisInfo out = pessimistic();
  out.contiguity[0] = size(0);
  out.divisibility[0] = divisibilityOfAll(in[0], 1);
  return out;
}

std::optional<AxisInfo> Transfer::visitSplat() {
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    out.constancy[d] = size(d);
    out.divisibility[d] = divisibilityOfAll(in[0], step);
  }
  out.constantValue = in[0].constantValue;
  return out;
}

std::optional<AxisInfo> Transfer::visitBroadcast(BroadcastOp broadcast) {
  ArrayRef<int64_t> source =
      cast<RankedTensorType>(broadcast.getSrc().getType()).getShape();
  if (source.size() != rank())
    return std::nullopt;
  AxisInfo out = in[0];
  int64_t all = divisibilityOfAll(in[0], step);
  for (unsigned d = 0; d < rank(); ++d) {
    if (source[d] == shape[d] && !ShapedType::isDynamic(source[d]))
      continue;
    // Repeated along d (or not known to be the same): every element is one
    // of the source's.
    out.contiguity[d] = 1;
    out.constancy[d] = source[d] == 1 ? size(d) : 1;
    out.divisibility[d] = all;
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitExpandDims(ExpandDimsOp expand) {
  unsigned axis = expand.getAxis();
  if (axis > in[0].getRank())
    return std::nullopt;
  AxisInfo out = in[0];
  out.contiguity.insert(out.contiguity.begin() + axis, 1);
  out.constancy.insert(out.constancy.begin() + axis, 1);
  out.divisibility.insert(out.divisibility.begin() + axis,
                          divisibilityOfAll(in[0], step));
  return out;
}

std::optional<AxisInfo> Transfer::visitTrans(TransOp trans) {
  ArrayRef<int32_t> order = trans.getOrder();
  if (order.size() != rank())
    return std::nullopt;
  AxisInfo out = in[0];
  for (unsigned d = 0; d < rank(); ++d) {
    out.contiguity[d] = in[0].contiguity[order[d]];
    out.divisibility[d] = in[0].divisibility[order[d]];
    out.constancy[d] = in[0].constancy[order[d]];
  }
  return out;
}

/// Exact when the reshape only inserts or removes unit dimensions, or keeps
/// the innermost dimensions; elsewhere only what holds for every element.
std::optional<AxisInfo> Transfer::visitReshape(ReshapeOp reshape) {
  ArrayRef<int64_t> source =
      cast<RankedTensorType>(reshape.getSrc().getType()).getShape();
  AxisInfo out = pessimistic();
  int64_t all = divisibilityOfAll(in[0], step);
  for (unsigned d = 0; d < rank(); ++d)
    out.divisibility[d] = all;
  out.constantValue = in[0].constantValue;

  auto nonUnit = [](ArrayRef<int64_t> dims) {
    SmallVector<unsigned, 3> kept;
    for (auto [i, size] : llvm::enumerate(dims))
      if (size != 1)
        kept.push_back(i);
    return kept;
  };
  SmallVector<unsigned, 3> from = nonUnit(source), to = nonUnit(shape);
  auto copyDim = [&](unsigned src, unsigned dst) {
    out.contiguity[dst] = in[0].contiguity[src];
    out.divisibility[dst] = in[0].divisibility[src];
    out.constancy[dst] = in[0].constancy[src];
  };
  bool sameDims =
      from.size() == to.size() &&
      llvm::all_of(llvm::zip(from, to), [&](auto pair) {
        return source[std::get<0>(pair)] == shape[std::get<1>(pair)];
      });
  if (sameDims) {
    for (auto [src, dst] : llvm::zip(from, to))
      copyDim(src, dst);
    return out;
  }
  // Row-major order: a common innermost suffix is laid out the same.
  for (unsigned k = 1; k <= std::min<size_t>(source.size(), rank()); ++k) {
    unsigned src = source.size() - k, dst = rank() - k;
    if (source[src] != shape[dst] || ShapedType::isDynamic(shape[dst]))
      break;
    copyDim(src, dst);
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitAddPtr() {
  // ptr + offset * step: runs where one side is contiguous and the other
  // constant advance one element per index.
  if (in[1].constantValue == 0)
    return in[0];
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    const AxisInfo &ptr = in[0], &offset = in[1];
    // Narrow offsets are exact only on runs that cannot straddle a wrap.
    int64_t offsetRun =
        widthOf(1) < 32 ? alignedRun(1, d) : offset.contiguity[d];
    int64_t c = std::max(std::min(ptr.contiguity[d], offset.constancy[d]),
                         std::min(ptr.constancy[d], offsetRun));
    out.contiguity[d] = c;
    out.constancy[d] = std::min(ptr.constancy[d], offset.constancy[d]);
    out.divisibility[d] =
        std::min(divisibilityAt(ptr, d, c, step),
                 mulCapped(divisibilityAt(offset, d, c, 1), step));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitAddSub(bool isSub) {
  // A contiguous run plus a constant run is contiguous; minus a contiguous
  // run it decreases.
  const AxisInfo &lhs = in[0], &rhs = in[1];
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t c = std::min(lhs.contiguity[d], rhs.constancy[d]);
    if (!isSub)
      c = std::max(c, std::min(lhs.constancy[d], rhs.contiguity[d]));
    out.contiguity[d] = c;
    out.constancy[d] = std::min(lhs.constancy[d], rhs.constancy[d]);
    out.divisibility[d] =
        std::min(divisibilityAt(lhs, d, c, 1), divisibilityAt(rhs, d, c, 1));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitMul() {
  std::optional<APInt> lhsValue = constantOf(0), rhsValue = constantOf(1);
  if (rhsValue && rhsValue->isOne())
    return in[0];
  if (lhsValue && lhsValue->isOne())
    return in[1];
  if ((lhsValue && lhsValue->isZero()) || (rhsValue && rhsValue->isZero()))
    return constant(APInt(width, 0));
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    out.divisibility[d] =
        mulCapped(divisibilityOfAll(in[0], 1), divisibilityOfAll(in[1], 1));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitDiv(bool isUnsigned) {
  std::optional<APInt> divisor = constantOf(1);
  if (divisor && divisor->isOne())
    return in[0];
  AxisInfo out = pessimistic();
  // Exact division by a power of two 2^k keeps the rest of the divisibility.
  int64_t dividend = divisibilityOfAll(in[0], 1);
  int64_t quotient = 1;
  if (divisor && divisor->isStrictlyPositive() && divisor->isPowerOf2() &&
      divisor->logBase2() < 30 &&
      dividend >= (int64_t(1) << divisor->logBase2()))
    quotient = dividend >> divisor->logBase2();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t k = std::min(in[0].constancy[d], in[1].constancy[d]);
    // x / c over an aligned run of g consecutive unsigned x, c a multiple of
    // g: no multiple of c inside the run, so one quotient. (Truncating
    // signed division breaks this for negative runs.)
    if (isUnsigned)
      k = std::max(k, minOf(alignedRun(0, d), in[1].constancy[d],
                            divisibilityOfAll(in[1], 1)));
    out.constancy[d] = k;
    out.divisibility[d] = quotient;
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitRem(bool isUnsigned) {
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    // x % c over an aligned run of g consecutive unsigned x, c a multiple of
    // g: the remainders are consecutive too. (A negative run ending on a
    // multiple of c wraps around to 0 with the signed remainder.)
    int64_t c = 1;
    if (isUnsigned)
      c = minOf(alignedRun(0, d), in[1].constancy[d],
                divisibilityOfAll(in[1], 1));
    out.contiguity[d] = c;
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    // x - c * q: the divisibility that both give.
    out.divisibility[d] = std::min(divisibilityAt(in[0], d, c, 1),
                                   divisibilityAt(in[1], d, c, 1));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitAnd() {
  std::optional<APInt> lhsValue = constantOf(0), rhsValue = constantOf(1);
  if (rhsValue && rhsValue->isAllOnes())
    return in[0];
  if (lhsValue && lhsValue->isAllOnes())
    return in[1];
  AxisInfo out = pessimistic();
  // x & (2^k - 1) is the unsigned x mod 2^k.
  std::optional<int64_t> modulus;
  if (rhsValue && rhsValue->isMask() && rhsValue->countr_one() < 30)
    modulus = int64_t(1) << rhsValue->countr_one();
  for (unsigned d = 0; d < rank(); ++d) {
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    // Bitwise and keeps the trailing zeros of either side.
    out.divisibility[d] =
        std::max(divisibilityOfAll(in[0], 1), divisibilityOfAll(in[1], 1));
    if (!modulus)
      continue;
    int64_t c = std::min(alignedRun(0, d), *modulus);
    out.contiguity[d] = c;
    int64_t start = divisibilityAt(in[0], d, c, 1);
    out.divisibility[d] = std::max(
        out.divisibility[d], start >= *modulus ? kMaxDivisibility : start);
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitOrXor() {
  std::optional<APInt> lhsValue = constantOf(0), rhsValue = constantOf(1);
  if (rhsValue && rhsValue->isZero())
    return in[0];
  if (lhsValue && lhsValue->isZero())
    return in[1];
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    out.divisibility[d] =
        std::min(divisibilityOfAll(in[0], 1), divisibilityOfAll(in[1], 1));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitShl() {
  std::optional<APInt> amount = constantOf(1);
  if (amount && amount->isZero())
    return in[0];
  // x << s is x * 2^s for a defined shift (s below the width).
  int64_t factor = 1;
  if (amount && amount->ult(width))
    factor = amount->getZExtValue() >= 30
                 ? kMaxDivisibility
                 : int64_t(1) << amount->getZExtValue();
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    out.divisibility[d] = mulCapped(divisibilityOfAll(in[0], 1), factor);
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitShr() {
  std::optional<APInt> amount = constantOf(1);
  if (amount && amount->isZero())
    return in[0];
  AxisInfo out = pessimistic();
  std::optional<unsigned> shift;
  if (amount && amount->ult(width))
    shift = amount->getZExtValue();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t k = std::min(in[0].constancy[d], in[1].constancy[d]);
    // Both shifts are floor divisions by 2^s (signed or unsigned): an
    // aligned run of g consecutive values, g dividing 2^s, has one quotient.
    if (shift)
      k = std::max(k, std::min(alignedRun(0, d), *shift >= 30
                                                     ? kMaxDivisibility
                                                     : int64_t(1) << *shift));
    out.constancy[d] = k;
    if (shift)
      out.divisibility[d] = std::max<int64_t>(1, divisibilityOfAll(in[0], 1) >>
                                                     std::min(*shift, 30u));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitMinMax() {
  // Two contiguous runs that start at multiples of their length (so that
  // neither wraps inside) keep their order: the result is one of them.
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t c = std::min(alignedRun(0, d), alignedRun(1, d));
    out.contiguity[d] = c;
    out.constancy[d] = std::min(in[0].constancy[d], in[1].constancy[d]);
    out.divisibility[d] = std::min(divisibilityAt(in[0], d, c, 1),
                                   divisibilityAt(in[1], d, c, 1));
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitSelect(arith::SelectOp select) {
  // Operands: condition, true value, false value.
  if (select.getTrueValue() == select.getFalseValue())
    return in[1];
  if (std::optional<APInt> cond = constantOf(0))
    return cond->isOne() ? in[1] : in[2];
  bool scalarCondition =
      !isa<RankedTensorType>(select.getCondition().getType());
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t condRun = scalarCondition ? size(d) : in[0].constancy[d];
    int64_t c = minOf(in[1].contiguity[d], in[2].contiguity[d], condRun);
    out.contiguity[d] = c;
    out.constancy[d] = minOf(in[1].constancy[d], in[2].constancy[d], condRun);
    out.divisibility[d] = std::min(divisibilityAt(in[1], d, c, step),
                                   divisibilityAt(in[2], d, c, step));
  }
  if (in[1].constantValue == in[2].constantValue)
    out.constantValue = in[1].constantValue;
  return out;
}

std::optional<AxisInfo> Transfer::visitCmp(arith::CmpIOp cmp) {
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  // `x < c` and `x >= c` (x contiguous, c constant) change only between
  // c - 1 and c; over an aligned run of g consecutive x with c a multiple
  // of g they do not change. `c > x` and `c <= x` are the same with the
  // operands swapped. (`x <= c` changes between c and c + 1: no rule.)
  std::optional<unsigned> run;
  if (pred == P::slt || pred == P::ult || pred == P::sge || pred == P::uge)
    run = 0;
  if (pred == P::sgt || pred == P::ugt || pred == P::sle || pred == P::ule)
    run = 1;
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t k = std::min(in[0].constancy[d], in[1].constancy[d]);
    if (run) {
      unsigned other = 1 - *run;
      k = std::max(k, minOf(alignedRun(*run, d), in[other].constancy[d],
                            divisibilityOfAll(in[other], 1)));
    }
    out.constancy[d] = k;
  }
  return out;
}

std::optional<AxisInfo> Transfer::visitCast() {
  unsigned from = widthOf(0);
  if (!from || !width)
    return std::nullopt;
  // Same bits: the same facts.
  if (isa<arith::BitcastOp>(op))
    return in[0];
  AxisInfo out = in[0];
  if (width > from) {
    // Widening keeps the divisibility; runs narrower than 32 bits that
    // could straddle a wrap are cut.
    if (from < 32)
      for (unsigned d = 0; d < rank(); ++d)
        out.contiguity[d] = alignedRun(0, d);
    bool isSigned = isa<arith::ExtSIOp, arith::IndexCastOp>(op);
    if (std::optional<APInt> value = constantOf(0))
      out.constantValue =
          fromAPInt(isSigned ? value->sext(width) : value->zext(width));
  } else if (width < from) {
    // Truncation keeps everything modulo 2^width.
    if (std::optional<APInt> value = constantOf(0))
      out.constantValue = fromAPInt(value->trunc(width));
  }
  return out;
}

/// Any other elementwise op: its result is a function of the operands at
/// the same index, so it is constant where all of them are.
std::optional<AxisInfo> Transfer::visitElementwise() {
  if (!op->hasTrait<OpTrait::Elementwise>())
    return std::nullopt;
  AxisInfo out = pessimistic();
  for (unsigned d = 0; d < rank(); ++d)
    out.constancy[d] = size(d);
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (!isa<RankedTensorType>(operand.getType()))
      continue;
    if (in[i].getRank() != rank())
      return std::nullopt;
    for (unsigned d = 0; d < rank(); ++d)
      out.constancy[d] = std::min(out.constancy[d], in[i].constancy[d]);
  }
  return out;
}
