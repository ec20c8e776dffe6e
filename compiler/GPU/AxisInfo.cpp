//===- AxisInfo.cpp - Contiguity, divisibility and constancy -------------===//
//
// The axis analysis as an MLIR sparse forward data-flow analysis: one
// lattice value (an AxisInfo) per SSA value, transfer functions per op
// family below, joins at control-flow merges (scf.if results, scf.for
// iter_args and results) until a fixpoint. DeadCodeAnalysis and
// SparseConstantPropagation run in the same solver: the framework needs
// them to follow region control flow.
//
// What a fact means, per dimension d of a value's tile (size S):
//
//   C = contiguity[d]: for every run of C indices along d that starts at a
//       multiple of C, each element is the previous one plus 1 (integers:
//       in the wrapping arithmetic of their type) or the next element in
//       memory (pointers);
//   K = constancy[d]: the same for runs of equal elements;
//   D = divisibility[d]: D divides every element whose index along d is a
//       multiple of C (the first element of each run). For pointers D
//       counts bytes. For an integer type of w bits, "D divides x" means
//       that x mod 2^w is a multiple of min(D, 2^w).
//
// All three are powers of two; C and K are at most S, D at most 2^30. With
// C = 1 every index starts a run, so D divides every element. The helper
// divisibilityAt() below gives the divisibility at other strides, which
// every rule whose result runs differ from its operands' runs uses.
//
// One assumption, as in Triton: pointer contiguity, and the contiguity of
// integers widened from 32 bits or more, assume that the offsets do not
// wrap around their type inside a run (an offset that does is far out of
// bounds). Narrower integers are handled exactly. The vector width of
// getVectorizableElements() never depends on the assumption: it never
// exceeds the divisibility of the offsets, and an aligned group of that
// many consecutive offsets cannot straddle a wrap.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/AxisInfo.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/StageUtils.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;
/// Dense constants with more elements are not inspected element by element.
static constexpr int64_t kMaxInspectedElements = int64_t(1) << 16;

//===----------------------------------------------------------------------===//
// AxisInfo
//===----------------------------------------------------------------------===//

AxisInfo AxisInfo::getPessimistic(unsigned rank) {
  AxisInfo info;
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

bool AxisInfo::operator==(const AxisInfo &other) const {
  return contiguity == other.contiguity &&
         divisibility == other.divisibility && constancy == other.constancy &&
         constantValue == other.constantValue;
}

//===----------------------------------------------------------------------===//
// Types and numbers
//===----------------------------------------------------------------------===//

/// The tile shape of `type`; {1} for a scalar.
static SmallVector<int64_t, 3> getTileShape(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return SmallVector<int64_t, 3>(tile.getShape());
  return {1};
}

/// Values whose facts the analysis computes: integer, index, float and
/// pointer scalars and ranked tiles of them. Anything else (views, vectors)
/// keeps the pessimistic fact.
static bool isTracked(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type)) {
    if (tile.getRank() == 0)
      return false;
    type = tile.getElementType();
  }
  return isa<IntegerType, IndexType, FloatType, PointerType>(type);
}

/// The step between consecutive elements of a run: the pointee size in
/// bytes for pointers, 1 for everything else.
static int64_t getStep(Type type) {
  if (auto ptr = dyn_cast<PointerType>(getElementTypeOrSelf(type)))
    return getElementBytes(ptr.getPointeeType());
  return 1;
}

