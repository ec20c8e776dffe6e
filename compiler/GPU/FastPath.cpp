//===- FastPath.cpp - What a variant's fast-path image assumes
//-------------===//
//
// Every GPU variant may get a second image, its fast path (docs/codegen-
// gpu.md, "The fast path"), compiled under assumptions about the
// arguments that the runtime checks at each launch (docs/bundle.md,
// "assumes"): Triton's launch-time specialization, done ahead of time.
//
// - align16 / div16: pointer parameters without `@align` are 16-byte
//   aligned, integer parameters without `@div` multiples of 16 (the
//   parameters get `kiln.align` / `kiln.div`, which the axis analysis reads).
// - holds (targets with range-checked accesses): conditions over the
//   integer parameters under which every view box's lanes stay within
//   2^31 bytes of the box's origin, so that tile-gpu-lower-views'
//   relative offsets can be accessed as a uniform base plus 32-bit offsets
//   (docs/codegen-gpu.md, "Range-checked accesses"). A box of shape S over
//   strides s reaches sum_d (S_d - 1) * s_d elements past its origin; each
//   runtime stride s_d of an extent above 1 gets an equal share of the
//   2^31-byte budget (after the constant strides' part), rounded down to
//   a power of two, L_d, and the image assumes `0 <= s_d <= L_d` — where s_d is
//   an expression the runtime can evaluate exactly from the arguments. In the
//   image, the stride the view is made with becomes `minui(s_d, L_d)`: the same
//   value wherever the image runs, and a bound the thread lowering can read.
//
// - tensor_maps (targets with tensor copies, sm_90a's TMA): the view loads
//   that feed a matrix product in a loop tile-gpu-pipeline will pipeline
//   are copied by the hardware from a tensor map, which the runtime
//   encodes at each launch from the image's recipe (docs/bundle.md,
//   "tensor_maps": base param, element type, sizes and strides as
//   expressions, the box and the swizzle) and passes as an extra kernel
//   argument (`!llvm.ptr`, `kiln_gpu.tensor_map = i`, after the params).
//   A load qualifies when its view's base is a pointer parameter, its
//   sizes and strides are expressions the runtime can evaluate exactly,
//   its innermost stride is the constant 1, it reads zero outside the
//   view, its offsets are i32 computed in the loop from the induction
//   variable and values from before the loop, its loop is in no other
//   loop and has `stages` >= 2, planTensorCopy writes the box where
//   the stage's shared layout has it, and the kernel writes no memory
//   through that parameter (the copies read through the async proxy,
//   which the kernel's own stores reach only after a
//   `fence.proxy.async.global`: a buffer both read and written keeps the
//   threads' copies). The load is marked with the map's
//   index; tile-gpu-lower-views makes it a `kiln_gpu.tensor_box_load`.
//   The runtime checks the hardware's rules at launch (aligned base,
//   strides in whole 16 bytes, sizes from 1 to 2^32) and takes the generic
//   image where they fail.
//
// Exactness of the runtime's expression. The runtime evaluates names as
// the arguments' values (sign- or zero-extended by their types) in 64-bit
// wrapping arithmetic. A kernel's i32 arithmetic agrees with that modulo
// 2^32, its i64 arithmetic exactly once its operands agree exactly; an
// extension from i32 gives the runtime's value when that value lies in
// [0, 2^31), which the image then assumes too. So strides built from
// parameters and constants by +, - and * (at 32 or 64 bits) and
// extensions from i32 qualify; anything else (a loaded value, a loop
// variable) leaves its box without the assumption.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/StageUtils.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/GPU/ThreadLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace kiln::gpu {
#define GEN_PASS_DEF_TILEGPUFASTPATH
#include "compiler/GPU/Passes.h.inc"
} // namespace kiln::gpu

using namespace mlir;
using namespace kiln::gpu;

namespace {

/// Appends `s` to `list` unless it is there.
void appendOnce(std::vector<std::string> &list, std::string s) {
  if (!llvm::is_contained(list, s))
    list.push_back(std::move(s));
}

/// Builds the runtime's prefix expression (docs/bundle.md) for integers of
/// a kernel, with the conditions under which it is exact (file comment).
class ParamExpr {
public:
  explicit ParamExpr(func::FuncOp fn) : fn(fn) {}

