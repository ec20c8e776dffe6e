//===- KernelMetadata.cpp - Bundle metadata from specialized IR -----------===//
#include "compiler/Bundle/KernelMetadata.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"
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
    }
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