/// The bit width of an integer or index element type (at most 64); 0 for
/// anything else.
static unsigned getIntegerWidth(Type type) {
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

template <typename... Ts>
static int64_t minOf(int64_t first, Ts... rest) {
  int64_t result = first;
  ((result = std::min<int64_t>(result, rest)), ...);
  return result;
}

/// The divisibility of the elements of `info` whose index along `d` is a
/// multiple of `stride` (a power of two): the run starts where runs are no
/// longer than `stride`; inside longer runs, the run start plus a multiple
/// of `stride` steps.
static int64_t divisibilityAt(const AxisInfo &info, unsigned d, int64_t stride,
                              int64_t step) {
  if (info.contiguity[d] <= stride)
    return info.divisibility[d];
  return std::min(info.divisibility[d], stride * step);
}

/// The divisibility of every element of `info`: the best bound that any
/// dimension gives.
static int64_t divisibilityOfAll(const AxisInfo &info, int64_t step) {
  int64_t result = 1;
  for (unsigned d = 0; d < info.getRank(); ++d)
    result = std::max(result, divisibilityAt(info, d, 1, step));
  return result;
}

/// The longest run along a dimension of `size` elements: the largest power
/// of two not above it (runs of a power-of-two length longer than a
/// dimension cover it whole, so shortening them to this stays sound); 1 for
/// a dynamic size.
static int64_t getRunCap(int64_t size) {
  if (ShapedType::isDynamic(size) || size < 1)
    return 1;
  return int64_t(llvm::bit_floor(uint64_t(size)));
}

/// The largest power of two dividing `v` (at least 1), at most `hi`.
static int64_t clampPowerOfTwo(int64_t v, int64_t hi) {
  v = std::max<int64_t>(v, 1);
  return std::min(v & -v, hi);
}

/// Rounds every fact down to a sound power of two within its bounds; a
/// constant is constant everywhere; the divisibility of every element
/// holds at every run start.
static void normalize(AxisInfo &info, ArrayRef<int64_t> shape, int64_t step) {
  for (unsigned d = 0; d < info.getRank(); ++d) {
    int64_t size = getRunCap(shape[d]);
    info.contiguity[d] = clampPowerOfTwo(info.contiguity[d], size);
    info.constancy[d] = clampPowerOfTwo(info.constancy[d], size);
    info.divisibility[d] =
        clampPowerOfTwo(info.divisibility[d], kMaxDivisibility);
    if (info.constantValue) {
      info.contiguity[d] = 1;
      info.constancy[d] = size;
    }
    // Pointers are aligned to their element size (docs/language.md §8.1).
    info.divisibility[d] = std::max(info.divisibility[d], step);
  }
  int64_t all = divisibilityOfAll(info, step);
  for (unsigned d = 0; d < info.getRank(); ++d)
    if (info.contiguity[d] == 1)
      info.divisibility[d] = std::max(info.divisibility[d], all);
}

/// The pessimistic fact of a value of `type`.
static AxisInfo getPessimisticFor(Type type) {
  AxisInfo info = AxisInfo::getPessimistic(getTileShape(type).size());
  int64_t step = getStep(type);
  for (int64_t &d : info.divisibility)
    d = step;
  return info;
}

/// The fact of an entry-block argument of a function: the `kiln.div` and
/// `kiln.align` promises (docs/dialect.md), else pessimistic.
static AxisInfo getArgumentFact(BlockArgument arg) {
  AxisInfo info = getPessimisticFor(arg.getType());
  Block *block = arg.getOwner();
  auto func = dyn_cast_or_null<FunctionOpInterface>(block->getParentOp());
  if (!func || !block->isEntryBlock())
    return info;
  bool isPointer = isa<PointerType>(arg.getType());
  if (!isPointer && getIntegerWidth(arg.getType()) < 2)
    return info;
  StringRef name = isPointer ? KilnDialect::getAlignAttrName()
                             : KilnDialect::getDivAttrName();
  auto promise = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), name);
  if (!promise || promise.getValue().getSignificantBits() > 63)
    return info;
  int64_t value = promise.getValue().getSExtValue();
  if (value <= 0)
    return info;
  info.divisibility[0] = std::max(info.divisibility[0],
                                  clampPowerOfTwo(value, kMaxDivisibility));
  return info;
}

//===----------------------------------------------------------------------===//
// The lattice
//===----------------------------------------------------------------------===//

namespace kiln::gpu::detail {

/// The lattice value: an AxisInfo, or nothing yet (rank 0) while the
/// analysis has not reached the value. `step` is the pointee size of a
/// pointer (1 otherwise), which the join needs to read divisibilities.
class AxisFact {
public:
  AxisFact() = default;
  AxisFact(AxisInfo info, int64_t step) : info(std::move(info)), step(step) {}

  bool isUninitialized() const { return info.getRank() == 0; }
  const AxisInfo &getInfo() const { return info; }

