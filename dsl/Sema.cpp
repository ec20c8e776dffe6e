//===- Sema.cpp - Declarations, scopes and helper instances --------------===//
//
// Statements are checked in SemaStmt.cpp, operators and literals in
// SemaExpr.cpp, builtin calls in SemaBuiltins.cpp.
//
//===----------------------------------------------------------------------===//
#include "dsl/SemaImpl.h"
#include "dsl/TuneSpace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace kiln::dsl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

Sema::Sema(DiagnosticEngine &diag, llvm::SourceMgr &sm)
    : impl(std::make_unique<Impl>(*this, diag, sm)) {}
Sema::~Sema() = default;

bool Sema::check(Module &module) { return impl->checkModule(module); }

bool Sema::instantiateHelper(const HelperInstance &inst) {
  return impl->instantiate(inst, /*report=*/true, nullptr);
}

const HelperInstance *Sema::getInstanceFor(const CallExpr *call) const {
  auto it = impl->callInstances.find(call);
  if (it == impl->callInstances.end())
    return nullptr;
  return &instances[it->second];
}

std::optional<ConstInt> Sema::getConstInt(const Expr *e) const {
  return impl->constOf(*e);
}

std::string Sema::getText(SMRange range) const {
  const char *b = range.Start.getPointer(), *e = range.End.getPointer();
  if (!b || !e || e < b)
    return "";
  return std::string(b, e);
}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

