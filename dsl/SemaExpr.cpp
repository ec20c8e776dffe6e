//===- SemaExpr.cpp - Operators, literals, shapes ------------------------===//
#include "dsl/SemaImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

#include <limits>

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

ScalarKind kiln::dsl::promoteScalarKinds(ScalarKind a, ScalarKind b) {
  if (a == b)
    return a;
  if (isFloat(a) && isFloat(b)) {
    if ((a == ScalarKind::F16 && b == ScalarKind::BF16) ||
        (a == ScalarKind::BF16 && b == ScalarKind::F16))
      return ScalarKind::F32;
    if (isFp8(a) && isFp8(b)) // e4m3 with e5m2: both are f16 values
      return ScalarKind::F16;
    return bitWidth(a) >= bitWidth(b) ? a : b;
  }
  return bitWidth(a) >= bitWidth(b) ? a : b;
}

/// The largest finite value of float type `k`.
static double largestFinite(ScalarKind k) {
  switch (k) {
  case ScalarKind::F8E4M3: return 448.0;
  case ScalarKind::F8E5M2: return 57344.0;
  case ScalarKind::F16: return 65504.0;
  case ScalarKind::BF16: return 3.3895313892515355e38;
  case ScalarKind::F32: return 3.4028234663852886e38;
  default: return std::numeric_limits<double>::max();
  }
}

static std::string formatLargest(ScalarKind k) {
  return llvm::formatv("{0}", llvm::format("%g", largestFinite(k))).str();
}

static bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
  case BinaryOp::Ge: case BinaryOp::Eq: case BinaryOp::Ne:
    return true;
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

static bool fitsIn(uint64_t magnitude, bool negative, ScalarKind k) {
  unsigned w = bitWidth(k);
  if (k == ScalarKind::Bool)
    return false;
  if (isSigned(k)) {
    uint64_t max = w == 64 ? uint64_t(std::numeric_limits<int64_t>::max())
                           : (uint64_t(1) << (w - 1)) - 1;
    return negative ? magnitude <= max + 1 : magnitude <= max;
  }
  if (negative)
    return magnitude == 0;
  return w == 64 || magnitude <= (uint64_t(1) << w) - 1;
}

