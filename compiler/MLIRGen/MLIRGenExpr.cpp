//===- MLIRGenExpr.cpp - Expressions and builtins ------------------------===//
#include "compiler/MLIRGen/MLIRGenImpl.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace kiln;
using namespace mlir;
namespace dsl = kiln::dsl;
using dsl::ScalarKind;

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

Value MLIRGen::intConst(int64_t v, Type type, Location l) {
  return arith::ConstantOp::create(builder, l, builder.getIntegerAttr(type, v));
}

Value MLIRGen::constant(Type type, double fv, int64_t iv, Location l) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(builder, l, builder.getFloatAttr(ft, fv));
  return intConst(iv, type, l);
}

Value MLIRGen::dimValue(Value v, unsigned d, Location l) {
  auto tt = cast<RankedTensorType>(v.getType());
  if (!tt.isDynamicDim(d))
    return intConst(tt.getDimSize(d), builder.getI32Type(), l);
  Value idx = tensor::DimOp::create(builder, l, v, int64_t(d));
  return arith::IndexCastOp::create(builder, l, builder.getI32Type(), idx);
}

SmallVector<Value> MLIRGen::dynSizes(RankedTensorType type,
                                     ArrayRef<Value> refs,
                                     ArrayRef<Value> explicitSizes,
                                     Location l) {
  // A full list of explicit sizes (one per '?') is used as is.
  if (!explicitSizes.empty() &&
      int64_t(explicitSizes.size()) == int64_t(type.getNumDynamicDims()))
    return SmallVector<Value>(explicitSizes.begin(), explicitSizes.end());
  SmallVector<Value> sizes;
  size_t nextExplicit = 0;
  int64_t rank = type.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    if (!type.isDynamicDim(i))
      continue;
    Value found;
    for (Value r : refs) {
      auto rt = r ? dyn_cast<RankedTensorType>(r.getType()) : nullptr;
      if (!rt)
        continue;
      int64_t j = i - (rank - rt.getRank());
      if (j >= 0 && rt.isDynamicDim(j)) {
        found = dimValue(r, j, l);
        break;
      }
    }
    if (!found && nextExplicit < explicitSizes.size())
      found = explicitSizes[nextExplicit++];
    if (!found) {
      emitError(l, "internal error: no size for dynamic dimension ") << i;
      failed = true;
      found = intConst(1, builder.getI32Type(), l);
    }
    sizes.push_back(found);
  }
  return sizes;
}

Value MLIRGen::splatLike(Value c, Value like, Location l) {
  auto tt = dyn_cast<RankedTensorType>(like.getType());
  if (!tt)
    return c;
  auto type = RankedTensorType::get(tt.getShape(), c.getType());
  return SplatOp::create(builder, l, type, c, dynSizes(type, {like}, {}, l));
}

Value MLIRGen::intToF32RoundedToOdd(Value v, bool isSigned, Location l) {
  Type it = getElementTypeOrSelf(v.getType());
  Type i32 = builder.getI32Type(), f32 = builder.getF32Type();
  auto like = [&](Type elem) { return getTypeSameShape(v.getType(), elem); };
  auto c = [&](Type elem, int64_t iv) {
    return splatLike(constant(elem, 0.0, iv, l), v, l);
  };
  // The magnitude, unsigned (INT_MIN's is 2^(w-1)).
  Value a = v, negative;
  if (isSigned) {
    negative = arith::CmpIOp::create(builder, l, arith::CmpIPredicate::slt, v,
                                     c(it, 0));
    a = arith::SelectOp::create(
        builder, l, negative, arith::SubIOp::create(builder, l, c(it, 0), v),
        v);
  }
  // Bits below the f32's last kept bit: from its exponent (the conversion
  // may have rounded up to the next power of two; then one bit fewer is
  // kept, still more than bf16 needs).
  Value rounded = arith::UIToFPOp::create(builder, l, like(f32), a);
  Value exponent = arith::ShRUIOp::create(
      builder, l, arith::BitcastOp::create(builder, l, like(i32), rounded),
      c(i32, 23));
  Value shift = arith::MaxSIOp::create(
      builder, l, arith::SubIOp::create(builder, l, exponent, c(i32, 150)),
      c(i32, 0));
  if (it.getIntOrFloatBitWidth() > 32)
    shift = arith::ExtUIOp::create(builder, l, like(it), shift);
  // Truncate there; an inexact result gets the last kept bit set.
  Value bit = arith::ShLIOp::create(builder, l, c(it, 1), shift);
  Value mask = arith::SubIOp::create(builder, l, bit, c(it, 1));
  Value inexact = arith::CmpIOp::create(
      builder, l, arith::CmpIPredicate::ne,
      arith::AndIOp::create(builder, l, a, mask), c(it, 0));
  Value kept = arith::AndIOp::create(
      builder, l, a, arith::XOrIOp::create(builder, l, mask, c(it, -1)));
  Value odd = arith::SelectOp::create(
      builder, l, inexact, arith::OrIOp::create(builder, l, kept, bit), kept);
  Value f = arith::UIToFPOp::create(builder, l, like(f32), odd); // exact
  if (isSigned)
    f = arith::SelectOp::create(builder, l, negative,
                                arith::NegFOp::create(builder, l, f), f);
  return f;
}

