//===- AxisInfo.cpp - Contiguity, divisibility and constancy -------------===//
//
// The axis analysis as an MLIR sparse forward data-flow analysis: one
// lattice value (an AxisInfo) per SSA value, transfer functions per op
// family (AxisInfoRules.cpp), joins at control-flow merges (scf.if results,
// scf.for iter_args and results) until a fixpoint. DeadCodeAnalysis and
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
// divisibilityAt() (AxisInfoRules.h) gives the divisibility at other
// strides, which the join and every rule whose result runs differ from its
// operands' runs use.
//
// One assumption, as in Triton: pointer contiguity, and the contiguity of
// integers widened from 32 bits or more, assume that the offsets do not
// wrap around their type inside a run (an offset that does is far out of
// bounds). Narrower integers are handled exactly. The vector width of
// getVectorizableElements() never depends on the assumption: it never
// exceeds the divisibility of the offsets, and an aligned group of that
// many consecutive offsets, starting at a multiple of its length, cannot
// straddle a wrap (2^31 and 2^32 are multiples of it).
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/AxisInfo.h"
#include "compiler/GPU/AxisInfoRules.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::axis;

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
  return contiguity == other.contiguity && divisibility == other.divisibility &&
         constancy == other.constancy && constantValue == other.constantValue;
}

//===----------------------------------------------------------------------===//
// Facts
//===----------------------------------------------------------------------===//

/// The longest run along a dimension of `size` elements: the largest power
/// of two not above it; 1 for a dynamic size.
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
    int64_t contiguity = clampPowerOfTwo(info.contiguity[d], size);
    info.divisibility[d] =
        clampPowerOfTwo(info.divisibility[d], kMaxDivisibility);
    // Runs split into shorter ones (where the claimed length or the size is
    // not a power of two, or the size is unknown): the new run starts lie
    // inside the old runs.
    int64_t extent = ShapedType::isDynamic(shape[d])
                         ? std::numeric_limits<int64_t>::max()
                         : shape[d];
    if (contiguity < std::min(info.contiguity[d], extent))
      info.divisibility[d] = divisibilityAt(info, d, contiguity, step);
    info.contiguity[d] = contiguity;
    info.constancy[d] = clampPowerOfTwo(info.constancy[d], size);
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
  info.divisibility[0] =
      std::max(info.divisibility[0], clampPowerOfTwo(value, kMaxDivisibility));
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
    assert(lhs.info.getRank() == rhs.info.getRank() &&
           "joined facts differ in rank");
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
        info = inferAxisInfo(op, in);
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
    propagateIfChanged(
        lattice,
        lattice->join(AxisFact(std::move(info), getStep(value.getType()))));
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