bool Sema::Impl::coerceLiteral(Expr &e, ScalarKind k) {
  // Tiles too: `where(mask, 0, 1)` is an untyped literal of the mask's
  // shape.
  if (!e.type.isUntypedLiteral)
    return e.type.elem == k;
  bool ok = true;
  switch (e.getKind()) {
  case ExprKind::IntLit: {
    auto &lit = llvm::cast<IntLitExpr>(e);
    if (k == ScalarKind::Bool) {
      diag.error(e.range, "integer literal used where a bool is expected; "
                          "write true or false");
      ok = false;
    } else if (!isFloat(k) && !fitsIn(lit.value, false, k)) {
      diag.error(e.range, "integer literal " + std::to_string(lit.value) +
                              " does not fit in " + spelling(k).str());
      ok = false;
    } else if (isFloat(k) && double(lit.value) > largestFinite(k)) {
      diag.error(e.range, "integer literal " + std::to_string(lit.value) +
                              " does not fit in " + spelling(k).str() +
                              " (its largest finite value is " +
                              formatLargest(k) + ")");
      ok = false;
    }
    break;
  }
  case ExprKind::FloatLit: {
    if (!isFloat(k)) {
      diag.error(e.range, "float literal " + text(e.range) +
                              " used where " + spelling(k).str() +
                              " is expected; use cast<" + spelling(k).str() +
                              ">(...) to convert");
      ok = false;
      break;
    }
    // A finite literal must stay finite in its type (inf is spelled `inf`).
    double v = std::fabs(llvm::cast<FloatLitExpr>(e).value);
    double maxFinite = largestFinite(k);
    if (std::isinf(v) && k == ScalarKind::F8E4M3) {
      diag.error(e.range, "f8e4m3 has no infinity");
      ok = false;
      break;
    }
    if (std::isfinite(v) && v > maxFinite) {
      diag.error(e.range, "float literal " + text(e.range) + " does not fit in " +
                              spelling(k).str() + " (its largest finite value "
                              "is " + formatLargest(k) + ")");
      ok = false;
    }
    break;
  }
  case ExprKind::Unary: {
    auto &u = llvm::cast<UnaryExpr>(e);
    if (auto *lit = llvm::dyn_cast<IntLitExpr>(u.operand.get());
        lit && u.op == UnaryOp::Neg && !isFloat(k) && k != ScalarKind::Bool) {
      if (!fitsIn(lit->value, true, k)) {
        diag.error(e.range, "integer literal -" + std::to_string(lit->value) +
                                " does not fit in " + spelling(k).str());
        ok = false;
      }
      lit->type.elem = k;
      lit->type.isUntypedLiteral = false;
      break;
    }
    ok = coerceLiteral(*u.operand, k);
    break;
  }
  case ExprKind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(e);
    if (isFp8(k)) {
      // It would be evaluated in fp8, rounding (and overflowing) at each
      // step.
      diag.error(e.range, "a literal expression cannot be evaluated in " +
                              spelling(k).str() + "; write its value");
      ok = false;
      break;
    }
    ok = coerceLiteral(*b.lhs, k) && coerceLiteral(*b.rhs, k);
    // Division of literals is checked once their type is known: `1 / 0`
    // is an error as an integer, inf as a float.
    auto rc = constOf(*b.rhs);
    if (ok && !isFloat(k) && (b.op == BinaryOp::Div || b.op == BinaryOp::Rem) &&
        rc && rc->value && *rc->value == 0) {
      diag.error(b.rhs->range, "integer division by zero");
      ok = false;
    }
    break;
  }
  case ExprKind::Call: {
    // where, maximum/minimum, elementwise min/max and fma of literals: every
    // value operand takes the type (where's condition is a bool already).
    auto &c = llvm::cast<CallExpr>(e);
    bool isWhere = c.callee == "where";
    if (isFp8(k) && !isWhere) {
      diag.error(e.range, "a literal expression cannot be evaluated in " +
                              spelling(k).str() + "; write its value");
      ok = false;
      break;
    }
    for (size_t i = isWhere ? 1 : 0; i < c.args.size(); ++i)
      ok &= coerceLiteral(*c.args[i], k);
    break;
  }
  default:
    break;
  }
  e.type.elem = k;
  e.type.isUntypedLiteral = false;
  return ok;
}

void Sema::Impl::finalize(Expr &e) {
  if (e.type.isUntypedLiteral)
    coerceLiteral(e, e.type.elem);
}

