//===- HostMemoryLowering.cpp - Memory ops for the host ------------------===//
//
// Pointer arithmetic, loads and stores (pointer and view forms), atomics,
// print and assert. Every access is guarded by its mask or its view bounds.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostLowering.h"

#include "runtime/include/kiln/host_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstddef>

using namespace mlir;
using namespace kiln;
using namespace kiln::host;

namespace {
//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

struct AddPtrLowering : HostPattern<AddPtrOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(AddPtrOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    int64_t size = byteSize(getPointeeType(op.getPtr().getType()));
    Value off = a.getOffset();
    Value ptr = a.getPtr();
    if (auto tt = dyn_cast<RankedTensorType>(off.getType())) {
      auto i64t = RankedTensorType::get(tt.getShape(), r.getI64Type());
      if (tt.getElementType().getIntOrFloatBitWidth() < 64)
        off = arith::ExtSIOp::create(r, l, i64t, off);
      Value sz = arith::ConstantOp::create(
          r, l, DenseElementsAttr::get(i64t, r.getI64IntegerAttr(size)));
      off = arith::MulIOp::create(r, l, off, sz);
    } else {
      off = arith::MulIOp::create(r, l, toI64(r, l, off), i64Const(r, l, size));
    }
    r.replaceOpWithNewOp<arith::AddIOp>(op, ptr, off);
    return success();
  }
};

struct LoadLowering : HostPattern<LoadOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    std::optional<AccessCheck> check = accessCheckFor(op);
    Type elem = getElementTypeOrSelf(op.getType());
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type) {
      r.replaceOp(op, guardedLoad(r, l, elem, a.getPtr(), a.getMask(), a.getOther(),
                                  check));
      return success();
    }
    Value ptr = a.getPtr(), mask = a.getMask(), other = a.getOther();
    r.replaceOp(op, generate(r, l, type,
                             [&](OpBuilder &b, Location ll, ValueRange idx) {
                               return guardedLoad(b, ll, elem,
                                                  elementAt(b, ll, ptr, idx),
                                                  elementAt(b, ll, mask, idx),
                                                  elementAt(b, ll, other, idx),
                                                  check);
                             }));
    return success();
  }
};

struct StoreLowering : HostPattern<StoreOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    std::optional<AccessCheck> check = accessCheckFor(op);
    Value ptr = a.getPtr(), value = a.getValue(), mask = a.getMask();
    auto type = dyn_cast<RankedTensorType>(ptr.getType());
    if (!type) {
      guardedStore(r, l, value, ptr, mask, check);
    } else {
      forEachIndex(r, l, type.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
        guardedStore(b, ll, elementAt(b, ll, value, idx), elementAt(b, ll, ptr, idx),
                     elementAt(b, ll, mask, idx), check);
      });
    }
    r.eraseOp(op);
    return success();
  }
};

struct MakeViewLowering : HostPattern<MakeViewOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(MakeViewOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    Type type = getTypeConverter()->convertType(op.getType());
    Value v = LLVM::UndefOp::create(r, l, type);
    v = LLVM::InsertValueOp::create(r, l, v, a.getBase(), ArrayRef<int64_t>{0});
    for (auto [d, s] : llvm::enumerate(a.getSizes()))
      v = LLVM::InsertValueOp::create(r, l, v, toI64(r, l, s),
                                      ArrayRef<int64_t>{1, int64_t(d)});
    for (auto [d, s] : llvm::enumerate(a.getStrides()))
      v = LLVM::InsertValueOp::create(r, l, v, toI64(r, l, s),
                                      ArrayRef<int64_t>{2, int64_t(d)});
    r.replaceOp(op, v);
    return success();
  }
};

