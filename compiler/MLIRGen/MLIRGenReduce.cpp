//===- MLIRGenReduce.cpp - Reductions and scans --------------------------===//
#include "compiler/MLIRGen/MLIRGenImpl.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace kiln;
using namespace mlir;
namespace dsl = kiln::dsl;
using dsl::ScalarKind;

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

/// Axis and keepdims of a reduction call (Sema validated them).
static std::pair<unsigned, bool> reductionAxis(MLIRGen &g,
                                               const dsl::CallExpr &e) {
  const dsl::Expr *axisE = e.args.size() > 1 ? e.args[1].get() : nullptr;
  bool keep = false;
  for (auto &na : e.namedArgs) {
    if (na.name == "axis")
      axisE = na.value.get();
    if (na.name == "keepdims")
      keep = g.sema.getConstInt(na.value.get())->value.value_or(0) != 0;
  }
  int64_t rank = e.args[0]->type.shape.size();
  int64_t axis = axisE ? *g.sema.getConstInt(axisE)->value : 0;
  if (axis < 0)
    axis += rank;
  return {unsigned(axis), keep};
}

/// Builds the combining region `(acc..., new...) -> combined...`.
template <typename ReturnOp, typename Fn>
static void buildCombiner(OpBuilder &b, Region &region, ArrayRef<Type> elems,
                          Location l, Fn &&body) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> argTypes(elems.begin(), elems.end());
  argTypes.append(elems.begin(), elems.end());
  SmallVector<Location> locs(argTypes.size(), l);
  Block *blk = b.createBlock(&region, {}, argTypes, locs);
  SmallVector<Value> results = body(blk->getArguments());
  ReturnOp::create(b, l, results);
}

static Value combineOp(OpBuilder &b, StringRef name, Value x, Value y,
                       bool isSigned, Location l) {
  bool f = isa<FloatType>(x.getType());
  if (name == "sum" || name == "cumsum")
    return f ? Value(arith::AddFOp::create(b, l, x, y))
             : Value(arith::AddIOp::create(b, l, x, y));
  if (name == "prod" || name == "cumprod")
    return f ? Value(arith::MulFOp::create(b, l, x, y))
             : Value(arith::MulIOp::create(b, l, x, y));
  if (name == "xor_sum")
    return arith::XOrIOp::create(b, l, x, y);
  if (name == "max")
    return f ? Value(arith::MaximumFOp::create(b, l, x, y))
             : isSigned ? Value(arith::MaxSIOp::create(b, l, x, y))
                        : Value(arith::MaxUIOp::create(b, l, x, y));
  assert(name == "min");
  return f ? Value(arith::MinimumFOp::create(b, l, x, y))
           : isSigned ? Value(arith::MinSIOp::create(b, l, x, y))
                      : Value(arith::MinUIOp::create(b, l, x, y));
}