std::optional<ScalarKind> Sema::Impl::unifyElems(Expr &l, Expr &r,
                                                 StringRef what, SMLoc loc) {
  Type &lt = l.type, &rt = r.type;
  auto mixError = [&]() -> std::optional<ScalarKind> {
    std::string fix;
    if (isFloat(lt.elem) != isFloat(rt.elem))
      fix = "; use cast<" +
            spelling(isFloat(lt.elem) ? lt.elem : rt.elem).str() + ">(...)";
    else
      fix = "; use cast<...>(...) to convert one side";
    std::string kind =
        (isFloat(lt.elem) != isFloat(rt.elem)) ? "integer and float"
        : (lt.elem == ScalarKind::Bool || rt.elem == ScalarKind::Bool)
            ? "bool and numeric"
            : isSigned(lt.elem) != isSigned(rt.elem) ? "signed and unsigned"
                                                     : "different";
    diag.error(loc, "cannot mix " + kind + " operands (" +
                        spelling(lt.elem).str() + " and " +
                        spelling(rt.elem).str() + ") in '" + what.str() + "'" +
                        fix,
               {l.range, r.range});
    return std::nullopt;
  };
  if (lt.isUntypedLiteral && rt.isUntypedLiteral) {
    if (isFloat(lt.elem) || isFloat(rt.elem))
      return ScalarKind::F32;
    return lt.elem;
  }
  if (lt.isUntypedLiteral || rt.isUntypedLiteral) {
    Expr &lit = lt.isUntypedLiteral ? l : r;
    const Type &other = lt.isUntypedLiteral ? rt : lt;
    if (isFloat(lit.type.elem) && !isFloat(other.elem))
      return mixError();
    if (other.elem == ScalarKind::Bool)
      return mixError();
    if (!coerceLiteral(lit, other.elem))
      return std::nullopt;
    return other.elem;
  }
  if (lt.elem == rt.elem)
    return lt.elem;
  bool lf = isFloat(lt.elem), rf = isFloat(rt.elem);
  if (lf != rf || lt.elem == ScalarKind::Bool || rt.elem == ScalarKind::Bool)
    return mixError();
  if (!lf && isSigned(lt.elem) != isSigned(rt.elem))
    return mixError();
  return promoteScalarKinds(lt.elem, rt.elem);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::optional<Shape>
Sema::Impl::broadcastShapes(const Shape &a, const Shape &b, SMLoc loc,
                            llvm::ArrayRef<SMRange> ranges) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim *da = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Dim *db = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (!da || !db) {
      out[i] = da ? *da : *db;
      continue;
    }
    if (*da == *db) {
      out[i] = *da;
    } else if (da->isKnown() && da->value == 1) {
      out[i] = *db;
    } else if (db->isKnown() && db->value == 1) {
      out[i] = *da;
    } else if (da->isKnown() && db->isKnown()) {
      diag.error(loc, "shapes " + formatShape(a) + " and " + formatShape(b) +
                          " cannot be broadcast together",
                 ranges);
      return std::nullopt;
    } else {
      // At least one side depends on const params: the specializer checks
      // the sizes of each variant. Prefer the known size.
      out[i] = da->isKnown() ? *da : *db;
    }
  }
  return out;
}

bool Sema::Impl::checkTileShape(const Shape &s, SMRange range,
                                StringRef what) {
  if (s.empty() || (int64_t)s.size() > kMaxTileRank) {
    diag.error(range, what.str() + " has rank " + std::to_string(s.size()) +
                          "; tiles have rank 1, 2 or 3");
    return false;
  }
  int64_t elems = 1;
  for (const Dim &d : s) {
    if (!d.isKnown())
      continue;
    if (d.value <= 0 || !llvm::isPowerOf2_64(uint64_t(d.value))) {
      diag.error(range, what.str() + ": tile dimension " + d.text +
                            " is not a power of two (shape " + formatShape(s) +
                            ")");
      return false;
    }
    if (d.value > kMaxTileElements || elems * d.value > kMaxTileElements) {
      diag.error(range, what.str() + ": tile too large: " + formatShape(s) +
                            " has more than " +
                            std::to_string(kMaxTileElements) + " elements");
      return false;
    }
    elems *= d.value;
  }
  return true;
}

std::optional<ConstInt> Sema::Impl::requireConstInt(Expr &e, StringRef what) {
  Type t = checkExpr(e);
  if (t.isInvalid())
    return std::nullopt;
  if (!t.isScalar() || t.isPointer || !isInteger(t.elem)) {
    diag.error(e.range, what.str() + " must be a constant integer, found " +
                            t.str());
    return std::nullopt;
  }
  finalize(e);
  auto c = constOf(e);
  if (!c) {
    diag.error(e.range, what.str() + " must be a constant integer (literals "
                                     "and const params), but '" +
                            text(e.range) + "' is only known at run time");
    return std::nullopt;
  }
  return c;
}