  /// The expression for `v`, or nullopt; appends the i32 subexpressions it
  /// extends to `extended`.
  std::optional<std::string> build(Value v, int depth = 0) {
    if (depth > 8)
      return std::nullopt;
    unsigned width = v.getType().getIntOrFloatBitWidth();
    if (width != 32 && width != 64)
      return std::nullopt;
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return std::to_string(value.getSExtValue());
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &fn.getBody().front())
        return std::nullopt;
      auto name =
          fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
      if (!name)
        return std::nullopt;
      return name.getValue().str();
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (isa<arith::ExtSIOp, arith::ExtUIOp>(def)) {
      std::optional<std::string> e = build(def->getOperand(0), depth + 1);
      if (e && def->getOperand(0).getType().getIntOrFloatBitWidth() == 32)
        appendOnce(extended, *e);
      return e;
    }
    const char *op = isa<arith::AddIOp>(def)   ? "+"
                     : isa<arith::SubIOp>(def) ? "-"
                     : isa<arith::MulIOp>(def) ? "*"
                                               : nullptr;
    if (!op)
      return std::nullopt;
    std::optional<std::string> a = build(def->getOperand(0), depth + 1);
    std::optional<std::string> b = build(def->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    return llvm::formatv("({0} {1} {2})", op, *a, *b).str();
  }