Symbol *Sema::Impl::lookup(const std::string &name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

void Sema::Impl::declare(const std::string &name, Symbol sym) {
  auto &scope = scopes.back();
  auto it = scope.find(name);
  if (it != scope.end()) {
    diag.error(sym.declRange, "'" + name + "' is already declared in this scope");
    if (it->second.declRange.Start.isValid())
      diag.note(it->second.declRange.Start, "previous declaration is here");
    return;
  }
  scope.emplace(name, std::move(sym));
}

std::vector<std::string> Sema::Impl::visibleNames() const {
  std::vector<std::string> names;
  for (const auto &scope : scopes)
    for (const auto &entry : scope)
      names.push_back(entry.first);
  return names;
}

std::optional<ConstInt> Sema::Impl::constOf(const Expr &e) const {
  auto it = constInts.find(&e);
  if (it == constInts.end())
    return std::nullopt;
  return it->second;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

static bool isImplicitConstParam(StringRef name) {
  return name == kWarpsName || name == kStagesName;
}

bool Sema::Impl::checkModule(Module &module) {
  unsigned before = diag.getNumErrors();
  std::map<std::string, SMRange> kernelNames;
  for (auto &fn : module.functions) {
    auto [it, inserted] = functions.emplace(fn->name, fn.get());
    if (!inserted) {
      diag.error(fn->nameRange, "redefinition of helper '" + fn->name + "'");
      diag.note(it->second->nameRange.Start, "previous definition is here");
    }
    checkHelperSignature(*fn);
  }
  for (auto &k : module.kernels) {
    auto [it, inserted] = kernelNames.emplace(k->name, k->nameRange);
    if (!inserted) {
      diag.error(k->nameRange, "redefinition of kernel '" + k->name + "'");
      diag.note(it->second.Start, "previous definition is here");
    }
    if (functions.count(k->name))
      diag.error(k->nameRange, "kernel '" + k->name +
                                   "' has the same name as a helper function");
  }
  for (auto &k : module.kernels) {
    if (diag.tooManyErrors())
      break;
    checkKernel(*k);
  }
  // Helpers that no kernel calls are still checked when their signature is
  // concrete, so that their errors are not silently ignored.
  for (auto &fn : module.functions) {
    if (diag.tooManyErrors() || !fn->constParams.empty() ||
        badSignatures.count(fn.get()))
      continue;
    // Already checked through a call (even a failing one): its errors, if
    // any, have been reported.
    if (checkedHelpers.count(fn.get()))
      continue;
    HelperInstance inst;
    inst.fn = fn.get();
    bool concrete = true;
    for (auto &p : fn->params) {
      if (p.type.kind == TypeExpr::Kind::Tile) {
        concrete = false;
        break;
      }
      auto t = resolveTypeExpr(p.type);
      if (!t) {
        concrete = false;
        break;
      }
      inst.argTypes.push_back(*t);
    }
    if (concrete)
      instantiate(inst, /*report=*/true, nullptr);
  }
  return diag.getNumErrors() == before;
}

/// Reports names in `e` (a tile dimension of a helper's signature) that
/// are not const params of `fn`. Returns false if it reported one.
static bool checkSignatureDim(Sema::Impl &s, const FnDecl &fn, const Expr &e,
                              const std::string &where,
                              std::set<std::string> &reported) {
  std::vector<std::string> names;
  collectIdents(e, names);
  for (const std::string &name : names) {
    if (llvm::any_of(fn.constParams,
                     [&](const ConstParam &cp) { return cp.name == name; }))
      continue;
    if (!reported.insert(name).second)
      return false; // One error per name.
    s.diag.error(e.range, "'" + name + "' in the type of " + where +
                              " is not a const param of helper '" + fn.name +
                              "'; declare it, as in fn " + fn.name + "<" +
                              name + ": i32>(...)");
    return false;
  }
  return true;
}

void Sema::Impl::checkHelperSignature(const FnDecl &fn) {
  bool ok = true;
  std::set<std::string> reported;
  for (const Param &p : fn.params)
    if (p.type.kind == TypeExpr::Kind::Tile)
      for (const ExprPtr &d : p.type.dims)
        ok = checkSignatureDim(*this, fn, *d, "parameter '" + p.name + "'",
                               reported) &&
             ok;
  if (fn.returnType && fn.returnType->kind == TypeExpr::Kind::Tile)
    for (const ExprPtr &d : fn.returnType->dims)
      ok = checkSignatureDim(*this, fn, *d, "the result", reported) && ok;
  if (!ok)
    badSignatures.insert(&fn);
}

std::optional<Type> Sema::Impl::resolveTypeExpr(TypeExpr &t) {
  switch (t.kind) {
  case TypeExpr::Kind::Scalar:
    return Type::scalar(t.elem);
  case TypeExpr::Kind::Pointer:
    if (t.elem == ScalarKind::Bool) {
      diag.error(t.range, "pointers to bool are not supported; use *i8 or *u8");
      return std::nullopt;
    }
    return Type::pointer(t.elem);
  case TypeExpr::Kind::View:
    if (t.rank < 1 || t.rank > kMaxTileRank) {
      diag.error(t.range, "view rank must be 1, 2 or 3, found " +
                              std::to_string(t.rank));
      return std::nullopt;
    }
    return Type::view(t.elem, t.rank);
  case TypeExpr::Kind::Tile: {
    Shape shape;
    for (auto &d : t.dims) {
      auto c = requireConstInt(*d, "tile dimension");
      if (!c)
        return std::nullopt;
      shape.push_back(c->value ? Dim::known(*c->value) : Dim::symbolic(c->text));
    }
    if (!checkTileShape(shape, t.range, "tile type"))
      return std::nullopt;
    return Type::tile(t.elem, shape);
  }
  }
  return std::nullopt;
}

void Sema::Impl::declareConstParams(std::vector<ConstParam> &params,
                                    bool isKernel) {
  for (auto &cp : params) {
    if (isKernel && isImplicitConstParam(cp.name)) {
      diag.error(cp.nameRange, "'" + cp.name +
                                   "' is an implicit const param of every "
                                   "kernel; do not declare it");
      continue;
    }
    if (isFloat(cp.type)) {
      diag.error(cp.typeRange, "const param '" + cp.name +
                                   "' must have an integer or bool type, found " +
                                   spelling(cp.type).str());
    }
    if (cp.defaultValue) {
      Type t = checkExpr(*cp.defaultValue);
      if (!t.isInvalid() && !isFloat(cp.type)) {
        if (t.isUntypedLiteral && t.isScalar() && !isFloat(t.elem))
          coerceLiteral(*cp.defaultValue, cp.type);
        auto c = constOf(*cp.defaultValue);
        Type dt = cp.defaultValue->type;
        if (!c || !dt.isScalar() || isFloat(dt.elem))
          diag.error(cp.defaultValue->range,
                     "default value of const param '" + cp.name +
                         "' must be a constant integer expression");
        else if ((dt.elem == ScalarKind::Bool) != (cp.type == ScalarKind::Bool))
          diag.error(cp.defaultValue->range,
                     "default value of const param '" + cp.name + "' is " +
                         dt.str() + ", but the param is " +
                         spelling(cp.type).str());
      }
    }
    Symbol sym;
    sym.kind = Symbol::Kind::ConstParam;
    sym.type = Type::scalar(cp.type);
    sym.declRange = cp.nameRange;
    sym.constVal = ConstInt{std::nullopt, cp.name};
    declare(cp.name, sym);
  }
  if (isKernel) {
    for (const char *name : {kWarpsName, kStagesName}) {
      if (lookup(name))
        continue;
      Symbol sym;
      sym.kind = Symbol::Kind::ConstParam;
      sym.type = Type::scalar(ScalarKind::I32);
      sym.constVal = ConstInt{std::nullopt, name};
      scopes.back().emplace(name, sym);
    }
  }
}

void Sema::Impl::declareParams(std::vector<Param> &params, bool isKernel) {
  for (auto &p : params) {
    auto t = resolveTypeExpr(p.type);
    if (t && isKernel && !t->isScalar()) {
      diag.error(p.type.range, "kernel parameter '" + p.name +
                                   "' must be a scalar or a pointer, found " +
                                   t->str());
      t = std::nullopt;
    }
    std::map<std::string, SMRange> seenAnnotations;
    for (auto &a : p.annotations) {
      if (!a.value)
        continue;
      auto [prev, fresh] = seenAnnotations.emplace(a.name, a.range);
      if (!fresh) {
        diag.error(a.range, "'" + p.name + "' has two @" + a.name +
                                " annotations");
        diag.note(prev->second.Start, "the first one is here");
        continue;
      }
      Type at = checkExpr(*a.value);
      auto c = constOf(*a.value);
      if (at.isInvalid())
        continue;
      if (!c || !c->value || *c->value <= 0) {
        diag.error(a.value->range, "@" + a.name +
                                       " needs a positive constant integer");
        continue;
      }
      if (!t)
        continue;
      if (a.name == "div" && (t->isPointer || !isInteger(t->elem)))
        diag.error(a.range, "@div applies to integer parameters; '" + p.name +
                                "' is " + t->str());
      if (a.name == "align") {
        if (!t->isPointer)
          diag.error(a.range, "@align applies to pointer parameters; '" +
                                  p.name + "' is " + t->str());
        else if (!llvm::isPowerOf2_64(uint64_t(*c->value)))
          diag.error(a.value->range, "@align needs a power of two, found " +
                                         std::to_string(*c->value));
      }
    }
    Symbol sym;
    sym.kind = Symbol::Kind::Param;
    sym.type = t ? *t : Type::invalid();
    sym.declRange = p.nameRange;
    declare(p.name, sym);
  }
}

/// Walks `e` and reports the first sub-expression that a grid or `where`
/// expression may not contain.
static const Expr *findDisallowedInLaunchExpr(const Expr &e,
                                              std::string &why) {
  switch (e.getKind()) {
  case ExprKind::IntLit:
  case ExprKind::BoolLit:
  case ExprKind::Ident:
    return nullptr;
  case ExprKind::Unary:
    return findDisallowedInLaunchExpr(*llvm::cast<UnaryExpr>(e).operand, why);
  case ExprKind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(e);
    if (auto *bad = findDisallowedInLaunchExpr(*b.lhs, why))
      return bad;
    return findDisallowedInLaunchExpr(*b.rhs, why);
  }
  case ExprKind::Call: {
    auto &c = llvm::cast<CallExpr>(e);
    if (c.callee != "cdiv" && c.callee != "min" && c.callee != "max") {
      why = "only cdiv, min and max may be called here, found '" + c.callee + "'";
      return &e;
    }
    for (auto &a : c.args)
      if (auto *bad = findDisallowedInLaunchExpr(*a, why))
        return bad;
    return nullptr;
  }
  default:
    why = "only integer params, const params, literals and the operators "
          "+ - * / % and comparisons may appear here";
    return &e;
  }
}

/// Reports identifiers of `e` that are not const params or runtime scalar
/// params (`what` names the clause). Returns false if it reported one.
static bool checkLaunchIdents(Sema::Impl &s, const Expr &e,
                              llvm::StringRef what) {
  if (auto *id = llvm::dyn_cast<IdentExpr>(&e)) {
    Symbol *sym = s.lookup(id->name);
    if (!sym)
      return true; // Already reported by checkExpr.
    if (sym->kind == Symbol::Kind::Param && sym->type.isPointer) {
      s.diag.error(e.range, what.str() + " may use integer params and const "
                                         "params only; '" +
                                id->name + "' is a pointer");
      return false;
    }
    return true;
  }
  if (auto *u = llvm::dyn_cast<UnaryExpr>(&e))
    return checkLaunchIdents(s, *u->operand, what);
  if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) {
    bool ok = checkLaunchIdents(s, *b->lhs, what);
    return checkLaunchIdents(s, *b->rhs, what) && ok;
  }
  bool ok = true;
  if (auto *c = llvm::dyn_cast<CallExpr>(&e))
    for (auto &a : c->args)
      ok = checkLaunchIdents(s, *a, what) && ok;
  return ok;
}