std::optional<Shape> Sema::Impl::requireShapeList(Expr &e, StringRef what) {
  auto *list = llvm::dyn_cast<ListExpr>(&e);
  if (!list) {
    diag.error(e.range, what.str() +
                            " must be a list of constant integers, like [64, BN]");
    return std::nullopt;
  }
  list->type.kind = Type::Kind::List;
  list->type.rank = list->elements.size();
  Shape shape;
  bool ok = true;
  for (auto &el : list->elements) {
    auto c = requireConstInt(*el, what.str() + " entry");
    if (!c) {
      ok = false;
      continue;
    }
    if (c->value && *c->value <= 0) {
      diag.error(el->range, what.str() + " entry must be positive, found " +
                                std::to_string(*c->value));
      ok = false;
      continue;
    }
    shape.push_back(c->value ? Dim::known(*c->value) : Dim::symbolic(c->text));
  }
  if (!ok)
    return std::nullopt;
  return shape;
}

std::optional<int64_t> Sema::Impl::requireAxis(Expr *axisExpr, const Type &t,
                                               StringRef what, SMLoc loc) {
  int64_t rank = t.isTile() ? (int64_t)t.shape.size() : 0;
  if (!axisExpr) {
    if (rank == 1)
      return 0;
    diag.error(loc, what.str() + ": give the axis to reduce for a rank-" +
                        std::to_string(rank) + " tile");
    return std::nullopt;
  }
  auto c = requireConstInt(*axisExpr, what.str() + " axis");
  if (!c)
    return std::nullopt;
  if (!c->value) {
    diag.error(axisExpr->range, what.str() +
                                    " axis must be a literal, not a const param");
    return std::nullopt;
  }
  int64_t axis = *c->value;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    diag.error(axisExpr->range, what.str() + " axis " +
                                    std::to_string(*c->value) +
                                    " is out of range for " + t.str() +
                                    ": expected " + std::to_string(-rank) +
                                    " to " + std::to_string(rank - 1));
    return std::nullopt;
  }
  return axis;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Type Sema::Impl::checkExpr(Expr &e) {
  Type t;
  switch (e.getKind()) {
  case ExprKind::IntLit: {
    auto &lit = llvm::cast<IntLitExpr>(e);
    t = Type::scalar(ScalarKind::I32);
    t.isUntypedLiteral = true;
    if (lit.value <= uint64_t(std::numeric_limits<int64_t>::max()))
      setConst(e, ConstInt{int64_t(lit.value), std::to_string(lit.value)});
    break;
  }
  case ExprKind::FloatLit:
    t = Type::scalar(ScalarKind::F32);
    t.isUntypedLiteral = true;
    break;
  case ExprKind::BoolLit:
    t = Type::scalar(ScalarKind::Bool);
    setConst(e, ConstInt{llvm::cast<BoolLitExpr>(e).value ? 1 : 0,
                         text(e.range)});
    break;
  case ExprKind::StringLit:
    t.kind = Type::Kind::String;
    break;
  case ExprKind::Ident:
    t = checkIdent(llvm::cast<IdentExpr>(e));
    break;
  case ExprKind::Unary:
    t = checkUnary(llvm::cast<UnaryExpr>(e));
    break;
  case ExprKind::Binary:
    t = checkBinary(llvm::cast<BinaryExpr>(e));
    break;
  case ExprKind::Index:
    t = checkIndex(llvm::cast<IndexExpr>(e));
    break;
  case ExprKind::Call:
    t = checkCall(llvm::cast<CallExpr>(e));
    break;
  case ExprKind::List:
    diag.error(e.range, "a list is not a value; lists are written only as "
                        "shapes, offsets and permutations of builtins");
    t = Type::invalid();
    break;
  }
  e.type = t;
  return t;
}