  /// Expressions that must lie in [0, 2^31) for the kernel's values to be
  /// the runtime's.
  std::vector<std::string> extended;

private:
  func::FuncOp fn;
};

/// The runtime strides of one box and the limit each gets.
struct StrideBound {
  kiln::MakeViewOp view;
  unsigned operand; ///< index among the view's operands
  Value stride;     ///< the operand
  int64_t limit;
  std::string expr;
};

/// The bounds a box of shape `box` over `view` needs, or none (constant
/// strides only, or a box that cannot be bounded).
SmallVector<StrideBound> boundsOfBox(kiln::MakeViewOp view,
                                     RankedTensorType box, ParamExpr &exprs) {
  std::optional<int64_t> reachable = getOffsetReachBudget(box.getElementType());
  if (!reachable)
    return {};
  // A box left unbounded assumes nothing, not even its extensions' ranges.
  size_t extended = exprs.extended.size();
  auto none = [&] {
    exprs.extended.resize(extended);
    return SmallVector<StrideBound>();
  };
  int64_t budget = *reachable;
  SmallVector<StrideBound> bounds;
  SmallVector<int64_t> reaches;
  unsigned rank = box.getRank();
  for (unsigned d = 0; d < rank; ++d) {
    int64_t reach = box.getDimSize(d) - 1;
    if (reach <= 0)
      continue;
    Value stride = view.getStrides()[d];
    if (std::optional<int64_t> c = getConstantIntValue(stride)) {
      if (*c < 0 || *c > budget / reach)
        return none();
      budget -= reach * *c;
      continue;
    }
    std::optional<std::string> e = exprs.build(stride);
    if (!e)
      return none();
    bounds.push_back({view, 1 + rank + d, stride, 0, *e});
    reaches.push_back(reach);
  }
  for (auto [bound, reach] : llvm::zip(bounds, reaches)) {
    // A power of two: the clamp keeps the stride's divisibility for the
    // axis analysis (a minimum is divisible by what both operands are).
    int64_t limit = budget / (int64_t(bounds.size()) * reach);
    if (limit < 1)
      return none();
    bound.limit = int64_t(llvm::bit_floor(uint64_t(limit)));
  }
  return bounds;
}

/// Clamps the runtime strides of `fn`'s view boxes (file comment) and
/// appends the conditions the image assumes to `holds`.
void boundViewStrides(func::FuncOp fn, llvm::json::Array &holds) {
  ParamExpr exprs(fn);
  SmallVector<StrideBound> bounds;
  fn.walk([&](Operation *op) {
    Value view;
    RankedTensorType box;
    if (auto load = dyn_cast<kiln::ViewLoadOp>(op)) {
      view = load.getView();
      box = load.getType();
    } else if (auto store = dyn_cast<kiln::ViewStoreOp>(op)) {
      view = store.getView();
      box = dyn_cast<RankedTensorType>(store.getValue().getType());
    }
    auto make = view ? view.getDefiningOp<kiln::MakeViewOp>() : nullptr;
    if (make && box && box.hasStaticShape())
      llvm::append_range(bounds, boundsOfBox(make, box, exprs));
  });
  // One limit per stride value: the least any of its boxes allows.
  llvm::MapVector<Value, int64_t> limits;
  for (const StrideBound &s : bounds) {
    auto [it, inserted] = limits.insert({s.stride, s.limit});
    if (!inserted)
      it->second = std::min(it->second, s.limit);
  }
  std::vector<std::string> ranges;
  for (StrideBound &s : bounds) {
    int64_t limit = limits.lookup(s.stride);
    appendOnce(
        ranges,
        llvm::formatv("(&& (>= {0} 0) (<= {0} {1}))", s.expr, limit).str());
    if (s.view->getOperand(s.operand) != s.stride)
      continue; // clamped for another box already
    OpBuilder b(s.view);
    Value bound = arith::ConstantOp::create(b, s.view.getLoc(),
                                            b.getI64IntegerAttr(limit));
    s.view->setOperand(
        s.operand, arith::MinUIOp::create(b, s.view.getLoc(), s.stride, bound));
  }
  // A stride's own range implies that of its extension.
  for (const std::string &e : exprs.extended)
    if (llvm::none_of(bounds,
                      [&](const StrideBound &s) { return s.expr == e; }))
      holds.push_back(
          llvm::formatv("(&& (>= {0} 0) (< {0} 2147483648))", e).str());
  for (const std::string &r : ranges)
    holds.push_back(r);
}

/// The name the manifest gives an element type (docs/bundle.md), or "".
std::string elementTypeName(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3";
  if (isa<Float8E5M2Type>(t))
    return "f8e5m2";
  if (t.isSignlessInteger(8) || t.isSignlessInteger(16) ||
      t.isSignlessInteger(32) || t.isSignlessInteger(64))
    return "i" + std::to_string(t.getIntOrFloatBitWidth());
  return "";
}

/// True when `v`, computed in `loop`'s body, depends only on the induction
/// variable and values from before the loop through pure ops without
/// regions: tile-gpu-pipeline can compute it for iterations ahead.
bool runsAhead(Value v, scf::ForOp loop, int depth = 0) {
  if (depth > 32)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != loop.getBody() || arg == loop.getInductionVar();
  Operation *def = v.getDefiningOp();
  if (!loop.getBody()->findAncestorOpInBlock(*def))
    return true; // defined before the loop
  if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return runsAhead(o, loop, depth + 1); });
}