void Sema::Impl::checkGrid(KernelDecl &k) {
  if (k.grid.size() > 3)
    diag.error(k.gridRange, "grid has at most 3 dimensions");
  for (auto &g : k.grid) {
    std::string why;
    if (const Expr *bad = findDisallowedInLaunchExpr(*g, why)) {
      diag.error(bad->range, "grid: " + why);
      continue;
    }
    Type t = checkExpr(*g);
    if (t.isInvalid())
      continue;
    if (!checkLaunchIdents(*this, *g, "grid"))
      continue;
    if (!t.isScalar() || t.isPointer || !isInteger(t.elem))
      diag.error(g->range, "grid expressions must be integers, found " + t.str());
    else
      finalize(*g);
  }
}

void Sema::Impl::checkTune(KernelDecl &k) {
  if (!k.tune)
    return;
  TuneClause &tune = *k.tune;
  std::map<std::string, SMRange> seen;
  for (auto &entry : tune.entries) {
    Symbol *sym = lookup(entry.name);
    if (!sym || sym->kind != Symbol::Kind::ConstParam) {
      std::string list;
      for (auto &cp : k.constParams)
        list += cp.name + ", ";
      list += "warps, stages";
      diag.error(entry.nameRange,
                 "tune names '" + entry.name +
                     "', which is not a const param of kernel '" + k.name +
                     "' (const params: " + list + ")");
      continue;
    }
    auto [it, inserted] = seen.emplace(entry.name, entry.nameRange);
    if (!inserted) {
      diag.error(entry.nameRange, "'" + entry.name + "' is tuned twice");
      diag.note(it->second.Start, "first tuned here");
    }
    if (entry.values.empty())
      diag.error(entry.nameRange, "tune list for '" + entry.name + "' is empty");
    for (auto &v : entry.values) {
      Type t = checkExpr(*v);
      if (t.isInvalid())
        continue;
      if (t.isUntypedLiteral && t.isScalar() && !isFloat(t.elem))
        coerceLiteral(*v, sym->type.elem);
      std::string err;
      if (!evalConstExpr(*v, {}, &err))
        diag.error(v->range, "tune values must be constant integers: " + err);
    }
  }
  if (tune.where) {
    std::string why;
    if (const Expr *bad = findDisallowedInLaunchExpr(*tune.where, why)) {
      diag.error(bad->range, "where: " + why);
    } else {
      Type t = checkExpr(*tune.where);
      if (!t.isInvalid()) {
        if (checkLaunchIdents(*this, *tune.where, "where") &&
            (!t.isScalar() || t.elem != ScalarKind::Bool))
          diag.error(tune.where->range,
                     "where condition must be a bool, found " + t.str());
      }
    }
  }
  for (auto &key : tune.key) {
    Symbol *sym = lookup(key->name);
    if (!sym || sym->kind != Symbol::Kind::Param || sym->type.isPointer ||
        !sym->type.isScalar()) {
      std::string suggestion;
      std::vector<std::string> scalars;
      for (auto &p : k.params)
        if (p.type.kind == TypeExpr::Kind::Scalar)
          scalars.push_back(p.name);
      suggestion = suggestName(key->name, scalars);
      diag.error(key->range, "key names '" + key->name +
                                 "', which is not a runtime scalar param of "
                                 "kernel '" +
                                 k.name + "'" +
                                 (suggestion.empty()
                                      ? std::string()
                                      : "; did you mean '" + suggestion + "'?"));
      continue;
    }
    if (!isInteger(sym->type.elem)) {
      diag.error(key->range, "key names '" + key->name + "' of type " +
                                 sym->type.str() +
                                 "; key params must be integers (their "
                                 "values are bucketed to powers of two)");
      continue;
    }
    key->type = sym->type;
  }
}

