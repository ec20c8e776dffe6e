//===- TuneSpace.cpp - Const evaluation and tune-space enumeration -------===//
#include "dsl/TuneSpace.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace kiln::dsl;

std::optional<int64_t> kiln::dsl::evalConstExpr(const Expr &e,
                                                const Binding &binding,
                                                std::string *err,
                                                llvm::SMLoc *errLoc) {
  auto fail = [&](const Expr &at, std::string why) -> std::optional<int64_t> {
    if (err && err->empty()) {
      *err = std::move(why);
      if (errLoc)
        *errLoc = at.getLoc();
    }
    return std::nullopt;
  };
  switch (e.getKind()) {
  case ExprKind::IntLit: {
    uint64_t v = llvm::cast<IntLitExpr>(e).value;
    if (v > uint64_t(INT64_MAX))
      return fail(e, "literal too large");
    return int64_t(v);
  }
  case ExprKind::BoolLit:
    return llvm::cast<BoolLitExpr>(e).value ? 1 : 0;
  case ExprKind::Ident: {
    auto &id = llvm::cast<IdentExpr>(e);
    auto it = binding.find(id.name);
    if (it == binding.end())
      return fail(e, "'" + id.name + "' is not a compile-time constant");
    return it->second;
  }
  case ExprKind::Unary: {
    auto &u = llvm::cast<UnaryExpr>(e);
    auto v = evalConstExpr(*u.operand, binding, err, errLoc);
    if (!v)
      return std::nullopt;
    switch (u.op) {
    case UnaryOp::Neg:
      return int64_t(0 - uint64_t(*v));
    case UnaryOp::Not:
      return *v == 0 ? 1 : 0;
    case UnaryOp::BitNot:
      return ~*v;
    }
    return std::nullopt;
  }
  case ExprKind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(e);
    auto l = evalConstExpr(*b.lhs, binding, err, errLoc);
    auto r = evalConstExpr(*b.rhs, binding, err, errLoc);
    if (!l || !r)
      return std::nullopt;
    int64_t x = *l, y = *r;
    switch (b.op) {
    case BinaryOp::Add: return int64_t(uint64_t(x) + uint64_t(y));
    case BinaryOp::Sub: return int64_t(uint64_t(x) - uint64_t(y));
    case BinaryOp::Mul: return int64_t(uint64_t(x) * uint64_t(y));
    case BinaryOp::Div:
    case BinaryOp::Rem:
      if (y == 0)
        return fail(*b.rhs, "division by zero");
      if (x == INT64_MIN && y == -1)
        return fail(e, "overflow");
      return b.op == BinaryOp::Div ? x / y : x % y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::LogicAnd: return x && y;
    case BinaryOp::LogicOr: return x || y;
    case BinaryOp::BitAnd: return x & y;
    case BinaryOp::BitOr: return x | y;
    case BinaryOp::BitXor: return x ^ y;
    case BinaryOp::Shl:
      if (y < 0 || y >= 64)
        return fail(*b.rhs, "shift amount out of range");
      return int64_t(uint64_t(x) << y);
    case BinaryOp::Shr:
      if (y < 0 || y >= 64)
        return fail(*b.rhs, "shift amount out of range");
      return x >> y;
    }
    return std::nullopt;
  }
  case ExprKind::Call: {
    auto &c = llvm::cast<CallExpr>(e);
    if ((c.callee == "cdiv" || c.callee == "min" || c.callee == "max") &&
        c.args.size() == 2 && c.namedArgs.empty()) {
      auto l = evalConstExpr(*c.args[0], binding, err, errLoc);
      auto r = evalConstExpr(*c.args[1], binding, err, errLoc);
      if (!l || !r)
        return std::nullopt;
      if (c.callee == "min")
        return std::min(*l, *r);
      if (c.callee == "max")
        return std::max(*l, *r);
      if (*r == 0)
        return fail(*c.args[1], "cdiv by zero");
      return (*l + *r - 1) / *r;
    }
    return fail(e, "'" + c.callee + "' cannot be evaluated at compile time");
  }
  default:
    return fail(e, "not a compile-time integer expression");
  }
}

