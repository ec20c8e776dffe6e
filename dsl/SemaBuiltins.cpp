//===- SemaBuiltins.cpp - Typing rules of the builtins -------------------===//
//
// One function per builtin family; each checks arity, named arguments,
// argument types and shapes, and returns the result type. The rules are
// those of docs/language.md ("Builtins").
//
//===----------------------------------------------------------------------===//
#include "dsl/SemaImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

static const char *const kBuiltins[] = {
    "program_id", "num_programs", "arange",  "zeros",   "full",
    "cast",       "broadcast",    "reshape", "trans",   "permute",
    "load",       "store",        "atomic_add", "atomic_max", "atomic_min",
    "atomic_cas", "view",         "exp",     "exp2",    "log",
    "log2",       "sqrt",         "rsqrt",   "sin",     "cos",
    "tanh",       "erf",          "sigmoid", "abs",     "floor",
    "ceil",       "fma",          "maximum", "minimum", "sum",
    "max",        "min",          "argmax",  "argmin",  "prod",
    "xor_sum",    "cumsum",       "cumprod", "dot",     "cdiv",
    "where",      "print",        "assert",
};

llvm::ArrayRef<const char *> Sema::builtinNames() { return kBuiltins; }

bool kiln::dsl::isMinMaxReduction(const CallExpr &call) {
  auto &a = call.args;
  if (a.empty() || !a[0]->type.isTile())
    return false;
  if (a.size() == 1 || !call.namedArgs.empty())
    return true;
  if (a.size() != 2)
    return false;
  const Expr *axis = a[1].get();
  if (auto *u = llvm::dyn_cast<UnaryExpr>(axis); u && u->op == UnaryOp::Neg)
    axis = u->operand.get();
  return llvm::isa<IntLitExpr>(axis);
}

namespace {
enum class Builtin {
  Unknown, ProgramId, NumPrograms, Arange, Zeros, Full, Cast, Broadcast,
  Reshape, Trans, Permute, Load, Store, AtomicRMW, AtomicCas, View,
  FloatMath, Abs, Fma, MinMaxElementwise, Reduce, MinMax, Scan, Dot, Cdiv,
  Where, Print, Assert,
};

Builtin classify(StringRef name) {
  return llvm::StringSwitch<Builtin>(name)
      .Case("program_id", Builtin::ProgramId)
      .Case("num_programs", Builtin::NumPrograms)
      .Case("arange", Builtin::Arange)
      .Case("zeros", Builtin::Zeros)
      .Case("full", Builtin::Full)
      .Case("cast", Builtin::Cast)
      .Case("broadcast", Builtin::Broadcast)
      .Case("reshape", Builtin::Reshape)
      .Case("trans", Builtin::Trans)
      .Case("permute", Builtin::Permute)
      .Case("load", Builtin::Load)
      .Case("store", Builtin::Store)
      .Cases({"atomic_add", "atomic_max", "atomic_min"}, Builtin::AtomicRMW)
      .Case("atomic_cas", Builtin::AtomicCas)
      .Case("view", Builtin::View)
      .Cases({"exp", "exp2", "log", "log2", "sqrt", "rsqrt"}, Builtin::FloatMath)
      .Cases({"sin", "cos", "tanh", "erf", "sigmoid"}, Builtin::FloatMath)
      .Cases({"floor", "ceil"}, Builtin::FloatMath)
      .Case("abs", Builtin::Abs)
      .Case("fma", Builtin::Fma)
      .Cases({"maximum", "minimum"}, Builtin::MinMaxElementwise)
      .Cases({"sum", "prod", "argmax", "argmin", "xor_sum"}, Builtin::Reduce)
      .Cases({"min", "max"}, Builtin::MinMax)
      .Cases({"cumsum", "cumprod"}, Builtin::Scan)
      .Case("dot", Builtin::Dot)
      .Case("cdiv", Builtin::Cdiv)
      .Case("where", Builtin::Where)
      .Case("print", Builtin::Print)
      .Case("assert", Builtin::Assert)
      .Default(Builtin::Unknown);
}

/// Argument bookkeeping for one builtin call.
class ArgList {
public:
  ArgList(Sema::Impl &s, CallExpr &call) : s(s), call(call) {}

