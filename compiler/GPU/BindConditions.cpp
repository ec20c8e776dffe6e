//===- BindConditions.cpp - Launch conditions that fix a parameter --------===//
//
// tile-gpu-bind-launch-conditions (Passes.td): a variant runs only where
// its `where` conditions hold (the runtime checks them at every launch),
// so a conjunct `(== CONST param)` — a runtime integer parameter equal to
// one of the variant's const params — gives the parameter's value inside
// the variant. Its uses become the constant, and the axis analysis sees
// what the author promised: attention's `HEAD_DIM == head_dim` makes the
// head-dimension masks constant and the loads vectorizable in the generic
// image too.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUBINDLAUNCHCONDITIONS
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;

namespace {

struct BindLaunchConditionsPass
    : public kiln::gpu::impl::TileGPUBindLaunchConditionsBase<
          BindLaunchConditionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto variant = module->getAttrOfType<DictionaryAttr>(
        kiln::KilnDialect::getVariantAttrName());
    if (!variant)
      return;
    module.walk([&](func::FuncOp fn) {
      auto where = fn->getAttrOfType<ArrayAttr>("kiln.where");
      if (!where || fn.isExternal())
        return;
      for (Attribute a : where) {
        auto text = dyn_cast<StringAttr>(a);
        if (!text)
          continue;
        StringRef s = text.getValue().trim();
        if (!s.consume_front("(== ") || !s.consume_back(")"))
          continue;
        auto [lhs, rhs] = s.trim().split(' ');
        lhs = lhs.trim();
        rhs = rhs.trim();
        if (lhs.empty() || rhs.empty() || rhs.contains(' '))
          continue;
        bind(fn, variant, lhs, rhs) || bind(fn, variant, rhs, lhs);
      }
    });
  }

  /// Replaces the uses of integer argument `param` by the value of const
  /// param `constName`; false if they are not that.
  static bool bind(func::FuncOp fn, DictionaryAttr variant,
                   StringRef constName, StringRef param) {
    auto value = variant.getAs<IntegerAttr>(constName);
    if (!value)
      return false;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto name = fn.getArgAttrOfType<StringAttr>(i, "kiln.name");
      if (!name || name.getValue() != param)
        continue;
      BlockArgument arg = fn.getArgument(i);
      auto type = dyn_cast<IntegerType>(arg.getType());
      if (!type || arg.use_empty())
        return false;
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      Value c = arith::ConstantOp::create(
          b, fn.getLoc(), type,
          b.getIntegerAttr(type, value.getValue().sextOrTrunc(type.getWidth())));
      arg.replaceAllUsesWith(c);
      return true;
    }
    return false;
  }
};

} // namespace