struct ViewLoadLowering : HostPattern<ViewLoadOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ViewLoadOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    std::optional<AccessCheck> check = accessCheckFor(op);
    auto type = op.getType();
    Type elem = type.getElementType();
    Value view = a.getView(), other = a.getOther();
    SmallVector<Value> offsets(a.getOffsets());
    r.replaceOp(op, generate(r, l, type,
                             [&](OpBuilder &b, Location ll, ValueRange idx) {
                               auto [addr, ok] =
                                   viewAddress(b, ll, view, offsets, idx, elem);
                               return guardedLoad(b, ll, elem, addr, ok, other,
                                                  check);
                             }));
    return success();
  }
};

struct ViewStoreLowering : HostPattern<ViewStoreOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ViewStoreOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    std::optional<AccessCheck> check = accessCheckFor(op);
    Value view = a.getView(), value = a.getValue();
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Value> offsets(a.getOffsets());
    forEachIndex(r, l, type.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
      auto [addr, ok] =
          viewAddress(b, ll, view, offsets, idx, type.getElementType());
      guardedStore(b, ll, tensor::ExtractOp::create(b, ll, value, idx), addr, ok,
                   check);
    });
    r.eraseOp(op);
    return success();
  }
};

/// The llvm.atomicrmw operation for a kiln kind and element type.
LLVM::AtomicBinOp atomicBinOp(AtomicRMWKind kind, Type elem) {
  bool f = isa<FloatType>(elem);
  switch (kind) {
  case AtomicRMWKind::add: return f ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case AtomicRMWKind::max: return f ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
  case AtomicRMWKind::min: return f ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
  case AtomicRMWKind::umax: return LLVM::AtomicBinOp::umax;
  case AtomicRMWKind::umin: return LLVM::AtomicBinOp::umin;
  case AtomicRMWKind::and_: return LLVM::AtomicBinOp::_and;
  case AtomicRMWKind::or_: return LLVM::AtomicBinOp::_or;
  case AtomicRMWKind::xor_: return LLVM::AtomicBinOp::_xor;
  case AtomicRMWKind::xchg: return LLVM::AtomicBinOp::xchg;
  }
  return LLVM::AtomicBinOp::add;
}

struct AtomicRMWLowering : HostPattern<AtomicRMWOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(AtomicRMWOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    Type elem = getElementTypeOrSelf(op.getType());
    LLVM::AtomicBinOp bin = atomicBinOp(op.getKind(), elem);
    Value ptr = a.getPtr(), val = a.getVal(), mask = a.getMask();
    auto module = op->getParentOfType<ModuleOp>();
    auto fnType = LLVM::LLVMFunctionType::get(elem, {r.getI64Type(), elem});
    std::string name = ("kiln_host_atomic_" + LLVM::stringifyAtomicBinOp(bin) +
                        "_" + typeSuffix(elem))
                           .str();
    auto helper = getOrCreateHelper(
        module, name, fnType, [&](OpBuilder &b, Location ll, ValueRange args) {
          Value old = LLVM::AtomicRMWOp::create(b, ll, bin, addrToPtr(b, ll, args[0]),
                                                args[1], LLVM::AtomicOrdering::acq_rel);
          LLVM::ReturnOp::create(b, ll, old);
        });
    std::optional<AccessCheck> check = accessCheckFor(op);
    auto one = [&](OpBuilder &b, Location ll, ValueRange x) -> Value {
      Value p = x[0], v = x[1], m = x[2];
      auto rmw = [&](OpBuilder &bb, Location lll) -> Value {
        return LLVM::CallOp::create(bb, lll, helper, ValueRange{p, v}).getResult();
      };
      if (!m && !check)
        return rmw(b, ll);
      // Masked-off (or rejected) lanes return zero.
      Value zero = arith::ConstantOp::create(b, ll, b.getZeroAttr(elem));
      return guardedAccess(b, ll, m, p, byteSize(elem), /*isStore=*/true,
                           check, zero, rmw);
    };
    r.replaceOp(op, mapElements(r, l, op.getType(), {ptr, val, mask}, one));
    return success();
  }
};

