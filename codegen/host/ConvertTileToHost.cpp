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

#include "compiler/Dialect/KilnDialect.h"
#include "runtime/include/kiln/host_abi.h"

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

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Type i64Type(MLIRContext *ctx) { return IntegerType::get(ctx, 64); }

/// Size in bytes of one element of `t` in memory.
int64_t byteSize(Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

Value i64Const(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v));
}

Value indexConst(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

/// Sign-extends (or truncates) an integer to i64; index goes through a cast.
Value toI64(OpBuilder &b, Location l, Value v) {
  Type t = v.getType();
  if (t.isIndex())
    return arith::IndexCastOp::create(b, l, b.getI64Type(), v);
  unsigned w = t.getIntOrFloatBitWidth();
  if (w == 64)
    return v;
  if (w < 64)
    return arith::ExtSIOp::create(b, l, b.getI64Type(), v);
  return arith::TruncIOp::create(b, l, b.getI64Type(), v);
}

Value addrToPtr(OpBuilder &b, Location l, Value addr) {
  return LLVM::IntToPtrOp::create(b, l, LLVM::LLVMPointerType::get(b.getContext()),
                                  addr);
}

/// A scalar load of `elem` at address `addr`, or `other` (zero if null)
/// when `cond` (may be null: always load) is false.
Value guardedLoad(OpBuilder &b, Location l, Type elem, Value addr, Value cond,
                  Value other) {
  auto load = [&](OpBuilder &bb, Location ll) -> Value {
    return LLVM::LoadOp::create(bb, ll, elem, addrToPtr(bb, ll, addr),
                                byteSize(elem));
  };
  if (!cond)
    return load(b, l);
  if (!other)
    other = arith::ConstantOp::create(b, l, b.getZeroAttr(elem));
  auto ifOp = scf::IfOp::create(
      b, l, cond,
      [&](OpBuilder &bb, Location ll) { scf::YieldOp::create(bb, ll, load(bb, ll)); },
      [&](OpBuilder &bb, Location ll) { scf::YieldOp::create(bb, ll, other); });
  return ifOp.getResult(0);
}

/// A scalar store guarded by `cond` (may be null).
void guardedStore(OpBuilder &b, Location l, Value value, Value addr,
                  Value cond) {
  auto store = [&](OpBuilder &bb, Location ll) {
    LLVM::StoreOp::create(bb, ll, value, addrToPtr(bb, ll, addr),
                          byteSize(value.getType()));
  };
  if (!cond) {
    store(b, l);
    return;
  }
  scf::IfOp::create(b, l, cond, [&](OpBuilder &bb, Location ll) {
    store(bb, ll);
    scf::YieldOp::create(bb, ll);
  });
}

/// Extracts the element at `idx` of `v` if it is a tensor, else `v`.
Value elementAt(OpBuilder &b, Location l, Value v, ValueRange idx) {
  if (!v || !isa<RankedTensorType>(v.getType()))
    return v;
  return tensor::ExtractOp::create(b, l, v, idx);
}

/// Builds `tensor.generate` of `type` whose element at index `idx` is
/// `body(b, loc, idx)`.
Value generate(OpBuilder &b, Location l, RankedTensorType type,
               function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto gen = tensor::GenerateOp::create(b, l, type, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> idxTypes(type.getRank(), b.getIndexType());
  SmallVector<Location> locs(type.getRank(), l);
  Block *block = b.createBlock(&gen.getBody(), {}, idxTypes, locs);
  Value v = body(b, l, block->getArguments());
  tensor::YieldOp::create(b, l, v);
  return gen;
}

/// Runs `body(b, loc, idx)` for every index of `shape` (row-major).
void forEachIndex(OpBuilder &b, Location l, ArrayRef<int64_t> shape,
                  function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : shape) {
    lbs.push_back(indexConst(b, l, 0));
    ubs.push_back(indexConst(b, l, d));
    steps.push_back(indexConst(b, l, 1));
  }
  scf::buildLoopNest(b, l, lbs, ubs, steps,
                     [&](OpBuilder &bb, Location ll, ValueRange ivs) {
                       body(bb, ll, ivs);
                     });
}

/// Like forEachIndex, producing a tensor of `type`: `body` returns the
/// element for each index (loops with a tensor iter_arg, tensor.insert).
Value buildByLoops(OpBuilder &b, Location l, RankedTensorType type,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : type.getShape()) {
    lbs.push_back(indexConst(b, l, 0));
    ubs.push_back(indexConst(b, l, d));
    steps.push_back(indexConst(b, l, 1));
  }
  Value init = tensor::EmptyOp::create(b, l, type.getShape(), type.getElementType());
  scf::LoopNest nest = scf::buildLoopNest(
      b, l, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &bb, Location ll, ValueRange ivs,
          ValueRange iters) -> scf::ValueVector {
        Value v = body(bb, ll, ivs);
        return {tensor::InsertOp::create(bb, ll, v, iters[0], ivs)};
      });
  return nest.results[0];
}