/// Whether the tile `v` reaches an operand A or B of a `kiln.dot` in its
/// block through reshapes, transpositions and one-operand elementwise ops.
bool feedsDotOperand(Value v) {
  Block *block = v.getParentBlock();
  SmallVector<Value> work{v};
  for (unsigned steps = 0; !work.empty() && steps < 64; ++steps) {
    Value x = work.pop_back_val();
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block)
        continue;
      if (isa<kiln::DotOp>(user)) {
        if (use.getOperandNumber() < 2)
          return true;
        continue;
      }
      if (isa<kiln::ReshapeOp, kiln::TransOp>(user) ||
          (user->getNumResults() == 1 && user->getNumOperands() == 1 &&
           user->hasTrait<OpTrait::Elementwise>()))
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// The stages of the variant (the language's default 2).
int64_t variantStages(ModuleOp module) {
  if (auto variant = module->getAttrOfType<DictionaryAttr>(
          kiln::KilnDialect::getVariantAttrName()))
    if (auto s = variant.getAs<IntegerAttr>("stages"))
      return s.getInt();
  return 2;
}

/// The tensor-map recipe of a view load, or nullopt when the load does not
/// qualify (file comment).
std::optional<llvm::json::Object> tensorMapRecipe(kiln::ViewLoadOp load,
                                                  ParamExpr &exprs) {
  auto loop = dyn_cast<scf::ForOp>(load->getParentOp());
  if (!loop || loop->getParentOfType<LoopLikeOpInterface>())
    return std::nullopt;
  auto make = load.getView().getDefiningOp<kiln::MakeViewOp>();
  RankedTensorType box = load.getType();
  if (!make || !box.hasStaticShape() || !load.getSizes().empty())
    return std::nullopt;
  if (Value other = load.getOther())
    if (!matchPattern(other, m_AnyZeroFloat()) &&
        !matchPattern(other, m_Zero()))
      return std::nullopt; // the hardware fills zeros
  auto base = dyn_cast<BlockArgument>(make.getBase());
  auto fn = load->getParentOfType<func::FuncOp>();
  if (!base || base.getOwner() != &fn.getBody().front())
    return std::nullopt;
  auto param =
      fn.getArgAttrOfType<StringAttr>(base.getArgNumber(), "kiln.name");
  std::string type = elementTypeName(box.getElementType());
  if (!param || type.empty())
    return std::nullopt;
  for (Value o : load.getOffsets())
    if (!o.getType().isInteger(32) || !runsAhead(o, loop))
      return std::nullopt;
  if (!feedsDotOperand(load.getResult()))
    return std::nullopt;
  std::optional<int64_t> innerStride =
      getConstantIntValue(make.getStrides().back());
  if (!innerStride || *innerStride != 1)
    return std::nullopt;
  std::optional<threads::TensorCopyPlan> plan = threads::planTensorCopy(
      box.getShape(), getElementBytes(box.getElementType()));
  if (!plan)
    return std::nullopt;
  size_t extended = exprs.extended.size();
  llvm::json::Array sizes, strides, pieceBox;
  for (auto [size, stride] : llvm::zip(make.getSizes(), make.getStrides())) {
    std::optional<std::string> a = exprs.build(size);
    std::optional<std::string> b = exprs.build(stride);
    if (!a || !b) {
      exprs.extended.resize(extended);
      return std::nullopt;
    }
    sizes.push_back(*a);
    strides.push_back(*b);
  }
  for (int64_t d : plan->pieceBox)
    pieceBox.push_back(d);
  return llvm::json::Object{{"param", param.getValue().str()},
                            {"type", type},
                            {"sizes", std::move(sizes)},
                            {"strides", std::move(strides)},
                            {"box", std::move(pieceBox)},
                            {"swizzle", plan->swizzle}};
}

/// Whether values of `t` address memory: pointers, tiles of pointers, views.
bool addressesMemory(Type t) {
  if (auto tile = dyn_cast<RankedTensorType>(t))
    t = tile.getElementType();
  return isa<kiln::PointerType, kiln::ViewType>(t);
}

/// The pointer parameters of `fn` (argument numbers) whose memory the
/// kernel may write: those an address a store or atomic writes derives
/// from, through the ops' address operands, loop-carried values and the
/// results of `scf.if`. An address that comes from anywhere else (none in
/// today's language), or a call, counts as every parameter.
llvm::SmallDenseSet<unsigned> writtenParams(func::FuncOp fn) {
  llvm::SmallDenseSet<unsigned> written;
  Block *entry = &fn.getBody().front();
  auto all = [&] {
    for (BlockArgument arg : entry->getArguments())
      if (addressesMemory(arg.getType()))
        written.insert(arg.getArgNumber());
  };
  SmallVector<Value> work;
  llvm::SmallPtrSet<Value, 16> seen;
  auto push = [&](Value v) {
    if (addressesMemory(v.getType()) && seen.insert(v).second)
      work.push_back(v);
  };
  bool unknown = false;
  fn.walk([&](Operation *op) {
    // A call (helpers are inlined before the stage) may write anything.
    if (isa<CallOpInterface>(op))
      unknown = true;
    auto effecting = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effecting)
      return;
    SmallVector<MemoryEffects::EffectInstance> effects;
    effecting.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects)
      if (isa<MemoryEffects::Write>(e.getEffect()))
        if (Value v = e.getValue())
          push(v);
  });
  if (unknown) {
    all();
    return written;
  }
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == entry) {
        written.insert(arg.getArgNumber());
        continue;
      }
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg == loop.getInductionVar()) {
        all();
        break;
      }
      unsigned i = arg.getArgNumber() - loop.getNumInductionVars();
      push(loop.getInitArgs()[i]);
      push(loop.getYieldedValues()[i]);
      continue;
    }
    Operation *def = v.getDefiningOp();
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      push(loop.getInitArgs()[i]);
      push(loop.getYieldedValues()[i]);
    } else if (auto branch = dyn_cast<scf::IfOp>(def)) {
      push(branch.thenYield().getOperand(i));
      if (!branch.getElseRegion().empty())
        push(branch.elseYield().getOperand(i));
    } else if (def->getNumRegions() == 0) {
      for (Value o : def->getOperands())
        push(o);
    } else {
      all();
      break;
    }
  }
  return written;
}

