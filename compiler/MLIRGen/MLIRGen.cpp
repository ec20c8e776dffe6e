//===- MLIRGen.cpp - Declarations and statements -------------------------===//
#include "compiler/MLIRGen/MLIRGenImpl.h"

#include "compiler/Dialect/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"

using namespace kiln;
using namespace mlir;
namespace dsl = kiln::dsl;

void kiln::loadKilnDialects(MLIRContext &ctx) {
  ctx.loadDialect<KilnDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, func::FuncDialect, tensor::TensorDialect>();
}

OwningOpRef<ModuleOp> kiln::emitModule(MLIRContext &ctx, dsl::Module &module,
                                       dsl::Sema &sema, llvm::SourceMgr &sm,
                                       ArrayRef<KernelToEmit> kernels) {
  loadKilnDialects(ctx);
  MLIRGen gen(ctx, sema, sm);
  return gen.run(module, kernels);
}

//===----------------------------------------------------------------------===//
// Types and locations
//===----------------------------------------------------------------------===//

Location MLIRGen::loc(llvm::SMLoc l) {
  if (!l.isValid())
    return UnknownLoc::get(&ctx);
  unsigned buf = sm.FindBufferContainingLoc(l);
  if (!buf)
    return UnknownLoc::get(&ctx);
  auto [line, col] = sm.getLineAndColumn(l, buf);
  return FileLineColLoc::get(fileName, line, col);
}

Type MLIRGen::scalarType(dsl::ScalarKind k) {
  using dsl::ScalarKind;
  switch (k) {
  case ScalarKind::Bool: return builder.getI1Type();
  case ScalarKind::I8: case ScalarKind::U8: return builder.getI8Type();
  case ScalarKind::I16: case ScalarKind::U16: return builder.getI16Type();
  case ScalarKind::I32: case ScalarKind::U32: return builder.getI32Type();
  case ScalarKind::I64: case ScalarKind::U64: return builder.getI64Type();
  case ScalarKind::F16: return builder.getF16Type();
  case ScalarKind::BF16: return builder.getBF16Type();
  case ScalarKind::F32: return builder.getF32Type();
  case ScalarKind::F64: return builder.getF64Type();
  case ScalarKind::F8E4M3: return builder.getType<Float8E4M3FNType>();
  case ScalarKind::F8E5M2: return builder.getType<Float8E5M2Type>();
  }
  llvm_unreachable("unknown scalar kind");
}

RankedTensorType MLIRGen::tileType(const dsl::Shape &shape, Type elem) {
  SmallVector<int64_t> dims;
  for (const dsl::Dim &d : shape)
    dims.push_back(d.isKnown() ? d.value : ShapedType::kDynamic);
  return RankedTensorType::get(dims, elem);
}

Type MLIRGen::toMLIR(const dsl::Type &t) {
  Type elem = scalarType(t.elem);
  if (t.isPointer)
    elem = PointerType::get(elem);
  switch (t.kind) {
  case dsl::Type::Kind::Scalar:
    return elem;
  case dsl::Type::Kind::Tile:
    return tileType(t.shape, elem);
  case dsl::Type::Kind::View:
    return ViewType::get(scalarType(t.elem), t.rank);
  default:
    return Type();
  }
}

dsl::ScalarKind kiln::helperConstParamKind(const dsl::HelperInstance &inst,
                                           size_t i) {
  const std::string &name = inst.constBindings[i].first;
  for (const dsl::ConstParam &cp : inst.fn->constParams)
    if (cp.name == name)
      return cp.type;
  return dsl::ScalarKind::I32;
}

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

