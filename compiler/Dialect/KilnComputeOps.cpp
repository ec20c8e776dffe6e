//===- KilnComputeOps.cpp - dot, reduce and scan of kiln ------------------===//
//
// Verifiers and builders of kiln.dot, kiln.reduce and kiln.scan.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/Dialect/KilnOpUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

static bool isF8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// The accumulator element type of a dot of `a` and `b` elements, or null
/// when the pair is not supported.
static Type getDotAccumulatorType(Type a, Type b) {
  MLIRContext *context = a.getContext();
  if ((a.isF16() && b.isF16()) || (a.isBF16() && b.isBF16()) ||
      (isF8(a) && isF8(b)) || (a.isF32() && b.isF32()))
    return Float32Type::get(context);
  if (a.isInteger(8) && b.isInteger(8))
    return IntegerType::get(context, 32);
  if (a.isF64() && b.isF64())
    return Float64Type::get(context);
  return nullptr;
}

LogicalResult DotOp::verify() {
  auto aType = cast<RankedTensorType>(getA().getType());
  auto bType = cast<RankedTensorType>(getB().getType());
  auto accType = cast<RankedTensorType>(getAcc().getType());
  if (!opcheck::dimsCompatible(aType.getDimSize(1), bType.getDimSize(0)))
    return emitOpError() << "inner dimensions differ: a is "
                         << formatShape(aType.getShape()) << ", b is "
                         << formatShape(bType.getShape());
  if (!opcheck::dimsCompatible(accType.getDimSize(0), aType.getDimSize(0)) ||
      !opcheck::dimsCompatible(accType.getDimSize(1), bType.getDimSize(1)))
    return emitOpError() << "accumulator shape "
                         << formatShape(accType.getShape())
                         << " does not match a x b = "
                         << formatShape(aType.getShape()) << " x "
                         << formatShape(bType.getShape());

  Type aElement = aType.getElementType();
  Type bElement = bType.getElementType();
  Type expected = getDotAccumulatorType(aElement, bElement);
  if (!expected)
    return emitOpError() << "unsupported operand element types " << aElement
                         << " and " << bElement
                         << " (expected both f16, both bf16, both f8, both "
                            "i8, both f32 or both f64)";
  if (accType.getElementType() != expected)
    return emitOpError() << "accumulator element type must be " << expected
                         << " for " << aElement << " operands, got "
                         << accType.getElementType();
  if (getPrecision() == DotPrecision::tf32 && !aElement.isF32())
    return emitOpError() << "precision tf32 needs f32 operands, got "
                         << aElement;
  return success();
}

//===----------------------------------------------------------------------===//
// Reduce and scan
//===----------------------------------------------------------------------===//

/// Creates the combining block of a reduce or scan of `srcs`: the N element
/// types twice.
static void addCombinerBlock(OperationState &state, ValueRange srcs) {
  SmallVector<Type> argTypes;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (Value src : srcs)
      argTypes.push_back(getElementTypeOrSelf(src.getType()));
  SmallVector<Location> locs(argTypes.size(), state.location);
  Block *block = new Block();
  block->addArguments(argTypes, locs);
  state.regions.front()->push_back(block);
}

/// Checks the inputs and the axis of a reduce or scan.
static LogicalResult verifyCombinedInputs(Operation *op, ValueRange srcs,
                                          int64_t axis) {
  if (srcs.empty())
    return op->emitOpError() << "expects at least one input";
  auto first = cast<RankedTensorType>(srcs.front().getType());
  for (Value src : srcs.drop_front()) {
    auto type = cast<RankedTensorType>(src.getType());
    if (!opcheck::shapesCompatible(first.getShape(), type.getShape()))
      return op->emitOpError()
             << "inputs must have the same shape, got "
             << formatShape(first.getShape()) << " and "
             << formatShape(type.getShape());
  }
  if (axis >= first.getRank())
    return op->emitOpError() << "axis " << axis
                             << " is out of range for a tile of rank "
                             << first.getRank();
  return success();
}

/// Checks the combining region of a reduce or scan of `srcs`: 2N scalar
/// arguments, a terminator of type `ReturnOp` yielding N scalars, with the
/// element types of the inputs.
template <typename ReturnOp>
static LogicalResult verifyCombiner(Operation *op, Region &region,
                                    ValueRange srcs) {
  Block &block = region.front();
  size_t numInputs = srcs.size();
  if (block.getNumArguments() != 2 * numInputs)
    return op->emitOpError() << "combining region must have "
                             << 2 * numInputs << " arguments (" << numInputs
                             << " accumulated values, then " << numInputs
                             << " new values), got " << block.getNumArguments();
  for (auto [index, src] : llvm::enumerate(srcs)) {
    Type element = getElementTypeOrSelf(src.getType());
    for (size_t argIndex : {index, index + numInputs}) {
      Type argType = block.getArgument(argIndex).getType();
      if (argType != element)
        return op->emitOpError()
               << "combining region argument #" << argIndex << " has type "
               << argType << ", expected the element type " << element
               << " of input #" << index;
    }
  }

  auto terminator =
      block.empty() ? ReturnOp() : dyn_cast<ReturnOp>(block.back());
  if (!terminator)
    return op->emitOpError() << "combining region must end with '"
                             << ReturnOp::getOperationName() << "'";
  if (terminator.getValues().size() != numInputs)
    return terminator.emitOpError()
           << "returns " << terminator.getValues().size()
           << " value(s), but the combining region combines " << numInputs;
  for (auto [index, value, src] :
       llvm::enumerate(terminator.getValues(), srcs)) {
    Type element = getElementTypeOrSelf(src.getType());
    if (value.getType() != element)
      return terminator.emitOpError()
             << "returned value #" << index << " has type " << value.getType()
             << ", expected the element type " << element << " of input #"
             << index;
  }
  return success();
}

