//===- KilnOps.cpp - Ops of the kiln dialect ------------------------------===//
//
// The generated op definitions, the custom assembly directives, and the
// verifiers, builders and folders of the program, construction and shape
// ops. Memory ops are in KilnMemoryOps.cpp; dot, reduce and scan in
// KilnComputeOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/Dialect/KilnOpUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `%a : i32, %b : i64`: operands, each with its own type (the contents of
/// the `[...]` lists of sizes and offsets).
static ParseResult
parseTypedOperands(OpAsmParser &parser,
                   SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
                   SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList([&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    Type type;
    if (parser.parseOperand(operand) || parser.parseColonType(type))
      return failure();
    operands.push_back(operand);
    types.push_back(type);
    return success();
  });
}

static void printTypedOperands(OpAsmPrinter &printer, Operation *,
                               OperandRange operands, TypeRange types) {
  llvm::interleaveComma(llvm::zip_equal(operands, types), printer,
                        [&](auto pair) {
                          printer << std::get<0>(pair) << " : "
                                  << std::get<1>(pair);
                        });
}

#define GET_OP_CLASSES
#include "compiler/Dialect/KilnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification helpers (KilnOpUtils.h)
//===----------------------------------------------------------------------===//

LogicalResult kiln::opcheck::verifyTileSizes(Operation *op,
                                            RankedTensorType type,
                                            ValueRange dynSizes) {
  int64_t numDynamic = type.getNumDynamicDims();
  if (static_cast<int64_t>(dynSizes.size()) != numDynamic)
    return op->emitOpError()
           << "expects " << numDynamic
           << " dynamic size operand(s), one per '?' dimension of " << type
           << ", got " << dynSizes.size();
  for (auto [index, dim] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(dim) && (dim <= 0 || !llvm::isPowerOf2_64(dim)))
      return op->emitOpError()
             << "tile dimensions must be positive powers of two, but "
                "dimension "
             << index << " of " << type << " is " << dim;
  for (auto [index, size] : llvm::enumerate(dynSizes)) {
    std::optional<int64_t> value = getConstantInt(size);
    if (value && (*value <= 0 || !llvm::isPowerOf2_64(*value)))
      return op->emitOpError()
             << "tile dimensions must be positive powers of two, but size "
                "operand #"
             << index << " is " << *value;
  }
  return success();
}

bool kiln::opcheck::dimsCompatible(int64_t lhs, int64_t rhs) {
  return ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) ||
         lhs == rhs;
}

bool kiln::opcheck::shapesCompatible(ArrayRef<int64_t> lhs,
                                    ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs))
    if (!dimsCompatible(l, r))
      return false;
  return true;
}

/// A dense splat of the scalar constant `value` in the static shape `type`,
/// or null.
static Attribute getSplatConstant(Attribute value, Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile || !tile.hasStaticShape() || tile.getEncoding() ||
      !isa_and_nonnull<IntegerAttr, FloatAttr>(value))
    return nullptr;
  return DenseElementsAttr::get(tile, value);
}

/// The splat of a dense splat constant `src` reshaped to `type`, or null.
static Attribute reshapeSplatConstant(Attribute src, Type type) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(src);
  if (!splat)
    return nullptr;
  return getSplatConstant(splat.getSplatValue<Attribute>(), type);
}

//===----------------------------------------------------------------------===//
// ConstParamOp
//===----------------------------------------------------------------------===//

LogicalResult ConstParamOp::verify() {
  if (getName().empty())
    return emitOpError() << "const param name must not be empty";
  return success();
}

//===----------------------------------------------------------------------===//
// ArangeOp
//===----------------------------------------------------------------------===//