Value MLIRGen::emitReduction(const dsl::CallExpr &e, StringRef name) {
  Location l = loc(e.getLoc());
  const dsl::Type &st = e.args[0]->type;
  Value src = emitExpr(*e.args[0]);
  if (!src)
    return src;
  auto [axis, keep] = reductionAxis(*this, e);
  bool isArg = name == "argmax" || name == "argmin";
  ScalarKind accKind = isArg ? st.elem : e.type.elem;
  if (isArg && (st.elem == ScalarKind::F16 || st.elem == ScalarKind::BF16))
    accKind = ScalarKind::F32;
  src = convert(src, st.elem, accKind, l);
  auto srcType = cast<RankedTensorType>(src.getType());
  Type elem = srcType.getElementType();
  // bool (argmax/argmin only: other reductions of bool accumulate in i32)
  // compares unsigned, so that true > false.
  bool sgn = dsl::isSigned(accKind);

  SmallVector<int64_t> outShape(srcType.getShape());
  outShape.erase(outShape.begin() + axis);
  auto resultOf = [&](Type el) -> Type {
    return outShape.empty() ? el : Type(RankedTensorType::get(outShape, el));
  };
  SmallVector<Value> srcs{src};
  SmallVector<Type> elems{elem}, results{resultOf(elem)};
  if (isArg) {
    // Index tile along `axis`, broadcast to the source shape.
    Type i32 = builder.getI32Type();
    auto idxType = RankedTensorType::get({srcType.getDimSize(axis)}, i32);
    Value idx = ArangeOp::create(builder, l, idxType, intConst(0, i32, l),
                                 dimValue(src, axis, l));
    for (unsigned d = 0; d < srcType.getRank(); ++d)
      if (d != axis)
        idx = ExpandDimsOp::create(builder, l, idx, d);
    auto full = RankedTensorType::get(srcType.getShape(), i32);
    if (idx.getType() != full)
      idx = BroadcastOp::create(builder, l, full, idx,
                                dynSizes(full, {src}, {}, l));
    srcs.push_back(idx);
    elems.push_back(i32);
    results.push_back(resultOf(i32));
  }
  auto op = ReduceOp::create(builder, l, results, srcs, axis);
  bool isMaxLike = name == "argmax";
  buildCombiner<ReduceReturnOp>(
      builder, op.getRegion(), elems, l, [&](ValueRange args) {
        SmallVector<Value> out;
        if (!isArg) {
          out.push_back(combineOp(builder, name, args[0], args[1], sgn, l));
          return out;
        }
        // (accValue, accIndex, newValue, newIndex): take the new element if
        // it is strictly better, or equal with a smaller index.
        Value av = args[0], ai = args[1], nv = args[2], ni = args[3];
        Value better, equal;
        if (isa<FloatType>(elem)) {
          better = arith::CmpFOp::create(
              builder, l,
              isMaxLike ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
              nv, av);
          equal = arith::CmpFOp::create(builder, l, arith::CmpFPredicate::OEQ,
                                        nv, av);
        } else {
          better = arith::CmpIOp::create(
              builder, l,
              isMaxLike ? (sgn ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt)
                        : (sgn ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult),
              nv, av);
          equal = arith::CmpIOp::create(builder, l, arith::CmpIPredicate::eq, nv, av);
        }
        Value smaller = arith::CmpIOp::create(builder, l, arith::CmpIPredicate::slt,
                                              ni, ai);
        Value take = arith::OrIOp::create(
            builder, l, better, arith::AndIOp::create(builder, l, equal, smaller));
        out.push_back(arith::SelectOp::create(builder, l, take, nv, av));
        out.push_back(arith::SelectOp::create(builder, l, take, ni, ai));
        return out;
      });
  Value r = op.getResult(isArg ? 1 : 0);
  if (keep) {
    if (!isa<RankedTensorType>(r.getType()))
      r = SplatOp::create(builder, l, RankedTensorType::get({1}, r.getType()), r,
                          ValueRange{});
    else
      r = ExpandDimsOp::create(builder, l, r, axis);
  }
  return r;
}

Value MLIRGen::emitScan(const dsl::CallExpr &e, StringRef name) {
  Location l = loc(e.getLoc());
  const dsl::Type &st = e.args[0]->type;
  Value src = emitExpr(*e.args[0]);
  if (!src)
    return src;
  unsigned axis = reductionAxis(*this, e).first;
  src = convert(src, st.elem, e.type.elem, l);
  Type elem = getElementTypeOrSelf(src.getType());
  auto op = ScanOp::create(builder, l, TypeRange{src.getType()}, ValueRange{src},
                           axis, /*reverse=*/false);
  bool sgn = dsl::isSigned(e.type.elem);
  buildCombiner<ScanReturnOp>(builder, op.getRegion(), {elem}, l,
                              [&](ValueRange args) {
                                SmallVector<Value> out{combineOp(
                                    builder, name, args[0], args[1], sgn, l)};
                                return out;
                              });
  return op.getResult(0);
}