void Sema::Impl::checkKernel(KernelDecl &k) {
  curKernel = &k;
  curFn = nullptr;
  curReturnType.reset();
  loopDepth = 0;
  scopes.clear();
  pushScope();
  declareConstParams(k.constParams, /*isKernel=*/true);
  declareParams(k.params, /*isKernel=*/true);
  checkGrid(k);
  checkTune(k);
  if (k.body) {
    pushScope();
    checkBlock(*k.body, /*newScope=*/false);
    popScope();
  }
  scopes.clear();
  curKernel = nullptr;
}

//===----------------------------------------------------------------------===//
// Helper instances
//===----------------------------------------------------------------------===//

bool Sema::Impl::instantiate(const HelperInstance &inst, bool report,
                             Type *result) {
  // Save the caller's context: helpers are checked like templates, at the
  // point of use, in a scope of their own.
  auto savedScopes = std::move(scopes);
  KernelDecl *savedKernel = curKernel;
  const FnDecl *savedFn = curFn;
  auto savedReturn = curReturnType;
  bool savedReturnSeen = curReturnSeen;
  int savedLoop = loopDepth;
  int savedBlockDepth = blockDepth;

  unsigned before = diag.getNumErrors();
  const FnDecl &fn = *inst.fn;
  blockDepth = 0;
  scopes.clear();
  pushScope();
  curKernel = nullptr;
  curFn = &fn;
  curReturnType.reset();
  curReturnSeen = false;
  loopDepth = 0;
  for (auto &[name, dim] : inst.constBindings) {
    Symbol sym;
    sym.kind = Symbol::Kind::ConstParam;
    sym.type = Type::scalar(ScalarKind::I32);
    for (auto &cp : fn.constParams)
      if (cp.name == name) {
        sym.type = Type::scalar(cp.type);
        sym.declRange = cp.nameRange;
      }
    sym.constVal = ConstInt{dim.isKnown() ? std::optional<int64_t>(dim.value)
                                          : std::nullopt,
                            dim.text};
    scopes.back().emplace(name, sym);
  }
  for (size_t i = 0; i < fn.params.size() && i < inst.argTypes.size(); ++i) {
    Symbol sym;
    sym.kind = Symbol::Kind::Param;
    sym.type = inst.argTypes[i];
    sym.declRange = fn.params[i].nameRange;
    declare(fn.params[i].name, sym);
  }
  lastInstanceResult = Type::voidType();
  if (fn.returnType) {
    // The declared return type may name the helper's const params.
    auto t = resolveTypeExpr(const_cast<TypeExpr &>(*fn.returnType));
    if (t)
      curReturnType = *t;
  }
  instStack.push_back(&fn);
  checkedHelpers.insert(&fn);
  if (fn.body) {
    pushScope();
    checkBlock(*fn.body, /*newScope=*/false);
    popScope();
    // A helper's `return` is its last statement (it is inlined as a value).
    auto &stmts = fn.body->stmts;
    for (size_t i = 0; i + 1 < stmts.size(); ++i)
      if (llvm::isa<ReturnStmt>(*stmts[i]))
        diag.error(stmts[i]->range,
                   "a helper's 'return' must be its last statement");
  }
  instStack.pop_back();
  if (result)
    *result = curReturnType ? *curReturnType : lastInstanceResult;
  if (fn.returnType && !curReturnSeen && diag.getNumErrors() == before)
    diag.error(fn.nameRange, "helper '" + fn.name + "' declares a result type "
                                 "but has no 'return' statement");

  scopes = std::move(savedScopes);
  curKernel = savedKernel;
  curFn = savedFn;
  curReturnType = savedReturn;
  curReturnSeen = savedReturnSeen;
  loopDepth = savedLoop;
  blockDepth = savedBlockDepth;
  (void)report;
  return diag.getNumErrors() == before;
}