Value MLIRGen::convert(Value v, ScalarKind from, ScalarKind to, Location l) {
  if (from == to)
    return v;
  // fp8 converts directly only from and to f32 and f64 (tile-expand-fp8
  // expands those); everything else goes through f32, exactly (every fp8
  // value is an f32, and an f16/bf16 value too) or rounding once (integers
  // beyond f32's exact range saturate in fp8 anyway).
  auto direct = [](ScalarKind k) {
    return k == ScalarKind::F32 || k == ScalarKind::F64;
  };
  if ((dsl::isFp8(from) && !direct(to)) || (dsl::isFp8(to) && !direct(from)))
    return convert(convert(v, from, ScalarKind::F32, l), ScalarKind::F32, to,
                   l);
  Type dstElem = scalarType(to);
  Type dst = getTypeSameShape(v.getType(), dstElem);
  Type srcElem = getElementTypeOrSelf(v.getType());
  bool fromF = dsl::isFloat(from), toF = dsl::isFloat(to);
  auto c = [&](Type elem, double fv, int64_t iv) {
    return splatLike(constant(elem, fv, iv, l), v, l);
  };
  if (to == ScalarKind::Bool) {
    if (fromF)
      return arith::CmpFOp::create(builder, l, arith::CmpFPredicate::UNE, v,
                                   c(srcElem, 0.0, 0));
    return arith::CmpIOp::create(builder, l, arith::CmpIPredicate::ne, v,
                                 c(srcElem, 0, 0));
  }
  if (fromF && toF) {
    unsigned fw = dsl::bitWidth(from), tw = dsl::bitWidth(to);
    if (fw == tw) { // f16 <-> bf16 goes through f32.
      Value wide = convert(v, from, ScalarKind::F32, l);
      return convert(wide, ScalarKind::F32, to, l);
    }
    if (fw < tw)
      return arith::ExtFOp::create(builder, l, dst, v);
    return arith::TruncFOp::create(builder, l, dst, v);
  }
  if (!fromF && !toF) {
    unsigned fw = srcElem.getIntOrFloatBitWidth(), tw = dstElem.getIntOrFloatBitWidth();
    if (fw == tw)
      return v;
    if (fw > tw)
      return arith::TruncIOp::create(builder, l, dst, v);
    if (dsl::isSigned(from))
      return arith::ExtSIOp::create(builder, l, dst, v);
    return arith::ExtUIOp::create(builder, l, dst, v);
  }
  if (!fromF && toF) {
    // 32- and 64-bit integers to bf16: f32 rounded to odd first, then
    // bf16. A direct conversion is lowered through f32 rounded to nearest
    // on most targets (LLVM on sm_80 and AMD, the host's and emulators'
    // bf16 emulation), which rounds twice: wrong just off bf16's ties
    // (2^24 + 2^16 + 1 became 2^24). Narrower integers are exact in f32.
    unsigned iw = srcElem.getIntOrFloatBitWidth();
    if (to == ScalarKind::BF16 && iw >= 32)
      return arith::TruncFOp::create(
          builder, l, dst, intToF32RoundedToOdd(v, dsl::isSigned(from), l));
    if (dsl::isSigned(from))
      return arith::SIToFPOp::create(builder, l, dst, v);
    return arith::UIToFPOp::create(builder, l, dst, v);
  }
  // Float to integer: truncate toward zero, saturate, NaN -> 0.
  unsigned w = dstElem.getIntOrFloatBitWidth();
  bool sgn = dsl::isSigned(to);
  Value raw = sgn ? Value(arith::FPToSIOp::create(builder, l, dst, v))
                  : Value(arith::FPToUIOp::create(builder, l, dst, v));
  double hi = sgn ? std::ldexp(1.0, int(w) - 1) : std::ldexp(1.0, int(w));
  double lo = sgn ? -std::ldexp(1.0, int(w) - 1) : -1.0;
  int64_t maxV = sgn ? int64_t((uint64_t(1) << (w - 1)) - 1)
                     : (w == 64 ? -1 : int64_t((uint64_t(1) << w) - 1));
  int64_t minV = sgn ? (w == 64 ? std::numeric_limits<int64_t>::min()
                                : -(int64_t(1) << (w - 1)))
                     : 0;
  Value tooBig = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::OGE, v,
                                       c(srcElem, hi, 0));
  Value tooSmall = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::OLE, v,
                                         c(srcElem, lo, 0));
  Value isNan = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::UNO, v, v);
  Value r = arith::SelectOp::create(builder, l, tooBig, c(dstElem, 0, maxV), raw);
  if (sgn)
    r = arith::SelectOp::create(builder, l, tooSmall, c(dstElem, 0, minV), r);
  else // Unsigned: anything at or below -1 saturates to 0.
    r = arith::SelectOp::create(builder, l, tooSmall, c(dstElem, 0, 0), r);
  return arith::SelectOp::create(builder, l, isNan, c(dstElem, 0, 0), r);
}