Type Sema::Impl::checkIdent(IdentExpr &e) {
  Symbol *sym = lookup(e.name);
  if (!sym) {
    if (functions.count(e.name) ||
        llvm::is_contained(Sema::builtinNames(), StringRef(e.name))) {
      diag.error(e.range, "'" + e.name + "' is a function; call it as " +
                              e.name + "(...)");
      return Type::invalid();
    }
    if (e.name == "None") {
      diag.error(e.range, "'None' is only valid inside an index, as in x[:, None]");
      return Type::invalid();
    }
    std::string sug = suggestName(e.name, visibleNames());
    diag.error(e.range, "unknown identifier '" + e.name + "'" +
                            (sug.empty() ? std::string()
                                         : "; did you mean '" + sug + "'?"));
    return Type::invalid();
  }
  if (sym->constVal)
    setConst(e, *sym->constVal);
  return sym->type;
}

Type Sema::Impl::checkUnary(UnaryExpr &e) {
  Type t = checkExpr(*e.operand);
  if (t.isInvalid())
    return t;
  if (!t.isValue() || t.isPointer) {
    diag.error(e.range, "unary operator cannot be applied to " + t.str());
    return Type::invalid();
  }
  auto c = constOf(*e.operand);
  switch (e.op) {
  case UnaryOp::Neg:
    if (t.elem == ScalarKind::Bool) {
      diag.error(e.range, "'-' cannot be applied to bool; use '!'");
      return Type::invalid();
    }
    if (isFp8(t.elem)) {
      diag.error(e.range, fp8StorageOnly("'-'", t.elem));
      return Type::invalid();
    }
    if (c)
      setConst(e, ConstInt{c->value ? std::optional<int64_t>(-*c->value)
                                    : std::nullopt,
                           "-" + c->text});
    return t;
  case UnaryOp::Not:
    if (t.elem != ScalarKind::Bool) {
      diag.error(e.range, "'!' needs a bool operand, found " + t.str() +
                              (isInteger(t.elem) ? "; use '~' for bitwise not"
                                                 : ""));
      return Type::invalid();
    }
    if (c && c->value)
      setConst(e, ConstInt{*c->value ? 0 : 1, "!" + c->text});
    return t;
  case UnaryOp::BitNot:
    if (!isInteger(t.elem)) {
      diag.error(e.range, "'~' needs an integer operand, found " + t.str());
      return Type::invalid();
    }
    if (c)
      setConst(e, ConstInt{c->value ? std::optional<int64_t>(~*c->value)
                                    : std::nullopt,
                           "~" + c->text});
    return t;
  }
  return Type::invalid();
}

Type Sema::Impl::checkBinary(BinaryExpr &e) {
  Type lt = checkExpr(*e.lhs);
  Type rt = checkExpr(*e.rhs);
  if (lt.isInvalid() || rt.isInvalid())
    return Type::invalid();
  SMLoc loc = e.opLoc.isValid() ? e.opLoc : e.getLoc();
  Type t = combineBinary(e.op, e.lhs.get(), *e.rhs, loc);
  if (t.isInvalid())
    return t;
  // Fold constant integer expressions (shapes, offsets, grid arithmetic).
  auto lc = constOf(*e.lhs), rc = constOf(*e.rhs);
  if ((e.op == BinaryOp::Div || e.op == BinaryOp::Rem) && !isFloat(t.elem) &&
      !t.isUntypedLiteral && rc && rc->value && *rc->value == 0) {
    diag.error(e.rhs->range, "integer division by zero");
    return Type::invalid();
  }
  if (lc && rc && t.isScalar() && !isFloat(t.elem)) {
    std::optional<int64_t> v;
    if (lc->value && rc->value) {
      int64_t a = *lc->value, b = *rc->value;
      switch (e.op) {
      case BinaryOp::Add: v = int64_t(uint64_t(a) + uint64_t(b)); break;
      case BinaryOp::Sub: v = int64_t(uint64_t(a) - uint64_t(b)); break;
      case BinaryOp::Mul: v = int64_t(uint64_t(a) * uint64_t(b)); break;
      case BinaryOp::Div: if (b != 0 && !(a == INT64_MIN && b == -1)) v = a / b; break;
      case BinaryOp::Rem: if (b != 0 && !(a == INT64_MIN && b == -1)) v = a % b; break;
      case BinaryOp::Lt: v = a < b; break;
      case BinaryOp::Le: v = a <= b; break;
      case BinaryOp::Gt: v = a > b; break;
      case BinaryOp::Ge: v = a >= b; break;
      case BinaryOp::Eq: v = a == b; break;
      case BinaryOp::Ne: v = a != b; break;
      case BinaryOp::LogicAnd: v = a && b; break;
      case BinaryOp::LogicOr: v = a || b; break;
      case BinaryOp::BitAnd: v = a & b; break;
      case BinaryOp::BitOr: v = a | b; break;
      case BinaryOp::BitXor: v = a ^ b; break;
      case BinaryOp::Shl: if (b >= 0 && b < 64) v = int64_t(uint64_t(a) << b); break;
      case BinaryOp::Shr: if (b >= 0 && b < 64) v = a >> b; break;
      }
    }
    auto wrap = [](const ConstInt &c, const Expr &x) {
      return llvm::isa<BinaryExpr>(x) ? "(" + c.text + ")" : c.text;
    };
    std::string txt = v ? std::to_string(*v)
                        : wrap(*lc, *e.lhs) + " " + spelling(e.op).str() +
                              " " + wrap(*rc, *e.rhs);
    setConst(e, ConstInt{v, txt});
  }
  return t;
}

