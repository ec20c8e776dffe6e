//===- PerThreadToLLVM.cpp - Lowering the per-thread form to LLVM ---------===//

#include "compiler/GPU/PerThreadToLLVM.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace kiln::gpu;

Value kiln::gpu::llvmI32(OpBuilder &b, Location loc, int32_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(v));
}

Value kiln::gpu::llvmIntrinsic(OpBuilder &b, Location loc, StringRef name,
                               Type result, ValueRange args) {
  auto call = LLVM::CallIntrinsicOp::create(b, loc, result,
                                            b.getStringAttr(name), args);
  // A void intrinsic (a barrier) has no result.
  return call->getNumResults() ? call->getResult(0) : Value();
}

Value kiln::gpu::buildGuarded(OpBuilder &b, Location loc, Value mask,
                              Type type, function_ref<Value(OpBuilder &)> body,
                              function_ref<Value(OpBuilder &)> otherwise) {
  if (!mask)
    return body(b);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, mask, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, body(b));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, otherwise(b));
  }
  return ifOp.getResult(0);
}

Value kiln::gpu::lowerGlobalLoad(OpBuilder &b, GlobalLoadOp op, Value ptr) {
  Location loc = op.getLoc();
  VectorType vt = op.getType();
  return buildGuarded(
      b, loc, op.getMask(), vt,
      [&](OpBuilder &bb) -> Value {
        return LLVM::LoadOp::create(bb, loc, vt, ptr, op.getAlignment());
      },
      [&](OpBuilder &bb) -> Value {
        if (op.getOther())
          return op.getOther();
        return LLVM::ZeroOp::create(bb, loc, vt);
      });
}

void kiln::gpu::lowerGlobalStore(OpBuilder &b, GlobalStoreOp op, Value ptr) {
  Location loc = op.getLoc();
  if (!op.getMask()) {
    LLVM::StoreOp::create(b, loc, op.getValue(), ptr, op.getAlignment());
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, op.getMask(), false);
  OpBuilder bb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
  bb.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  LLVM::StoreOp::create(bb, loc, op.getValue(), ptr, op.getAlignment());
}

namespace {

/// The LLVM atomic for a kiln atomic kind on `type`.
LLVM::AtomicBinOp atomicBinOp(StringRef kind, Type type) {
  bool fp = isa<FloatType>(type);
  if (kind == "add")
    return fp ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  if (kind == "max")
    return fp ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
  if (kind == "min")
    return fp ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
  if (kind == "umax")
    return LLVM::AtomicBinOp::umax;
  if (kind == "umin")
    return LLVM::AtomicBinOp::umin;
  if (kind == "and")
    return LLVM::AtomicBinOp::_and;
  if (kind == "or")
    return LLVM::AtomicBinOp::_or;
  if (kind == "xor")
    return LLVM::AtomicBinOp::_xor;
  return LLVM::AtomicBinOp::xchg;
}

} // namespace

Value kiln::gpu::lowerAtomicRMW(OpBuilder &b, AtomicRMWOp op, Value ptr,
                                StringRef scope) {
  Location loc = op.getLoc();
  Type type = op.getType();
  return buildGuarded(
      b, loc, op.getMask(), type,
      [&](OpBuilder &bb) -> Value {
        return LLVM::AtomicRMWOp::create(
            bb, loc, atomicBinOp(op.getKind(), type), ptr, op.getVal(),
            LLVM::AtomicOrdering::acq_rel, scope.empty() ? StringRef() : scope);
      },
      [&](OpBuilder &bb) -> Value {
        return LLVM::ZeroOp::create(bb, loc, type);
      });
}

Value kiln::gpu::lowerAtomicCAS(OpBuilder &b, AtomicCASOp op, Value ptr,
                                StringRef scope) {
  Location loc = op.getLoc();
  Type type = op.getType();
  Type asInt = b.getIntegerType(type.getIntOrFloatBitWidth());
  auto toInt = [&](Value v) -> Value {
    return type.isInteger() ? v : LLVM::BitcastOp::create(b, loc, asInt, v);
  };
  return buildGuarded(
      b, loc, op.getMask(), type,
      [&](OpBuilder &bb) -> Value {
        auto cas = LLVM::AtomicCmpXchgOp::create(
            bb, loc, ptr, toInt(op.getCmp()), toInt(op.getVal()),
            LLVM::AtomicOrdering::acq_rel, LLVM::AtomicOrdering::acquire,
            scope.empty() ? StringRef() : scope);
        Value old =
            LLVM::ExtractValueOp::create(bb, loc, cas, ArrayRef<int64_t>{0});
        return type.isInteger() ? old
                                : LLVM::BitcastOp::create(bb, loc, type, old);
      },
      [&](OpBuilder &bb) -> Value {
        return LLVM::ZeroOp::create(bb, loc, type);
      });
}

