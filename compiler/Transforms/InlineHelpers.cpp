//===- InlineHelpers.cpp - tile-inline-helpers ---------------------------===//
//
// `fn` helpers are always inlined. Helpers are single-block functions (their
// control flow is structured: scf.for / scf.if) ending in func.return, so
// inlining clones the body at the call site. Inlined ops get a CallSiteLoc
// so that a later error inside a helper also names the call.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_TILEINLINEHELPERS
#include "compiler/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct TileInlineHelpersPass
    : kiln::impl::TileInlineHelpersBase<TileInlineHelpersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Each round inlines every call present; calls that a helper's body
    // contains are inlined by the next round. Sema rejects recursion, so
    // the depth is bounded by the helper call graph.
    constexpr int kMaxRounds = 64;
    for (int round = 0; round < kMaxRounds; ++round) {
      SmallVector<func::CallOp> calls;
      module.walk([&](func::CallOp call) { calls.push_back(call); });
      if (calls.empty())
        break;
      for (func::CallOp call : calls)
        if (failed(inlineCall(call, symbols)))
          return signalPassFailure();
    }
    bool left = false;
    module.walk([&](func::CallOp call) {
      call.emitError("helper calls nest more than 64 levels deep (recursion?)");
      left = true;
    });
    if (left)
      return signalPassFailure();
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (fn->hasAttr("kiln.helper"))
        fn.erase();
  }

  LogicalResult inlineCall(func::CallOp call, SymbolTable &symbols) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || !callee->hasAttr("kiln.helper"))
      return call.emitError("call to '")
             << call.getCallee() << "', which is not a kiln helper";
    Region &body = callee.getBody();
    if (!body.hasOneBlock())
      return callee.emitError("helper bodies must be a single block");
    Block &block = body.front();
    IRMapping map;
    for (auto [arg, operand] : llvm::zip(block.getArguments(), call.getOperands()))
      map.map(arg, operand);
    OpBuilder b(call);
    Location callLoc = call.getLoc();
    for (Operation &op : block.without_terminator()) {
      Operation *clone = b.clone(op, map);
      clone->walk([&](Operation *nested) {
        nested->setLoc(CallSiteLoc::get(nested->getLoc(), callLoc));
      });
    }
    auto ret = cast<func::ReturnOp>(block.getTerminator());
    for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
      result.replaceAllUsesWith(map.lookupOrDefault(value));
    call.erase();
    return success();
  }
};
} // namespace