/// The address of element `idx` of a (converted) view struct, and whether
/// `idx` + `offsets` is inside it.
std::pair<Value, Value> viewAddress(OpBuilder &b, Location l, Value view,
                                    ValueRange offsets, ValueRange idx,
                                    Type elem) {
  int64_t rank = offsets.size();
  Value base = LLVM::ExtractValueOp::create(b, l, view, ArrayRef<int64_t>{0});
  Value addr = base;
  Value inBounds;
  Value zero = i64Const(b, l, 0);
  Value size = i64Const(b, l, byteSize(elem));
  for (int64_t d = 0; d < rank; ++d) {
    Value extent = LLVM::ExtractValueOp::create(b, l, view, ArrayRef<int64_t>{1, d});
    Value stride = LLVM::ExtractValueOp::create(b, l, view, ArrayRef<int64_t>{2, d});
    Value pos = toI64(b, l, offsets[d]);
    if (!idx.empty())
      pos = arith::AddIOp::create(b, l, pos, toI64(b, l, idx[d]));
    Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, pos, zero);
    Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, pos, extent);
    Value ok = arith::AndIOp::create(b, l, ge, lt);
    inBounds = inBounds ? Value(arith::AndIOp::create(b, l, inBounds, ok)) : ok;
    Value off = arith::MulIOp::create(b, l, pos, stride);
    off = arith::MulIOp::create(b, l, off, size);
    addr = arith::AddIOp::create(b, l, addr, off);
  }
  return {addr, inBounds};
}

/// Loads the KilnHostProgram field at byte offset `offset` as `type`.
Value programField(OpBuilder &b, Location l, Value program, int64_t offset,
                   Type type) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  Value p = LLVM::GEPOp::create(b, l, ptrTy, b.getI8Type(), program,
                                ArrayRef<LLVM::GEPArg>{int32_t(offset)});
  return LLVM::LoadOp::create(b, l, type, p);
}

/// A private constant global holding `text` (NUL-terminated); returns its
/// address.
Value stringConstant(OpBuilder &b, Location l, ModuleOp module,
                     StringRef text) {
  std::string name = "kiln_str_" + std::to_string(llvm::hash_value(text) & 0xffffffff);
  auto *ctx = b.getContext();
  std::string data = text.str();
  data.push_back('\0');
  if (!module.lookupSymbol(name)) {
    OpBuilder mb(ctx);
    mb.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), data.size());
    LLVM::GlobalOp::create(mb, l, type, /*isConstant=*/true,
                           LLVM::Linkage::Internal, name,
                           mb.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(b, l, LLVM::LLVMPointerType::get(ctx), name);
}