void kiln::dsl::collectIdents(const Expr &e, std::vector<std::string> &names) {
  switch (e.getKind()) {
  case ExprKind::Ident:
    names.push_back(llvm::cast<IdentExpr>(e).name);
    return;
  case ExprKind::Unary:
    return collectIdents(*llvm::cast<UnaryExpr>(e).operand, names);
  case ExprKind::Binary:
    collectIdents(*llvm::cast<BinaryExpr>(e).lhs, names);
    return collectIdents(*llvm::cast<BinaryExpr>(e).rhs, names);
  case ExprKind::Call:
    for (auto &a : llvm::cast<CallExpr>(e).args)
      collectIdents(*a, names);
    return;
  case ExprKind::List:
    for (auto &a : llvm::cast<ListExpr>(e).elements)
      collectIdents(*a, names);
    return;
  case ExprKind::Index:
    return collectIdents(*llvm::cast<IndexExpr>(e).base, names);
  default:
    return;
  }
}

std::string kiln::dsl::toPrefixForm(const Expr &e) {
  switch (e.getKind()) {
  case ExprKind::IntLit:
    return std::to_string(llvm::cast<IntLitExpr>(e).value);
  case ExprKind::BoolLit:
    return llvm::cast<BoolLitExpr>(e).value ? "1" : "0";
  case ExprKind::Ident:
    return llvm::cast<IdentExpr>(e).name;
  case ExprKind::Unary: {
    auto &u = llvm::cast<UnaryExpr>(e);
    const char *op = u.op == UnaryOp::Neg ? "neg" : u.op == UnaryOp::Not ? "!" : "~";
    return std::string("(") + op + " " + toPrefixForm(*u.operand) + ")";
  }
  case ExprKind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(e);
    return "(" + spelling(b.op).str() + " " + toPrefixForm(*b.lhs) + " " +
           toPrefixForm(*b.rhs) + ")";
  }
  case ExprKind::Call: {
    auto &c = llvm::cast<CallExpr>(e);
    std::string s = "(" + c.callee;
    for (auto &a : c.args)
      s += " " + toPrefixForm(*a);
    return s + ")";
  }
  default:
    return "?";
  }
}

std::string Variant::str() const {
  std::string s;
  for (auto &[name, value] : values)
    s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return s;
}

/// Splits `e` at top-level `&&` into conjuncts.
static void splitConjuncts(const Expr &e, std::vector<const Expr *> &out) {
  if (auto *b = llvm::dyn_cast<BinaryExpr>(&e); b && b->op == BinaryOp::LogicAnd) {
    splitConjuncts(*b->lhs, out);
    splitConjuncts(*b->rhs, out);
    return;
  }
  out.push_back(&e);
}

