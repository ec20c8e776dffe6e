//===- KilnDialect.cpp - The kiln dialect ---------------------------------===//
//
// Dialect registration, the inliner interface, constant materialization and
// the verification of the dialect's discardable attributes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace kiln;

#include "compiler/Dialect/KilnDialect.cpp.inc"
#include "compiler/Dialect/KilnEnums.cpp.inc"

namespace {
/// Every kiln op may be inlined: none refers to its enclosing function.
struct KilnInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *call, Operation *callable,
                       bool wouldBeCloned) const final {
    return true;
  }
  bool isLegalToInline(Region *dest, Region *src, bool wouldBeCloned,
                       IRMapping &valueMapping) const final {
    return true;
  }
  bool isLegalToInline(Operation *op, Region *dest, bool wouldBeCloned,
                       IRMapping &valueMapping) const final {
    return true;
  }
};
} // namespace

void KilnDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/KilnOps.cpp.inc"
      >();
  addInterfaces<KilnInlinerInterface>();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

static LogicalResult verifyOnFunction(Operation *op, StringRef name) {
  if (isa<FunctionOpInterface>(op))
    return success();
  return op->emitError() << "'" << name << "' is only valid on a function";
}

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  Attribute value = attr.getValue();

  if (name == getKernelAttrName() || name == getHelperAttrName()) {
    if (failed(verifyOnFunction(op, name)))
      return failure();
    if (!isa<UnitAttr>(value))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    if (op->hasAttr(getKernelAttrName()) && op->hasAttr(getHelperAttrName()))
      return op->emitError() << "a function cannot be both '"
                             << getKernelAttrName() << "' and '"
                             << getHelperAttrName() << "'";
    return success();
  }

  if (name == getGridAttrName()) {
    if (failed(verifyOnFunction(op, name)))
      return failure();
    auto grid = dyn_cast<ArrayAttr>(value);
    if (!grid || !llvm::all_of(grid, llvm::IsaPred<StringAttr>))
      return op->emitError() << "'" << name
                             << "' must be an array of strings";
    if (grid.empty() || grid.size() > 3)
      return op->emitError() << "'" << name
                             << "' must have 1 to 3 entries, got "
                             << grid.size();
    return success();
  }

  if (name == getVariantsAttrName()) {
    if (failed(verifyOnFunction(op, name)))
      return failure();
    auto variants = dyn_cast<ArrayAttr>(value);
    if (!variants || !llvm::all_of(variants, llvm::IsaPred<DictionaryAttr>))
      return op->emitError() << "'" << name
                             << "' must be an array of dictionaries";
    return success();
  }

  // Checked mode (`--check-bounds`): the backend guards every access.
  if (name == "kiln.check_bounds") {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(value))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a builtin.module";
    return success();
  }

  if (name == "kiln.variant_index") {
    if (!isa<ModuleOp>(op) || !isa<IntegerAttr>(value))
      return op->emitError() << "'" << name
                             << "' must be an integer on a builtin.module";
    return success();
  }

  if (name == getVariantAttrName()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name
                             << "' is only valid on a builtin.module";
    if (!isa<DictionaryAttr>(value))
      return op->emitError() << "'" << name << "' must be a dictionary";
    return success();
  }

  // Free-form records of the kernel declaration for the driver and the
  // bundle metadata.
  if (name == getTuneAttrName() || name == getKeyAttrName() ||
      name == getWhereAttrName())
    return verifyOnFunction(op, name);

  // Per key: "pow2" or "exact" (`key (n: exact)`).
  if (name == "kiln.key_buckets") {
    if (failed(verifyOnFunction(op, name)))
      return failure();
    auto buckets = dyn_cast<ArrayAttr>(value);
    if (!buckets || !llvm::all_of(buckets, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && (s.getValue() == "pow2" || s.getValue() == "exact");
        }))
      return op->emitError() << "'" << name
                             << "' must be an array of \"pow2\" or \"exact\"";
    auto key = op->getAttrOfType<ArrayAttr>(getKeyAttrName());
    if (!key || key.size() != buckets.size())
      return op->emitError() << "'" << name << "' must have one entry per "
                             << "entry of '" << getKeyAttrName() << "'";
    return success();
  }

  return op->emitError() << "unknown kiln attribute '" << name << "'";
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  // The parameter's source name, recorded for the bundle metadata.
  if (name == "kiln.name") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'kiln.name' must be a string";
    return success();
  }
  if (name != getDivAttrName() && name != getAlignAttrName())
    return op->emitError() << "unknown kiln argument attribute '" << name
                           << "'";

  auto value = dyn_cast<IntegerAttr>(attr.getValue());
  if (!value || value.getValue().isNegative() || value.getValue().isZero())
    return op->emitError() << "'" << name << "' of argument " << argIndex
                           << " must be a positive integer";

  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || argIndex >= func.getNumArguments())
    return success();
  Type argType = func.getArgumentTypes()[argIndex];
  if (name == getAlignAttrName()) {
    if (!isa<PointerType>(argType))
      return op->emitError() << "'" << name << "' applies to pointer "
                             << "arguments, but argument " << argIndex
                             << " has type " << argType;
    if (!value.getValue().isPowerOf2())
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must be a power of two, got "
                             << value.getInt();
    return success();
  }
  if (!argType.isSignlessInteger() || argType.isInteger(1))
    return op->emitError() << "'" << name << "' applies to integer "
                           << "arguments, but argument " << argIndex
                           << " has type " << argType;
  return success();
}