/// Chooses the view loads of `fn` that tensor copies take (file comment):
/// marks each with its map's index (kTensorMapAttr), appends a kernel
/// argument per map and its recipe to `maps`.
void chooseTensorCopies(func::FuncOp fn, llvm::json::Array &maps,
                        llvm::json::Array &holds) {
  if (variantStages(fn->getParentOfType<ModuleOp>()) < 2)
    return;
  ParamExpr exprs(fn);
  std::vector<std::string> recipes;
  llvm::SmallDenseSet<unsigned> written = writtenParams(fn);
  fn.walk([&](kiln::ViewLoadOp load) {
    // The copies read through the async proxy: they would not see the
    // kernel's own writes without a proxy fence (file comment).
    auto make = load.getView().getDefiningOp<kiln::MakeViewOp>();
    if (auto base = make ? dyn_cast<BlockArgument>(make.getBase())
                         : BlockArgument())
      if (base.getOwner() == &fn.getBody().front() &&
          written.contains(base.getArgNumber()))
        return;
    std::optional<llvm::json::Object> recipe = tensorMapRecipe(load, exprs);
    if (!recipe)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(llvm::json::Object(*recipe));
    auto it = llvm::find(recipes, text);
    size_t index = it - recipes.begin();
    if (it == recipes.end()) {
      recipes.push_back(text);
      maps.push_back(std::move(*recipe));
      MLIRContext *ctx = fn.getContext();
      ctx->getOrLoadDialect<LLVM::LLVMDialect>();
      Builder b(ctx);
      (void)fn.insertArgument(
          fn.getNumArguments(), LLVM::LLVMPointerType::get(ctx),
          b.getDictionaryAttr(b.getNamedAttr(
              kTensorMapAttr, b.getI64IntegerAttr(int64_t(index)))),
          fn.getLoc());
    }
    load->setAttr(kTensorMapAttr,
                  IntegerAttr::get(IntegerType::get(fn.getContext(), 64),
                                   int64_t(index)));
  });
  for (const std::string &e : exprs.extended)
    holds.push_back(
        llvm::formatv("(&& (>= {0} 0) (< {0} 2147483648))", e).str());
}

} // namespace

