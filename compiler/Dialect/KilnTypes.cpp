//===- KilnTypes.cpp - Types of the kiln dialect --------------------------===//
//
// `!kiln.ptr<T>`, `!kiln.view<T, N>` and the helpers on pointer-like and
// tile types declared in KilnDialect.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

#define GET_TYPEDEF_CLASSES
#include "compiler/Dialect/KilnTypes.cpp.inc"

void KilnDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/Dialect/KilnTypes.cpp.inc"
      >();
}

static bool isNumberType(Type type) {
  return type.isSignlessInteger() || isa<FloatType>(type);
}

LogicalResult
PointerType::verify(function_ref<InFlightDiagnostic()> emitError,
                    Type pointeeType) {
  if (!isNumberType(pointeeType))
    return emitError() << "pointee type must be a signless integer or float "
                          "type, got "
                       << pointeeType;
  return success();
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               Type elementType, unsigned rank) {
  if (!isNumberType(elementType))
    return emitError() << "view element type must be a signless integer or "
                          "float type, got "
                       << elementType;
  if (rank < 1 || rank > 3)
    return emitError() << "view rank must be 1, 2 or 3, got " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool kiln::isTile(Type type) { return isa<RankedTensorType>(type); }

Type kiln::getPointeeType(Type ptrOrTileOfPtr) {
  if (auto ptr = dyn_cast<PointerType>(getElementTypeOrSelf(ptrOrTileOfPtr)))
    return ptr.getPointeeType();
  return nullptr;
}

Type kiln::getTypeSameShape(Type type, Type elementType) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(elementType);
  return elementType;
}

Type kiln::getPointeeTypeSameShape(Type ptrLike) {
  Type pointee = getPointeeType(ptrLike);
  if (!pointee)
    return nullptr;
  return getTypeSameShape(ptrLike, pointee);
}

Type kiln::getI1SameShape(Type type) {
  return getTypeSameShape(type, IntegerType::get(type.getContext(), 1));
}

Type kiln::getPointerTypeSameShape(Type valueType) {
  return getTypeSameShape(valueType,
                          PointerType::get(getElementTypeOrSelf(valueType)));
}

std::optional<int64_t> kiln::getConstantInt(Value value) {
  APInt constant;
  if (!value || !matchPattern(value, m_ConstantInt(&constant)))
    return std::nullopt;
  if (constant.getBitWidth() == 1)
    return constant.getZExtValue();
  return constant.getSExtValue();
}

SmallVector<int64_t> kiln::getKnownShape(RankedTensorType type,
                                         ValueRange dynSizes) {
  SmallVector<int64_t> shape(type.getShape());
  unsigned next = 0;
  for (int64_t &dim : shape) {
    if (!ShapedType::isDynamic(dim))
      continue;
    if (next >= dynSizes.size())
      break;
    if (std::optional<int64_t> size = getConstantInt(dynSizes[next]))
      dim = *size;
    ++next;
  }
  return shape;
}

std::string kiln::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

std::string kiln::locationText(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().getValue() + ":" + Twine(f.getLine()) + ":" +
            Twine(f.getColumn()))
        .str();
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return locationText(c.getCallee());
  if (auto n = dyn_cast<NameLoc>(loc))
    return locationText(n.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (std::string s = locationText(l); !s.empty())
        return s;
  return "";
}

std::string kiln::assertionText(Location loc, StringRef message) {
  std::string where = locationText(loc);
  std::string text = where.empty() ? "" : where + ": ";
  text += "assertion failed";
  if (!message.empty())
    text += ": " + message.str();
  return text;
}