Type Sema::Impl::combineBinary(BinaryOp op, Expr *lhs, Expr &rhs,
                               SMLoc opLoc) {
  Type lt = lhs->type, rt = rhs.type;
  std::string opName = spelling(op).str();
  llvm::SmallVector<SMRange, 2> ranges{lhs->range, rhs.range};
  if (!lt.isValue() || !rt.isValue()) {
    diag.error(opLoc, "operator '" + opName + "' cannot be applied to " +
                          lt.str() + " and " + rt.str(),
               ranges);
    return Type::invalid();
  }
  Shape shape;
  bool isTile = lt.isTile() || rt.isTile();
  if (isTile) {
    auto s = broadcastShapes(lt.isTile() ? lt.shape : Shape{},
                             rt.isTile() ? rt.shape : Shape{}, opLoc, ranges);
    if (!s)
      return Type::invalid();
    shape = *s;
  }
  auto make = [&](ScalarKind k, bool ptr = false) {
    Type t = isTile ? Type::tile(k, shape, ptr) : Type::scalar(k);
    t.isPointer = ptr;
    return t;
  };

  // Pointer arithmetic: pointer +/- integer offset (in elements).
  if (lt.isPointer || rt.isPointer) {
    if (op != BinaryOp::Add && op != BinaryOp::Sub) {
      diag.error(opLoc, "operator '" + opName + "' cannot be applied to "
                        "pointers; only pointer + integer offset is allowed",
                 ranges);
      return Type::invalid();
    }
    if (lt.isPointer && rt.isPointer) {
      diag.error(opLoc, "cannot " +
                            std::string(op == BinaryOp::Add ? "add" : "subtract") +
                            " two pointers",
                 ranges);
      return Type::invalid();
    }
    if (rt.isPointer && op == BinaryOp::Sub) {
      diag.error(opLoc, "cannot subtract a pointer from an integer", ranges);
      return Type::invalid();
    }
    Expr &off = lt.isPointer ? rhs : *lhs;
    const Type &ptr = lt.isPointer ? lt : rt;
    if (!isInteger(off.type.elem)) {
      diag.error(off.range, "pointer offsets must be integers, found " +
                                off.type.str());
      return Type::invalid();
    }
    finalize(off);
    return make(ptr.elem, /*ptr=*/true);
  }

  switch (op) {
  case BinaryOp::LogicAnd:
  case BinaryOp::LogicOr:
    if (lt.elem != ScalarKind::Bool || rt.elem != ScalarKind::Bool) {
      diag.error(opLoc, "'" + opName + "' needs bool operands, found " +
                            lt.str() + " and " + rt.str(),
                 ranges);
      return Type::invalid();
    }
    return make(ScalarKind::Bool);
  default:
    break;
  }

  auto elem = unifyElems(*lhs, rhs, opName, opLoc);
  if (!elem)
    return Type::invalid();
  if (isFp8(*elem)) {
    diag.error(opLoc, fp8StorageOnly("operator '" + opName + "'", *elem),
               ranges);
    return Type::invalid();
  }
  bool bothLiterals = lt.isUntypedLiteral && rt.isUntypedLiteral;

  if (isComparison(op)) {
    if (bothLiterals) {
      coerceLiteral(*lhs, *elem);
      coerceLiteral(rhs, *elem);
    }
    if (*elem == ScalarKind::Bool && op != BinaryOp::Eq && op != BinaryOp::Ne) {
      diag.error(opLoc, "'" + opName + "' cannot compare bools", ranges);
      return Type::invalid();
    }
    return make(ScalarKind::Bool);
  }

  switch (op) {
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
    if (isFloat(*elem)) {
      diag.error(opLoc, "'" + opName + "' needs integer or bool operands, "
                        "found " + lt.str() + " and " + rt.str(),
                 ranges);
      return Type::invalid();
    }
    break;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    if (!isInteger(*elem)) {
      diag.error(opLoc, "'" + opName + "' needs integer operands, found " +
                            lt.str() + " and " + rt.str(),
                 ranges);
      return Type::invalid();
    }
    break;
  default: // + - * / %
    if (*elem == ScalarKind::Bool) {
      diag.error(opLoc, "arithmetic '" + opName + "' on bool operands; use "
                        "cast<i32>(...) first",
                 ranges);
      return Type::invalid();
    }
    break;
  }
  Type t = make(*elem);
  t.isUntypedLiteral = bothLiterals;
  return t;
}