Value MLIRGen::broadcastTo(Value v, const dsl::Type &t,
                           const dsl::Shape &target, ArrayRef<Value> refs,
                           Location l, ArrayRef<Value> explicitSizes) {
  if (target.empty())
    return v;
  Type elem = getElementTypeOrSelf(v.getType());
  RankedTensorType want = tileType(target, elem);
  if (!t.isTile()) {
    return SplatOp::create(builder, l, want, v,
                           dynSizes(want, refs, explicitSizes, l));
  }
  dsl::Shape shape = t.shape;
  while (shape.size() < target.size()) {
    v = ExpandDimsOp::create(builder, l, v, 0u);
    shape.insert(shape.begin(), dsl::Dim::known(1));
  }
  if (v.getType() == want)
    return v;
  SmallVector<Value> allRefs(refs.begin(), refs.end());
  allRefs.push_back(v);
  return BroadcastOp::create(builder, l, want, v,
                             dynSizes(want, allRefs, explicitSizes, l));
}

Value MLIRGen::coerce(Value v, const dsl::Type &t, const dsl::Type &target,
                      ArrayRef<Value> refs, Location l,
                      ArrayRef<Value> explicitSizes) {
  if (!t.isPointer)
    v = convert(v, t.elem, target.elem, l);
  if (target.isTile())
    v = broadcastTo(v, t, target.shape, refs, l, explicitSizes);
  return v;
}

SmallVector<Value> MLIRGen::emitList(const dsl::Expr &list) {
  SmallVector<Value> values;
  for (auto &el : llvm::cast<dsl::ListExpr>(list).elements)
    values.push_back(emitExpr(*el));
  return values;
}

SmallVector<Value> MLIRGen::emitViewOffsets(const dsl::Expr &list) {
  SmallVector<Value> values;
  for (auto &el : llvm::cast<dsl::ListExpr>(list).elements) {
    Value v = emitExpr(*el);
    ScalarKind k = el->type.elem;
    // View offsets are signed i32 or i64: narrower ints widen to i32, u32
    // to i64 (so that offsets of 2^31 and more keep their value).
    if (dsl::bitWidth(k) < 32)
      v = convert(v, k, ScalarKind::I32, loc(el->getLoc()));
    else if (k == ScalarKind::U32)
      v = convert(v, k, ScalarKind::I64, loc(el->getLoc()));
    values.push_back(v);
  }
  return values;
}

