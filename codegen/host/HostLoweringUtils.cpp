//===- HostLoweringUtils.cpp - IR-building helpers of the host lowering ---===//
#include "codegen/host/HostLowering.h"
#include "compiler/Transforms/Passes.h"

#include "runtime/include/kiln/host_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstddef>

using namespace mlir;
using namespace kiln;

namespace kiln::host {


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

Value guardedAccess(OpBuilder &b, Location l, Value cond, Value addr,
                    int64_t bytes, bool isStore, const std::optional<AccessCheck> &check,
                    Value otherwise,
                    function_ref<Value(OpBuilder &, Location)> access) {
  auto branch = [&](OpBuilder &bb, Location ll, Value c,
                    function_ref<Value(OpBuilder &, Location)> then) -> Value {
    if (!otherwise) {
      scf::IfOp::create(bb, ll, c, [&](OpBuilder &t, Location tl) {
        then(t, tl);
        scf::YieldOp::create(t, tl);
      });
      return Value();
    }
    return scf::IfOp::create(
               bb, ll, c,
               [&](OpBuilder &t, Location tl) { scf::YieldOp::create(t, tl, then(t, tl)); },
               [&](OpBuilder &t, Location tl) { scf::YieldOp::create(t, tl, otherwise); })
        .getResult(0);
  };
  // The check runs only for lanes the mask lets through: masked-off lanes
  // may hold any address and must not trap.
  auto checked = [&](OpBuilder &bb, Location ll) -> Value {
    if (!check)
      return access(bb, ll);
    return branch(bb, ll, check->emit(bb, ll, addr, bytes, isStore), access);
  };
  if (!cond)
    return checked(b, l);
  return branch(b, l, cond, checked);
}

Value guardedLoad(OpBuilder &b, Location l, Type elem, Value addr, Value cond,
                  Value other, const std::optional<AccessCheck> &check) {
  if (!other && (cond || check))
    other = arith::ConstantOp::create(b, l, b.getZeroAttr(elem));
  return guardedAccess(b, l, cond, addr, byteSize(elem), /*isStore=*/false, check,
                 other, [&](OpBuilder &bb, Location ll) -> Value {
                   // fp8 has no LLVM type: memory holds it as i8.
                   Type carrier = kiln::getFp8Carrier(elem);
                   Value v = LLVM::LoadOp::create(
                       bb, ll, carrier ? carrier : elem,
                       addrToPtr(bb, ll, addr), byteSize(elem));
                   if (carrier)
                     v = arith::BitcastOp::create(bb, ll, elem, v);
                   return v;
                 });
}

void guardedStore(OpBuilder &b, Location l, Value value, Value addr, Value cond,
                  const std::optional<AccessCheck> &check) {
  guardedAccess(b, l, cond, addr, byteSize(value.getType()), /*isStore=*/true, check,
          Value(), [&](OpBuilder &bb, Location ll) -> Value {
            Value stored = value;
            if (Type carrier = kiln::getFp8Carrier(value.getType()))
              stored = arith::BitcastOp::create(bb, ll, carrier, value);
            LLVM::StoreOp::create(bb, ll, stored, addrToPtr(bb, ll, addr),
                                  byteSize(value.getType()));
            return Value();
          });
}

Value callProgramCallback(OpBuilder &b, Location l, Value program,
                          int64_t offset, LLVM::LLVMFunctionType type,
                          ValueRange args) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  Value fn = programField(b, l, program, offset, ptrTy);
  Value runtime =
      programField(b, l, program, offsetof(KilnHostProgram, runtime), ptrTy);
  SmallVector<Value> callArgs{fn, runtime};
  callArgs.append(args.begin(), args.end());
  auto call = LLVM::CallOp::create(b, l, type, callArgs);
  return call.getNumResults() ? call.getResult() : Value();
}

std::optional<AccessCheck> accessCheckFor(Operation *op) {
  for (auto m = op->getParentOfType<ModuleOp>(); m;
       m = m->getParentOfType<ModuleOp>())
    if (m->hasAttr("kiln.check_bounds"))
      return AccessCheck{programArg(op), locationText(op->getLoc()),
                         op->getParentOfType<ModuleOp>()};
  return std::nullopt;
}