/// An internal `llvm.func` named `name` of type `type`, created on first
/// use with `body` filling its entry block. Operations whose memory
/// effects the upstream buffer deallocation cannot see (atomics, indirect
/// calls into the runtime) live in such helpers and are called with
/// `llvm.call`, which the deallocation handles; LLVM inlines them.
LLVM::LLVMFuncOp getOrCreateHelper(
    ModuleOp module, StringRef name, LLVM::LLVMFunctionType type,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location l = module.getLoc();
  auto fn = LLVM::LLVMFuncOp::create(b, l, name, type, LLVM::Linkage::Internal);
  Block *block = fn.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  body(b, l, block->getArguments());
  return fn;
}

std::string typeSuffix(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The scalar kind code of host_abi.h for an element type (signedness is
/// not in the type; integers print as signed).
int32_t scalarKindCode(Type t) {
  if (t.isInteger(1)) return KILN_BOOL;
  if (t.isInteger(8)) return KILN_I8;
  if (t.isInteger(16)) return KILN_I16;
  if (t.isInteger(32)) return KILN_I32;
  if (t.isInteger(64)) return KILN_I64;
  if (t.isF16()) return KILN_F16;
  if (t.isBF16()) return KILN_BF16;
  if (t.isF32()) return KILN_F32;
  return KILN_F64;
}

/// The `KilnHostProgram *` of the function enclosing `op` (its last
/// argument, added by the pass).
Value programArg(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  return fn.getArgument(fn.getNumArguments() - 1);
}

//===----------------------------------------------------------------------===//
// Type conversion
//===----------------------------------------------------------------------===//

class HostTypeConverter : public TypeConverter {
public:
  explicit HostTypeConverter(MLIRContext *ctx) {
    addConversion([](Type t) { return t; });
    addConversion([ctx](PointerType) -> Type { return IntegerType::get(ctx, 64); });
    addConversion([ctx](RankedTensorType t) -> Type {
      if (isa<PointerType>(t.getElementType()))
        return RankedTensorType::get(t.getShape(), IntegerType::get(ctx, 64));
      return t;
    });
    addConversion([ctx](ViewType t) -> Type {
      Type i64 = IntegerType::get(ctx, 64);
      Type arr = LLVM::LLVMArrayType::get(i64, t.getRank());
      return LLVM::LLVMStructType::getLiteral(ctx, {i64, arr, arr});
    });
    auto materialize = [](OpBuilder &b, Type type, ValueRange inputs,
                          Location l) -> Value {
      return UnrealizedConversionCastOp::create(b, l, type, inputs).getResult(0);
    };
    addSourceMaterialization(materialize);
    addTargetMaterialization(materialize);
  }
};

template <typename Op>
struct HostPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  RankedTensorType convertedTensor(Type t) const {
    return cast<RankedTensorType>(this->getTypeConverter()->convertType(t));
  }
};

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
    Type elem = getElementTypeOrSelf(op.getType());
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type) {
      r.replaceOp(op, guardedLoad(r, l, elem, a.getPtr(), a.getMask(), a.getOther()));
      return success();
    }
    Value ptr = a.getPtr(), mask = a.getMask(), other = a.getOther();
    r.replaceOp(op, generate(r, l, type,
                             [&](OpBuilder &b, Location ll, ValueRange idx) {
                               return guardedLoad(b, ll, elem,
                                                  elementAt(b, ll, ptr, idx),
                                                  elementAt(b, ll, mask, idx),
                                                  elementAt(b, ll, other, idx));
                             }));
    return success();
  }
};

