//===- KilnGPUDialect.cpp - The kiln_gpu dialect --------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::gpu;

#include "compiler/GPU/IR/KilnGPUDialect.cpp.inc"
#include "compiler/GPU/IR/KilnGPUEnums.cpp.inc"
#include "compiler/GPU/IR/KilnGPUAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/GPU/IR/KilnGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/GPU/IR/KilnGPUTypes.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/GPU/IR/KilnGPUOps.cpp.inc"

namespace {
/// Prints layouts as `#blocked`, `#mma`, ... aliases.
struct LayoutAliases : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedAttr>(attr))
      os << "blocked";
    else if (isa<SliceAttr>(attr))
      os << "slice";
    else if (isa<MmaAttr>(attr))
      os << "mma";
    else if (isa<OperandAttr>(attr))
      os << "operand";
    else if (isa<DotOperandAttr>(attr))
      os << "dot_operand";
    else
      return AliasResult::NoAlias;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void KilnGPUDialect::initialize() {
  addInterfaces<LayoutAliases>();
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "compiler/GPU/IR/KilnGPUOps.cpp.inc"
      >();
}

void KilnGPUDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/GPU/IR/KilnGPUAttrs.cpp.inc"
      >();
}

void KilnGPUDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/GPU/IR/KilnGPUTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // convert(convert(x)) == convert(x).
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

static LogicalResult verifyAccess(Operation *op, VectorType type,
                                  int64_t alignment) {
  if (type.getRank() != 1)
    return op->emitOpError("accesses a 1-d vector, not ") << type;
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
    return op->emitOpError("alignment must be a positive power of two");
  return success();
}

LogicalResult GlobalLoadOp::verify() {
  if (getOther() && getOther().getType() != getType())
    return emitOpError("`other` must have the result type");
  return verifyAccess(*this, getType(), getAlignment());
}

LogicalResult GlobalStoreOp::verify() {
  return verifyAccess(*this, getValue().getType(), getAlignment());
}

LogicalResult MmaOp::verify() {
  const MatrixInstr *instr = lookupMatrixInstr(getInstr());
  if (!instr)
    return emitOpError("unknown matrix instruction '") << getInstr() << "'";
  auto check = [&](Value v, int32_t regs, StringRef what) -> LogicalResult {
    auto t = cast<VectorType>(v.getType());
    if (t.getRank() != 1 || t.getNumElements() != regs)
      return emitOpError() << what << " must be a vector of " << regs
                           << " elements for " << getInstr();
    return success();
  };
  if (failed(check(getA(), instr->getARegisters(), "A")) ||
      failed(check(getB(), instr->getBRegisters(), "B")) ||
      failed(check(getC(), instr->getCRegisters(), "C")))
    return failure();
  return success();
}

LogicalResult WarpgroupMmaOp::verify() {
  const MatrixInstr *instr = lookupMatrixInstr(getInstr());
  if (!instr || instr->groupWarps == 1)
    return emitOpError("unknown warpgroup matrix instruction '")
           << getInstr() << "'";
  bool shared = getABuffer() && getAOffset() && getADesc();
  if (shared == bool(getA()) || bool(getABuffer()) != bool(getAOffset()))
    return emitOpError("takes A either from shared memory (buffer, offset "
                       "and a_desc) or from registers");
  if (getA() && getATranspose())
    return emitOpError("A from registers has no a_transpose");
  if (!instr->sharedMNMajor && (getATranspose() || getBTranspose()))
    return emitOpError("reads only K-major shared operands with ")
           << getInstr();
  auto check = [&](Type type, int32_t regs, StringRef what) -> LogicalResult {
    auto t = cast<VectorType>(type);
    if (t.getRank() != 1 || t.getNumElements() != regs)
      return emitOpError() << what << " must be a vector of " << regs
                           << " elements for " << getInstr();
    return success();
  };
  if (getA() && failed(check(getA().getType(), instr->getARegisters(), "A")))
    return failure();
  return check(getC().getType(), instr->getCRegisters(), "C");
}