  /// The fact of a value that is either `lhs` or `rhs` (a control-flow
  /// merge): per dimension the shorter runs, and the divisibility that
  /// both give at the starts of those runs.
  static AxisFact join(const AxisFact &lhs, const AxisFact &rhs) {
    if (lhs.isUninitialized())
      return rhs;
    if (rhs.isUninitialized() || lhs == rhs)
      return lhs;
    assert(lhs.info.getRank() == rhs.info.getRank() && "joined facts differ in rank");
    AxisInfo out = AxisInfo::getPessimistic(lhs.info.getRank());
    for (unsigned d = 0; d < out.getRank(); ++d) {
      out.contiguity[d] =
          std::min(lhs.info.contiguity[d], rhs.info.contiguity[d]);
      out.constancy[d] = std::min(lhs.info.constancy[d], rhs.info.constancy[d]);
      out.divisibility[d] =
          std::min(divisibilityAt(lhs.info, d, out.contiguity[d], lhs.step),
                   divisibilityAt(rhs.info, d, out.contiguity[d], rhs.step));
    }
    if (lhs.info.constantValue == rhs.info.constantValue)
      out.constantValue = lhs.info.constantValue;
    return AxisFact(std::move(out), lhs.step);
  }

  bool operator==(const AxisFact &other) const {
    return info == other.info && step == other.step;
  }

  void print(raw_ostream &os) const {
    if (isUninitialized()) {
      os << "<uninitialized>";
      return;
    }
    os << "contiguity = [" << llvm::interleaved(info.contiguity)
       << "], divisibility = [" << llvm::interleaved(info.divisibility)
       << "], constancy = [" << llvm::interleaved(info.constancy) << "]";
    if (info.constantValue)
      os << ", constant = " << *info.constantValue;
  }

private:
  AxisInfo info;
  int64_t step = 1;
};

using AxisLattice = mlir::dataflow::Lattice<AxisFact>;

} // namespace kiln::gpu::detail

using kiln::gpu::detail::AxisFact;
using kiln::gpu::detail::AxisLattice;

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
  int64_t stepOf(unsigned i) const {
    return getStep(op->getOperand(i).getType());
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
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp,
            arith::IndexCastOp, arith::IndexCastUIOp, arith::BitcastOp>(
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
std::optional<AxisInfo> Transfer::visitDenseConstant(DenseIntElementsAttr attr) {
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
  bool sameDims = from.size() == to.size() &&
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
    int64_t offsetRun = widthOf(1) < 32 ? alignedRun(1, d)
                                         : offset.contiguity[d];
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
    out.divisibility[d] = std::min(divisibilityAt(lhs, d, c, 1),
                                   divisibilityAt(rhs, d, c, 1));
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
      divisor->logBase2() < 30 && dividend >= (int64_t(1) << divisor->logBase2()))
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
    factor = amount->getZExtValue() >= 30 ? kMaxDivisibility
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
      k = std::max(k, std::min(alignedRun(0, d),
                               *shift >= 30 ? kMaxDivisibility
                                            : int64_t(1) << *shift));
    out.constancy[d] = k;
    if (shift)
      out.divisibility[d] = std::max<int64_t>(
          1, divisibilityOfAll(in[0], 1) >> std::min(*shift, 30u));
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
  bool scalarCondition = !isa<RankedTensorType>(select.getCondition().getType());
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
      out.constantValue = fromAPInt(isSigned ? value->sext(width)
                                             : value->zext(width));
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

//===----------------------------------------------------------------------===//
// The data-flow analysis
//===----------------------------------------------------------------------===//

namespace kiln::gpu::detail {

class AxisInfoDataFlow
    : public mlir::dataflow::SparseForwardDataFlowAnalysis<AxisLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const AxisLattice *> operands,
                               ArrayRef<AxisLattice *> results) override {
    // Wait until every operand has a fact.
    SmallVector<AxisInfo> in;
    for (const AxisLattice *operand : operands) {
      if (operand->getValue().isUninitialized())
        return success();
      in.push_back(operand->getValue().getInfo());
    }
    bool tracked = llvm::all_of(op->getOperandTypes(), isTracked) &&
                   llvm::all_of(op->getResultTypes(), isTracked);
    for (auto [result, lattice] : llvm::zip(op->getResults(), results)) {
      Type type = result.getType();
      std::optional<AxisInfo> info;
      if (tracked && op->getNumResults() == 1)
        info = Transfer(op, in).run();
      if (!info || info->getRank() != getTileShape(type).size())
        info = getPessimisticFor(type);
      normalize(*info, getTileShape(type), getStep(type));
      propagateIfChanged(lattice,
                         lattice->join(AxisFact(*info, getStep(type))));
    }
    return success();
  }

  void visitNonControlFlowArguments(Operation *op,
                                    const RegionSuccessor &successor,
                                    ArrayRef<AxisLattice *> argLattices,
                                    unsigned firstIndex) override {
    unsigned inputs = successor.getSuccessorInputs().size();
    for (auto [i, lattice] : llvm::enumerate(argLattices)) {
      if (i >= firstIndex && i < firstIndex + inputs)
        continue;
      auto forOp = dyn_cast<scf::ForOp>(op);
      if (forOp && lattice->getAnchor() == forOp.getInductionVar())
        visitInductionVar(forOp, lattice);
      else
        setToEntryState(lattice);
    }
  }

  void setToEntryState(AxisLattice *lattice) override {
    Value value = lattice->getAnchor();
    AxisInfo info = getPessimisticFor(value.getType());
    if (auto arg = dyn_cast<BlockArgument>(value))
      info = getArgumentFact(arg);
    propagateIfChanged(lattice, lattice->join(AxisFact(
                                    std::move(info), getStep(value.getType()))));
  }

private:
  /// lb, lb + step, ...: divisible by what divides both.
  void visitInductionVar(scf::ForOp forOp, AxisLattice *lattice) {
    ProgramPoint *point = getProgramPointBefore(forOp.getBody());
    const AxisLattice *lb = getLatticeElementFor(point, forOp.getLowerBound());
    const AxisLattice *step = getLatticeElementFor(point, forOp.getStep());
    if (lb->getValue().isUninitialized() || step->getValue().isUninitialized())
      return;
    Type type = forOp.getInductionVar().getType();
    AxisInfo info = getPessimisticFor(type);
    info.divisibility[0] =
        std::min(divisibilityOfAll(lb->getValue().getInfo(), 1),
                 divisibilityOfAll(step->getValue().getInfo(), 1));
    propagateIfChanged(lattice, lattice->join(AxisFact(std::move(info), 1)));
  }
};

} // namespace kiln::gpu::detail