FastPathAssumptions
kiln::gpu::addFastPathAssumptions(ModuleOp module, const GPUTarget &target,
                                  llvm::ArrayRef<std::string> exclude) {
  llvm::json::Array align, div, holds, maps;
  std::vector<std::string> params;
  module.walk([&](func::FuncOp fn) {
    if (!fn->hasAttr("kiln.kernel"))
      return;
    Builder b(fn.getContext());
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto name = fn.getArgAttrOfType<StringAttr>(i, "kiln.name");
      // A parameter the body never reads (one that only a launch-time
      // `where` condition compares) gains nothing from an assumption.
      if (!name || fn.getArgument(i).use_empty() ||
          llvm::is_contained(exclude, name.getValue()))
        continue;
      Type t = fn.getArgumentTypes()[i];
      if (isa<kiln::PointerType>(t) && !fn.getArgAttr(i, "kiln.align")) {
        fn.setArgAttr(i, "kiln.align", b.getI64IntegerAttr(16));
        align.push_back(name.getValue().str());
        params.push_back(name.getValue().str());
      } else if (t.isSignlessInteger() && t.getIntOrFloatBitWidth() >= 32 &&
                 !fn.getArgAttr(i, "kiln.div")) {
        fn.setArgAttr(i, "kiln.div", b.getI64IntegerAttr(16));
        div.push_back(name.getValue().str());
        params.push_back(name.getValue().str());
      }
    }
    if (target.hasRangeCheckedAccess)
      boundViewStrides(fn, holds);
    // A map's index is its kernel argument's position after the params:
    // one kernel per module (a variant module's), or none of this.
    if (target.hasTensorCopy &&
        llvm::count_if(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
          return f->hasAttr("kiln.kernel");
        }) == 1)
      chooseTensorCopies(fn, maps, holds);
  });
  FastPathAssumptions result;
  result.params = std::move(params);
  if (!maps.empty()) {
    llvm::raw_string_ostream os(result.tensorMaps);
    os << llvm::json::Value(std::move(maps));
    module->setAttr(kTensorMapsAttr,
                    StringAttr::get(module.getContext(), result.tensorMaps));
  }
  if (align.empty() && div.empty() && holds.empty() &&
      result.tensorMaps.empty())
    return result;
  llvm::json::Object j;
  if (!align.empty())
    j["align16"] = std::move(align);
  if (!div.empty())
    j["div16"] = std::move(div);
  if (!holds.empty())
    j["holds"] = std::move(holds);
  llvm::raw_string_ostream os(result.assumes);
  os << llvm::json::Value(std::move(j));
  return result;
}

void kiln::gpu::dropUnusedTensorMaps(ModuleOp module) {
  auto recipes = module->getAttrOfType<StringAttr>(kTensorMapsAttr);
  if (!recipes)
    return;
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(recipes.getValue());
  llvm::json::Array *all = parsed ? parsed->getAsArray() : nullptr;
  if (!all) {
    llvm::consumeError(parsed.takeError());
    return;
  }
  // Indices outside the recipes are not the fast path's numbering: left
  // alone.
  for (auto fn : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto index = fn.getArgAttrOfType<IntegerAttr>(i, kTensorMapAttr))
        if (index.getInt() < 0 || index.getInt() >= int64_t(all->size()))
          return;
  llvm::json::Array kept;
  for (auto fn : module.getOps<func::FuncOp>()) {
    llvm::BitVector unused(fn.getNumArguments());
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto index = fn.getArgAttrOfType<IntegerAttr>(i, kTensorMapAttr);
      if (!index)
        continue;
      if (!fn.getArgument(i).use_empty()) {
        fn.setArgAttr(i, kTensorMapAttr,
                      IntegerAttr::get(index.getType(), int64_t(kept.size())));
        kept.push_back((*all)[index.getInt()]);
      } else {
        unused.set(i);
      }
    }
    if (unused.any())
      (void)fn.eraseArguments(unused);
  }
  if (kept.empty()) {
    module->removeAttr(kTensorMapsAttr);
    return;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(kept));
  module->setAttr(kTensorMapsAttr, StringAttr::get(module.getContext(), text));
}

namespace {

struct FastPathPass
    : public kiln::gpu::impl::TileGPUFastPathBase<FastPathPass> {
  using TileGPUFastPathBase::TileGPUFastPathBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    const GPUTarget *t = lookupGPUTarget(target);
    if (!t) {
      module.emitError("unknown GPU target '")
          << target << "'; known: " << llvm::join(getGPUTargetNames(), ", ");
      return signalPassFailure();
    }
    FastPathAssumptions a = addFastPathAssumptions(module, *t);
    if (!a.assumes.empty())
      module->setAttr("kiln_gpu.assumes",
                      StringAttr::get(module.getContext(), a.assumes));
  }
};

} // namespace