/// The sizes of the dynamic entries of a shape list (one per `?`).
static SmallVector<Value> dynamicEntries(MLIRGen &g, const dsl::Expr &list) {
  SmallVector<Value> sizes;
  for (auto &el : llvm::cast<dsl::ListExpr>(list).elements) {
    auto c = g.sema.getConstInt(el.get());
    if (!c || !c->value)
      sizes.push_back(g.emitExpr(*el));
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value MLIRGen::emitExpr(const dsl::Expr &e) {
  if (failed)
    return Value();
  Location l = loc(e.getLoc());
  switch (e.getKind()) {
  case dsl::ExprKind::IntLit: {
    uint64_t v = llvm::cast<dsl::IntLitExpr>(e).value;
    return constant(scalarType(e.type.elem), double(v), int64_t(v), l);
  }
  case dsl::ExprKind::FloatLit:
    return constant(scalarType(e.type.elem),
                    llvm::cast<dsl::FloatLitExpr>(e).value, 0, l);
  case dsl::ExprKind::BoolLit:
    return intConst(llvm::cast<dsl::BoolLitExpr>(e).value ? 1 : 0,
                    builder.getI1Type(), l);
  case dsl::ExprKind::Ident: {
    Var *var = lookup(llvm::cast<dsl::IdentExpr>(e).name);
    if (!var) {
      emitError(l, "internal error: unbound name");
      failed = true;
      return Value();
    }
    return var->value;
  }
  case dsl::ExprKind::Unary:
    return emitUnary(llvm::cast<dsl::UnaryExpr>(e));
  case dsl::ExprKind::Binary:
    return emitBinary(llvm::cast<dsl::BinaryExpr>(e));
  case dsl::ExprKind::Index: {
    auto &ix = llvm::cast<dsl::IndexExpr>(e);
    Value v = emitExpr(*ix.base);
    if (!ix.base->type.isTile()) {
      auto one = RankedTensorType::get({1}, v.getType());
      v = SplatOp::create(builder, l, one, v, ValueRange{});
      unsigned pos = 0;
      bool first = true;
      for (auto &item : ix.items) {
        if (first) {
          first = false;
          ++pos;
          continue;
        }
        v = ExpandDimsOp::create(builder, l, v, pos++);
        (void)item;
      }
      return v;
    }
    unsigned pos = 0;
    for (auto &item : ix.items) {
      if (item.kind == dsl::IndexItem::Kind::NewAxis)
        v = ExpandDimsOp::create(builder, l, v, pos);
      ++pos;
    }
    return v;
  }
  case dsl::ExprKind::Call:
    return emitCall(llvm::cast<dsl::CallExpr>(e));
  default:
    emitError(l, "internal error: expression has no value");
    failed = true;
    return Value();
  }
}

Value MLIRGen::emitUnary(const dsl::UnaryExpr &e) {
  Location l = loc(e.getLoc());
  Value v = emitExpr(*e.operand);
  if (!v)
    return v;
  Type elem = getElementTypeOrSelf(v.getType());
  switch (e.op) {
  case dsl::UnaryOp::Neg:
    if (isa<FloatType>(elem))
      return arith::NegFOp::create(builder, l, v);
    return arith::SubIOp::create(builder, l, splatLike(intConst(0, elem, l), v, l), v);
  case dsl::UnaryOp::Not:
    return arith::XOrIOp::create(builder, l, v, splatLike(intConst(1, elem, l), v, l));
  case dsl::UnaryOp::BitNot:
    return arith::XOrIOp::create(builder, l, v, splatLike(intConst(-1, elem, l), v, l));
  }
  return Value();
}

Value MLIRGen::emitBinary(const dsl::BinaryExpr &e) {
  Value l = emitExpr(*e.lhs), r = emitExpr(*e.rhs);
  if (!l || !r)
    return Value();
  return emitBinaryOp(e.op, l, e.lhs->type, r, e.rhs->type, e.type,
                      loc(e.opLoc.isValid() ? e.opLoc : e.getLoc()));
}

static bool isComparison(dsl::BinaryOp op) {
  using dsl::BinaryOp;
  return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt ||
         op == BinaryOp::Ge || op == BinaryOp::Eq || op == BinaryOp::Ne;
}

Value MLIRGen::emitBinaryOp(dsl::BinaryOp op, Value l, const dsl::Type &lt,
                            Value r, const dsl::Type &rt,
                            const dsl::Type &result, Location loc) {
  using dsl::BinaryOp;
  dsl::Shape shape = result.isTile() ? result.shape : dsl::Shape{};
  SmallVector<Value, 2> refs{l, r};
  if (result.isPointer) {
    bool ptrLeft = lt.isPointer;
    Value ptr = ptrLeft ? l : r, off = ptrLeft ? r : l;
    const dsl::Type &pt = ptrLeft ? lt : rt, &ot = ptrLeft ? rt : lt;
    // Unsigned offsets narrower than 64 bits are zero-extended so that the
    // backends, which treat offsets as signed, see their true value.
    dsl::Type offType = ot;
    if (dsl::isInteger(ot.elem) && !dsl::isSigned(ot.elem) &&
        dsl::bitWidth(ot.elem) < 64) {
      off = convert(off, ot.elem, ScalarKind::I64, loc);
      offType.elem = ScalarKind::I64;
    }
    ptr = broadcastTo(ptr, pt, shape, refs, loc);
    off = broadcastTo(off, offType, shape, refs, loc);
    if (op == BinaryOp::Sub)
      off = arith::SubIOp::create(
          builder, loc,
          splatLike(intConst(0, getElementTypeOrSelf(off.getType()), loc), off, loc),
          off);
    return AddPtrOp::create(builder, loc, ptr, off);
  }
  ScalarKind opElem;
  if (op == BinaryOp::LogicAnd || op == BinaryOp::LogicOr)
    opElem = ScalarKind::Bool;
  else if (isComparison(op))
    opElem = dsl::promoteScalarKinds(lt.elem, rt.elem);
  else
    opElem = result.elem;
  dsl::Type operandType = result;
  operandType.elem = opElem;
  operandType.isPointer = false;
  l = coerce(l, lt, operandType, refs, loc);
  r = coerce(r, rt, operandType, refs, loc);
  bool f = dsl::isFloat(opElem);
  bool s = dsl::isSigned(opElem);
  switch (op) {
  case BinaryOp::Add:
    return f ? Value(arith::AddFOp::create(builder, loc, l, r))
             : Value(arith::AddIOp::create(builder, loc, l, r));
  case BinaryOp::Sub:
    return f ? Value(arith::SubFOp::create(builder, loc, l, r))
             : Value(arith::SubIOp::create(builder, loc, l, r));
  case BinaryOp::Mul:
    return f ? Value(arith::MulFOp::create(builder, loc, l, r))
             : Value(arith::MulIOp::create(builder, loc, l, r));
  case BinaryOp::Div:
    if (f)
      return arith::DivFOp::create(builder, loc, l, r);
    return s ? Value(arith::DivSIOp::create(builder, loc, l, r))
             : Value(arith::DivUIOp::create(builder, loc, l, r));
  case BinaryOp::Rem:
    if (f)
      return arith::RemFOp::create(builder, loc, l, r);
    return s ? Value(arith::RemSIOp::create(builder, loc, l, r))
             : Value(arith::RemUIOp::create(builder, loc, l, r));
  case BinaryOp::LogicAnd:
  case BinaryOp::BitAnd:
    return arith::AndIOp::create(builder, loc, l, r);
  case BinaryOp::LogicOr:
  case BinaryOp::BitOr:
    return arith::OrIOp::create(builder, loc, l, r);
  case BinaryOp::BitXor:
    return arith::XOrIOp::create(builder, loc, l, r);
  case BinaryOp::Shl:
    return arith::ShLIOp::create(builder, loc, l, r);
  case BinaryOp::Shr:
    return s ? Value(arith::ShRSIOp::create(builder, loc, l, r))
             : Value(arith::ShRUIOp::create(builder, loc, l, r));
  default:
    break;
  }
  // Comparisons: ordered for floats except `!=` (true for NaN, as in C).
  if (f) {
    arith::CmpFPredicate p;
    switch (op) {
    case BinaryOp::Lt: p = arith::CmpFPredicate::OLT; break;
    case BinaryOp::Le: p = arith::CmpFPredicate::OLE; break;
    case BinaryOp::Gt: p = arith::CmpFPredicate::OGT; break;
    case BinaryOp::Ge: p = arith::CmpFPredicate::OGE; break;
    case BinaryOp::Eq: p = arith::CmpFPredicate::OEQ; break;
    default: p = arith::CmpFPredicate::UNE; break;
    }
    return arith::CmpFOp::create(builder, loc, p, l, r);
  }
  arith::CmpIPredicate p;
  switch (op) {
  case BinaryOp::Lt: p = s ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult; break;
  case BinaryOp::Le: p = s ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule; break;
  case BinaryOp::Gt: p = s ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt; break;
  case BinaryOp::Ge: p = s ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge; break;
  case BinaryOp::Eq: p = arith::CmpIPredicate::eq; break;
  default: p = arith::CmpIPredicate::ne; break;
  }
  return arith::CmpIOp::create(builder, loc, p, l, r);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Value MLIRGen::emitCall(const dsl::CallExpr &e) {
  if (const dsl::HelperInstance *inst = sema.getInstanceFor(&e))
    return emitHelperCall(e, *inst);
  return emitBuiltin(e);
}

Value MLIRGen::emitHelperCall(const dsl::CallExpr &e,
                              const dsl::HelperInstance &inst) {
  Location l = loc(e.getLoc());
  SmallVector<Value> args;
  for (auto &a : e.args) {
    Value v = emitExpr(*a);
    if (!v)
      return v;
    args.push_back(v);
  }
  for (size_t i = 0; i < inst.constBindings.size(); ++i) {
    const dsl::Dim &d = inst.constBindings[i].second;
    auto [argIdx, dimIdx] = inst.constSources[i];
    dsl::ScalarKind k = helperConstParamKind(inst, i);
    args.push_back(d.isKnown() ? intConst(d.value, scalarType(k), l)
                               : convert(dimValue(args[argIdx], dimIdx, l),
                                         dsl::ScalarKind::I32, k, l));
  }
  SmallVector<Type> results;
  if (inst.resultType.kind != dsl::Type::Kind::Void)
    results.push_back(toMLIR(inst.resultType));
  auto call = func::CallOp::create(builder, l, inst.mangledName, results, args);
  return results.empty() ? Value() : call.getResult(0);
}

/// The math op for a float builtin, computed in f32 for f16/bf16.
static Value emitFloatMath(MLIRGen &g, StringRef name, Value v, Location l) {
  OpBuilder &b = g.builder;
  if (name == "exp") return math::ExpOp::create(b, l, v);
  if (name == "exp2") return math::Exp2Op::create(b, l, v);
  if (name == "log") return math::LogOp::create(b, l, v);
  if (name == "log2") return math::Log2Op::create(b, l, v);
  if (name == "sqrt") return math::SqrtOp::create(b, l, v);
  if (name == "rsqrt") return math::RsqrtOp::create(b, l, v);
  if (name == "sin") return math::SinOp::create(b, l, v);
  if (name == "cos") return math::CosOp::create(b, l, v);
  if (name == "tanh") return math::TanhOp::create(b, l, v);
  if (name == "erf") return math::ErfOp::create(b, l, v);
  if (name == "floor") return math::FloorOp::create(b, l, v);
  if (name == "ceil") return math::CeilOp::create(b, l, v);
  if (name == "abs") return math::AbsFOp::create(b, l, v);
  assert(name == "sigmoid" && "unhandled float builtin");
  // sigmoid(x) = 1 / (1 + exp(-x))
  Type elem = getElementTypeOrSelf(v.getType());
  Value one = g.splatLike(g.constant(elem, 1.0, 0, l), v, l);
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

Value MLIRGen::emitBuiltin(const dsl::CallExpr &e) {
  Location l = loc(e.getLoc());
  StringRef name = e.callee;
  auto &a = e.args;
  auto named = [&](StringRef n) -> const dsl::Expr * {
    for (auto &na : e.namedArgs)
      if (na.name == n)
        return na.value.get();
    return nullptr;
  };
  const dsl::Type &rt = e.type;

  if (name == "program_id" || name == "num_programs") {
    unsigned axis = unsigned(*sema.getConstInt(a[0].get())->value);
    if (name == "program_id")
      return ProgramIdOp::create(builder, l, axis);
    return NumProgramsOp::create(builder, l, axis);
  }
  if (name == "arange") {
    // Bounds may be const params of any integer type; arange is i32.
    Value lo = convert(emitExpr(*a[0]), a[0]->type.elem, ScalarKind::I32, l);
    Value hi = convert(emitExpr(*a[1]), a[1]->type.elem, ScalarKind::I32, l);
    return ArangeOp::create(builder, l, toMLIR(rt), lo, hi);
  }
  if (name == "zeros" || name == "full") {
    ScalarKind k = e.typeArgs[0].elem;
    Value c = name == "zeros"
                  ? constant(scalarType(k), 0.0, 0, l)
                  : convert(emitExpr(*a[1]), a[1]->type.elem, k, l);
    auto tt = cast<RankedTensorType>(toMLIR(rt));
    return SplatOp::create(builder, l, tt, c, dynamicEntries(*this, *a[0]));
  }
  if (name == "cast") {
    Value v = emitExpr(*a[0]);
    return convert(v, a[0]->type.elem, rt.elem, l);
  }
  if (name == "broadcast") {
    Value v = emitExpr(*a[0]);
    auto tt = cast<RankedTensorType>(toMLIR(rt));
    SmallVector<Value> explicitSizes = dynamicEntries(*this, *a[1]);
    if (!a[0]->type.isTile())
      return SplatOp::create(builder, l, tt, v, explicitSizes);
    dsl::Shape shape = a[0]->type.shape;
    while (shape.size() < rt.shape.size()) {
      v = ExpandDimsOp::create(builder, l, v, 0u);
      shape.insert(shape.begin(), dsl::Dim::known(1));
    }
    if (v.getType() == tt)
      return v;
    return BroadcastOp::create(builder, l, tt, v, explicitSizes);
  }
  if (name == "reshape") {
    Value v = emitExpr(*a[0]);
    return ReshapeOp::create(builder, l, toMLIR(rt), v,
                             dynamicEntries(*this, *a[1]));
  }
  if (name == "trans" || name == "permute") {
    Value v = emitExpr(*a[0]);
    SmallVector<int32_t> order;
    if (name == "trans") {
      order = {1, 0};
    } else {
      for (auto &el : llvm::cast<dsl::ListExpr>(*a[1]).elements)
        order.push_back(int32_t(*sema.getConstInt(el.get())->value));
    }
    return TransOp::create(builder, l, v, order);
  }
  if (name == "view") {
    Value base = emitExpr(*a[0]);
    auto widen = [&](const dsl::Expr &list) {
      SmallVector<Value> vals;
      for (auto &el : llvm::cast<dsl::ListExpr>(list).elements)
        vals.push_back(convert(emitExpr(*el), el->type.elem,
                               dsl::isSigned(el->type.elem) ? ScalarKind::I64
                                                            : ScalarKind::U64,
                               l));
      return vals;
    };
    SmallVector<Value> sizes = widen(*a[1]), strides = widen(*a[2]);
    return MakeViewOp::create(builder, l, base, sizes, strides);
  }
  if (name == "load") {
    Value p = emitExpr(*a[0]);
    const dsl::Expr *otherE = named("other");
    if (a[0]->type.isView()) {
      SmallVector<Value> offs = emitViewOffsets(*a[1]);
      Value other = otherE ? convert(emitExpr(*otherE), otherE->type.elem,
                                     rt.elem, l)
                           : Value();
      return ViewLoadOp::create(builder, l, toMLIR(rt), p, offs,
                                dynamicEntries(*this, *a[2]), other);
    }
    const dsl::Expr *maskE = named("mask");
    dsl::Shape shape = rt.isTile() ? rt.shape : dsl::Shape{};
    Value mask, other;
    if (maskE)
      mask = broadcastTo(emitExpr(*maskE), maskE->type, shape, {p}, l);
    if (otherE) {
      dsl::Type target = rt;
      other = coerce(emitExpr(*otherE), otherE->type, target, {p}, l);
    }
    return LoadOp::create(builder, l, p, mask, other);
  }
  if (name == "store" && a[0]->type.isView()) {
    Value view = emitExpr(*a[0]);
    SmallVector<Value> offs = emitViewOffsets(*a[1]);
    Value v = emitExpr(*a[2]);
    ViewStoreOp::create(builder, l, view, offs, v);
    return Value();
  }
  if (name == "store" || name.starts_with("atomic_")) {
    Value p = emitExpr(*a[0]);
    const dsl::Type &pt = a[0]->type;
    dsl::Shape shape = pt.isTile() ? pt.shape : dsl::Shape{};
    dsl::Type valueType = pt;
    valueType.isPointer = false;
    const dsl::Expr *maskE = named("mask");
    Value mask;
    if (maskE)
      mask = broadcastTo(emitExpr(*maskE), maskE->type, shape, {p}, l);
    if (name == "atomic_cas") {
      Value cmp = coerce(emitExpr(*a[1]), a[1]->type, valueType, {p}, l);
      Value val = coerce(emitExpr(*a[2]), a[2]->type, valueType, {p}, l);
      return AtomicCASOp::create(builder, l, getTypeSameShape(p.getType(),
                                 scalarType(pt.elem)), p, cmp, val);
    }
    Value v = coerce(emitExpr(*a[1]), a[1]->type, valueType, {p}, l);
    if (name == "store") {
      StoreOp::create(builder, l, p, v, mask);
      return Value();
    }
    bool uns = dsl::isInteger(pt.elem) && !dsl::isSigned(pt.elem);
    AtomicRMWKind kind = name == "atomic_add" ? AtomicRMWKind::add
                         : name == "atomic_max"
                             ? (uns ? AtomicRMWKind::umax : AtomicRMWKind::max)
                             : (uns ? AtomicRMWKind::umin : AtomicRMWKind::min);
    return AtomicRMWOp::create(builder, l, v.getType(), kind, p, v, mask);
  }
  if (name == "where") {
    SmallVector<Value, 3> vals;
    for (auto &arg : a)
      vals.push_back(emitExpr(*arg));
    dsl::Shape shape = rt.isTile() ? rt.shape : dsl::Shape{};
    dsl::Type condType = rt;
    condType.elem = ScalarKind::Bool;
    Value c = coerce(vals[0], a[0]->type, condType, vals, l);
    Value x = coerce(vals[1], a[1]->type, rt, vals, l);
    Value y = coerce(vals[2], a[2]->type, rt, vals, l);
    return arith::SelectOp::create(builder, l, c, x, y);
  }
  if (name == "fma" || name == "maximum" || name == "minimum" ||
      ((name == "min" || name == "max") && !dsl::isMinMaxReduction(e))) {
    SmallVector<Value, 3> vals;
    for (auto &arg : a)
      vals.push_back(emitExpr(*arg));
    for (size_t i = 0; i < vals.size(); ++i)
      vals[i] = coerce(vals[i], a[i]->type, rt, vals, l);
    if (name == "fma") {
      // f16/bf16: compute in f32 and round once, like the math functions.
      bool narrow = rt.elem == ScalarKind::F16 || rt.elem == ScalarKind::BF16;
      if (narrow)
        for (Value &v : vals)
          v = convert(v, rt.elem, ScalarKind::F32, l);
      Value r = math::FmaOp::create(builder, l, vals[0], vals[1], vals[2]);
      return narrow ? convert(r, ScalarKind::F32, rt.elem, l) : r;
    }
    bool isMax = name == "maximum" || name == "max";
    if (dsl::isFloat(rt.elem))
      return isMax ? Value(arith::MaximumFOp::create(builder, l, vals[0], vals[1]))
                   : Value(arith::MinimumFOp::create(builder, l, vals[0], vals[1]));
    bool s = dsl::isSigned(rt.elem);
    if (isMax)
      return s ? Value(arith::MaxSIOp::create(builder, l, vals[0], vals[1]))
               : Value(arith::MaxUIOp::create(builder, l, vals[0], vals[1]));
    return s ? Value(arith::MinSIOp::create(builder, l, vals[0], vals[1]))
             : Value(arith::MinUIOp::create(builder, l, vals[0], vals[1]));
  }
  if (name == "cdiv") {
    Value x = convert(emitExpr(*a[0]), a[0]->type.elem, rt.elem, l);
    Value y = convert(emitExpr(*a[1]), a[1]->type.elem, rt.elem, l);
    if (dsl::isSigned(rt.elem))
      return arith::CeilDivSIOp::create(builder, l, x, y);
    return arith::CeilDivUIOp::create(builder, l, x, y);
  }
  if (llvm::is_contained({"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                          "cos", "tanh", "erf", "sigmoid", "floor", "ceil",
                          "abs"},
                         name)) {
    Value v = emitExpr(*a[0]);
    if (name == "abs" && !dsl::isFloat(rt.elem))
      return dsl::isSigned(rt.elem) ? Value(math::AbsIOp::create(builder, l, v))
                                    : v; // |u| = u for unsigned.
    // f16/bf16: compute in f32 and round once.
    bool narrow = rt.elem == ScalarKind::F16 || rt.elem == ScalarKind::BF16;
    if (narrow)
      v = convert(v, rt.elem, ScalarKind::F32, l);
    Value r = emitFloatMath(*this, name, v, l);
    return narrow ? convert(r, ScalarKind::F32, rt.elem, l) : r;
  }
  if (name == "cumsum" || name == "cumprod")
    return emitScan(e, name);
  if (llvm::is_contained({"sum", "prod", "max", "min", "argmax", "argmin",
                          "xor_sum"},
                         name))
    return emitReduction(e, name);
  if (name == "dot") {
    Value x = emitExpr(*a[0]), y = emitExpr(*a[1]);
    Value acc;
    if (a.size() == 3) {
      acc = emitExpr(*a[2]);
    } else {
      auto tt = cast<RankedTensorType>(toMLIR(rt));
      SmallVector<Value> sizes;
      if (tt.isDynamicDim(0))
        sizes.push_back(dimValue(x, 0, l));
      if (tt.isDynamicDim(1))
        sizes.push_back(dimValue(y, 1, l));
      acc = SplatOp::create(builder, l, tt,
                            constant(tt.getElementType(), 0.0, 0, l), sizes);
    }
    DotPrecision prec = DotPrecision::ieee;
    if (auto *p = named("precision"))
      if (llvm::cast<dsl::StringLitExpr>(p)->value == "tf32")
        prec = DotPrecision::tf32;
    return DotOp::create(builder, l, acc.getType(), x, y, acc, prec);
  }
  if (name == "print") {
    SmallVector<Value> vals;
    for (size_t i = 1; i < a.size(); ++i)
      vals.push_back(emitExpr(*a[i]));
    PrintOp::create(builder, l, llvm::cast<dsl::StringLitExpr>(*a[0]).value, vals);
    return Value();
  }
  if (name == "assert") {
    Value c = emitExpr(*a[0]);
    // No message: "" (the backends say "assertion failed" either way).
    std::string msg =
        a.size() > 1 ? llvm::cast<dsl::StringLitExpr>(*a[1]).value : "";
    AssertOp::create(builder, l, c, msg);
    return Value();
  }
  emitError(l, "internal error: builtin '") << name << "' has no lowering";
  failed = true;
  return Value();
}