struct AtomicCASLowering : HostPattern<AtomicCASOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(AtomicCASOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    Value ptr = a.getPtr(), cmp = a.getCmp(), val = a.getVal();
    Type elem = getElementTypeOrSelf(op.getType());
    auto module = op->getParentOfType<ModuleOp>();
    auto fnType = LLVM::LLVMFunctionType::get(elem, {r.getI64Type(), elem, elem});
    auto helper = getOrCreateHelper(
        module, "kiln_host_cas_" + typeSuffix(elem), fnType,
        [&](OpBuilder &b, Location ll, ValueRange args) {
          Value pair = LLVM::AtomicCmpXchgOp::create(
              b, ll, addrToPtr(b, ll, args[0]), args[1], args[2],
              LLVM::AtomicOrdering::acq_rel, LLVM::AtomicOrdering::monotonic);
          LLVM::ReturnOp::create(
              b, ll, LLVM::ExtractValueOp::create(b, ll, pair, ArrayRef<int64_t>{0}));
        });
    std::optional<AccessCheck> check = accessCheckFor(op);
    r.replaceOp(op, mapElements(r, l, op.getType(), {ptr, cmp, val},
                                [&](OpBuilder &b, Location ll, ValueRange x) -> Value {
                                  auto cas = [&](OpBuilder &bb, Location lll) -> Value {
                                    return LLVM::CallOp::create(bb, lll, helper, x)
                                        .getResult();
                                  };
                                  if (!check)
                                    return cas(b, ll);
                                  Value zero = arith::ConstantOp::create(
                                      b, ll, b.getZeroAttr(elem));
                                  return guardedAccess(b, ll, Value(), x[0],
                                                       byteSize(elem), true,
                                                       check, zero, cas);
                                }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Debugging: print and assert call back into the runtime
//===----------------------------------------------------------------------===//

struct PrintLowering : HostPattern<PrintOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(PrintOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    auto *ctx = r.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    Value program = programArg(op);
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    auto fnType = LLVM::LLVMFunctionType::get(
        voidTy, {ptrTy, ptrTy, r.getI32Type(), ptrTy, r.getI64Type(), r.getI32Type(), ptrTy});
    // kiln_host_print(program, text, kind, data, count, rank, shape) calls
    // program->print(program->runtime, text, ...).
    auto helperType = LLVM::LLVMFunctionType::get(
        voidTy, {ptrTy, ptrTy, r.getI32Type(), ptrTy, r.getI64Type(), r.getI32Type(), ptrTy});
    auto helper = getOrCreateHelper(
        module, "kiln_host_print", helperType,
        [&](OpBuilder &b, Location ll, ValueRange args) {
          callProgramCallback(b, ll, args[0], offsetof(KilnHostProgram, print),
                              fnType, args.drop_front());
          LLVM::ReturnOp::create(b, ll, ValueRange{});
        });
    auto call = [&](StringRef text, Value data, Type elem, int64_t count,
                    ArrayRef<int64_t> shape) {
      Value textPtr = stringConstant(r, l, module, text);
      Value shapePtr = LLVM::ZeroOp::create(r, l, ptrTy);
      if (!shape.empty()) {
        shapePtr = LLVM::AllocaOp::create(r, l, ptrTy, r.getI64Type(),
                                          i64Const(r, l, shape.size()));
        for (auto [d, s] : llvm::enumerate(shape)) {
          Value p = LLVM::GEPOp::create(r, l, ptrTy, r.getI64Type(), shapePtr,
                                        ArrayRef<LLVM::GEPArg>{int32_t(d)});
          LLVM::StoreOp::create(r, l, i64Const(r, l, s), p);
        }
      }
      SmallVector<Value> args{program, textPtr,
                              arith::ConstantOp::create(r, l, r.getI32IntegerAttr(
                                                                   elem ? scalarKindCode(elem) : 0)),
                              data ? data : Value(LLVM::ZeroOp::create(r, l, ptrTy)),
                              i64Const(r, l, count),
                              arith::ConstantOp::create(r, l, r.getI32IntegerAttr(shape.size())),
                              shapePtr};
      LLVM::CallOp::create(r, l, helper, args);
    };
    if (a.getArgs().empty())
      call(op.getFormat(), Value(), Type(), 0, {});
    for (auto it : llvm::enumerate(a.getArgs())) {
      Value v = it.value();
      StringRef text = it.index() == 0 ? op.getFormat() : StringRef();
      Type elem = getElementTypeOrSelf(v.getType());
      // Booleans travel as one byte each.
      Type memElem = elem.isInteger(1) ? r.getI8Type() : elem;
      auto tt = dyn_cast<RankedTensorType>(v.getType());
      int64_t count = tt ? tt.getNumElements() : 1;
      Value buf = LLVM::AllocaOp::create(r, l, ptrTy, memElem, i64Const(r, l, count));
      auto storeAt = [&](OpBuilder &b, Location ll, Value x, Value linear) {
        if (elem.isInteger(1))
          x = arith::ExtUIOp::create(b, ll, b.getI8Type(), x);
        Value p = LLVM::GEPOp::create(b, ll, ptrTy, memElem, buf,
                                      ArrayRef<LLVM::GEPArg>{linear});
        LLVM::StoreOp::create(b, ll, x, p);
      };
      if (!tt) {
        storeAt(r, l, v, i64Const(r, l, 0));
      } else {
        forEachIndex(r, l, tt.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
          Value linear = indexConst(b, ll, 0);
          for (auto [d, iv] : llvm::enumerate(idx)) {
            linear = arith::MulIOp::create(b, ll, linear, indexConst(b, ll, tt.getDimSize(d)));
            linear = arith::AddIOp::create(b, ll, linear, iv);
          }
          storeAt(b, ll, tensor::ExtractOp::create(b, ll, v, idx), toI64(b, ll, linear));
        });
      }
      call(text, buf, elem, count, tt ? tt.getShape() : ArrayRef<int64_t>{});
    }
    r.eraseOp(op);
    return success();
  }
};

struct AssertLowering : HostPattern<AssertOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(AssertOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    auto *ctx = r.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    std::string text = assertionText(l, op.getMessage());
    Value program = programArg(op);
    auto module = op->getParentOfType<ModuleOp>();
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    auto fnType = LLVM::LLVMFunctionType::get(voidTy, {ptrTy, ptrTy});
    // kiln_host_trap(program, message) calls program->trap(runtime, message).
    auto helper = getOrCreateHelper(
        module, "kiln_host_trap", fnType,
        [&](OpBuilder &b, Location ll, ValueRange args) {
          callProgramCallback(b, ll, args[0], offsetof(KilnHostProgram, trap),
                              fnType, args.drop_front());
          LLVM::ReturnOp::create(b, ll, ValueRange{});
        });
    auto check = [&](OpBuilder &b, Location ll, Value cond) {
      Value bad = arith::XOrIOp::create(
          b, ll, cond, arith::ConstantOp::create(b, ll, b.getBoolAttr(true)));
      scf::IfOp::create(b, ll, bad, [&](OpBuilder &bb, Location lll) {
        LLVM::CallOp::create(bb, lll, helper,
                             ValueRange{program, stringConstant(bb, lll, module, text)});
        scf::YieldOp::create(bb, lll);
      });
    };
    Value cond = a.getCondition();
    if (auto tt = dyn_cast<RankedTensorType>(cond.getType()))
      forEachIndex(r, l, tt.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
        check(b, ll, tensor::ExtractOp::create(b, ll, cond, idx));
      });
    else
      check(r, l, cond);
    r.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::host::populateHostMemoryPatterns(HostTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<AddPtrLowering, LoadLowering, StoreLowering, MakeViewLowering,
               ViewLoadLowering, ViewStoreLowering, AtomicRMWLowering,
               AtomicCASLowering, PrintLowering, AssertLowering>(
      converter, patterns.getContext());
}