/// Binds the helper's const params from a tile argument's shape.
static bool bindTileDims(Sema::Impl &s, const FnDecl &fn, const TypeExpr &decl,
                         const Type &arg, unsigned argIndex,
                         HelperInstance &inst, SMRange argRange) {
  if (!arg.isTile() || arg.elem != decl.elem ||
      arg.shape.size() != decl.dims.size())
    return false;
  for (unsigned d = 0; d < decl.dims.size(); ++d) {
    const Expr &de = *decl.dims[d];
    const Dim &actual = arg.shape[d];
    if (auto *id = llvm::dyn_cast<IdentExpr>(&de)) {
      bool isHelperConst = llvm::any_of(
          fn.constParams, [&](const ConstParam &cp) { return cp.name == id->name; });
      if (isHelperConst) {
        auto it = llvm::find_if(inst.constBindings,
                                [&](auto &b) { return b.first == id->name; });
        if (it == inst.constBindings.end()) {
          inst.constBindings.emplace_back(id->name, actual);
          inst.constSources.emplace_back(argIndex, d);
        } else if (it->second != actual) {
          s.diag.error(argRange, "const param '" + id->name + "' of helper '" +
                                     fn.name + "' is bound to both " +
                                     it->second.text + " and " + actual.text);
          return true; // Reported.
        }
        continue;
      }
    }
    auto v = evalConstExpr(de, {});
    if (!v || !actual.isKnown() || *v != actual.value)
      return false;
  }
  return true;
}