LogicalResult AtomicRMWOp::verify() {
  static const char *const kinds[] = {"add", "max",  "min", "umax", "umin",
                                      "and", "or",   "xor", "xchg"};
  if (!llvm::is_contained(kinds, getKind()))
    return emitOpError("unknown atomic kind '") << getKind() << "'";
  return success();
}

LogicalResult SharedLoadMatrixOp::verify() {
  int32_t count = getCount();
  if (count != 1 && count != 2 && count != 4)
    return emitOpError("count must be 1, 2 or 4");
  VectorType t = getType();
  if (t.getRank() != 1 || t.getNumElements() != 2 * count ||
      t.getElementTypeBitWidth() != 16)
    return emitOpError("yields ") << 2 * count
                                  << " 16-bit elements for count " << count;
  return success();
}

LogicalResult AsyncCopyTileOp::verify() {
  auto ptrType = cast<RankedTensorType>(getPtr().getType());
  // Tiles of `!kiln.ptr<T>` (the kiln dialect is not a dependency here).
  if (ptrType.getElementType().getDialect().getNamespace() != "kiln")
    return emitOpError("copies through a tile of pointers, not ") << ptrType;
  if (!getLayout(ptrType))
    return emitOpError("needs a distributed layout on the pointer tile");
  if (Value mask = getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getShape() != ptrType.getShape() ||
        !maskType.getElementType().isInteger(1) ||
        maskType.getEncoding() != ptrType.getEncoding())
      return emitOpError("mask must be i1 in the shape and layout of the "
                         "pointer tile");
  }
  return success();
}

LogicalResult ReadTileOp::verify() {
  if (!getLayout(getType()))
    return emitOpError("needs a distributed layout on the result");
  RankedTensorType type = getType();
  if (std::optional<ArrayRef<int64_t>> shape = getTileShape()) {
    int64_t n = 1;
    for (int64_t d : *shape)
      n *= d;
    if (n != type.getNumElements())
      return emitOpError("tile_shape has ")
             << n << " elements, the result " << type.getNumElements();
  }
  if (std::optional<ArrayRef<int32_t>> order = getOrder()) {
    SmallVector<int32_t> sorted(order->begin(), order->end());
    llvm::sort(sorted);
    if (int64_t(sorted.size()) != type.getRank() ||
        llvm::any_of(llvm::enumerate(sorted), [](auto e) {
          return e.value() != int32_t(e.index());
        }))
      return emitOpError("order must be a permutation of the result's ")
             << type.getRank() << " dimensions";
  }
  return success();
}

LogicalResult TensorBoxLoadOp::verify() {
  if (!isa<LLVM::LLVMPointerType>(getMap().getType()))
    return emitOpError("tensor map must be an !llvm.ptr, found ")
           << getMap().getType();
  auto ptrType = cast<RankedTensorType>(getPtrs().getType());
  if (int64_t(getCoords().size()) != ptrType.getRank())
    return emitOpError("has ") << getCoords().size()
                               << " coordinates for a box of rank "
                               << ptrType.getRank();
  if (getResult().getType().getShape() != ptrType.getShape())
    return emitOpError("result shape differs from the pointer tile's");
  return success();
}

LogicalResult TensorLoadOp::verify() {
  if (!isa<LLVM::LLVMPointerType>(getMap().getType()))
    return emitOpError("tensor map must be an !llvm.ptr, found ")
           << getMap().getType();
  if (getCoords().empty() || getCoords().size() > 5)
    return emitOpError("takes 1 to 5 coordinates, not ")
           << getCoords().size();
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  int32_t size = getSize();
  if (size != 4 && size != 8 && size != 16)
    return emitOpError("copies 4, 8 or 16 bytes, not ") << size;
  return success();
}