Type Sema::Impl::checkIndex(IndexExpr &e) {
  Type t = checkExpr(*e.base);
  if (t.isInvalid())
    return t;
  if (!t.isValue()) {
    diag.error(e.range, "only tiles and scalars can be indexed, found " + t.str());
    return Type::invalid();
  }
  finalize(*e.base);
  t = e.base->type;
  size_t keeps = llvm::count_if(e.items, [](const IndexItem &i) {
    return i.kind == IndexItem::Kind::Keep;
  });
  size_t rank = t.isTile() ? t.shape.size() : 0;
  if (keeps != rank) {
    diag.error(e.range, "index has " + std::to_string(keeps) +
                            " ':' item(s) but " + t.str() + " has rank " +
                            std::to_string(rank) +
                            "; write one ':' per dimension");
    return Type::invalid();
  }
  Shape shape;
  size_t next = 0;
  for (auto &item : e.items)
    shape.push_back(item.kind == IndexItem::Kind::Keep ? t.shape[next++]
                                                       : Dim::known(1));
  if (!checkTileShape(shape, e.range, "indexed tile"))
    return Type::invalid();
  return Type::tile(t.elem, shape, t.isPointer);
}

Type Sema::Impl::checkCall(CallExpr &e) {
  auto fit = functions.find(e.callee);
  if (fit != functions.end())
    return checkHelperCall(e, *fit->second);
  bool handled = false;
  Type t = checkBuiltin(e, handled);
  if (handled)
    return t;
  std::vector<std::string> names;
  for (const char *b : Sema::builtinNames())
    names.push_back(b);
  for (auto &f : functions)
    names.push_back(f.first);
  std::string sug = suggestName(e.callee, names);
  diag.error(e.calleeRange, "unknown function '" + e.callee + "'" +
                                (sug.empty() ? std::string()
                                             : "; did you mean '" + sug + "'?"));
  return Type::invalid();
}
