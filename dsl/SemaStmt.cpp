//===- SemaStmt.cpp - Statements ------------------------------------------===//
//
// let/var, assignment, for, if, return; the rules a variable's type keeps.
//
//===----------------------------------------------------------------------===//
#include "dsl/SemaImpl.h"

#include "llvm/ADT/STLExtras.h"

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Sema::Impl::checkBlock(BlockStmt &b, bool newScope) {
  ++blockDepth;
  if (newScope)
    pushScope();
  for (auto &s : b.stmts) {
    if (diag.tooManyErrors())
      break;
    checkStmt(*s);
  }
  if (newScope)
    popScope();
  --blockDepth;
}

void Sema::Impl::checkStmt(Stmt &s) {
  switch (s.getKind()) {
  case StmtKind::Let:
    return checkLet(llvm::cast<LetStmt>(s));
  case StmtKind::Assign:
    return checkAssign(llvm::cast<AssignStmt>(s));
  case StmtKind::For:
    return checkFor(llvm::cast<ForStmt>(s));
  case StmtKind::If:
    return checkIf(llvm::cast<IfStmt>(s));
  case StmtKind::Return:
    return checkReturn(llvm::cast<ReturnStmt>(s));
  case StmtKind::Block:
    return checkBlock(llvm::cast<BlockStmt>(s));
  case StmtKind::ExprStmt: {
    auto &es = llvm::cast<ExprStmt>(s);
    if (es.expr) {
      checkExpr(*es.expr);
      finalize(*es.expr);
    }
    return;
  }
  }
}

/// Whether two types may be the same in every variant: equal but for
/// dimensions of which one depends on const params.
static bool maybeSameType(const Type &a, const Type &b) {
  if (a.kind != b.kind || a.elem != b.elem || a.isPointer != b.isPointer ||
      a.rank != b.rank || a.shape.size() != b.shape.size())
    return false;
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (!a.shape[i].mayEqual(b.shape[i]))
      return false;
  return true;
}

/// True if `value` (already checked) may be stored in a variable of type
/// `target`: same element type after literal adaptation, and a shape that
/// broadcasts to the target's (in every variant, where sizes depend on
/// const params: `acc = load(p + arange(0, 64))` into a `[BM]` var).
static bool assignable(Sema::Impl &s, Expr &value, const Type &target) {
  Type vt = value.type;
  if (vt.isInvalid() || target.isInvalid())
    return true;
  if (vt.isView() || target.isView())
    return vt == target;
  if (!vt.isValue() || !target.isValue() || vt.isPointer != target.isPointer)
    return false;
  if (vt.elem != target.elem) {
    if (!vt.isUntypedLiteral || vt.isPointer)
      return false;
    if (!s.coerceLiteral(value, target.elem))
      return true; // Reported.
  }
  if (vt.isScalar())
    return true; // A scalar broadcasts to any tile (and to a scalar).
  if (!target.isTile() || vt.shape.size() > target.shape.size())
    return false;
  size_t off = target.shape.size() - vt.shape.size();
  for (size_t i = 0; i < vt.shape.size(); ++i) {
    const Dim &a = vt.shape[i], &b = target.shape[off + i];
    if (!a.mayEqual(b) && !(a.isKnown() && a.value == 1))
      return false;
  }
  return true;
}

void Sema::Impl::checkLet(LetStmt &s) {
  Type t = s.init ? checkExpr(*s.init) : Type::invalid();
  if (!t.isInvalid() && (t.kind == Type::Kind::Void ||
                         t.kind == Type::Kind::String ||
                         t.kind == Type::Kind::List)) {
    diag.error(s.init->range, "the initializer of '" + s.name +
                                  "' has no value (" + t.str() + ")");
    t = Type::invalid();
  }
  if (s.declaredType && !t.isInvalid()) {
    auto declared = resolveTypeExpr(*s.declaredType);
    if (declared) {
      if (!assignable(*this, *s.init, *declared))
        diag.error(s.init->range, "'" + s.name + "' is declared " +
                                      declared->str() +
                                      " but initialized with " +
                                      s.init->type.str());
      t = *declared;
    }
  } else if (!t.isInvalid()) {
    finalize(*s.init);
    t = s.init->type;
  }
  t.isUntypedLiteral = false;
  Symbol sym;
  sym.kind = Symbol::Kind::Local;
  sym.type = t;
  sym.declRange = s.nameRange;
  sym.isMutable = s.isMutable;
  if (!s.isMutable && s.init)
    if (auto c = constOf(*s.init))
      sym.constVal = c;
  declare(s.name, sym);
}

void Sema::Impl::checkAssign(AssignStmt &s) {
  Type vt = s.value ? checkExpr(*s.value) : Type::invalid();
  Symbol *sym = lookup(s.name);
  if (!sym) {
    std::string sug = suggestName(s.name, visibleNames());
    diag.error(s.nameRange, "unknown identifier '" + s.name + "'" +
                                (sug.empty() ? "" : "; did you mean '" + sug + "'?"));
    return;
  }
  if (!sym->isMutable) {
    std::string why = sym->kind == Symbol::Kind::Local
                          ? "it is declared with 'let'; declare it with 'var' "
                            "to assign to it"
                      : sym->kind == Symbol::Kind::LoopVar
                          ? "it is a loop variable"
                      : sym->kind == Symbol::Kind::ConstParam
                          ? "it is a const param (fixed per compiled variant)"
                          : "it is a parameter";
    diag.error(s.nameRange, "cannot assign to '" + s.name + "': " + why);
    if (sym->declRange.Start.isValid())
      diag.note(sym->declRange.Start, "'" + s.name + "' is declared here");
    return;
  }
  if (vt.isInvalid() || sym->type.isInvalid())
    return;
  Type target = sym->type;
  if (s.compound) {
    // x op= v is x = x op v; the operator's rules apply.
    IdentExpr lhs(s.nameRange, s.name);
    lhs.type = target;
    Type rt = combineBinary(*s.compound, &lhs, *s.value, s.opLoc);
    if (rt.isInvalid())
      return;
    if (!maybeSameType(rt, target))
      diag.error(s.range, "'" + s.name + " " + spelling(*s.compound).str() +
                              "= ...' changes the type of '" + s.name +
                              "' from " + target.str() + " to " + rt.str());
    return;
  }
  if (!assignable(*this, *s.value, target))
    diag.error(s.value->range, "cannot assign " + s.value->type.str() +
                                   " to '" + s.name + "' of type " +
                                   target.str() +
                                   " (a variable keeps the type of its "
                                   "initializer)");
}