std::optional<TuneSpace> kiln::dsl::buildTuneSpace(const KernelDecl &k,
                                                   const Binding &pins,
                                                   DiagnosticEngine &diag,
                                                   llvm::SourceMgr &sm) {
  (void)sm;
  TuneSpace space;
  struct Axis {
    std::string name;
    std::vector<int64_t> values; ///< Empty: derived from its default.
    const Expr *defaultExpr = nullptr;
  };
  std::vector<Axis> axes;
  std::set<std::string> constNames;
  for (auto &cp : k.constParams) {
    axes.push_back({cp.name, {}, cp.defaultValue.get()});
    constNames.insert(cp.name);
  }
  axes.push_back({kWarpsName, {kDefaultWarps}, nullptr});
  axes.push_back({kStagesName, {kDefaultStages}, nullptr});
  constNames.insert(kWarpsName);
  constNames.insert(kStagesName);

  bool ok = true;
  auto axisNamed = [&](const std::string &n) -> Axis * {
    for (auto &a : axes)
      if (a.name == n)
        return &a;
    return nullptr;
  };
  if (k.tune) {
    for (auto &entry : k.tune->entries) {
      Axis *axis = axisNamed(entry.name);
      if (!axis)
        continue; // Reported by Sema.
      axis->values.clear();
      for (auto &v : entry.values) {
        std::string err;
        llvm::SMLoc loc;
        auto value = evalConstExpr(*v, {}, &err, &loc);
        if (!value) {
          diag.error(loc.isValid() ? loc : v->getLoc(),
                     "tune value: " + err);
          ok = false;
          continue;
        }
        if (!llvm::is_contained(axis->values, *value))
          axis->values.push_back(*value);
      }
    }
    for (auto &key : k.tune->key)
      space.key.push_back(key->name);
    space.keyBuckets = k.tune->keyBuckets;
  }
  // -D pins.
  for (auto &pin : pins) {
    const std::string &name = pin.first;
    int64_t value = pin.second;
    Axis *axis = axisNamed(name);
    if (!axis)
      continue; // The driver reports pins that match no kernel.
    const TuneEntry *entry = nullptr;
    if (k.tune)
      for (auto &e : k.tune->entries)
        if (e.name == name)
          entry = &e;
    if (entry && !llvm::is_contained(axis->values, value)) {
      std::string list;
      for (int64_t v : axis->values)
        list += (list.empty() ? "" : ", ") + std::to_string(v);
      diag.error(entry->nameRange.Start,
                 "-D " + name + "=" + std::to_string(value) + ": " +
                     std::to_string(value) + " is not in the tune list of '" +
                     name + "' in kernel '" + k.name + "' [" + list + "]");
      ok = false;
      continue;
    }
    axis->values = {value};
  }
  for (auto &axis : axes) {
    if (!axis.values.empty() || axis.defaultExpr)
      continue;
    const ConstParam *cp = nullptr;
    for (auto &c : k.constParams)
      if (c.name == axis.name)
        cp = &c;
    diag.error(cp ? cp->nameRange.Start : k.nameRange.Start,
               "const param '" + axis.name + "' of kernel '" + k.name +
                   "' has no value: give it a default, list it in 'tune', or "
                   "pin it with -D " +
                   axis.name + "=<value>");
    ok = false;
  }
  if (!ok)
    return std::nullopt;

  // Split `where` into compile-time and launch-time conjuncts.
  std::vector<const Expr *> compileConds;
  if (k.tune && k.tune->where) {
    std::vector<const Expr *> conjuncts;
    splitConjuncts(*k.tune->where, conjuncts);
    for (const Expr *c : conjuncts) {
      std::vector<std::string> idents;
      collectIdents(*c, idents);
      bool compileTime = llvm::all_of(
          idents, [&](const std::string &n) { return constNames.count(n); });
      if (compileTime) {
        compileConds.push_back(c);
      } else {
        space.launchConditions.push_back(toPrefixForm(*c));
        const char *b = c->range.Start.getPointer();
        const char *e = c->range.End.getPointer();
        space.launchConditionTexts.push_back(b && e && e > b ? std::string(b, e)
                                                             : toPrefixForm(*c));
      }
    }
  }

  // Enumerate the cross product; the last axis varies fastest.
  std::vector<size_t> idx(axes.size(), 0);
  size_t total = 1;
  for (auto &a : axes)
    total *= std::max<size_t>(1, a.values.size());
  if (total > 64 * kMaxVariants) {
    diag.error(k.tune ? k.tune->range.Start : k.nameRange.Start,
               "the tune space of kernel '" + k.name + "' has " +
                   std::to_string(total) +
                   " combinations before pruning; the limit is " +
                   std::to_string(kMaxVariants) + " variants");
    return std::nullopt;
  }
  for (size_t n = 0; n < total; ++n) {
    size_t rest = n;
    for (size_t i = axes.size(); i-- > 0;) {
      size_t count = std::max<size_t>(1, axes[i].values.size());
      idx[i] = rest % count;
      rest /= count;
    }
    Binding binding;
    Variant variant;
    bool good = true;
    for (size_t i = 0; i < axes.size() && good; ++i) {
      int64_t v;
      if (!axes[i].values.empty()) {
        v = axes[i].values[idx[i]];
      } else {
        std::string err;
        llvm::SMLoc loc;
        auto d = evalConstExpr(*axes[i].defaultExpr, binding, &err, &loc);
        if (!d) {
          diag.error(loc.isValid() ? loc : axes[i].defaultExpr->getLoc(),
                     "default of '" + axes[i].name + "': " + err);
          return std::nullopt;
        }
        v = *d;
      }
      binding[axes[i].name] = v;
      variant.values.emplace_back(axes[i].name, v);
    }
    for (const Expr *c : compileConds) {
      std::string err;
      llvm::SMLoc loc;
      auto r = evalConstExpr(*c, binding, &err, &loc);
      if (!r) {
        diag.error(loc.isValid() ? loc : c->getLoc(),
                   "where (for " + variant.str() + "): " + err);
        return std::nullopt;
      }
      if (*r == 0) {
        good = false;
        break;
      }
    }
    if (!good)
      continue;
    space.variants.push_back(std::move(variant));
    if (space.variants.size() > kMaxVariants) {
      diag.error(k.tune ? k.tune->range.Start : k.nameRange.Start,
                 "the tune space of kernel '" + k.name + "' has more than " +
                     std::to_string(kMaxVariants) +
                     " variants after pruning; narrow it with 'where' or -D");
      return std::nullopt;
    }
  }
  if (space.variants.empty()) {
    llvm::SMLoc loc = k.tune && k.tune->where ? k.tune->where->getLoc()
                                              : k.nameRange.Start;
    diag.error(loc, "no variant of kernel '" + k.name +
                        "' satisfies the compile-time part of 'where'" +
                        (pins.empty() ? "" : " with the given -D values"));
    return std::nullopt;
  }
  return space;
}