LogicalResult ArangeOp::verify() {
  int64_t size = getType().getDimSize(0);
  if (!ShapedType::isDynamic(size) && (size <= 0 || !llvm::isPowerOf2_64(size)))
    return emitOpError() << "result size " << size
                         << " must be a positive power of two";

  std::optional<int64_t> lo = getConstantInt(getLo());
  std::optional<int64_t> hi = getConstantInt(getHi());
  if (!lo || !hi)
    return success();
  if (*hi <= *lo)
    return emitOpError() << "bounds must satisfy lo < hi, got lo = " << *lo
                         << " and hi = " << *hi;
  int64_t length = *hi - *lo;
  if (!llvm::isPowerOf2_64(length))
    return emitOpError() << "length hi - lo = " << length << " (lo = " << *lo
                         << ", hi = " << *hi << ") must be a power of two";
  if (!ShapedType::isDynamic(size) && size != length)
    return emitOpError() << "result size " << size
                         << " does not match hi - lo = " << length
                         << " (lo = " << *lo << ", hi = " << *hi << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

LogicalResult SplatOp::verify() {
  RankedTensorType type = getType();
  if (type.getElementType() != getSrc().getType())
    return emitOpError() << "result element type " << type.getElementType()
                         << " does not match the scalar type "
                         << getSrc().getType();
  return opcheck::verifyTileSizes(*this, type, getSizes());
}

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  return getSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  RankedTensorType srcType = getSrc().getType();
  RankedTensorType type = getType();
  if (srcType.getElementType() != type.getElementType())
    return emitOpError() << "result element type " << type.getElementType()
                         << " does not match the source element type "
                         << srcType.getElementType();
  if (srcType.getRank() != type.getRank())
    return emitOpError() << "source " << srcType << " and result " << type
                         << " must have the same rank";
  if (failed(opcheck::verifyTileSizes(*this, type, getSizes())))
    return failure();

  SmallVector<int64_t> shape = getKnownShape(type, getSizes());
  for (auto [index, dims] :
       llvm::enumerate(llvm::zip_equal(srcType.getShape(), shape))) {
    auto [srcDim, dim] = dims;
    if (ShapedType::isDynamic(srcDim) || ShapedType::isDynamic(dim) ||
        srcDim == 1 || srcDim == dim)
      continue;
    return emitOpError() << "cannot broadcast " << formatShape(srcType.getShape())
                         << " to " << formatShape(shape) << ": dimension "
                         << index << " has size " << srcDim
                         << ", which is neither 1 nor " << dim;
  }
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  // A `?` source dimension may be 1 and broadcast; only a static identity
  // broadcast is a no-op.
  if (getSrc().getType() == getType() && getType().hasStaticShape())
    return getSrc();
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp
//===----------------------------------------------------------------------===//

void ExpandDimsOp::build(OpBuilder &builder, OperationState &state, Value src,
                         unsigned axis) {
  auto srcType = cast<RankedTensorType>(src.getType());
  SmallVector<int64_t> shape(srcType.getShape());
  assert(axis <= shape.size() && "expand_dims axis out of range");
  shape.insert(shape.begin() + axis, 1);
  build(builder, state, RankedTensorType::get(shape, srcType.getElementType()),
        src, axis);
}

LogicalResult ExpandDimsOp::verify() {
  RankedTensorType srcType = getSrc().getType();
  RankedTensorType type = getType();
  if (srcType.getElementType() != type.getElementType())
    return emitOpError() << "result element type " << type.getElementType()
                         << " does not match the source element type "
                         << srcType.getElementType();
  int64_t axis = getAxis();
  if (axis > srcType.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a tile "
                         << "of rank " << srcType.getRank();
  if (type.getRank() != srcType.getRank() + 1)
    return emitOpError() << "result rank " << type.getRank()
                         << " must be the source rank " << srcType.getRank()
                         << " plus 1";
  SmallVector<int64_t> expected(srcType.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (type.getDimSize(axis) != 1 ||
      !opcheck::shapesCompatible(expected, type.getShape()))
    return emitOpError() << "result shape " << formatShape(type.getShape())
                         << " does not match " << formatShape(expected)
                         << " (source " << formatShape(srcType.getShape())
                         << " with a unit dimension at axis " << axis << ")";
  return success();
}

OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) {
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType srcType = getSrc().getType();
  RankedTensorType type = getType();
  if (srcType.getElementType() != type.getElementType())
    return emitOpError() << "result element type " << type.getElementType()
                         << " does not match the source element type "
                         << srcType.getElementType();
  if (failed(opcheck::verifyTileSizes(*this, type, getSizes())))
    return failure();
  SmallVector<int64_t> shape = getKnownShape(type, getSizes());
  if (ShapedType::isDynamicShape(shape) || !srcType.hasStaticShape())
    return success();
  int64_t count = ShapedType::getNumElements(shape);
  if (count != srcType.getNumElements())
    return emitOpError() << "cannot reshape " << formatShape(srcType.getShape())
                         << " (" << srcType.getNumElements() << " elements) to "
                         << formatShape(shape) << " (" << count
                         << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType() && getType().hasStaticShape())
    return getSrc();
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

void TransOp::build(OpBuilder &builder, OperationState &state, Value src,
                    ArrayRef<int32_t> order) {
  auto srcType = cast<RankedTensorType>(src.getType());
  SmallVector<int64_t> shape;
  for (int32_t dim : order)
    shape.push_back(srcType.getDimSize(dim));
  build(builder, state, RankedTensorType::get(shape, srcType.getElementType()),
        src, order);
}

LogicalResult TransOp::verify() {
  RankedTensorType srcType = getSrc().getType();
  RankedTensorType type = getType();
  if (srcType.getElementType() != type.getElementType())
    return emitOpError() << "result element type " << type.getElementType()
                         << " does not match the source element type "
                         << srcType.getElementType();
  ArrayRef<int32_t> order = getOrder();
  int64_t rank = srcType.getRank();
  SmallVector<bool> seen(rank, false);
  bool isPermutation = static_cast<int64_t>(order.size()) == rank;
  for (int32_t dim : order) {
    if (!isPermutation)
      break;
    isPermutation = dim >= 0 && dim < rank && !seen[dim];
    if (isPermutation)
      seen[dim] = true;
  }
  if (!isPermutation) {
    InFlightDiagnostic diag = emitOpError() << "order [";
    llvm::interleaveComma(order, diag);
    return diag << "] is not a permutation of the " << rank
                << " dimensions of " << srcType;
  }
  if (type.getRank() != rank)
    return emitOpError() << "result rank " << type.getRank()
                         << " does not match the source rank " << rank;
  SmallVector<int64_t> expected;
  for (int32_t dim : order)
    expected.push_back(srcType.getDimSize(dim));
  if (!opcheck::shapesCompatible(expected, type.getShape()))
    return emitOpError() << "result shape " << formatShape(type.getShape())
                         << " does not match the permuted source shape "
                         << formatShape(expected);
  return success();
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getOrder(), llvm::seq<int32_t>(0, getOrder().size())) &&
      getSrc().getType() == getType())
    return getSrc();
  return reshapeSplatConstant(adaptor.getSrc(), getType());
}