void Sema::Impl::checkFor(ForStmt &s) {
  Type lt = s.lo ? checkExpr(*s.lo) : Type::invalid();
  Type ht = s.hi ? checkExpr(*s.hi) : Type::invalid();
  Type st = s.step ? checkExpr(*s.step) : Type::scalar(ScalarKind::I32);
  ScalarKind ivType = ScalarKind::I32;
  bool ok = !lt.isInvalid() && !ht.isInvalid() && !st.isInvalid();
  auto requireInt = [&](Expr *e, const Type &t, StringRef what) {
    if (!e || t.isInvalid())
      return;
    if (!t.isScalar() || t.isPointer || !isInteger(t.elem)) {
      diag.error(e->range, "range " + what.str() +
                               " must be an integer scalar, found " + t.str());
      ok = false;
    }
  };
  requireInt(s.lo.get(), lt, "start");
  requireInt(s.hi.get(), ht, "end");
  requireInt(s.step.get(), st, "step");
  if (ok) {
    if (auto k = unifyElems(*s.lo, *s.hi, "range", s.lo->getLoc()))
      ivType = *k;
    if (s.step) {
      ScalarKind stepType = s.step->type.elem;
      if (s.step->type.isUntypedLiteral)
        coerceLiteral(*s.step, ivType);
      else if (stepType != ivType &&
               (isSigned(stepType) != isSigned(ivType) ||
                bitWidth(stepType) > bitWidth(ivType)))
        diag.error(s.step->range, "range step has type " +
                                      s.step->type.str() +
                                      ", which does not widen to the loop "
                                      "variable's type " +
                                      spelling(ivType).str());
      if (auto c = constOf(*s.step); c && c->value && *c->value <= 0)
        diag.error(s.step->range, "range step must be positive, found " +
                                      std::to_string(*c->value));
    }
    if (s.lo->type.isUntypedLiteral)
      coerceLiteral(*s.lo, ivType);
    if (s.hi->type.isUntypedLiteral)
      coerceLiteral(*s.hi, ivType);
  }
  pushScope();
  Symbol sym;
  sym.kind = Symbol::Kind::LoopVar;
  sym.type = Type::scalar(ivType);
  sym.declRange = s.varRange;
  declare(s.var, sym);
  ++loopDepth;
  if (s.body)
    checkBlock(*s.body, /*newScope=*/true);
  --loopDepth;
  popScope();
}

void Sema::Impl::checkIf(IfStmt &s) {
  Type ct = s.cond ? checkExpr(*s.cond) : Type::invalid();
  if (!ct.isInvalid()) {
    if (ct.isTile())
      diag.error(s.cond->range, "if condition must be a scalar bool, found " +
                                    ct.str() +
                                    "; use where(...) to select elementwise");
    else if (!ct.isScalar() || ct.isPointer || ct.elem != ScalarKind::Bool)
      diag.error(s.cond->range, "if condition must be a bool, found " +
                                    ct.str() + "; compare with 0 instead");
  }
  if (s.thenBlock)
    checkBlock(*s.thenBlock);
  if (s.elseBlock)
    checkBlock(*s.elseBlock);
}

void Sema::Impl::checkReturn(ReturnStmt &s) {
  if (curKernel) {
    if (s.value) {
      diag.error(s.value->range, "kernels return nothing; write 'return;' or "
                                 "store the result through a pointer");
      return;
    }
    if (loopDepth > 0)
      diag.error(s.range, "'return' inside a loop is not supported; "
                          "restructure the loop or guard its body with 'if'");
    return;
  }
  // A helper.
  Type t = s.value ? checkExpr(*s.value) : Type::voidType();
  if (t.isInvalid())
    return;
  if (loopDepth > 0 || blockDepth > 1) {
    diag.error(s.range, "a helper's 'return' must be its last statement, "
                        "outside any loop or 'if'");
    return;
  }
  if (curReturnSeen) {
    diag.error(s.range, "a helper has exactly one 'return', as its last "
                        "statement");
    return;
  }
  curReturnSeen = true;
  if (curReturnType) {
    if (s.value ? !assignable(*this, *s.value, *curReturnType)
                : curReturnType->kind != Type::Kind::Void)
      diag.error(s.range, "helper '" + curFn->name + "' returns " +
                              curReturnType->str() + ", found " + t.str());
    lastInstanceResult = *curReturnType;
    return;
  }
  if (s.value)
    finalize(*s.value);
  lastInstanceResult = s.value ? s.value->type : Type::voidType();
  if (s.value && s.value->type.kind != Type::Kind::Void && !curFn->returnType)
    diag.error(s.range, "helper '" + curFn->name + "' returns a value but "
                        "declares no result type; add '-> " +
                            s.value->type.str() + "'");
}