/// The dynamic shared array's symbol (declareDynamicShared).
static constexpr llvm::StringLiteral kSharedSymbol = "kiln_shared";

Value kiln::gpu::globalPointer(OpBuilder &b, Location loc, Value addr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kGlobalAddressSpace),
      addr);
}

Value kiln::gpu::sharedPointer(OpBuilder &b, Location loc, Value buffer,
                               Value offset) {
  auto alloc = buffer.getDefiningOp<SharedAllocOp>();
  assert(alloc && alloc.getOffset() && "buffers are allocated first");
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext(), kSharedAddressSpace);
  Value base = LLVM::AddressOfOp::create(b, loc, ptrTy, kSharedSymbol);
  Value total = LLVM::AddOp::create(
      b, loc, offset, llvmI32(b, loc, int32_t(*alloc.getOffset())));
  return LLVM::GEPOp::create(b, loc, ptrTy, b.getI8Type(), base,
                             ValueRange{total});
}

void kiln::gpu::declareDynamicShared(ModuleOp module) {
  uint64_t alignment = 16;
  module.walk([&](SharedAllocOp a) {
    alignment = std::max<uint64_t>(alignment, a.getAlignment());
  });
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  LLVM::GlobalOp::create(b, module.getLoc(), arrayTy, /*isConstant=*/false,
                         LLVM::Linkage::External, kSharedSymbol, Attribute(),
                         alignment, kSharedAddressSpace);
}

Value kiln::gpu::accessAddress(OpBuilder &b, Location loc, Value addr,
                               Value offset) {
  if (!offset)
    return addr;
  Value wide = LLVM::ZExtOp::create(b, loc, b.getI64Type(), offset);
  return LLVM::AddOp::create(b, loc, addr, wide);
}

/// The alignment of a shared_load / shared_store of `vt` (the ops'
/// contract): its size when that is a power of two up to 16 bytes, else
/// its element's. Without it LLVM splits a vector into element accesses
/// (a 16-byte read of eight f16 became eight 2-byte reads).
VectorType kiln::gpu::sharedMemoryType(VectorType vt) {
  if (!vt.getElementType().isInteger(1))
    return vt;
  return VectorType::get(vt.getShape(), IntegerType::get(vt.getContext(), 8));
}

Value kiln::gpu::toSharedMemory(OpBuilder &b, Location loc, Value value) {
  auto vt = cast<VectorType>(value.getType());
  VectorType mem = sharedMemoryType(vt);
  return mem == vt ? value : LLVM::ZExtOp::create(b, loc, mem, value);
}

Value kiln::gpu::fromSharedMemory(OpBuilder &b, Location loc, Value raw,
                                  VectorType vt) {
  // The bytes hold 0 or 1: their low bit is the bool.
  return raw.getType() == vt ? raw : LLVM::TruncOp::create(b, loc, vt, raw);
}

static unsigned sharedAccessAlignment(VectorType vt) {
  vt = sharedMemoryType(vt);
  unsigned elem = vt.getElementTypeBitWidth() / 8;
  unsigned bytes = unsigned(vt.getNumElements()) * elem;
  return bytes <= 16 && llvm::isPowerOf2_32(bytes) ? bytes : elem;
}

bool kiln::gpu::lowerMemoryAccess(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  if (auto load = dyn_cast<GlobalLoadOp>(op)) {
    Value addr = accessAddress(b, loc, load.getAddr(), load.getOffset());
    load.replaceAllUsesWith(
        lowerGlobalLoad(b, load, globalPointer(b, loc, addr)));
  } else if (auto store = dyn_cast<GlobalStoreOp>(op)) {
    Value addr = accessAddress(b, loc, store.getAddr(), store.getOffset());
    lowerGlobalStore(b, store, globalPointer(b, loc, addr));
  } else if (auto sl = dyn_cast<SharedLoadOp>(op)) {
    VectorType vt = sl.getType();
    Value v = LLVM::LoadOp::create(
        b, loc, sharedMemoryType(vt),
        sharedPointer(b, loc, sl.getBuffer(), sl.getOffset()),
        sharedAccessAlignment(vt));
    sl.replaceAllUsesWith(fromSharedMemory(b, loc, v, vt));
  } else if (auto ss = dyn_cast<SharedStoreOp>(op)) {
    auto vt = cast<VectorType>(ss.getValue().getType());
    LLVM::StoreOp::create(b, loc, toSharedMemory(b, loc, ss.getValue()),
                          sharedPointer(b, loc, ss.getBuffer(), ss.getOffset()),
                          sharedAccessAlignment(vt));
  } else {
    return false;
  }
  op->erase();
  return true;
}

