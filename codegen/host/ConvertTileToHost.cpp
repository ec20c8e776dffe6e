//===- ConvertTileToHost.cpp - convert-tile-to-host ----------------------===//
//
// Specialized kiln IR -> tensor/linalg/scf/llvm, ready for the upstream
// bufferization and LLVM lowering pipeline (HostPipeline.cpp).
//
// Values keep their tile semantics (tensors); only pointers change
// representation: a pointer is an i64 address, a tile of pointers a tensor
// of i64, a view an LLVM struct (base, sizes, strides). Ops that read or
// write memory become scalar code inside `tensor.generate` bodies or loop
// nests, each access guarded by its mask (or its view bounds), so that a
// masked-off or out-of-bounds lane never touches memory.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostPasses.h"

#include "codegen/host/HostLowering.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETOHOST
#include "codegen/host/HostPasses.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::host;

namespace {

//===----------------------------------------------------------------------===//
// Construction and shape ops
//===----------------------------------------------------------------------===//

struct ArangeLowering : HostPattern<ArangeOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ArangeOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Value lo = a.getLo();
    r.replaceOp(op, generate(r, op.getLoc(), op.getType(),
                             [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
                               Value i = arith::IndexCastOp::create(
                                   b, l, b.getI32Type(), idx[0]);
                               return arith::AddIOp::create(b, l, i, lo);
                             }));
    return success();
  }
};

struct SplatLowering : HostPattern<SplatOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(SplatOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    auto type = convertedTensor(op.getType());
    if (!type.hasStaticShape())
      return r.notifyMatchFailure(op, "dynamic shape");
    r.replaceOpWithNewOp<tensor::SplatOp>(op, type, a.getSrc());
    return success();
  }
};

struct BroadcastLowering : HostPattern<BroadcastOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(BroadcastOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    auto type = convertedTensor(op.getType());
    Value src = a.getSrc();
    auto srcShape = cast<RankedTensorType>(src.getType()).getShape();
    r.replaceOp(op, generate(r, op.getLoc(), type,
                             [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
                               SmallVector<Value> at;
                               for (auto [d, i] : llvm::enumerate(idx))
                                 at.push_back(srcShape[d] == 1 &&
                                                      type.getDimSize(d) != 1
                                                  ? indexConst(b, l, 0)
                                                  : i);
                               return tensor::ExtractOp::create(b, l, src, at);
                             }));
    return success();
  }
};

/// expand_dims, reshape and trans: each result element is one source
/// element; `mapIndex` gives the source index of a result index.
template <typename Op>
struct IndexMapLowering : HostPattern<Op> {
  using HostPattern<Op>::HostPattern;
  virtual SmallVector<Value> mapIndex(OpBuilder &b, Location l, Op op,
                                      ValueRange idx) const = 0;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor a,
                                ConversionPatternRewriter &r) const override {
    auto type = this->convertedTensor(op.getType());
    Value src = a.getSrc();
    r.replaceOp(op, generate(r, op.getLoc(), type,
                             [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
                               return tensor::ExtractOp::create(
                                   b, l, src, mapIndex(b, l, op, idx));
                             }));
    return success();
  }
};

struct ExpandDimsLowering : IndexMapLowering<ExpandDimsOp> {
  using IndexMapLowering::IndexMapLowering;
  SmallVector<Value> mapIndex(OpBuilder &, Location, ExpandDimsOp op,
                              ValueRange idx) const override {
    SmallVector<Value> at(idx.begin(), idx.end());
    at.erase(at.begin() + op.getAxis());
    return at;
  }
};

struct TransLowering : IndexMapLowering<TransOp> {
  using IndexMapLowering::IndexMapLowering;
  SmallVector<Value> mapIndex(OpBuilder &, Location, TransOp op,
                              ValueRange idx) const override {
    // result[i] = src[j] with result dim k = src dim order[k].
    auto order = op.getOrder();
    SmallVector<Value> at(order.size());
    for (auto [k, d] : llvm::enumerate(order))
      at[d] = idx[k];
    return at;
  }
};