  /// Checks the positional count is within [min, max].
  bool arity(size_t min, size_t max) {
    size_t n = call.args.size();
    if (n >= min && n <= max)
      return true;
    std::string expected = min == max ? std::to_string(min)
                                      : std::to_string(min) + " to " +
                                            std::to_string(max);
    s.diag.error(call.range, "'" + call.callee + "' takes " + expected +
                                 (max == 1 ? " positional argument"
                                           : " positional arguments") +
                                 ", found " + std::to_string(n));
    return false;
  }
  /// The named argument `name`, or null.
  Expr *named(StringRef name) {
    allowed.push_back(name.str());
    for (auto &na : call.namedArgs)
      if (na.name == name)
        return na.value.get();
    return nullptr;
  }
  /// Reports named arguments that no `named()` call asked for.
  bool noOtherNamed() {
    for (auto &na : call.namedArgs) {
      if (llvm::is_contained(allowed, na.name))
        continue;
      std::vector<std::string> names(allowed);
      llvm::sort(names);
      names.erase(std::unique(names.begin(), names.end()), names.end());
      std::string list;
      for (auto &a : names)
        list += (list.empty() ? "'" : ", '") + a + "'";
      std::string sug = suggestName(na.name, names);
      s.diag.error(na.nameRange,
                   "'" + call.callee + "' has no argument named '" + na.name +
                       "'" +
                       (sug.empty() ? std::string()
                                    : "; did you mean '" + sug + "'?") +
                       (list.empty() ? " (it takes no named arguments)"
                                     : " (named arguments: " + list + ")"));
      return false;
    }
    return true;
  }
  bool noTypeArgs() {
    if (call.typeArgs.empty())
      return true;
    s.diag.error(call.calleeRange,
                 "'" + call.callee + "' takes no type arguments");
    return false;
  }
  /// The single scalar type argument of cast<T>/zeros<T>/full<T>.
  std::optional<ScalarKind> oneScalarTypeArg() {
    if (call.typeArgs.size() != 1 ||
        call.typeArgs[0].kind != TypeExpr::Kind::Scalar) {
      s.diag.error(call.calleeRange, "'" + call.callee +
                                         "' needs one scalar element type, "
                                         "as in " +
                                         call.callee + "<f32>(...)");
      return std::nullopt;
    }
    return call.typeArgs[0].elem;
  }

private:
  Sema::Impl &s;
  CallExpr &call;
  std::vector<std::string> allowed;
};

ScalarKind accumulatorKind(ScalarKind k) {
  switch (k) {
  case ScalarKind::F16:
  case ScalarKind::BF16:
    return ScalarKind::F32;
  case ScalarKind::Bool:
  case ScalarKind::I8:
  case ScalarKind::I16:
  case ScalarKind::U8:
  case ScalarKind::U16:
    return ScalarKind::I32;
  default:
    return k;
  }
}
} // namespace

/// A checked value operand (scalar or tile, not a pointer).
static bool requireValue(Sema::Impl &s, Expr &e, const Type &t,
                         StringRef what) {
  if (t.isInvalid())
    return false;
  if (!t.isValue() || t.isPointer) {
    s.diag.error(e.range, what.str() + ": expected a scalar or tile value, "
                                       "found " +
                              t.str());
    return false;
  }
  return true;
}

/// Shape of a value type (empty for scalars).
static Shape shapeOf(const Type &t) { return t.isTile() ? t.shape : Shape{}; }

static Type withShapeOrScalar(ScalarKind k, const Shape &s, bool ptr = false) {
  Type t = s.empty() ? Type::scalar(k) : Type::tile(k, s, ptr);
  t.isPointer = ptr;
  return t;
}

/// True if `from` broadcasts to `to` (numpy rules, `to` fixed).
static bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim &a = from[i], &b = to[off + i];
    if (a == b || (a.isKnown() && a.value == 1))
      continue;
    if (!a.isKnown() || !b.isKnown())
      continue; // Checked per variant by the specializer.
    return false;
  }
  return true;
}

/// Checks an optional `mask` against the pointer shape.
static bool checkMask(Sema::Impl &s, Expr *mask, const Shape &target,
                      StringRef what) {
  if (!mask)
    return true;
  Type mt = s.checkExpr(*mask);
  if (mt.isInvalid())
    return false;
  if (!mt.isValue() || mt.isPointer || mt.elem != ScalarKind::Bool) {
    s.diag.error(mask->range, what.str() + ": mask must be bool, found " +
                                  mt.str());
    return false;
  }
  if (!broadcastsTo(shapeOf(mt), target)) {
    s.diag.error(mask->range, what.str() + ": mask of shape " +
                                  formatShape(shapeOf(mt)) +
                                  " does not broadcast to " +
                                  formatShape(target));
    return false;
  }
  return true;
}

/// Checks a value stored to (or combined with) memory of element `elem`
/// and shape `target`.
static bool checkStoredValue(Sema::Impl &s, Expr &v, ScalarKind elem,
                             const Shape &target, StringRef what) {
  Type vt = s.checkExpr(v);
  if (!requireValue(s, v, vt, what))
    return false;
  if (vt.isUntypedLiteral) {
    if (!s.coerceLiteral(v, elem))
      return false;
  } else if (vt.elem != elem) {
    s.diag.error(v.range, what.str() + ": value has element type " +
                              spelling(vt.elem).str() + " but the memory holds " +
                              spelling(elem).str() + "; use cast<" +
                              spelling(elem).str() + ">(...)");
    return false;
  }
  if (!broadcastsTo(shapeOf(v.type), target)) {
    s.diag.error(v.range, what.str() + ": value of shape " +
                              formatShape(shapeOf(v.type)) +
                              " does not broadcast to " + formatShape(target));
    return false;
  }
  return true;
}

