//===- SpecializeConstParams.cpp - tile-specialize -----------------------===//
//
// One generic kernel in, one verified module per tune variant out:
//
//   module {
//     module @softmax_v0 attributes {kiln.variant = {BLOCK = 256, ...},
//                                    kiln.variant_index = 0} {
//       func.func @softmax(...) attributes {kiln.kernel, ...} { static IR }
//     }
//     ...
//   }
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_TILESPECIALIZECONSTPARAMS
#include "compiler/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

LogicalResult kiln::canonicalize(Operation *op) {
  MLIRContext *ctx = op->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    name.getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig config;
  config.setMaxIterations(16);
  (void)applyPatternsGreedily(op, FrozenRewritePatternSet(std::move(patterns)),
                              config);
  return success();
}

void kiln::buildTilePipeline(OpPassManager &pm) {
  // No canonicalization before specialization: it would erase unused code
  // before the variant checks see it, and whether an error is reported must
  // not depend on what the optimizer removes.
  pm.addPass(createTileInlineHelpers());
  pm.addPass(createTileSpecializeConstParams());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// "[64, 16]": shapes as the language's messages print them.
static std::string bracketShape(RankedTensorType t) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    s += (i ? ", " : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

/// The language's rules that only the specialized shapes can show (Sema
/// checks them where the shapes are already known).
static LogicalResult checkVariantRules(func::FuncOp fn) {
  WalkResult r = fn.walk([&](DotOp dot) {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    for (int64_t d : {a.getDimSize(0), a.getDimSize(1), b.getDimSize(1)}) {
      if (ShapedType::isDynamic(d) || d >= 16)
        continue;
      dot.emitError() << "dot: every dimension must be at least 16 (the "
                         "matrix units' smallest shape), found "
                      << bracketShape(a) << " x " << bracketShape(b);
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// "BLOCK=256, warps=4, stages=2" in the kernel's const-param order.
static std::string variantText(DictionaryAttr variant, ArrayAttr order) {
  std::string s;
  auto append = [&](StringRef name) {
    auto value = dyn_cast_or_null<IntegerAttr>(variant.get(name));
    if (!value)
      return;
    s += (s.empty() ? "" : ", ") + name.str() + "=" +
         std::to_string(value.getInt());
  };
  if (order) {
    for (Attribute a : order)
      if (auto name = dyn_cast<StringAttr>(a))
        append(name.getValue());
  } else {
    for (NamedAttribute na : variant)
      append(na.getName().getValue());
  }
  return s;
}

namespace {
struct TileSpecializeConstParamsPass
    : kiln::impl::TileSpecializeConstParamsBase<TileSpecializeConstParamsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("kiln.kernel"))
        kernels.push_back(fn);
    bool ok = true;
    size_t specialized = 0;
    for (func::FuncOp kernel : kernels) {
      auto variants = kernel->getAttrOfType<ArrayAttr>("kiln.variants");
      if (!variants || variants.empty()) {
        kernel.emitError("kernel '")
            << kernel.getSymName() << "' has no 'kiln.variants' to specialize";
        ok = false;
        continue;
      }
      bool callsHelper = false;
      kernel.walk([&](func::CallOp call) {
        call.emitError("call to '")
            << call.getCallee()
            << "' in a kernel to specialize; run -tile-inline-helpers first";
        callsHelper = true;
      });
      if (callsHelper) {
        ok = false;
        continue;
      }
      for (auto [index, attr] : llvm::enumerate(variants)) {
        if (onlyVariant >= 0 && int64_t(index) != onlyVariant)
          continue;
        ++specialized;
        auto variant = dyn_cast<DictionaryAttr>(attr);
        if (!variant || failed(specialize(module, kernel, variant, index))) {
          ok = false;
          break; // One failing variant is enough to report.
        }
      }
      kernel.erase();
    }
    if (ok && onlyVariant >= 0 && specialized == 0 && !kernels.empty()) {
      module.emitError() << "only-variant=" << int64_t(onlyVariant)
                         << ": no kernel has a variant with that index";
      ok = false;
    }
    if (!ok)
      signalPassFailure();
  }

  LogicalResult specialize(ModuleOp parent, func::FuncOp kernel,
                           DictionaryAttr variant, size_t index) {
    std::string context =
        "in variant " + variantText(variant, kernel->getAttrOfType<ArrayAttr>("kiln.tune")) +
        " of kernel '" + kernel.getSymName().str() + "'";
    // Every diagnostic while specializing names the variant.
    ScopedDiagnosticHandler handler(&getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        diag.attachNote() << context;
      return failure(); // Let the outer handler print it.
    });

    OpBuilder b(parent.getContext());
    b.setInsertionPointToEnd(parent.getBody());
    std::string name = (kernel.getSymName() + "_v" + Twine(index)).str();
    auto sub = ModuleOp::create(b, kernel.getLoc(), StringRef(name));
    sub->setAttr("kiln.variant", variant);
    sub->setAttr("kiln.variant_index", b.getI64IntegerAttr(index));
    b.setInsertionPointToEnd(sub.getBody());
    auto fn = cast<func::FuncOp>(b.clone(*kernel));
    fn->removeAttr("kiln.variants");

    // Const params become constants.
    SmallVector<ConstParamOp> params;
    fn.walk([&](ConstParamOp op) { params.push_back(op); });
    for (ConstParamOp op : params) {
      auto value = dyn_cast_or_null<IntegerAttr>(variant.get(op.getName()));
      if (!value)
        return op.emitError("variant has no value for const param '")
               << op.getName() << "'";
      OpBuilder ob(op);
      auto c = arith::ConstantOp::create(
          ob, op.getLoc(), ob.getIntegerAttr(op.getType(), value.getInt()));
      op.replaceAllUsesWith(c.getResult());
      op.erase();
    }
    // Refine before folding so that code the folder would erase as unused
    // is checked too.
    if (failed(refineShapes(fn, "")) || failed(checkVariantRules(fn)))
      return failure();
    if (failed(canonicalize(fn)))
      return failure();
    return verify(sub);
  }
};
} // namespace