MLIRGen::Var *MLIRGen::lookup(const std::string &name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

std::optional<size_t> MLIRGen::levelOf(const std::string &name) {
  for (size_t i = env.size(); i-- > 0;)
    if (env[i].count(name))
      return i;
  return std::nullopt;
}

void MLIRGen::assign(const std::string &name, Value v) {
  if (auto level = levelOf(name))
    env[*level][name].value = v;
}

/// Collects the names assigned anywhere in `stmts` and the names declared
/// at their top level (so that a later assignment to a name declared inside
/// is not mistaken for an outer variable).
static void collectAssigned(const dsl::Stmt &s,
                            std::vector<std::string> &assigned) {
  switch (s.getKind()) {
  case dsl::StmtKind::Assign:
    assigned.push_back(llvm::cast<dsl::AssignStmt>(s).name);
    return;
  case dsl::StmtKind::Block:
    for (auto &c : llvm::cast<dsl::BlockStmt>(s).stmts)
      collectAssigned(*c, assigned);
    return;
  case dsl::StmtKind::For:
    if (auto &b = llvm::cast<dsl::ForStmt>(s).body)
      collectAssigned(*b, assigned);
    return;
  case dsl::StmtKind::If: {
    auto &i = llvm::cast<dsl::IfStmt>(s);
    if (i.thenBlock)
      collectAssigned(*i.thenBlock, assigned);
    if (i.elseBlock)
      collectAssigned(*i.elseBlock, assigned);
    return;
  }
  default:
    return;
  }
}

std::vector<std::pair<std::string, size_t>>
MLIRGen::assignedOuterVars(ArrayRef<const dsl::Stmt *> stmts) {
  std::vector<std::string> assigned;
  for (const dsl::Stmt *s : stmts)
    collectAssigned(*s, assigned);
  std::vector<std::pair<std::string, size_t>> result;
  for (auto &name : assigned) {
    auto level = levelOf(name);
    if (!level)
      continue; // Declared inside.
    bool seen = llvm::any_of(result, [&](auto &p) { return p.first == name; });
    if (!seen)
      result.emplace_back(name, *level);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> MLIRGen::run(dsl::Module &m,
                                   ArrayRef<KernelToEmit> kernels) {
  fileName = builder.getStringAttr(
      sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier());
  OwningOpRef<ModuleOp> owned = ModuleOp::create(FileLineColLoc::get(fileName, 1, 1));
  module = *owned;
  for (const KernelToEmit &k : kernels) {
    emitKernel(k);
    if (failed)
      return nullptr;
  }
  // Helper instances in first-use order; a helper's own calls add more.
  for (size_t i = 0; i < sema.getHelperInstances().size(); ++i) {
    emitHelper(sema.getHelperInstances()[i]);
    if (failed)
      return nullptr;
  }
  if (mlir::failed(verify(*owned)))
    return nullptr;
  return owned;
}

static std::string prefixOr(const dsl::Expr &e) { return dsl::toPrefixForm(e); }

void MLIRGen::emitKernel(const KernelToEmit &k) {
  const dsl::KernelDecl &decl = *k.kernel;
  SmallVector<Type> argTypes;
  for (auto &p : decl.params) {
    dsl::Type t = p.type.kind == dsl::TypeExpr::Kind::Pointer
                      ? dsl::Type::pointer(p.type.elem)
                      : dsl::Type::scalar(p.type.elem);
    argTypes.push_back(toMLIR(t));
  }
  builder.setInsertionPointToEnd(module.getBody());
  Location l = loc(decl.nameRange.Start);
  auto fn = func::FuncOp::create(builder, l, decl.name,
                                 builder.getFunctionType(argTypes, {}));
  fn->setAttr("kiln.kernel", builder.getUnitAttr());

  // Launch metadata: grid, tune space, key, launch-time conditions.
  SmallVector<Attribute> grid;
  for (auto &g : decl.grid)
    grid.push_back(builder.getStringAttr(prefixOr(*g)));
  fn->setAttr("kiln.grid", builder.getArrayAttr(grid));
  SmallVector<Attribute> variants;
  for (const dsl::Variant &v : k.space.variants) {
    SmallVector<NamedAttribute> entries;
    for (auto &[name, value] : v.values)
      entries.push_back(builder.getNamedAttr(name, builder.getI64IntegerAttr(value)));
    variants.push_back(builder.getDictionaryAttr(entries));
  }
  fn->setAttr("kiln.variants", builder.getArrayAttr(variants));
  SmallVector<Attribute> constNames;
  for (auto &cp : decl.constParams)
    constNames.push_back(builder.getStringAttr(cp.name));
  constNames.push_back(builder.getStringAttr(dsl::kWarpsName));
  constNames.push_back(builder.getStringAttr(dsl::kStagesName));
  fn->setAttr("kiln.tune", builder.getArrayAttr(constNames));
  SmallVector<Attribute> key;
  for (auto &name : k.space.key)
    key.push_back(builder.getStringAttr(name));
  fn->setAttr("kiln.key", builder.getArrayAttr(key));
  // Only when some key is not bucketed to powers of two (the default).
  if (llvm::any_of(k.space.keyBuckets,
                   [](const std::string &b) { return b != "pow2"; })) {
    SmallVector<Attribute> buckets;
    for (auto &b : k.space.keyBuckets)
      buckets.push_back(builder.getStringAttr(b));
    fn->setAttr("kiln.key_buckets", builder.getArrayAttr(buckets));
  }
  SmallVector<Attribute> where;
  for (auto &c : k.space.launchConditions)
    where.push_back(builder.getStringAttr(c));
  fn->setAttr("kiln.where", builder.getArrayAttr(where));
  for (auto [i, p] : llvm::enumerate(decl.params)) {
    fn.setArgAttr(i, "kiln.name", builder.getStringAttr(p.name));
    for (auto &a : p.annotations) {
      std::optional<dsl::ConstInt> c = a.value ? sema.getConstInt(a.value.get())
                                               : std::nullopt;
      if (c && c->value)
        fn.setArgAttr(i, "kiln." + a.name, builder.getI64IntegerAttr(*c->value));
    }
  }

  Block *entry = fn.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  env.clear();
  pushScope();
  for (auto &cp : decl.constParams) {
    auto op = ConstParamOp::create(builder, loc(cp.nameRange.Start),
                                   scalarType(cp.type), cp.name);
    bind(cp.name, op, dsl::Type::scalar(cp.type));
  }
  for (const char *name : {dsl::kWarpsName, dsl::kStagesName})
    bind(name, ConstParamOp::create(builder, l, builder.getI32Type(), name),
         dsl::Type::scalar(dsl::ScalarKind::I32));
  for (auto [i, p] : llvm::enumerate(decl.params))
    bind(p.name, entry->getArgument(i),
         p.type.kind == dsl::TypeExpr::Kind::Pointer
             ? dsl::Type::pointer(p.type.elem)
             : dsl::Type::scalar(p.type.elem));
  pushScope();
  inHelper = false;
  if (decl.body)
    emitSeq(decl.body->stmts, 0, {});
  env.clear();
  // Every path ends at the end of the function.
  builder.setInsertionPointToEnd(entry);
  func::ReturnOp::create(builder, loc(decl.body ? decl.body->range.End : decl.range.End));
}

void MLIRGen::emitHelper(const dsl::HelperInstance &inst) {
  // Re-annotate the body with this instance's types.
  if (!sema.instantiateHelper(inst)) {
    failed = true;
    return;
  }
  const dsl::FnDecl &fn = *inst.fn;
  SmallVector<Type> argTypes;
  for (auto &t : inst.argTypes)
    argTypes.push_back(toMLIR(t));
  for (size_t i = 0; i < inst.constBindings.size(); ++i)
    argTypes.push_back(scalarType(helperConstParamKind(inst, i)));
  SmallVector<Type> results;
  if (inst.resultType.kind != dsl::Type::Kind::Void &&
      !inst.resultType.isInvalid())
    results.push_back(toMLIR(inst.resultType));
  builder.setInsertionPointToEnd(module.getBody());
  auto f = func::FuncOp::create(builder, loc(fn.nameRange.Start),
                                inst.mangledName,
                                builder.getFunctionType(argTypes, results));
  f.setPrivate();
  f->setAttr("kiln.helper", builder.getUnitAttr());
  Block *entry = f.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  env.clear();
  pushScope();
  for (size_t i = 0; i < fn.params.size(); ++i)
    bind(fn.params[i].name, entry->getArgument(i), inst.argTypes[i]);
  for (size_t i = 0; i < inst.constBindings.size(); ++i)
    bind(inst.constBindings[i].first, entry->getArgument(fn.params.size() + i),
         dsl::Type::scalar(helperConstParamKind(inst, i)));
  pushScope();
  inHelper = true;
  helperResult = Value();
  helperReturnType = fn.returnType ? &*fn.returnType : nullptr;
  if (fn.body)
    for (auto &s : fn.body->stmts) {
      if (failed)
        return;
      emitStmt(*s);
    }
  inHelper = false;
  env.clear();
  SmallVector<Value> rets;
  if (!results.empty()) {
    if (!helperResult) {
      emitError(loc(fn.nameRange.Start), "helper '") << fn.name << "' has no return value";
      failed = true;
      return;
    }
    rets.push_back(helperResult);
  }
  func::ReturnOp::create(builder, loc(fn.body ? fn.body->range.End : fn.range.End), rets);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// True if `s` contains a `return` (kernels: an early exit).
static bool containsReturn(const dsl::Stmt &s) {
  switch (s.getKind()) {
  case dsl::StmtKind::Return:
    return true;
  case dsl::StmtKind::Block:
    return llvm::any_of(llvm::cast<dsl::BlockStmt>(s).stmts,
                        [](auto &c) { return containsReturn(*c); });
  case dsl::StmtKind::If: {
    auto &i = llvm::cast<dsl::IfStmt>(s);
    return (i.thenBlock && containsReturn(*i.thenBlock)) ||
           (i.elseBlock && containsReturn(*i.elseBlock));
  }
  default:
    return false; // Sema rejects `return` inside loops.
  }
}

void MLIRGen::emitSeq(ArrayRef<dsl::StmtPtr> stmts, size_t i,
                      std::vector<Continuation> cont) {
  for (; i < stmts.size(); ++i) {
    if (failed)
      return;
    const dsl::Stmt &s = *stmts[i];
    if (llvm::isa<dsl::ReturnStmt>(s))
      return; // This path ends here.
    if (auto *block = llvm::dyn_cast<dsl::BlockStmt>(&s);
        block && containsReturn(s)) {
      cont.push_back({stmts, i + 1, env.size()});
      pushScope();
      emitSeq(block->stmts, 0, cont);
      return;
    }
    auto *ifs = llvm::dyn_cast<dsl::IfStmt>(&s);
    if (!ifs || !containsReturn(s)) {
      emitStmt(s);
      continue;
    }
    // An `if` with an early return: the rest of the kernel moves into the
    // branches that fall through.
    cont.push_back({stmts, i + 1, env.size()});
    Value cond = emitExpr(*ifs->cond);
    auto op = scf::IfOp::create(builder, loc(ifs->getLoc()), TypeRange{}, cond,
                                /*withElseRegion=*/true);
    auto savedEnv = env;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&op.getThenRegion().front());
    pushScope();
    emitSeq(ifs->thenBlock->stmts, 0, cont);
    env = savedEnv;
    builder.setInsertionPointToStart(&op.getElseRegion().front());
    pushScope();
    if (ifs->elseBlock)
      emitSeq(ifs->elseBlock->stmts, 0, cont);
    else
      emitSeq({}, 0, cont);
    env = savedEnv;
    return;
  }
  if (cont.empty())
    return;
  Continuation next = cont.back();
  cont.pop_back();
  env.resize(next.scopeDepth);
  emitSeq(next.stmts, next.next, cont);
}

void MLIRGen::emitStmt(const dsl::Stmt &s) {
  if (failed)
    return;
  switch (s.getKind()) {
  case dsl::StmtKind::Let:
    return emitLet(llvm::cast<dsl::LetStmt>(s));
  case dsl::StmtKind::Assign:
    return emitAssign(llvm::cast<dsl::AssignStmt>(s));
  case dsl::StmtKind::For:
    return emitFor(llvm::cast<dsl::ForStmt>(s));
  case dsl::StmtKind::If:
    return emitIf(llvm::cast<dsl::IfStmt>(s));
  case dsl::StmtKind::Block: {
    pushScope();
    for (auto &c : llvm::cast<dsl::BlockStmt>(s).stmts)
      emitStmt(*c);
    popScope();
    return;
  }
  case dsl::StmtKind::Return: {
    auto &r = llvm::cast<dsl::ReturnStmt>(s);
    if (inHelper && r.value) {
      helperResult = emitExpr(*r.value);
      dsl::Type t = r.value->type;
      t.isUntypedLiteral = false;
      if (helperResult && helperReturnType)
        helperResult = coerceToDeclared(helperResult, t, *helperReturnType,
                                        loc(r.getLoc()));
    }
    return;
  }
  case dsl::StmtKind::ExprStmt:
    if (auto &e = llvm::cast<dsl::ExprStmt>(s).expr)
      emitExpr(*e);
    return;
  }
}

Value MLIRGen::coerceToDeclared(Value v, dsl::Type &t, const dsl::TypeExpr &te,
                                Location l) {
  // A declared type may widen the value: `let x: tile<f32, [B]> = 0.0`.
  if (te.kind == dsl::TypeExpr::Kind::Tile) {
    dsl::Shape shape;
    SmallVector<Value> sizes;
    for (auto &d : te.dims) {
      auto c = sema.getConstInt(d.get());
      if (c && c->value) {
        shape.push_back(dsl::Dim::known(*c->value));
      } else {
        shape.push_back(dsl::Dim::symbolic(c ? c->text : "?"));
        sizes.push_back(emitExpr(*d));
      }
    }
    dsl::Type target = dsl::Type::tile(te.elem, shape);
    if (!t.isTile()) {
      Value c = convert(v, t.elem, te.elem, l);
      v = SplatOp::create(builder, l, tileType(shape, scalarType(te.elem)), c,
                          sizes);
    } else {
      v = coerce(v, t, target, {}, l, sizes);
    }
    t = target;
  } else if (te.kind == dsl::TypeExpr::Kind::Scalar && t.isScalar() &&
             t.elem != te.elem) {
    v = convert(v, t.elem, te.elem, l);
    t.elem = te.elem;
  }
  return v;
}

void MLIRGen::emitLet(const dsl::LetStmt &s) {
  Value v = emitExpr(*s.init);
  if (!v)
    return;
  dsl::Type t = s.init->type;
  t.isUntypedLiteral = false;
  if (s.declaredType)
    v = coerceToDeclared(v, t, *s.declaredType, loc(s.getLoc()));
  bind(s.name, v, t);
}

void MLIRGen::emitAssign(const dsl::AssignStmt &s) {
  Var *var = lookup(s.name);
  Value v = emitExpr(*s.value);
  if (!var || !v)
    return;
  Location l = loc(s.getLoc());
  Value cur = var->value;
  dsl::Type varType = var->type;
  if (s.compound)
    v = emitBinaryOp(*s.compound, cur, varType, v, s.value->type, varType, l);
  else if (v.getType() != cur.getType())
    v = coerce(v, s.value->type, varType, {cur}, l);
  assign(s.name, v);
}

void MLIRGen::emitFor(const dsl::ForStmt &s) {
  Location l = loc(s.getLoc());
  Value lo = emitExpr(*s.lo), hi = emitExpr(*s.hi);
  Value step = s.step ? emitExpr(*s.step) : Value();
  if (!lo || !hi || (s.step && !step))
    return;
  // The loop variable has the type both bounds widen to (Sema checked
  // that the step widens to it too).
  dsl::ScalarKind iv =
      dsl::promoteScalarKinds(s.lo->type.elem, s.hi->type.elem);
  lo = convert(lo, s.lo->type.elem, iv, l);
  hi = convert(hi, s.hi->type.elem, iv, l);
  step = step ? convert(step, s.step->type.elem, iv, l)
              : intConst(1, scalarType(iv), l);
  std::vector<const dsl::Stmt *> body{s.body.get()};
  auto carried = assignedOuterVars(body);
  SmallVector<Value> inits;
  for (auto &[name, level] : carried)
    inits.push_back(env[level][name].value);
  auto forOp = scf::ForOp::create(builder, l, lo, hi, step, inits);
  {
    OpBuilder::InsertionGuard guard(builder);
    Block *b = forOp.getBody();
    builder.setInsertionPointToStart(b);
    for (auto [i, c] : llvm::enumerate(carried))
      env[c.second][c.first].value = forOp.getRegionIterArgs()[i];
    pushScope();
    bind(s.var, forOp.getInductionVar(), dsl::Type::scalar(iv));
    pushScope();
    for (auto &st : s.body->stmts)
      emitStmt(*st);
    popScope();
    popScope();
    SmallVector<Value> yields;
    for (auto &[name, level] : carried)
      yields.push_back(env[level][name].value);
    if (b->mightHaveTerminator())
      b->getTerminator()->erase();
    builder.setInsertionPointToEnd(b);
    scf::YieldOp::create(builder, l, yields);
  }
  for (auto [i, c] : llvm::enumerate(carried))
    env[c.second][c.first].value = forOp.getResult(i);
}

void MLIRGen::emitIf(const dsl::IfStmt &s) {
  Location l = loc(s.getLoc());
  Value cond = emitExpr(*s.cond);
  std::vector<const dsl::Stmt *> branches;
  if (s.thenBlock)
    branches.push_back(s.thenBlock.get());
  if (s.elseBlock)
    branches.push_back(s.elseBlock.get());
  auto carried = assignedOuterVars(branches);
  SmallVector<Type> types;
  SmallVector<Value> before;
  for (auto &[name, level] : carried) {
    before.push_back(env[level][name].value);
    types.push_back(before.back().getType());
  }
  auto ifOp = scf::IfOp::create(builder, l, types, cond, /*withElseRegion=*/true);
  auto emitBranch = [&](Region &region, const dsl::BlockStmt *block) {
    OpBuilder::InsertionGuard guard(builder);
    Block *b = &region.front();
    if (b->mightHaveTerminator())
      b->getTerminator()->erase();
    builder.setInsertionPointToEnd(b);
    for (auto [i, c] : llvm::enumerate(carried))
      env[c.second][c.first].value = before[i];
    if (block) {
      pushScope();
      for (auto &st : block->stmts)
        emitStmt(*st);
      popScope();
    }
    SmallVector<Value> yields;
    for (auto &[name, level] : carried)
      yields.push_back(env[level][name].value);
    scf::YieldOp::create(builder, l, yields);
  };
  emitBranch(ifOp.getThenRegion(), s.thenBlock.get());
  emitBranch(ifOp.getElseRegion(), s.elseBlock.get());
  for (auto [i, c] : llvm::enumerate(carried))
    env[c.second][c.first].value = ifOp.getResult(i);
}