struct ReshapeLowering : IndexMapLowering<ReshapeOp> {
  using IndexMapLowering::IndexMapLowering;
  SmallVector<Value> mapIndex(OpBuilder &b, Location l, ReshapeOp op,
                              ValueRange idx) const override {
    // Row-major linear index of the result, then its source coordinates.
    auto resShape = op.getType().getShape();
    auto srcShape = op.getSrc().getType().getShape();
    Value linear = indexConst(b, l, 0);
    for (auto [d, i] : llvm::enumerate(idx)) {
      linear = arith::MulIOp::create(b, l, linear, indexConst(b, l, resShape[d]));
      linear = arith::AddIOp::create(b, l, linear, i);
    }
    SmallVector<Value> at(srcShape.size());
    for (int64_t d = srcShape.size() - 1; d >= 0; --d) {
      Value n = indexConst(b, l, srcShape[d]);
      at[d] = arith::RemUIOp::create(b, l, linear, n);
      linear = arith::DivUIOp::create(b, l, linear, n);
    }
    return at;
  }
};

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

struct DotLowering : HostPattern<DotOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(DotOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    // linalg.matmul converts each operand to the accumulator type before
    // multiplying: f16/bf16 products are exact in f32, i8 in i32.
    Value lhs = a.getA(), rhs = a.getB();
    if (op.getPrecision() == DotPrecision::tf32) {
      lhs = buildRoundToTF32(r, op.getLoc(), lhs);
      rhs = buildRoundToTF32(r, op.getLoc(), rhs);
    }
    auto mm = linalg::MatmulOp::create(r, op.getLoc(), TypeRange{op.getType()},
                                       ValueRange{lhs, rhs},
                                       ValueRange{a.getAcc()});
    r.replaceOp(op, mm.getResults());
    return success();
  }
};

/// One `tensor.empty` per (tensor) value of `like`, to build results into.
SmallVector<Value> emptyTensorsLike(OpBuilder &b, Location l, ValueRange like) {
  SmallVector<Value> out;
  for (Value v : like) {
    auto t = cast<RankedTensorType>(v.getType());
    out.push_back(tensor::EmptyOp::create(b, l, t.getShape(), t.getElementType()));
  }
  return out;
}

struct ReduceLowering : HostPattern<ReduceOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    // Sequential combination along the axis, starting from element 0:
    // no identity value is needed and ties resolve to the first index.
    Location l = op.getLoc();
    unsigned axis = op.getAxis();
    SmallVector<Value> srcs(a.getSrcs());
    auto srcType = cast<RankedTensorType>(srcs[0].getType());
    int64_t n = srcType.getDimSize(axis);
    Region &region = op.getCombiner();
    auto reduceAt = [&](OpBuilder &b, Location ll, ValueRange outIdx) {
      auto srcIndex = [&](Value k) {
        SmallVector<Value> at(outIdx.begin(), outIdx.end());
        at.insert(at.begin() + axis, k);
        return at;
      };
      SmallVector<Value> init;
      for (Value s : srcs)
        init.push_back(tensor::ExtractOp::create(b, ll, s, srcIndex(indexConst(b, ll, 0))));
      auto loop = scf::ForOp::create(
          b, ll, indexConst(b, ll, 1), indexConst(b, ll, n), indexConst(b, ll, 1), init,
          [&](OpBuilder &bb, Location lll, Value k, ValueRange acc) {
            SmallVector<Value> fresh;
            for (Value s : srcs)
              fresh.push_back(tensor::ExtractOp::create(bb, lll, s, srcIndex(k)));
            scf::YieldOp::create(bb, lll, cloneCombiner(bb, region, acc, fresh));
          });
      return SmallVector<Value>(loop.getResults());
    };
    if (!isa<RankedTensorType>(op.getResult(0).getType())) {
      r.replaceOp(op, reduceAt(r, l, {}));
      return success();
    }
    // One loop nest over the result indices, with one tensor per result.
    auto resType = cast<RankedTensorType>(op.getResult(0).getType());
    SmallVector<Value> inits = emptyTensorsLike(r, l, op.getResults());
    scf::LoopNest nest = loopNestOver(
        r, l, resType.getShape(), inits,
        [&](OpBuilder &b, Location ll, ValueRange ivs, ValueRange iters) {
          SmallVector<Value> vals = reduceAt(b, ll, ivs);
          scf::ValueVector out;
          for (auto [v, t] : llvm::zip(vals, iters))
            out.push_back(tensor::InsertOp::create(b, ll, v, t, ivs));
          return out;
        });
    r.replaceOp(op, nest.results);
    return success();
  }
};

