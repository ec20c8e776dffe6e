//===- KilnMemoryOps.cpp - Pointer, view and atomic ops of kiln -----------===//
//
// Verifiers, builders and folders of kiln.addptr, the views and the
// atomics. kiln.load and kiln.store are fully checked by their ODS traits.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/Dialect/KilnOpUtils.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// AddPtrOp
//===----------------------------------------------------------------------===//

LogicalResult AddPtrOp::verify() {
  Type ptrType = getPtr().getType();
  Type offsetType = getOffset().getType();
  auto ptrTile = dyn_cast<RankedTensorType>(ptrType);
  auto offsetTile = dyn_cast<RankedTensorType>(offsetType);
  if (!ptrTile != !offsetTile)
    return emitOpError() << "pointer and offset must both be scalars or both "
                            "be tiles, got "
                         << ptrType << " and " << offsetType;
  if (ptrTile &&
      !opcheck::shapesCompatible(ptrTile.getShape(), offsetTile.getShape()))
    return emitOpError() << "pointer tile shape "
                         << formatShape(ptrTile.getShape())
                         << " does not match offset tile shape "
                         << formatShape(offsetTile.getShape());
  return success();
}

OpFoldResult AddPtrOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getOffset(), m_Zero()))
    return getPtr();
  return {};
}

//===----------------------------------------------------------------------===//
// MakeViewOp
//===----------------------------------------------------------------------===//

void MakeViewOp::build(OpBuilder &builder, OperationState &state, Value base,
                       ValueRange sizes, ValueRange strides) {
  auto ptrType = cast<PointerType>(base.getType());
  build(builder, state, ViewType::get(ptrType.getPointeeType(), sizes.size()),
        base, sizes, strides);
}

LogicalResult MakeViewOp::verify() {
  ViewType type = getType();
  Type pointee = getBase().getType().getPointeeType();
  if (pointee != type.getElementType())
    return emitOpError() << "view element type " << type.getElementType()
                         << " does not match the pointee type " << pointee;
  if (getSizes().size() != type.getRank())
    return emitOpError() << "expects " << type.getRank()
                         << " sizes for a view of rank " << type.getRank()
                         << ", got " << getSizes().size();
  if (getStrides().size() != type.getRank())
    return emitOpError() << "expects " << type.getRank()
                         << " strides for a view of rank " << type.getRank()
                         << ", got " << getStrides().size();
  return success();
}

//===----------------------------------------------------------------------===//
// ViewLoadOp / ViewStoreOp
//===----------------------------------------------------------------------===//

/// Checks a box of type `tile` accessed at `offsets` in a view.
static LogicalResult verifyViewBox(Operation *op, ViewType view,
                                   ValueRange offsets, RankedTensorType tile,
                                   StringRef what) {
  if (tile.getElementType() != view.getElementType())
    return op->emitOpError()
           << what << " element type " << tile.getElementType()
           << " does not match the view element type "
           << view.getElementType();
  if (tile.getRank() != view.getRank())
    return op->emitOpError() << what << " rank " << tile.getRank()
                             << " does not match the view rank "
                             << view.getRank();
  if (offsets.size() != view.getRank())
    return op->emitOpError() << "expects " << view.getRank()
                             << " offsets for a view of rank "
                             << view.getRank() << ", got " << offsets.size();
  return success();
}

LogicalResult ViewLoadOp::verify() {
  if (failed(verifyViewBox(*this, getView().getType(), getOffsets(),
                           getType(), "result")))
    return failure();
  return opcheck::verifyTileSizes(*this, getType(), getSizes());
}

LogicalResult ViewStoreOp::verify() {
  return verifyViewBox(*this, getView().getType(), getOffsets(),
                       getValue().getType(), "value");
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

static bool isIntegerOnly(AtomicRMWKind kind) {
  switch (kind) {
  case AtomicRMWKind::umax:
  case AtomicRMWKind::umin:
  case AtomicRMWKind::and_:
  case AtomicRMWKind::or_:
  case AtomicRMWKind::xor_:
    return true;
  case AtomicRMWKind::add:
  case AtomicRMWKind::max:
  case AtomicRMWKind::min:
  case AtomicRMWKind::xchg:
    return false;
  }
  llvm_unreachable("unknown atomic kind");
}

LogicalResult AtomicRMWOp::verify() {
  Type element = getElementTypeOrSelf(getVal().getType());
  if (element.isInteger(1))
    return emitOpError() << "atomics on i1 are not supported";
  if (isIntegerOnly(getKind()) && !isa<IntegerType>(element))
    return emitOpError() << "'" << stringifyAtomicRMWKind(getKind())
                         << "' needs integer elements, got " << element;
  return success();
}

LogicalResult AtomicCASOp::verify() {
  if (getElementTypeOrSelf(getVal().getType()).isInteger(1))
    return emitOpError() << "atomics on i1 are not supported";
  return success();
}