struct StoreLowering : HostPattern<StoreOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    Value ptr = a.getPtr(), value = a.getValue(), mask = a.getMask();
    auto type = dyn_cast<RankedTensorType>(ptr.getType());
    if (!type) {
      guardedStore(r, l, value, ptr, mask);
    } else {
      forEachIndex(r, l, type.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
        guardedStore(b, ll, elementAt(b, ll, value, idx), elementAt(b, ll, ptr, idx),
                     elementAt(b, ll, mask, idx));
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
    auto type = op.getType();
    Type elem = type.getElementType();
    Value view = a.getView(), other = a.getOther();
    SmallVector<Value> offsets(a.getOffsets());
    r.replaceOp(op, generate(r, l, type,
                             [&](OpBuilder &b, Location ll, ValueRange idx) {
                               auto [addr, ok] =
                                   viewAddress(b, ll, view, offsets, idx, elem);
                               return guardedLoad(b, ll, elem, addr, ok, other);
                             }));
    return success();
  }
};

struct ViewStoreLowering : HostPattern<ViewStoreOp> {
  using HostPattern::HostPattern;
  LogicalResult matchAndRewrite(ViewStoreOp op, OpAdaptor a,
                                ConversionPatternRewriter &r) const override {
    Location l = op.getLoc();
    Value view = a.getView(), value = a.getValue();
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Value> offsets(a.getOffsets());
    forEachIndex(r, l, type.getShape(), [&](OpBuilder &b, Location ll, ValueRange idx) {
      auto [addr, ok] =
          viewAddress(b, ll, view, offsets, idx, type.getElementType());
      guardedStore(b, ll, tensor::ExtractOp::create(b, ll, value, idx), addr, ok);
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
    auto one = [&](OpBuilder &b, Location ll, Value p, Value v, Value m) -> Value {
      auto rmw = [&](OpBuilder &bb, Location lll) -> Value {
        return LLVM::CallOp::create(bb, lll, helper, ValueRange{p, v}).getResult();
      };
      if (!m)
        return rmw(b, ll);
      Value zero = arith::ConstantOp::create(b, ll, b.getZeroAttr(elem));
      return scf::IfOp::create(
                 b, ll, m,
                 [&](OpBuilder &bb, Location lll) { scf::YieldOp::create(bb, lll, rmw(bb, lll)); },
                 [&](OpBuilder &bb, Location lll) { scf::YieldOp::create(bb, lll, zero); })
          .getResult(0);
    };
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type) {
      r.replaceOp(op, one(r, l, ptr, val, mask));
      return success();
    }
    r.replaceOp(op, buildByLoops(r, l, type, [&](OpBuilder &b, Location ll, ValueRange idx) {
                  return one(b, ll, elementAt(b, ll, ptr, idx), elementAt(b, ll, val, idx),
                             elementAt(b, ll, mask, idx));
                }));
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
    auto one = [&](OpBuilder &b, Location ll, Value p, Value c, Value v) -> Value {
      return LLVM::CallOp::create(b, ll, helper, ValueRange{p, c, v}).getResult();
    };
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type) {
      r.replaceOp(op, one(r, l, ptr, cmp, val));
      return success();
    }
    r.replaceOp(op, buildByLoops(r, l, type, [&](OpBuilder &b, Location ll, ValueRange idx) {
                  return one(b, ll, elementAt(b, ll, ptr, idx), elementAt(b, ll, cmp, idx),
                             elementAt(b, ll, val, idx));
                }));
    return success();
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
    auto mm = linalg::MatmulOp::create(r, op.getLoc(), TypeRange{op.getType()},
                                       ValueRange{a.getA(), a.getB()},
                                       ValueRange{a.getAcc()});
    r.replaceOp(op, mm.getResults());
    return success();
  }
};