//===----------------------------------------------------------------------===//
// AxisInfoAnalysis
//===----------------------------------------------------------------------===//

struct AxisInfoAnalysis::Impl {
  llvm::DenseMap<Value, AxisInfo> facts;
};

AxisInfoAnalysis::AxisInfoAnalysis(Operation *root)
    : impl(std::make_unique<Impl>()) {
  // One solver per function: each kernel is analyzed on its own, whatever
  // its visibility (a private function's arguments are still unknown).
  SmallVector<FunctionOpInterface> funcs;
  root->walk([&](FunctionOpInterface func) {
    if (!func.isExternal())
      funcs.push_back(func);
  });
  for (FunctionOpInterface func : funcs) {
    DataFlowSolver solver(DataFlowConfig().setInterprocedural(false));
    solver.load<mlir::dataflow::DeadCodeAnalysis>();
    solver.load<mlir::dataflow::SparseConstantPropagation>();
    solver.load<detail::AxisInfoDataFlow>();
    if (failed(solver.initializeAndRun(func)))
      continue;
    auto record = [&](Value value) {
      const auto *lattice = solver.lookupState<AxisLattice>(value);
      if (lattice && !lattice->getValue().isUninitialized())
        impl->facts[value] = lattice->getValue().getInfo();
    };
    func->walk([&](Block *block) {
      for (Value arg : block->getArguments())
        record(arg);
      for (Operation &op : *block)
        for (Value result : op.getResults())
          record(result);
    });
  }
}

AxisInfoAnalysis::~AxisInfoAnalysis() = default;

AxisInfo AxisInfoAnalysis::lookup(Value value) const {
  auto it = impl->facts.find(value);
  if (it != impl->facts.end())
    return it->second;
  return getPessimisticFor(value.getType());
}

int64_t AxisInfoAnalysis::getVectorizableElements(Value ptrOrOffsets,
                                                  unsigned dim,
                                                  Value mask) const {
  AxisInfo info = lookup(ptrOrOffsets);
  if (dim >= info.getRank())
    return 1;
  // Divisibility counts bytes for pointers, elements for offsets.
  int64_t step = getStep(ptrOrOffsets.getType());
  int64_t width = std::min(info.contiguity[dim],
                           std::max<int64_t>(1, info.divisibility[dim] / step));
  if (mask && isa<RankedTensorType>(mask.getType())) {
    AxisInfo maskInfo = lookup(mask);
    if (dim < maskInfo.getRank())
      width = std::min(width, maskInfo.constancy[dim]);
  }
  return int64_t(llvm::bit_floor(uint64_t(std::max<int64_t>(width, 1))));
}