struct ScanLowering : HostPattern<ScanOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    // Inclusive scan: for each line along the axis, acc = x[0], then
    // acc = cloneCombiner(acc, x[k]), writing acc at every k.
    Location l = op.getLoc();
    unsigned axis = op.getAxis();
    SmallVector<Value> srcs(a.getSrcs());
    auto type = cast<RankedTensorType>(srcs[0].getType());
    int64_t n = type.getDimSize(axis);
    bool reverse = op.getReverse();
    SmallVector<int64_t> outer(type.getShape());
    outer[axis] = 1;
    SmallVector<Value> inits = emptyTensorsLike(r, l, op.getResults());
    Region &region = op.getCombiner();
    scf::LoopNest nest = loopNestOver(
        r, l, outer, inits,
        [&](OpBuilder &b, Location ll, ValueRange ivs, ValueRange iters) {
          auto at = [&](OpBuilder &bb, Location lll, Value k) {
            SmallVector<Value> idx(ivs.begin(), ivs.end());
            if (reverse)
              k = arith::SubIOp::create(bb, lll, indexConst(bb, lll, n - 1), k);
            idx[axis] = k;
            return idx;
          };
          SmallVector<Value> acc, outs(iters.begin(), iters.end());
          auto first = at(b, ll, indexConst(b, ll, 0));
          for (auto [s, o] : llvm::zip(srcs, outs)) {
            acc.push_back(tensor::ExtractOp::create(b, ll, s, first));
          }
          for (auto [i, o] : llvm::enumerate(outs))
            o = tensor::InsertOp::create(b, ll, acc[i], o, first);
          SmallVector<Value> carried(acc);
          carried.append(outs.begin(), outs.end());
          unsigned m = srcs.size();
          auto loop = scf::ForOp::create(
              b, ll, indexConst(b, ll, 1), indexConst(b, ll, n), indexConst(b, ll, 1),
              carried, [&](OpBuilder &bb, Location lll, Value k, ValueRange c) {
                auto idx = at(bb, lll, k);
                SmallVector<Value> fresh;
                for (Value s : srcs)
                  fresh.push_back(tensor::ExtractOp::create(bb, lll, s, idx));
                SmallVector<Value> next =
                    cloneCombiner(bb, region, c.take_front(m), fresh);
                SmallVector<Value> yield(next);
                for (unsigned i = 0; i < m; ++i)
                  yield.push_back(tensor::InsertOp::create(bb, lll, next[i], c[m + i], idx));
                scf::YieldOp::create(bb, lll, yield);
              });
          return scf::ValueVector(loop.getResults().begin() + m, loop.getResults().end());
        });
    r.replaceOp(op, nest.results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Appends the program coordinates and the KilnHostProgram pointer to the
/// kernel's arguments and replaces program_id / num_programs by them.
void addProgramArguments(func::FuncOp fn) {
  OpBuilder b(fn.getContext());
  auto ptrTy = LLVM::LLVMPointerType::get(fn.getContext());
  unsigned first = fn.getNumArguments();
  SmallVector<unsigned> positions;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  for (int i = 0; i < 6; ++i) {
    positions.push_back(first);
    types.push_back(b.getI32Type());
    attrs.push_back(b.getDictionaryAttr({}));
    locs.push_back(fn.getLoc());
  }
  positions.push_back(first);
  types.push_back(ptrTy);
  attrs.push_back(b.getDictionaryAttr({}));
  locs.push_back(fn.getLoc());
  (void)fn.insertArguments(positions, types, attrs, locs);
  fn.walk([&](ProgramIdOp op) {
    op.replaceAllUsesWith(fn.getArgument(first + unsigned(op.getAxis())));
    op.erase();
  });
  fn.walk([&](NumProgramsOp op) {
    op.replaceAllUsesWith(fn.getArgument(first + 3 + unsigned(op.getAxis())));
    op.erase();
  });
}

/// `void entry(void **args, const KilnHostProgram *program)`: unpacks the
/// arguments and the program coordinates, then calls the kernel.
void buildEntry(ModuleOp module, func::FuncOp kernel, ArrayRef<Type> paramTypes,
                StringRef entryName) {
  MLIRContext *ctx = module.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location l = kernel.getLoc();
  auto entry = func::FuncOp::create(b, l, entryName,
                                    b.getFunctionType({ptrTy, ptrTy}, {}));
  Block *block = entry.addEntryBlock();
  b.setInsertionPointToStart(block);
  Value args = block->getArgument(0), program = block->getArgument(1);
  SmallVector<Value> callArgs;
  for (auto [i, t] : llvm::enumerate(paramTypes)) {
    Value slot = LLVM::GEPOp::create(b, l, ptrTy, ptrTy, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value valuePtr = LLVM::LoadOp::create(b, l, ptrTy, slot);
    if (isa<PointerType>(t)) {
      callArgs.push_back(LLVM::LoadOp::create(b, l, b.getI64Type(), valuePtr));
    } else if (t.isInteger(1)) {
      Value byte = LLVM::LoadOp::create(b, l, b.getI8Type(), valuePtr);
      callArgs.push_back(arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, byte,
                                               arith::ConstantOp::create(b, l, b.getI8IntegerAttr(0))));
    } else if (Type carrier = getFp8Carrier(t)) {
      // LLVM has no fp8 type: the byte, reinterpreted.
      Value byte = LLVM::LoadOp::create(b, l, carrier, valuePtr);
      callArgs.push_back(arith::BitcastOp::create(b, l, t, byte));
    } else {
      callArgs.push_back(LLVM::LoadOp::create(b, l, t, valuePtr));
    }
  }
  for (int i = 0; i < 6; ++i)
    callArgs.push_back(programField(b, l, program, 4 * i, b.getI32Type()));
  callArgs.push_back(program);
  func::CallOp::create(b, l, kernel, callArgs);
  func::ReturnOp::create(b, l);
}

struct ConvertTileToHostPass
    : kiln::impl::ConvertTileToHostBase<ConvertTileToHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    bool bad = false;
    module.walk([&](ConstParamOp op) {
      op.emitError("const param '") << op.getName()
                                    << "' is not specialized; run tile-specialize first";
      bad = true;
    });
    if (bad)
      return signalPassFailure();

    // The checked mode is a module attribute, which the patterns read.
    if (checkBounds)
      module.walk([&](func::FuncOp fn) {
        if (fn->hasAttr("kiln.kernel"))
          fn->getParentOfType<ModuleOp>()->setAttr("kiln.check_bounds",
                                                   UnitAttr::get(ctx));
      });

    // Kernels: extra arguments now, entry points after the conversion.
    SmallVector<std::pair<func::FuncOp, SmallVector<Type>>> kernels;
    module.walk([&](func::FuncOp fn) {
      if (!fn->hasAttr("kiln.kernel"))
        return;
      kernels.push_back({fn, SmallVector<Type>(fn.getArgumentTypes())});
      addProgramArguments(fn);
    });

    HostTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<KilnDialect>();
    target.addLegalDialect<arith::ArithDialect, math::MathDialect,
                           tensor::TensorDialect, linalg::LinalgDialect,
                           LLVM::LLVMDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalDialect<func::FuncDialect, scf::SCFDialect>(
        [&](Operation *op) { return converter.isLegal(op); });
    target.addDynamicallyLegalDialect<arith::ArithDialect, tensor::TensorDialect>(
        [&](Operation *op) { return converter.isLegal(op); });
    target.addLegalOp<ModuleOp, UnrealizedConversionCastOp>();

    RewritePatternSet patterns(ctx);
    patterns.add<ArangeLowering, SplatLowering, BroadcastLowering,
                 ExpandDimsLowering, TransLowering, ReshapeLowering,
                 DotLowering, ReduceLowering, ScanLowering>(converter, ctx);
    populateHostMemoryPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    for (auto &[fn, params] : kernels) {
      std::string entryName = (fn.getSymName() + entrySuffix).str();
      std::string bodyName = "kiln_body_" + entryName;
      fn.setSymName(bodyName);
      fn.setPrivate();
      // The kiln metadata has served (the bundle carries it); the body is
      // now plain code.
      for (NamedAttribute attr : llvm::to_vector(fn->getDiscardableAttrs()))
        if (attr.getName().getValue().starts_with("kiln."))
          fn->removeAttr(attr.getName());
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.setArgAttrs(i, ArrayRef<NamedAttribute>{});
      buildEntry(fn->getParentOfType<ModuleOp>(), fn, params, entryName);
    }
  }
};
} // namespace
