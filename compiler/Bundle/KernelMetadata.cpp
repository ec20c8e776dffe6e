//===- KernelMetadata.cpp - Bundle metadata from specialized IR -----------===//
#include "compiler/Bundle/KernelMetadata.h"
#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::bundle;

std::string bundle::variantName(llvm::StringRef kernel, int64_t index) {
  return (kernel + "_v" + llvm::Twine(index)).str();
}

static llvm::Error malformed(const llvm::Twine &msg) {
  return llvm::createStringError("malformed specialized module: " + msg);
}

/// The kernel function of a variant module, or null.
static func::FuncOp getKernel(ModuleOp variant) {
  for (auto fn : variant.getOps<func::FuncOp>())
    if (fn->hasAttr("kiln.kernel"))
      return fn;
  return nullptr;
}

static std::vector<std::string> getStrings(func::FuncOp fn,
                                           llvm::StringRef name) {
  std::vector<std::string> result;
  if (auto array = fn->getAttrOfType<ArrayAttr>(name))
    for (Attribute a : array)
      if (auto s = dyn_cast<StringAttr>(a))
        result.push_back(s.getValue().str());
  return result;
}

ModuleOp bundle::lookupVariantModule(ModuleOp specialized,
                                     llvm::StringRef kernel, int64_t index) {
  return dyn_cast_or_null<ModuleOp>(
      SymbolTable::lookupSymbolIn(specialized, variantName(kernel, index)));
}

/// Whether a value of type `t` holds addresses: a pointer, a view, or a
/// tile of either.
static bool holdsAddresses(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return isa<PointerType, ViewType>(t);
}

/// Whether `op` may write memory through its operand `v`.
static bool writesThrough(Operation *op, Value v) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !isMemoryEffectFree(op);
  llvm::SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Write>(e.getEffect()) &&
           (!e.getValue() || e.getValue() == v);
  });
}

/// Whether the kernel may write through the pointer argument `arg`:
/// follows every value computed from it that holds addresses (pointer
/// arithmetic, splats, views, selects, loop-carried values and region
/// results) to the ops that use them. Over-approximates: an op with
/// unknown effects counts as a write.
static bool mayWriteThrough(BlockArgument arg) {
  llvm::SetVector<Value> derived;
  derived.insert(arg);
  auto add = [&](ValueRange values) {
    for (Value v : values)
      if (holdsAddresses(v.getType()))
        derived.insert(v);
  };
  for (size_t i = 0; i < derived.size(); ++i) {
    Value v = derived[i];
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (writesThrough(user, v))
        return true;
      add(user->getResults());
      // Into regions (loop-carried values) and out of them (yields).
      for (Region &region : user->getRegions())
        for (Block &block : region)
          add(block.getArguments());
      if (user->hasTrait<OpTrait::IsTerminator>())
        if (Operation *parent = user->getParentOp()) {
          add(parent->getResults());
          for (Region &region : parent->getRegions())
            for (Block &block : region)
              add(block.getArguments());
        }
    }
  }
  return false;
}

/// Checks that `sig` describes `fn`'s arguments.
static llvm::Error checkSignature(func::FuncOp fn, const KernelSignature &sig) {
  if (fn.getNumArguments() != sig.params.size())
    return malformed("kernel '" + sig.name + "' has " +
                     llvm::Twine(fn.getNumArguments()) +
                     " arguments, its signature " +
                     llvm::Twine(sig.params.size()));
  for (auto [i, param] : llvm::enumerate(sig.params)) {
    auto name = fn.getArgAttrOfType<StringAttr>(i, "kiln.name");
    if (!name || name.getValue() != param.name)
      return malformed("argument " + llvm::Twine(i) + " of kernel '" +
                       sig.name + "' is not '" + param.name + "'");
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<KernelMetadata>>
bundle::collectKernelMetadata(ModuleOp specialized,
                              llvm::ArrayRef<KernelSignature> signatures) {
  std::vector<KernelMetadata> result;
  for (const KernelSignature &sig : signatures) {
    KernelMetadata kernel;
    kernel.signature = sig;
    for (ModuleOp variant : specialized.getOps<ModuleOp>()) {
      func::FuncOp fn = getKernel(variant);
      if (!fn || fn.getSymName() != sig.name)
        continue;
      auto index = variant->getAttrOfType<IntegerAttr>("kiln.variant_index");
      auto values = variant->getAttrOfType<DictionaryAttr>("kiln.variant");
      if (!index || !values)
        return malformed("a variant of kernel '" + sig.name +
                         "' without kiln.variant_index or kiln.variant");
      if (kernel.variants.empty()) {
        if (llvm::Error err = checkSignature(fn, sig))
          return std::move(err);
        kernel.grid = getStrings(fn, "kiln.grid");
        kernel.key = getStrings(fn, "kiln.key");
        kernel.keyBuckets = getStrings(fn, "kiln.key_buckets");
        kernel.launchConditions = getStrings(fn, "kiln.where");
      }
      VariantMetadata v;
      v.index = index.getInt();
      for (const std::string &name : sig.constParams) {
        auto value = dyn_cast_or_null<IntegerAttr>(values.get(name));
        if (!value)
          return malformed("variant " + llvm::Twine(v.index) + " of kernel '" +
                           sig.name + "' has no value for '" + name + "'");
        v.constValues.emplace_back(name, value.getInt());
      }
      kernel.variants.push_back(std::move(v));
      for (auto [i, param] : llvm::enumerate(sig.params))
        if (holdsAddresses(fn.getArgument(i).getType()) &&
            !llvm::is_contained(kernel.writes, param.name) &&
            mayWriteThrough(fn.getArgument(i)))
          kernel.writes.push_back(param.name);
    }
    // Declaration order.
    std::vector<std::string> writes;
    for (const ParamSignature &param : sig.params)
      if (llvm::is_contained(kernel.writes, param.name))
        writes.push_back(param.name);
    kernel.writes = std::move(writes);
    if (kernel.variants.empty())
      return malformed("kernel '" + sig.name + "' has no variant");
    llvm::sort(kernel.variants, [](const VariantMetadata &a,
                                   const VariantMetadata &b) {
      return a.index < b.index;
    });
    result.push_back(std::move(kernel));
  }
  return result;
}