/// Clones the combining region of a reduce/scan: `(acc..., new...)` ->
/// combined values.
SmallVector<Value> combine(OpBuilder &b, Region &region, ValueRange acc,
                           ValueRange fresh) {
  Block &block = region.front();
  IRMapping map;
  unsigned n = acc.size();
  for (unsigned i = 0; i < n; ++i) {
    map.map(block.getArgument(i), acc[i]);
    map.map(block.getArgument(n + i), fresh[i]);
  }
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  SmallVector<Value> out;
  for (Value v : block.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
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
            scf::YieldOp::create(bb, lll, combine(bb, region, acc, fresh));
          });
      return SmallVector<Value>(loop.getResults());
    };
    if (!isa<RankedTensorType>(op.getResult(0).getType())) {
      r.replaceOp(op, reduceAt(r, l, {}));
      return success();
    }
    // One loop nest over the result indices, with one tensor per result.
    auto resType = cast<RankedTensorType>(op.getResult(0).getType());
    SmallVector<Value> lbs, ubs, steps, inits;
    for (int64_t d : resType.getShape()) {
      lbs.push_back(indexConst(r, l, 0));
      ubs.push_back(indexConst(r, l, d));
      steps.push_back(indexConst(r, l, 1));
    }
    for (Value res : op.getResults()) {
      auto t = cast<RankedTensorType>(res.getType());
      inits.push_back(tensor::EmptyOp::create(r, l, t.getShape(), t.getElementType()));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        r, l, lbs, ubs, steps, inits,
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
    // acc = combine(acc, x[k]), writing acc at every k.
    Location l = op.getLoc();
    unsigned axis = op.getAxis();
    SmallVector<Value> srcs(a.getSrcs());
    auto type = cast<RankedTensorType>(srcs[0].getType());
    int64_t n = type.getDimSize(axis);
    bool reverse = op.getReverse();
    SmallVector<int64_t> outer(type.getShape());
    outer[axis] = 1;
    SmallVector<Value> lbs, ubs, steps, inits;
    for (int64_t d : outer) {
      lbs.push_back(indexConst(r, l, 0));
      ubs.push_back(indexConst(r, l, d));
      steps.push_back(indexConst(r, l, 1));
    }
    for (Value res : op.getResults()) {
      auto t = cast<RankedTensorType>(res.getType());
      inits.push_back(tensor::EmptyOp::create(r, l, t.getShape(), t.getElementType()));
    }
    Region &region = op.getCombiner();
    scf::LoopNest nest = scf::buildLoopNest(
        r, l, lbs, ubs, steps, inits,
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
                    combine(bb, region, c.take_front(m), fresh);
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
          Value fn = programField(b, ll, args[0], offsetof(KilnHostProgram, print), ptrTy);
          Value runtime =
              programField(b, ll, args[0], offsetof(KilnHostProgram, runtime), ptrTy);
          SmallVector<Value> callArgs{fn, runtime};
          callArgs.append(args.begin() + 1, args.end());
          LLVM::CallOp::create(b, ll, fnType, callArgs);
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
    std::string where;
    if (auto fl = dyn_cast<FileLineColLoc>(l))
      where = (fl.getFilename().getValue() + ":" + Twine(fl.getLine()) + ":" +
               Twine(fl.getColumn()) + ": ")
                  .str();
    std::string text = where + "assertion failed: " + op.getMessage().str();
    Value program = programArg(op);
    auto module = op->getParentOfType<ModuleOp>();
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    auto fnType = LLVM::LLVMFunctionType::get(voidTy, {ptrTy, ptrTy});
    // kiln_host_trap(program, message) calls program->trap(runtime, message).
    auto helper = getOrCreateHelper(
        module, "kiln_host_trap", fnType,
        [&](OpBuilder &b, Location ll, ValueRange args) {
          Value fn = programField(b, ll, args[0], offsetof(KilnHostProgram, trap), ptrTy);
          Value runtime =
              programField(b, ll, args[0], offsetof(KilnHostProgram, runtime), ptrTy);
          LLVM::CallOp::create(b, ll, fnType, ValueRange{fn, runtime, args[1]});
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
                 AddPtrLowering, LoadLowering, StoreLowering, MakeViewLowering,
                 ViewLoadLowering, ViewStoreLowering, AtomicRMWLowering,
                 AtomicCASLowering, DotLowering, ReduceLowering, ScanLowering,
                 PrintLowering, AssertLowering>(converter, ctx);
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