/// A symbol-friendly spelling of a type: f32, pf32 (pointer), tf32_16xBM
/// (tile), vf16_2 (view).
static std::string mangleType(const Type &t) {
  std::string elem = spelling(t.elem).str();
  auto sanitize = [](const std::string &text) {
    std::string out;
    for (char c : text)
      if (llvm::isAlnum(c) || c == '_')
        out += c;
    return out;
  };
  switch (t.kind) {
  case Type::Kind::Scalar:
    return (t.isPointer ? "p" : "") + elem;
  case Type::Kind::Tile: {
    std::string s = std::string(t.isPointer ? "tp" : "t") + elem + "_";
    for (size_t i = 0; i < t.shape.size(); ++i)
      s += (i ? "x" : "") + sanitize(t.shape[i].text);
    return s;
  }
  case Type::Kind::View:
    return "v" + elem + "_" + std::to_string(t.rank);
  default:
    return sanitize(t.str());
  }
}

Type Sema::Impl::checkHelperCall(CallExpr &call, const FnDecl &fn) {
  if (!call.typeArgs.empty())
    diag.error(call.calleeRange, "helper '" + fn.name +
                                     "' takes no type arguments");
  if (!call.namedArgs.empty())
    diag.error(call.namedArgs.front().nameRange,
               "helper calls take positional arguments only");
  if (call.args.size() != fn.params.size()) {
    diag.error(call.range, "helper '" + fn.name + "' takes " +
                               std::to_string(fn.params.size()) +
                               (fn.params.size() == 1 ? " argument"
                                                      : " arguments") +
                               ", found " + std::to_string(call.args.size()));
    diag.note(fn.nameRange.Start, "'" + fn.name + "' is declared here");
    return Type::invalid();
  }
  if (badSignatures.count(&fn))
    return Type::invalid(); // Reported at the declaration.
  if (llvm::is_contained(instStack, &fn)) {
    diag.error(call.calleeRange, "recursive call to helper '" + fn.name +
                                     "': helpers are always inlined and "
                                     "cannot recurse");
    return Type::invalid();
  }
  HelperInstance inst;
  inst.fn = &fn;
  bool ok = true;
  for (unsigned i = 0; i < call.args.size(); ++i) {
    Expr &arg = *call.args[i];
    Type at = checkExpr(arg);
    if (at.isInvalid()) {
      ok = false;
      continue;
    }
    const Param &p = fn.params[i];
    const TypeExpr &decl = p.type;
    bool matches = false;
    switch (decl.kind) {
    case TypeExpr::Kind::Scalar:
      if (at.isScalar() && !at.isPointer && at.isUntypedLiteral)
        matches = coerceLiteral(arg, decl.elem);
      else
        matches = at.isScalar() && !at.isPointer && at.elem == decl.elem;
      at = arg.type;
      break;
    case TypeExpr::Kind::Pointer:
      matches = at.isScalar() && at.isPointer && at.elem == decl.elem;
      break;
    case TypeExpr::Kind::View:
      matches = at.isView() && at.elem == decl.elem && at.rank == decl.rank;
      break;
    case TypeExpr::Kind::Tile:
      matches = bindTileDims(*this, fn, decl, at, i, inst, arg.range);
      break;
    }
    if (!matches) {
      diag.error(arg.range, "argument " + std::to_string(i + 1) + " of '" +
                                fn.name + "' has type " + at.str() +
                                ", but parameter '" + p.name + "' is declared " +
                                text(decl.range));
      ok = false;
      continue;
    }
    finalize(arg);
    inst.argTypes.push_back(arg.type);
  }
  if (!ok)
    return Type::invalid();
  for (auto &cp : fn.constParams) {
    bool bound = llvm::any_of(inst.constBindings,
                              [&](auto &b) { return b.first == cp.name; });
    if (!bound) {
      diag.error(call.calleeRange, "cannot infer const param '" + cp.name +
                                       "' of helper '" + fn.name +
                                       "' from the arguments");
      return Type::invalid();
    }
  }
  // Reuse an existing instance with the same signature.
  auto &instances = owner.instances;
  for (size_t idx = 0; idx < instances.size(); ++idx) {
    auto &other = instances[idx];
    if (other.fn == &fn && other.argTypes == inst.argTypes) {
      callInstances[&call] = idx;
      return other.resultType;
    }
  }
  unsigned before = diag.getNumErrors();
  Type resultType = Type::voidType();
  instantiate(inst, /*report=*/true, &resultType);
  if (diag.getNumErrors() != before) {
    diag.note(call.range.Start, "in the call to helper '" + fn.name + "' here");
    return Type::invalid();
  }
  inst.resultType = resultType;
  // `name.arg.arg...`: '.' cannot occur in a language identifier, so the
  // name cannot clash with a kernel or another helper; a clash between two
  // instances (symbolic dims that differ only in operators) gets a suffix.
  std::string mangled = fn.name;
  for (auto &t : inst.argTypes)
    mangled += "." + mangleType(t);
  if (llvm::any_of(instances, [&](const HelperInstance &other) {
        return other.mangledName == mangled;
      }))
    mangled += "." + std::to_string(instances.size());
  inst.mangledName = mangled;
  callInstances[&call] = instances.size();
  instances.push_back(std::move(inst));
  return resultType;
}