std::pair<Value, Value> kiln::gpu::buildPrintfArgs(OpBuilder &b, PrintfOp op,
                                                   ModuleOp module,
                                                   unsigned &counter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  // The format as a global string.
  std::string text = op.getFormat().str();
  text.push_back('\0');
  std::string name = "kiln_printf_format_" + std::to_string(counter++);
  {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto arrayTy = LLVM::LLVMArrayType::get(mb.getI8Type(), text.size());
    LLVM::GlobalOp::create(mb, loc, arrayTy, /*isConstant=*/true,
                           LLVM::Linkage::Internal, name,
                           mb.getStringAttr(text));
  }
  Value format = LLVM::AddressOfOp::create(b, loc, ptrTy, name);
  SmallVector<Value> args;
  SmallVector<Type> fields;
  for (Value v : op.getArgs()) {
    Type t = v.getType();
    if (isa<FloatType>(t)) {
      if (!t.isF64())
        v = LLVM::FPExtOp::create(b, loc, b.getF64Type(), v);
    } else if (t.getIntOrFloatBitWidth() < 32) {
      v = LLVM::ZExtOp::create(b, loc, b.getI32Type(), v);
    }
    args.push_back(v);
    fields.push_back(v.getType());
  }
  Value packed = LLVM::ZeroOp::create(b, loc, ptrTy);
  if (!args.empty()) {
    auto structTy = LLVM::LLVMStructType::getLiteral(ctx, fields);
    packed = LLVM::AllocaOp::create(
        b, loc, ptrTy, structTy,
        LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                 b.getI64IntegerAttr(1)));
    for (auto [i, v] : llvm::enumerate(args)) {
      Value field = LLVM::GEPOp::create(b, loc, ptrTy, structTy, packed,
                                        ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      LLVM::StoreOp::create(b, loc, v, field);
    }
  }
  return {format, packed};
}

namespace {

/// Element `index` of the 1-d vector `v` without reading `v` itself: when
/// `v` is built by a chain of vector.insert_strided_slice over a constant,
/// the part that holds the element, else null.
Value elementThroughInserts(PatternRewriter &rw, Location loc, Value v,
                            int64_t index) {
  while (auto ins = v.getDefiningOp<vector::InsertStridedSliceOp>()) {
    auto part = cast<VectorType>(ins.getValueToStore().getType());
    if (part.getRank() != 1)
      return {};
    int64_t offset = cast<IntegerAttr>(ins.getOffsets()[0]).getInt();
    if (index >= offset && index < offset + part.getNumElements())
      return vector::ExtractOp::create(rw, loc, ins.getValueToStore(),
                                       ArrayRef<int64_t>{index - offset});
    v = ins.getDest();
  }
  DenseElementsAttr cst;
  if (!matchPattern(v, m_Constant(&cst)) || !cst.isSplat())
    return {};
  return arith::ConstantOp::create(rw, loc, cst.getSplatValue<TypedAttr>());
}

/// A shuffle of a vector that a chain of insert_strided_slice builds takes
/// its elements from the inserted parts. The per-thread form assembles an
/// operand in a wide vector part by part (one element at a time where the
/// shared layout gives no longer runs) and then shuffles instruction-sized
/// fragments out of it; lowered as is, each insertion is a shuffle of the
/// whole wide vector (a 512-lane mask each for attention's operands on
/// RDNA3), which LLVM's InstCombine then takes minutes over. Read through
/// the chain, the wide vector is never built.
struct ShuffleThroughInserts : OpRewritePattern<vector::ShuffleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ShuffleOp op,
                                PatternRewriter &rw) const override {
    auto srcType = cast<VectorType>(op.getV1().getType());
    if (srcType.getRank() != 1 ||
        (!op.getV1().getDefiningOp<vector::InsertStridedSliceOp>() &&
         !op.getV2().getDefiningOp<vector::InsertStridedSliceOp>()))
      return failure();
    int64_t n1 = srcType.getNumElements();
    SmallVector<Value> elements;
    for (int64_t m : op.getMask()) {
      Value e = m < n1 ? elementThroughInserts(rw, op.getLoc(), op.getV1(), m)
                       : elementThroughInserts(rw, op.getLoc(), op.getV2(),
                                               m - n1);
      if (!e)
        return failure();
      elements.push_back(e);
    }
    rw.replaceOpWithNewOp<vector::FromElementsOp>(op, op.getResultVectorType(),
                                                  elements);
    return success();
  }
};