/// The type of reducing a tile of type `type` along `axis`.
static Type getReducedType(RankedTensorType type, unsigned axis) {
  if (type.getRank() == 1)
    return type.getElementType();
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return RankedTensorType::get(shape, type.getElementType());
}

void ReduceOp::build(OpBuilder &builder, OperationState &state,
                     ValueRange srcs, unsigned axis) {
  SmallVector<Type> resultTypes;
  for (Value src : srcs)
    resultTypes.push_back(
        getReducedType(cast<RankedTensorType>(src.getType()), axis));
  build(builder, state, resultTypes, srcs, axis);
  addCombinerBlock(state, srcs);
}

LogicalResult ReduceOp::verify() {
  int64_t axis = getAxis();
  if (failed(verifyCombinedInputs(*this, getSrcs(), axis)))
    return failure();
  if (getNumResults() != getSrcs().size())
    return emitOpError() << "expects one result per input (" << getSrcs().size()
                         << "), got " << getNumResults();
  for (auto [index, src, result] :
       llvm::enumerate(getSrcs(), getResults())) {
    auto srcType = cast<RankedTensorType>(src.getType());
    Type expected = getReducedType(srcType, axis);
    Type resultType = result.getType();
    auto expectedTile = dyn_cast<RankedTensorType>(expected);
    auto resultTile = dyn_cast<RankedTensorType>(resultType);
    bool matches =
        expectedTile
            ? resultTile &&
                  resultTile.getElementType() ==
                      expectedTile.getElementType() &&
                  opcheck::shapesCompatible(resultTile.getShape(),
                                           expectedTile.getShape())
            : resultType == expected;
    if (!matches)
      return emitOpError() << "result #" << index << " has type "
                           << resultType << ", but reducing " << srcType
                           << " along axis " << axis << " gives " << expected;
  }
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyCombiner<ReduceReturnOp>(*this, getCombiner(), getSrcs());
}

void ScanOp::build(OpBuilder &builder, OperationState &state, ValueRange srcs,
                   unsigned axis, bool reverse) {
  build(builder, state, TypeRange(srcs), srcs, axis, reverse);
  addCombinerBlock(state, srcs);
}

LogicalResult ScanOp::verify() {
  if (failed(verifyCombinedInputs(*this, getSrcs(), getAxis())))
    return failure();
  if (getNumResults() != getSrcs().size())
    return emitOpError() << "expects one result per input (" << getSrcs().size()
                         << "), got " << getNumResults();
  for (auto [index, src, result] : llvm::enumerate(getSrcs(), getResults()))
    if (src.getType() != result.getType())
      return emitOpError() << "result #" << index << " has type "
                           << result.getType() << ", expected the input type "
                           << src.getType();
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  return verifyCombiner<ScanReturnOp>(*this, getCombiner(), getSrcs());
}

SmallVector<Value> kiln::cloneCombiner(OpBuilder &b, Region &combiner,
                                       ValueRange acc, ValueRange fresh) {
  Block &block = combiner.front();
  IRMapping map;
  unsigned n = acc.size();
  assert(fresh.size() == n && block.getNumArguments() == 2 * n &&
         "one accumulated and one fresh value per input");
  for (unsigned i = 0; i < n; ++i) {
    map.map(block.getArgument(i), acc[i]);
    map.map(block.getArgument(n + i), fresh[i]);
  }
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  SmallVector<Value> out;
  for (Value v : block.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

Value kiln::buildRoundToTF32(OpBuilder &b, Location loc, Value x) {
  Type intType = getTypeSameShape(x.getType(), b.getI32Type());
  if (auto shaped = dyn_cast<ShapedType>(x.getType()))
    intType = shaped.clone(b.getI32Type());
  auto constant = [&](uint32_t v) -> Value {
    Attribute value = b.getI32IntegerAttr(int32_t(v));
    if (auto shaped = dyn_cast<ShapedType>(intType))
      value = DenseElementsAttr::get(shaped, value);
    return arith::ConstantOp::create(b, loc, intType, cast<TypedAttr>(value));
  };
  Value bits = arith::BitcastOp::create(b, loc, intType, x);
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, constant(13)), constant(1));
  Value rounded = arith::AddIOp::create(b, loc, bits, constant(0xfff));
  rounded = arith::AddIOp::create(b, loc, rounded, lsb);
  rounded = arith::AndIOp::create(b, loc, rounded, constant(0xffffe000u));
  Value exp = arith::AndIOp::create(b, loc, bits, constant(0x7f800000u));
  Value finite = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, exp,
                                       constant(0x7f800000u));
  Value r = arith::SelectOp::create(b, loc, finite, rounded, bits);
  return arith::BitcastOp::create(b, loc, x.getType(), r);
}