/// A list of runtime integer scalars (view sizes, strides, offsets).
static bool checkIntList(Sema::Impl &s, Expr &e, StringRef what,
                         int64_t expectedLen = -1) {
  auto *list = llvm::dyn_cast<ListExpr>(&e);
  if (!list) {
    s.diag.error(e.range, what.str() + " must be a list, like [r, c]");
    return false;
  }
  list->type.kind = Type::Kind::List;
  list->type.rank = list->elements.size();
  if (expectedLen >= 0 && (int64_t)list->elements.size() != expectedLen) {
    s.diag.error(e.range, what.str() + " has " +
                              std::to_string(list->elements.size()) +
                              " entries, expected " +
                              std::to_string(expectedLen));
    return false;
  }
  bool ok = true;
  for (auto &el : list->elements) {
    Type t = s.checkExpr(*el);
    if (t.isInvalid()) {
      ok = false;
      continue;
    }
    if (!t.isScalar() || t.isPointer || !isInteger(t.elem)) {
      s.diag.error(el->range, what.str() + " entries must be integer "
                                           "scalars, found " +
                                  t.str());
      ok = false;
      continue;
    }
    s.finalize(*el);
  }
  return ok;
}

Type Sema::Impl::checkBuiltin(CallExpr &call, bool &handled) {
  Builtin b = classify(call.callee);
  handled = b != Builtin::Unknown;
  if (!handled)
    return Type::invalid();
  ArgList args(*this, call);
  auto &a = call.args;
  const std::string &name = call.callee;

  switch (b) {
  case Builtin::Unknown:
    return Type::invalid();

  case Builtin::ProgramId:
  case Builtin::NumPrograms: {
    if (!args.noTypeArgs() || !args.arity(1, 1) || !args.noOtherNamed())
      return Type::invalid();
    auto c = requireConstInt(*a[0], name + " axis");
    if (!c)
      return Type::invalid();
    if (!c->value) {
      diag.error(a[0]->range,
                 name + " axis must be a literal, not a const param");
      return Type::invalid();
    }
    if (*c->value < 0 || *c->value > 2) {
      diag.error(a[0]->range, name + " axis must be 0, 1 or 2, found " +
                                  std::to_string(*c->value));
      return Type::invalid();
    }
    // In a kernel the grid is known: its axes bound the valid ones.
    if (curKernel && !curKernel->grid.empty() &&
        *c->value >= (int64_t)curKernel->grid.size()) {
      diag.error(a[0]->range,
                 name + "(" + std::to_string(*c->value) + "): kernel '" +
                     curKernel->name + "' has a " +
                     std::to_string(curKernel->grid.size()) + "-d grid");
      return Type::invalid();
    }
    return Type::scalar(ScalarKind::I32);
  }

  case Builtin::Arange: {
    if (!args.noTypeArgs() || !args.arity(2, 2) || !args.noOtherNamed())
      return Type::invalid();
    auto lo = requireConstInt(*a[0], "arange start");
    auto hi = requireConstInt(*a[1], "arange end");
    if (!lo || !hi)
      return Type::invalid();
    coerceLiteral(*a[0], ScalarKind::I32);
    coerceLiteral(*a[1], ScalarKind::I32);
    Dim d;
    if (lo->value && hi->value) {
      int64_t n = *hi->value - *lo->value;
      if (n <= 0) {
        diag.error(call.range, "arange needs end > start, found arange(" +
                                   std::to_string(*lo->value) + ", " +
                                   std::to_string(*hi->value) + ")");
        return Type::invalid();
      }
      if ((n & (n - 1)) != 0) {
        diag.error(call.range, "arange length " + std::to_string(n) +
                                   " (from " + std::to_string(*lo->value) +
                                   " to " + std::to_string(*hi->value) +
                                   ") is not a power of two");
        return Type::invalid();
      }
      d = Dim::known(n);
    } else {
      d = Dim::symbolic(lo->value && *lo->value == 0
                            ? hi->text
                            : hi->text + " - " + lo->text);
    }
    if (!checkTileShape({d}, call.range, "arange"))
      return Type::invalid();
    return Type::tile(ScalarKind::I32, {d});
  }

  case Builtin::Zeros:
  case Builtin::Full: {
    auto k = args.oneScalarTypeArg();
    bool isFull = b == Builtin::Full;
    if (!k || !args.arity(isFull ? 2 : 1, isFull ? 2 : 1) || !args.noOtherNamed())
      return Type::invalid();
    auto shape = requireShapeList(*a[0], name + " shape");
    if (!shape || !checkTileShape(*shape, a[0]->range, name))
      return Type::invalid();
    if (isFull) {
      Type vt = checkExpr(*a[1]);
      if (!requireValue(*this, *a[1], vt, "full"))
        return Type::invalid();
      if (vt.isTile()) {
        diag.error(a[1]->range, "full: the fill value must be a scalar, found " +
                                    vt.str());
        return Type::invalid();
      }
      if (vt.isUntypedLiteral ? !coerceLiteral(*a[1], *k) : vt.elem != *k) {
        if (!vt.isUntypedLiteral)
          diag.error(a[1]->range, "full<" + spelling(*k).str() +
                                      ">: the fill value has type " + vt.str() +
                                      "; use cast<" + spelling(*k).str() +
                                      ">(...)");
        return Type::invalid();
      }
    }
    return Type::tile(*k, *shape);
  }

  case Builtin::Cast: {
    auto k = args.oneScalarTypeArg();
    if (!k || !args.arity(1, 1) || !args.noOtherNamed())
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (!requireValue(*this, *a[0], t, "cast"))
      return Type::invalid();
    finalize(*a[0]);
    return withShapeOrScalar(*k, shapeOf(t));
  }

  case Builtin::Broadcast: {
    if (!args.noTypeArgs() || !args.arity(2, 2) || !args.noOtherNamed())
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (t.isInvalid())
      return t;
    if (!t.isValue()) {
      requireValue(*this, *a[0], t, "broadcast");
      return Type::invalid();
    }
    finalize(*a[0]);
    auto shape = requireShapeList(*a[1], "broadcast shape");
    if (!shape || !checkTileShape(*shape, a[1]->range, "broadcast"))
      return Type::invalid();
    if (!broadcastsTo(shapeOf(t), *shape)) {
      diag.error(call.range, "cannot broadcast " + formatShape(shapeOf(t)) +
                                 " to " + formatShape(*shape));
      return Type::invalid();
    }
    return Type::tile(a[0]->type.elem, *shape, t.isPointer);
  }

  case Builtin::Reshape: {
    if (!args.noTypeArgs() || !args.arity(2, 2) || !args.noOtherNamed())
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (t.isInvalid())
      return t;
    if (!t.isTile()) {
      diag.error(a[0]->range, "reshape needs a tile, found " + t.str());
      return Type::invalid();
    }
    auto shape = requireShapeList(*a[1], "reshape shape");
    if (!shape || !checkTileShape(*shape, a[1]->range, "reshape"))
      return Type::invalid();
    auto count = [](const Shape &s) -> std::optional<int64_t> {
      int64_t n = 1;
      for (auto &d : s) {
        if (!d.isKnown())
          return std::nullopt;
        n *= d.value;
      }
      return n;
    };
    auto from = count(t.shape), to = count(*shape);
    if (from && to && *from != *to) {
      diag.error(call.range, "reshape from " + formatShape(t.shape) + " to " +
                                 formatShape(*shape) +
                                 " changes the number of elements (" +
                                 std::to_string(*from) + " vs " +
                                 std::to_string(*to) + ")");
      return Type::invalid();
    }
    return Type::tile(t.elem, *shape, t.isPointer);
  }

  case Builtin::Trans:
  case Builtin::Permute: {
    bool isTrans = b == Builtin::Trans;
    if (!args.noTypeArgs() || !args.arity(isTrans ? 1 : 2, isTrans ? 1 : 2) ||
        !args.noOtherNamed())
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (t.isInvalid())
      return t;
    if (!t.isTile() || (isTrans && t.shape.size() != 2)) {
      diag.error(a[0]->range, name + " needs a " +
                                  (isTrans ? "2-d tile" : "tile") +
                                  ", found " + t.str());
      return Type::invalid();
    }
    if (isTrans)
      return Type::tile(t.elem, {t.shape[1], t.shape[0]}, t.isPointer);
    auto *list = llvm::dyn_cast<ListExpr>(a[1].get());
    std::string expected = "a permutation of 0.." +
                           std::to_string(t.shape.size() - 1) + " for " +
                           t.str();
    if (!list) {
      diag.error(a[1]->range, "permute order must be a list of integer "
                              "literals, " +
                                  expected);
      return Type::invalid();
    }
    list->type.kind = Type::Kind::List;
    list->type.rank = list->elements.size();
    Shape out;
    std::vector<bool> seen(t.shape.size(), false);
    for (auto &el : list->elements) {
      auto c = requireConstInt(*el, "permute order entry");
      if (!c)
        return Type::invalid();
      if (!c->value || *c->value < 0 ||
          *c->value >= (int64_t)t.shape.size() || seen[*c->value]) {
        diag.error(a[1]->range, "permute order " + text(a[1]->range) +
                                    " is not " + expected);
        return Type::invalid();
      }
      seen[*c->value] = true;
      out.push_back(t.shape[*c->value]);
    }
    if (out.size() != t.shape.size()) {
      diag.error(a[1]->range, "permute order " + text(a[1]->range) +
                                  " is not " + expected);
      return Type::invalid();
    }
    return Type::tile(t.elem, out, t.isPointer);
  }

  case Builtin::View: {
    if (!args.noTypeArgs() || !args.arity(3, 3) || !args.noOtherNamed())
      return Type::invalid();
    Type pt = checkExpr(*a[0]);
    if (pt.isInvalid())
      return pt;
    if (!pt.isScalar() || !pt.isPointer) {
      diag.error(a[0]->range, "view: first argument must be a pointer, found " +
                                  pt.str());
      return Type::invalid();
    }
    if (!checkIntList(*this, *a[1], "view sizes"))
      return Type::invalid();
    int64_t rank = llvm::cast<ListExpr>(*a[1]).elements.size();
    if (rank < 1 || rank > kMaxTileRank) {
      diag.error(a[1]->range, "views have rank 1, 2 or 3, found " +
                                  std::to_string(rank));
      return Type::invalid();
    }
    if (!checkIntList(*this, *a[2], "view strides", rank))
      return Type::invalid();
    return Type::view(pt.elem, rank);
  }

  case Builtin::Load: {
    if (!args.noTypeArgs())
      return Type::invalid();
    if (a.empty()) {
      args.arity(1, 3);
      return Type::invalid();
    }
    Type pt = checkExpr(*a[0]);
    if (pt.isInvalid())
      return pt;
    Expr *other = args.named("other");
    if (pt.isView()) {
      if (!args.arity(3, 3) || !args.noOtherNamed())
        return Type::invalid();
      if (!checkIntList(*this, *a[1], "load offsets", pt.rank))
        return Type::invalid();
      auto box = requireShapeList(*a[2], "load box shape");
      if (!box)
        return Type::invalid();
      if ((int64_t)box->size() != pt.rank) {
        diag.error(a[2]->range, "load box shape has " +
                                    std::to_string(box->size()) +
                                    " entries but the view has rank " +
                                    std::to_string(pt.rank));
        return Type::invalid();
      }
      if (!checkTileShape(*box, a[2]->range, "load box"))
        return Type::invalid();
      if (other) {
        Type ot = checkExpr(*other);
        if (ot.isInvalid())
          return ot;
        if (!ot.isScalar() || ot.isPointer ||
            (ot.isUntypedLiteral ? !coerceLiteral(*other, pt.elem)
                                 : ot.elem != pt.elem)) {
          diag.error(other->range, "load: 'other' for a view must be a " +
                                       spelling(pt.elem).str() +
                                       " scalar, found " + ot.str());
          return Type::invalid();
        }
      }
      return Type::tile(pt.elem, *box);
    }
    if (!pt.isPointer) {
      diag.error(a[0]->range, "load: first argument must be a pointer, a "
                              "tile of pointers, or a view, found " +
                                  pt.str());
      return Type::invalid();
    }
    if (a.size() > 1) {
      diag.error(a[1]->range, "load takes mask and other as named arguments: "
                              "load(p, mask = m, other = v)");
      return Type::invalid();
    }
    Expr *mask = args.named("mask");
    if (!args.noOtherNamed())
      return Type::invalid();
    Shape shape = shapeOf(pt);
    if (!checkMask(*this, mask, shape, "load"))
      return Type::invalid();
    if (other && !checkStoredValue(*this, *other, pt.elem, shape, "load 'other'"))
      return Type::invalid();
    return withShapeOrScalar(pt.elem, shape);
  }

  case Builtin::Store:
  case Builtin::AtomicRMW: {
    bool isStore = b == Builtin::Store;
    if (!args.noTypeArgs())
      return Type::invalid();
    if (a.empty()) {
      args.arity(2, 3);
      return Type::invalid();
    }
    Type pt = checkExpr(*a[0]);
    if (pt.isInvalid())
      return pt;
    if (pt.isView() && isStore) {
      if (!args.arity(3, 3) || !args.noOtherNamed())
        return Type::invalid();
      if (!checkIntList(*this, *a[1], "store offsets", pt.rank))
        return Type::invalid();
      Type vt = checkExpr(*a[2]);
      if (vt.isInvalid())
        return vt;
      if (!vt.isTile() || vt.isPointer ||
          (int64_t)vt.shape.size() != pt.rank) {
        diag.error(a[2]->range, "store to a view needs a tile of rank " +
                                    std::to_string(pt.rank) + ", found " +
                                    vt.str());
        return Type::invalid();
      }
      if (vt.elem != pt.elem) {
        diag.error(a[2]->range, "store: tile has element type " +
                                    spelling(vt.elem).str() +
                                    " but the view holds " +
                                    spelling(pt.elem).str() + "; use cast<" +
                                    spelling(pt.elem).str() + ">(...)");
        return Type::invalid();
      }
      return Type::voidType();
    }
    if (!pt.isPointer) {
      diag.error(a[0]->range, name + ": first argument must be " +
                                  (isStore ? "a pointer, a tile of pointers, "
                                             "or a view"
                                           : "a pointer or a tile of pointers") +
                                  ", found " + pt.str());
      return Type::invalid();
    }
    if (!args.arity(2, 2))
      return Type::invalid();
    Expr *mask = args.named("mask");
    if (!args.noOtherNamed())
      return Type::invalid();
    if (!isStore) {
      // The element types that every target has atomics for.
      bool isAdd = name == "atomic_add";
      ScalarKind k = pt.elem;
      bool supported = k == ScalarKind::I32 || k == ScalarKind::U32 ||
                       k == ScalarKind::I64 || k == ScalarKind::U64 ||
                       k == ScalarKind::F32 || (isAdd && k == ScalarKind::F64);
      if (!supported) {
        diag.error(a[0]->range, name + " works on i32, u32, i64, u64" +
                                    (isAdd ? ", f32 and f64" : " and f32") +
                                    " memory, found " + pt.str());
        return Type::invalid();
      }
    }
    Shape shape = shapeOf(pt);
    if (!checkStoredValue(*this, *a[1], pt.elem, shape, name))
      return Type::invalid();
    if (!checkMask(*this, mask, shape, name))
      return Type::invalid();
    if (isStore)
      return Type::voidType();
    return withShapeOrScalar(pt.elem, shape);
  }

  case Builtin::AtomicCas: {
    if (!args.noTypeArgs() || !args.arity(3, 3) || !args.noOtherNamed())
      return Type::invalid();
    Type pt = checkExpr(*a[0]);
    if (pt.isInvalid())
      return pt;
    if (!pt.isPointer) {
      diag.error(a[0]->range, "atomic_cas: first argument must be a pointer "
                              "or a tile of pointers, found " +
                                  pt.str());
      return Type::invalid();
    }
    if (isFloat(pt.elem) || pt.elem == ScalarKind::Bool ||
        bitWidth(pt.elem) < 32) {
      diag.error(a[0]->range, "atomic_cas works on 32- and 64-bit integer "
                              "memory, found " +
                                  pt.str());
      return Type::invalid();
    }
    Shape shape = shapeOf(pt);
    if (!checkStoredValue(*this, *a[1], pt.elem, shape, "atomic_cas compare") ||
        !checkStoredValue(*this, *a[2], pt.elem, shape, "atomic_cas value"))
      return Type::invalid();
    return withShapeOrScalar(pt.elem, shape);
  }

  case Builtin::FloatMath:
  case Builtin::Abs: {
    if (!args.noTypeArgs() || !args.arity(1, 1) || !args.noOtherNamed())
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (!requireValue(*this, *a[0], t, name))
      return Type::invalid();
    if (t.isUntypedLiteral)
      coerceLiteral(*a[0], b == Builtin::Abs && !isFloat(t.elem)
                               ? ScalarKind::I32
                               : ScalarKind::F32);
    t = a[0]->type;
    if (isFp8(t.elem)) {
      diag.error(a[0]->range, fp8StorageOnly(name, t.elem));
      return Type::invalid();
    }
    if (b == Builtin::FloatMath && !isFloat(t.elem)) {
      diag.error(a[0]->range, name + " needs a float operand, found " +
                                  t.str() + "; use cast<f32>(...)");
      return Type::invalid();
    }
    if (b == Builtin::Abs && t.elem == ScalarKind::Bool) {
      diag.error(a[0]->range, "abs needs a number, found " + t.str());
      return Type::invalid();
    }
    return t;
  }

  case Builtin::Fma:
  case Builtin::MinMaxElementwise:
  case Builtin::Where: {
    size_t n = b == Builtin::MinMaxElementwise ? 2 : 3;
    if (!args.noTypeArgs() || !args.arity(n, n) || !args.noOtherNamed())
      return Type::invalid();
    bool ok = true;
    for (auto &arg : a)
      ok &= requireValue(*this, *arg, checkExpr(*arg), name);
    if (!ok)
      return Type::invalid();
    size_t first = 0;
    if (b == Builtin::Where) {
      if (a[0]->type.elem != ScalarKind::Bool) {
        diag.error(a[0]->range, "where: the condition must be bool, found " +
                                    a[0]->type.str());
        return Type::invalid();
      }
      first = 1;
    }
    // Unify the value operands pairwise, then broadcast everything.
    auto elem = unifyElems(*a[first], *a[first + 1], name, call.getLoc());
    if (!elem)
      return Type::invalid();
    if (b != Builtin::Where && isFp8(*elem)) {
      diag.error(call.range, fp8StorageOnly(name, *elem));
      return Type::invalid();
    }
    if (b == Builtin::MinMaxElementwise && *elem == ScalarKind::Bool) {
      diag.error(call.range, name + " needs integer or float operands, found "
                                    "bool; use && or || on masks");
      return Type::invalid();
    }
    if (b == Builtin::Fma) {
      Expr &c = *a[2];
      if (c.type.isUntypedLiteral)
        coerceLiteral(c, *elem);
      else if (c.type.elem != *elem)
        elem = unifyElems(*a[0], c, name, call.getLoc());
      if (!elem)
        return Type::invalid();
      if (!isFloat(*elem)) {
        diag.error(call.range, "fma needs float operands");
        return Type::invalid();
      }
    }
    bool literal = llvm::all_of(llvm::drop_begin(a, first), [](auto &x) {
      return x->type.isUntypedLiteral;
    });
    if (!literal)
      for (size_t i = first; i < a.size(); ++i)
        coerceLiteral(*a[i], *elem);
    Shape shape;
    for (auto &arg : a) {
      auto s = broadcastShapes(shape, shapeOf(arg->type), call.getLoc(),
                               {arg->range});
      if (!s)
        return Type::invalid();
      shape = *s;
    }
    Type t = withShapeOrScalar(*elem, shape);
    t.isUntypedLiteral = literal;
    return t;
  }

  case Builtin::Cdiv: {
    if (!args.noTypeArgs() || !args.arity(2, 2) || !args.noOtherNamed())
      return Type::invalid();
    Type lt = checkExpr(*a[0]), rt = checkExpr(*a[1]);
    if (lt.isInvalid() || rt.isInvalid())
      return Type::invalid();
    for (auto *arg : {a[0].get(), a[1].get()})
      if (!arg->type.isScalar() || arg->type.isPointer ||
          !isInteger(arg->type.elem)) {
        diag.error(arg->range, "cdiv needs integer scalars, found " +
                                   arg->type.str());
        return Type::invalid();
      }
    auto elem = unifyElems(*a[0], *a[1], "cdiv", call.getLoc());
    if (!elem)
      return Type::invalid();
    coerceLiteral(*a[0], *elem);
    coerceLiteral(*a[1], *elem);
    auto lc = constOf(*a[0]), rc = constOf(*a[1]);
    if (lc && rc) {
      std::optional<int64_t> v;
      if (lc->value && rc->value) {
        if (*rc->value == 0) {
          diag.error(a[1]->range, "cdiv by zero");
          return Type::invalid();
        }
        v = (*lc->value + *rc->value - 1) / *rc->value;
      }
      setConst(call, ConstInt{v, v ? std::to_string(*v)
                                    : "cdiv(" + lc->text + ", " + rc->text + ")"});
    }
    return Type::scalar(*elem);
  }

  case Builtin::MinMax: {
    // min(tile, axis) is a reduction; min(a, b) the smaller of two values.
    if (!args.noTypeArgs())
      return Type::invalid();
    bool reduction = false;
    if (!a.empty()) {
      Type t0 = checkExpr(*a[0]);
      if (t0.isInvalid())
        return t0;
      reduction = isMinMaxReduction(call);
    }
    if (reduction)
      goto reduce;
    {
      if (!args.arity(2, 2) || !args.noOtherNamed())
        return Type::invalid();
      Type rt = checkExpr(*a[1]);
      if (!requireValue(*this, *a[0], a[0]->type, name) ||
          !requireValue(*this, *a[1], rt, name))
        return Type::invalid();
      auto elem = unifyElems(*a[0], *a[1], name, call.getLoc());
      if (!elem)
        return Type::invalid();
      if (*elem == ScalarKind::Bool) {
        diag.error(call.range, name + " needs integer or float operands, "
                                      "found bool; use && or || on masks");
        return Type::invalid();
      }
      if (isFp8(*elem)) {
        diag.error(call.range, fp8StorageOnly(name, *elem));
        return Type::invalid();
      }
      bool literal = a[0]->type.isUntypedLiteral && a[1]->type.isUntypedLiteral;
      if (!literal) {
        coerceLiteral(*a[0], *elem);
        coerceLiteral(*a[1], *elem);
      }
      auto s = broadcastShapes(shapeOf(a[0]->type), shapeOf(a[1]->type),
                               call.getLoc(), {a[0]->range, a[1]->range});
      if (!s)
        return Type::invalid();
      auto lc = constOf(*a[0]), rc = constOf(*a[1]);
      if (lc && rc && !isFloat(*elem)) {
        std::optional<int64_t> v;
        if (lc->value && rc->value)
          v = name == "min" ? std::min(*lc->value, *rc->value)
                            : std::max(*lc->value, *rc->value);
        setConst(call, ConstInt{v, v ? std::to_string(*v)
                                     : name + "(" + lc->text + ", " + rc->text +
                                           ")"});
      }
      Type t = withShapeOrScalar(*elem, *s);
      t.isUntypedLiteral = literal;
      return t;
    }
  }
  reduce:
  case Builtin::Reduce:
  case Builtin::Scan: {
    bool isScan = b == Builtin::Scan;
    if (!args.noTypeArgs() || !args.arity(1, 2))
      return Type::invalid();
    Expr *axisExpr = a.size() > 1 ? a[1].get() : args.named("axis");
    if (a.size() > 1 && args.named("axis")) {
      diag.error(call.range, name + ": the axis is given twice");
      return Type::invalid();
    }
    Expr *keep = isScan ? nullptr : args.named("keepdims");
    if (!args.noOtherNamed())
      return Type::invalid();
    Type t = a[0]->type.isInvalid() ? checkExpr(*a[0]) : a[0]->type;
    if (t.isInvalid())
      return t;
    if (!t.isTile() || t.isPointer) {
      diag.error(a[0]->range, name + " needs a tile, found " + t.str());
      return Type::invalid();
    }
    auto axis = requireAxis(axisExpr, t, name, call.getLoc());
    if (!axis)
      return Type::invalid();
    bool keepdims = false;
    if (keep) {
      Type kt = checkExpr(*keep);
      auto c = constOf(*keep);
      if (kt.isInvalid())
        return kt;
      if (kt.elem != ScalarKind::Bool || !c || !c->value) {
        diag.error(keep->range, "keepdims must be true or false");
        return Type::invalid();
      }
      keepdims = *c->value != 0;
    }
    bool isArg = name == "argmax" || name == "argmin";
    if (isFp8(t.elem)) {
      diag.error(a[0]->range, fp8StorageOnly(name, t.elem));
      return Type::invalid();
    }
    if (name == "xor_sum" && !isInteger(t.elem)) {
      diag.error(a[0]->range, "xor_sum needs an integer tile, found " + t.str());
      return Type::invalid();
    }
    if (t.elem == ScalarKind::Bool && name != "sum" && name != "max" &&
        name != "min" && !isArg) {
      diag.error(a[0]->range, name + " does not apply to bool tiles");
      return Type::invalid();
    }
    ScalarKind elem = isArg ? ScalarKind::I32 : accumulatorKind(t.elem);
    if (isScan)
      return Type::tile(elem, t.shape);
    Shape shape = t.shape;
    if (keepdims)
      shape[*axis] = Dim::known(1);
    else
      shape.erase(shape.begin() + *axis);
    return withShapeOrScalar(elem, shape);
  }

  case Builtin::Dot: {
    if (!args.noTypeArgs() || !args.arity(2, 3))
      return Type::invalid();
    Expr *prec = args.named("precision");
    if (!args.noOtherNamed())
      return Type::invalid();
    Type at = checkExpr(*a[0]), bt = checkExpr(*a[1]);
    if (at.isInvalid() || bt.isInvalid())
      return Type::invalid();
    for (auto *arg : {a[0].get(), a[1].get()})
      if (!arg->type.isTile() || arg->type.isPointer ||
          arg->type.shape.size() != 2) {
        diag.error(arg->range, "dot needs 2-d tiles, found " +
                                   arg->type.str());
        return Type::invalid();
      }
    if (at.elem != bt.elem && !(isFp8(at.elem) && isFp8(bt.elem))) {
      diag.error(call.range, "dot operands must have the same element type "
                             "(or both be fp8), "
                             "found " +
                                 spelling(at.elem).str() + " and " +
                                 spelling(bt.elem).str());
      return Type::invalid();
    }
    ScalarKind acc;
    switch (at.elem) {
    case ScalarKind::F16:
    case ScalarKind::BF16:
    case ScalarKind::F32:
    case ScalarKind::F8E4M3:
    case ScalarKind::F8E5M2:
      acc = ScalarKind::F32;
      break;
    case ScalarKind::I8:
      acc = ScalarKind::I32;
      break;
    default:
      diag.error(call.range, "dot supports f16, bf16, f32, fp8 and i8 operands, "
                             "found " +
                                 spelling(at.elem).str());
      return Type::invalid();
    }
    const Dim &k1 = at.shape[1], &k2 = bt.shape[0];
    if (!k1.mayEqual(k2)) {
      diag.error(call.range, "dot: inner dimensions differ: " +
                                 formatShape(at.shape) + " x " +
                                 formatShape(bt.shape));
      return Type::invalid();
    }
    for (const Dim *d : {&at.shape[0], &at.shape[1], &bt.shape[1]})
      if (d->isKnown() && d->value < 16) {
        diag.error(call.range, "dot: every dimension must be at least 16 (the "
                               "matrix units' smallest shape), found " +
                                   formatShape(at.shape) + " x " +
                                   formatShape(bt.shape));
        return Type::invalid();
      }
    Type result = Type::tile(acc, {at.shape[0], bt.shape[1]});
    if (a.size() == 3) {
      Type ct = checkExpr(*a[2]);
      if (ct.isInvalid())
        return ct;
      // Sizes that depend on const params differently ([BN, BN] for
      // [BM / 2, BN]) are checked per variant.
      if (!ct.isTile() || ct.elem != acc || ct.shape.size() != 2 ||
          !ct.shape[0].mayEqual(result.shape[0]) ||
          !ct.shape[1].mayEqual(result.shape[1])) {
        diag.error(a[2]->range, "dot accumulator must be " + result.str() +
                                    ", found " + ct.str());
        return Type::invalid();
      }
    }
    if (prec) {
      auto *s = llvm::dyn_cast<StringLitExpr>(prec);
      if (!s || (s->value != "ieee" && s->value != "tf32")) {
        diag.error(prec->range, "precision must be \"ieee\" or \"tf32\"");
        return Type::invalid();
      }
      prec->type.kind = Type::Kind::String;
      if (s->value == "tf32" && at.elem != ScalarKind::F32) {
        diag.error(prec->range, "precision = \"tf32\" applies to f32 operands "
                                "only, found " +
                                    spelling(at.elem).str());
        return Type::invalid();
      }
    }
    return result;
  }

  case Builtin::Print:
  case Builtin::Assert: {
    bool isPrint = b == Builtin::Print;
    if (!args.noTypeArgs() || !args.noOtherNamed())
      return Type::invalid();
    if (isPrint) {
      if (a.empty() || !llvm::isa<StringLitExpr>(*a[0])) {
        diag.error(call.range, "print needs a format string first: "
                               "print(\"x = \", x)");
        return Type::invalid();
      }
      a[0]->type.kind = Type::Kind::String;
      for (size_t i = 1; i < a.size(); ++i) {
        Type t = checkExpr(*a[i]);
        if (t.isInvalid())
          return t;
        if (!t.isValue()) {
          diag.error(a[i]->range, "print takes scalars and tiles, found " +
                                      t.str());
          return Type::invalid();
        }
        if (!t.isPointer && isFp8(t.elem)) {
          diag.error(a[i]->range, fp8StorageOnly("print", t.elem));
          return Type::invalid();
        }
        finalize(*a[i]);
      }
      return Type::voidType();
    }
    if (!args.arity(1, 2))
      return Type::invalid();
    Type t = checkExpr(*a[0]);
    if (t.isInvalid())
      return t;
    if (!t.isValue() || t.isPointer || t.elem != ScalarKind::Bool) {
      diag.error(a[0]->range, "assert needs a bool condition, found " + t.str());
      return Type::invalid();
    }
    if (a.size() == 2) {
      if (!llvm::isa<StringLitExpr>(*a[1])) {
        diag.error(a[1]->range, "assert message must be a string literal");
        return Type::invalid();
      }
      a[1]->type.kind = Type::Kind::String;
    }
    return Type::voidType();
  }
  }
  return Type::invalid();
}