/// Elementwise arith on a per-thread vector of 64-bit elements (a tile of
/// addresses, 64-bit offsets, comparisons of them) as one scalar op per
/// element. A target whose registers are 32 bits wide has no such vector
/// operations; LLVM keeps the vector whole through selection (every lane,
/// used or not, in registers: on AMDGPU copies in SGPRs that spill to
/// VGPR lanes), while scalars that nothing reads simply go.
struct UnrollWideElementwise : RewritePattern {
  explicit UnrollWideElementwise(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  static bool isWide(Type t) {
    auto vt = dyn_cast<VectorType>(t);
    return vt && vt.getElementType().isIntOrIndexOrFloat() &&
           (vt.getElementType().isIndex() ||
            vt.getElementType().getIntOrFloatBitWidth() == 64);
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rw) const override {
    if (!isa<arith::ArithDialect>(op->getDialect()) ||
        !op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
        op->getNumResults() != 1)
      return failure();
    auto vt = dyn_cast<VectorType>(op->getResult(0).getType());
    if (!vt || vt.getRank() != 1 || vt.getNumElements() < 2 ||
        vt.isScalable() ||
        (!isWide(vt) && llvm::none_of(op->getOperandTypes(), isWide)))
      return failure();
    SmallVector<Value> elements;
    for (int64_t i = 0; i < vt.getNumElements(); ++i) {
      OperationState state(op->getLoc(), op->getName());
      for (Value operand : op->getOperands())
        state.operands.push_back(
            isa<VectorType>(operand.getType())
                ? vector::ExtractOp::create(rw, op->getLoc(), operand,
                                            ArrayRef<int64_t>{i})
                      .getResult()
                : operand);
      state.types.push_back(vt.getElementType());
      state.addAttributes(op->getAttrs());
      elements.push_back(rw.create(state)->getResult(0));
    }
    rw.replaceOpWithNewOp<vector::FromElementsOp>(op, vt, elements);
    return success();
  }
};

} // namespace

LogicalResult kiln::gpu::convertPerThreadToLLVM(
    ModuleOp module, function_ref<void(ConversionTarget &)> addLegal,
    bool unrollWideVectors) {
  MLIRContext *ctx = module.getContext();
  // Fragments read straight from the parts a wide vector is built of.
  {
    RewritePatternSet patterns(ctx);
    patterns.add<ShuffleThroughInserts>(ctx);
    if (unrollWideVectors)
      patterns.add<UnrollWideElementwise>(ctx);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return failure();
  }
  // Strided slices of 1-d vectors become shuffles.
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return failure();
  }
  // scf -> cf.
  {
    RewritePatternSet patterns(ctx);
    populateSCFToControlFlowConversionPatterns(patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return failure();
  }
  // Everything -> LLVM.
  LowerToLLVMOptions options(ctx);
  options.overrideIndexBitwidth(64);
  LLVMTypeConverter converter(ctx, options);
  RewritePatternSet patterns(ctx);
  arith::populateArithToLLVMConversionPatterns(converter, patterns);
  populateMathToLLVMConversionPatterns(converter, patterns);
  populateVectorToLLVMConversionPatterns(converter, patterns);
  cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  populateFuncToLLVMConversionPatterns(converter, patterns);
  LLVMConversionTarget target(*ctx);
  target.addLegalOp<ModuleOp>();
  addLegal(target);
  return applyFullConversion(module, target, std::move(patterns));
}

Value kiln::gpu::shuffleAsI32(OpBuilder &b, Location loc, Value v,
                              function_ref<Value(Value)> shuffle32) {
  Type type = v.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  Type asInt = b.getIntegerType(bits);
  Value x = type.isInteger() ? v : LLVM::BitcastOp::create(b, loc, asInt, v);
  Value result;
  if (bits == 64) {
    Value c32 =
        LLVM::ConstantOp::create(b, loc, asInt, b.getIntegerAttr(asInt, 32));
    Value lo = shuffle32(LLVM::TruncOp::create(b, loc, i32, x));
    Value hi = shuffle32(LLVM::TruncOp::create(
        b, loc, i32, LLVM::LShrOp::create(b, loc, x, c32)));
    Value wideHi =
        LLVM::ShlOp::create(b, loc, LLVM::ZExtOp::create(b, loc, asInt, hi), c32);
    result = LLVM::OrOp::create(b, loc, wideHi,
                                LLVM::ZExtOp::create(b, loc, asInt, lo));
  } else if (bits == 32) {
    result = shuffle32(x);
  } else {
    Value wide = LLVM::ZExtOp::create(b, loc, i32, x);
    result = LLVM::TruncOp::create(b, loc, asInt, shuffle32(wide));
  }
  return type.isInteger() ? result
                          : LLVM::BitcastOp::create(b, loc, type, result);
}