Value AccessCheck::emit(OpBuilder &b, Location l, Value addr, int64_t bytes,
                        bool isStore) const {
  auto *ctx = b.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  // kiln_host_check(program, addr, bytes, is_store, where) -> i1 calls
  // program->check(program->runtime, ...) != 0.
  auto cbType = LLVM::LLVMFunctionType::get(
      b.getI32Type(), {ptrTy, ptrTy, b.getI64Type(), b.getI32Type(), ptrTy});
  auto helperType = LLVM::LLVMFunctionType::get(
      b.getI1Type(), {ptrTy, b.getI64Type(), b.getI64Type(), b.getI32Type(), ptrTy});
  auto helper = getOrCreateHelper(
      module, "kiln_host_check", helperType,
      [&](OpBuilder &hb, Location hl, ValueRange args) {
        Value res = callProgramCallback(
            hb, hl, args[0], offsetof(KilnHostProgram, check), cbType,
            {addrToPtr(hb, hl, args[1]), args[2], args[3], args[4]});
        Value zero = LLVM::ConstantOp::create(hb, hl, hb.getI32Type(), 0);
        LLVM::ReturnOp::create(
            hb, hl, LLVM::ICmpOp::create(hb, hl, LLVM::ICmpPredicate::ne, res, zero));
      });
  Value whereText = stringConstant(b, l, module, where);
  return LLVM::CallOp::create(
             b, l, helper,
             ValueRange{program, addr, i64Const(b, l, bytes),
                        arith::ConstantOp::create(b, l, b.getI32IntegerAttr(isStore)),
                        whereText})
      .getResult();
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
scf::LoopNest loopNestOver(
    OpBuilder &b, Location l, ArrayRef<int64_t> shape, ValueRange inits,
    function_ref<scf::ValueVector(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : shape) {
    lbs.push_back(indexConst(b, l, 0));
    ubs.push_back(indexConst(b, l, d));
    steps.push_back(indexConst(b, l, 1));
  }
  return scf::buildLoopNest(b, l, lbs, ubs, steps, inits, body);
}

void forEachIndex(OpBuilder &b, Location l, ArrayRef<int64_t> shape,
                  function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  loopNestOver(b, l, shape, {},
               [&](OpBuilder &bb, Location ll, ValueRange ivs, ValueRange) {
                 body(bb, ll, ivs);
                 return scf::ValueVector{};
               });
}

/// Like forEachIndex, producing a tensor of `type`: `body` returns the
/// element for each index (loops with a tensor iter_arg, tensor.insert).
Value buildByLoops(OpBuilder &b, Location l, RankedTensorType type,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = tensor::EmptyOp::create(b, l, type.getShape(), type.getElementType());
  scf::LoopNest nest = loopNestOver(
      b, l, type.getShape(), ValueRange{init},
      [&](OpBuilder &bb, Location ll, ValueRange ivs,
          ValueRange iters) -> scf::ValueVector {
        Value v = body(bb, ll, ivs);
        return {tensor::InsertOp::create(bb, ll, v, iters[0], ivs)};
      });
  return nest.results[0];
}

Value mapElements(OpBuilder &b, Location l, Type resultType, ValueRange operands,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type)
    return body(b, l, operands);
  return buildByLoops(b, l, type, [&](OpBuilder &bb, Location ll, ValueRange idx) {
    SmallVector<Value> elems;
    for (Value v : operands)
      elems.push_back(elementAt(bb, ll, v, idx));
    return body(bb, ll, elems);
  });
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
  if (isa<Float8E4M3FNType>(t)) return KILN_F8E4M3;
  if (isa<Float8E5M2Type>(t)) return KILN_F8E5M2;
  return KILN_F64;
}

/// The `KilnHostProgram *` of the function enclosing `op` (its last
/// argument, added by the pass).
Value programArg(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  return fn.getArgument(fn.getNumArguments() - 1);
}

} // namespace kiln::host
