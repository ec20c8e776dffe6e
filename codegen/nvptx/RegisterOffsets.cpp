//===- RegisterOffsets.cpp - Constant register offsets into addresses ----===//
//
// A thread's registers of a tile of pointers differ by constants: the
// layout puts register r of a thread `c_r` elements after its first, so the
// per-thread form computes `base + sext(s | c_r) * size` for each register
// (InstCombine has proven the `or` disjoint: `program_id(0) * BLOCK` plus a
// thread's part of `arange`). NVPTX's instruction selection cannot fold a
// constant under a sign extension, so every register paid its own 64-bit
// multiply-add (an IMAD.WIDE on sm_90a), where `[%rd+2048]` needs none.
//
// This rewrite runs on the optimized module, just before code generation
// (no InstCombine after it would narrow the arithmetic back): for each
// `inttoptr` of a 64-bit address (a register extracted from a vector of
// them, or a scalar), it splits the address into a part without the
// constants, shared by all registers, and the register's constant offset,
// which becomes a `getelementptr i8` of the part — the immediate of the
// load or store.
//
// Exact in the wrapping arithmetic the tile program has (docs/language.md):
// 64-bit additions (disjoint ors among them), shifts and multiplications
// by a constant distribute over the split modulo 2^64; under a sign or zero
// extension only where no 32-bit wrap can happen between the parts: `or
// disjoint` (no carries at all, so sext(a | c) = sext(a) + sext(c)), `add
// nsw`/`add nuw` of a constant, `shl nuw`, and `shl nsw` where the parts'
// bits are apart and no offset reaches the sign.
// test/unit/RegisterOffsetsTest.cpp evaluates each shape before and after.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/RegisterOffsets.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

#include <optional>

namespace kiln::nvptx {

namespace {

/// How a value is read: as a 64-bit address part (arithmetic modulo
/// 2^64), or as the operand of a sign or zero extension to one (where the
/// split must not wrap at the value's own width).
enum class Reading { Wide, Signed, Unsigned };

/// A value split as `rest + offsets`: `rest` has the value's type, one
/// constant per lane (one for a scalar), as an integer of the reading
/// (the extension's value). `bitsApart`: `rest` and the offsets have no
/// bit in common and together make the value's bits (only `or disjoint`
/// steps).
struct Split {
  llvm::Value *rest;
  llvm::SmallVector<int64_t> offsets;
  bool bitsApart;
};

/// The lanes of an integer constant (scalar or vector) of at most 64 bits,
/// zero-extended for an unsigned reading (only values of at most 32 bits
/// are read so), else sign-extended. A poison or undef lane reads as 0
/// (the original's lane is poison there, any value will do) and is false
/// in `defined` when given.
std::optional<llvm::SmallVector<int64_t>>
constantLanes(llvm::Value *v, Reading reading,
              llvm::SmallVectorImpl<bool> *defined = nullptr) {
  auto *c = llvm::dyn_cast<llvm::Constant>(v);
  if (!c || c->getType()->getScalarSizeInBits() > 64)
    return std::nullopt;
  llvm::SmallVector<int64_t> lanes;
  auto *vecTy = llvm::dyn_cast<llvm::FixedVectorType>(c->getType());
  unsigned n = vecTy ? vecTy->getNumElements() : 1;
  for (unsigned i = 0; i < n; ++i) {
    llvm::Constant *e = vecTy ? c->getAggregateElement(i) : c;
    bool isUndef = e && llvm::isa<llvm::UndefValue>(e); // poison too
    if (defined)
      defined->push_back(!isUndef);
    auto *ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(e);
    if (!ci && !isUndef)
      return std::nullopt;
    lanes.push_back(isUndef ? 0
                    : reading == Reading::Unsigned
                        ? static_cast<int64_t>(ci->getZExtValue())
                        : ci->getSExtValue());
  }
  return lanes;
}

class Splitter {
public:
  /// `v` (64-bit integers) as a part without constants plus constant
  /// offsets, or nothing where no constant can be taken out exactly.
  std::optional<Split> wide(llvm::Value *v) { return split(v, Reading::Wide); }

  /// Every instruction the splits added, including those of splits given up
  /// above them (unused then).
  llvm::SmallVector<llvm::WeakTrackingVH> created;

private:
  llvm::DenseMap<std::pair<llvm::Value *, unsigned>, std::optional<Split>> memo;

  std::optional<Split> split(llvm::Value *v, Reading reading) {
    auto key = std::make_pair(v, static_cast<unsigned>(reading));
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    std::optional<Split> result = compute(v, reading);
    memo[key] = result;
    return result;
  }

  /// A new instruction computing `op` of the rests, placed right after
  /// `orig`, which it stands for (without `orig`'s flags: the rests'
  /// values are not the original's).
  llvm::Value *rebuild(llvm::BinaryOperator *orig,
                       llvm::Instruction::BinaryOps op, llvm::Value *lhs,
                       llvm::Value *rhs) {
    llvm::IRBuilder<> b(orig->getNextNode());
    return made(b.CreateBinOp(op, lhs, rhs, orig->getName() + ".rest"));
  }

  llvm::Value *made(llvm::Value *v) {
    created.push_back(v);
    return v;
  }

  static int64_t wrappingAdd(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }

  std::optional<Split> extension(llvm::CastInst *ext) {
    Reading inner =
        llvm::isa<llvm::SExtInst>(ext) ? Reading::Signed : Reading::Unsigned;
    std::optional<Split> s = split(ext->getOperand(0), inner);
    if (!s)
      return std::nullopt;
    llvm::IRBuilder<> b(ext->getNextNode());
    return Split{made(b.CreateCast(ext->getOpcode(), s->rest, ext->getDestTy(),
                                   ext->getName() + ".rest")),
                 s->offsets, false};
  }

  /// `add`, or `or` of disjoint bits.
  std::optional<Split> sum(llvm::BinaryOperator *inst, Reading reading) {
    bool disjoint = llvm::isa<llvm::PossiblyDisjointInst>(inst) &&
                    llvm::cast<llvm::PossiblyDisjointInst>(inst)->isDisjoint();
    if (!disjoint && inst->getOpcode() != llvm::Instruction::Add)
      return std::nullopt;
    llvm::Value *lhs = inst->getOperand(0), *rhs = inst->getOperand(1);
    // Plus a constant: the offsets, and those of the other operand. Under
    // an extension, exact where the addition cannot wrap.
    if (std::optional<llvm::SmallVector<int64_t>> c =
            constantLanes(rhs, reading)) {
      if ((reading == Reading::Signed && !disjoint &&
           !inst->hasNoSignedWrap()) ||
          (reading == Reading::Unsigned && !disjoint &&
           !inst->hasNoUnsignedWrap()))
        return std::nullopt;
      std::optional<Split> inner = split(lhs, reading);
      if (!inner)
        return Split{lhs, *c, disjoint};
      for (auto [o, k] : llvm::zip(inner->offsets, *c))
        o = wrappingAdd(o, k);
      inner->bitsApart = inner->bitsApart && disjoint;
      return inner;
    }
    // Two computed operands: exact modulo 2^64; under an extension only
    // where all four parts have their bits apart (a wrap between the
    // operands' rests is not excluded by one of the whole sum).
    std::optional<Split> l = split(lhs, reading), r = split(rhs, reading);
    if (!l && !r)
      return std::nullopt;
    if (reading != Reading::Wide &&
        (!disjoint || (l && !l->bitsApart) || (r && !r->bitsApart)))
      return std::nullopt;
    // An addition of the rests, also for a disjoint or: the rests of a
    // 64-bit one may share bits where the operands did not (an operand
    // that gave up a constant by an `add`).
    Split s{rebuild(inst, llvm::Instruction::Add, l ? l->rest : lhs,
                    r ? r->rest : rhs),
            l ? l->offsets : r->offsets, true};
    if (l && r)
      for (auto [o, k] : llvm::zip(s.offsets, r->offsets))
        o = wrappingAdd(o, k);
    return s;
  }

  /// A shift left or multiplication by one constant (the element size).
  std::optional<Split> scaling(llvm::BinaryOperator *inst, Reading reading) {
    llvm::SmallVector<bool> defined;
    std::optional<llvm::SmallVector<int64_t>> factor =
        constantLanes(inst->getOperand(1), Reading::Signed, &defined);
    if (!factor)
      return std::nullopt;
    // One factor over the defined lanes (a poison lane's result is poison).
    std::optional<int64_t> uniform;
    for (auto [value, isDefined] : llvm::zip(*factor, defined)) {
      if (!isDefined)
        continue;
      if (uniform && *uniform != value)
        return std::nullopt;
      uniform = value;
    }
    if (!uniform)
      return std::nullopt;
    unsigned width = inst->getType()->getScalarSizeInBits();
    int64_t f = *uniform;
    bool shl = inst->getOpcode() == llvm::Instruction::Shl;
    if (!(shl && f >= 0 && f < width) &&
        !(inst->getOpcode() == llvm::Instruction::Mul &&
          reading == Reading::Wide))
      return std::nullopt;
    // Under an extension: `shl nuw` keeps every part's bits (each is at
    // most the whole); `shl nsw` where the parts' bits are apart and the
    // offsets clear of the bits the shift moves into the sign.
    if (reading == Reading::Unsigned && !inst->hasNoUnsignedWrap())
      return std::nullopt;
    if (reading == Reading::Signed && !inst->hasNoSignedWrap())
      return std::nullopt;
    std::optional<Split> inner = split(inst->getOperand(0), reading);
    if (!inner)
      return std::nullopt;
    if (reading == Reading::Signed &&
        (!inner->bitsApart || llvm::any_of(inner->offsets, [&](int64_t o) {
          return o < 0 || o >= (int64_t(1) << (width - 1 - f));
        })))
      return std::nullopt;
    uint64_t scale = shl ? uint64_t(1) << f : static_cast<uint64_t>(f);
    Split s{rebuild(inst, inst->getOpcode(), inner->rest, inst->getOperand(1)),
            inner->offsets, inner->bitsApart};
    for (int64_t &o : s.offsets)
      o = static_cast<int64_t>(static_cast<uint64_t>(o) * scale);
    return s;
  }

  std::optional<Split> compute(llvm::Value *v, Reading reading) {
    if (auto *ext = llvm::dyn_cast<llvm::CastInst>(v)) {
      if (reading == Reading::Wide &&
          (llvm::isa<llvm::SExtInst>(ext) || llvm::isa<llvm::ZExtInst>(ext)) &&
          ext->getSrcTy()->getScalarSizeInBits() <= 32)
        return extension(ext);
      return std::nullopt;
    }
    auto *inst = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (!inst)
      return std::nullopt;
    if (std::optional<Split> s = sum(inst, reading))
      return s;
    return scaling(inst, reading);
  }
};

} // namespace

unsigned foldRegisterOffsets(llvm::Function &f) {
  Splitter splitter;
  llvm::SmallVector<llvm::IntToPtrInst *> casts;
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &inst : bb)
      if (auto *cast = llvm::dyn_cast<llvm::IntToPtrInst>(&inst))
        if (cast->getOperand(0)->getType()->isIntegerTy(64))
          casts.push_back(cast);
  unsigned folded = 0;
  llvm::SmallVector<llvm::WeakTrackingVH> replaced;
  for (llvm::IntToPtrInst *cast : casts) {
    // The address: one register of a vector of them, or a scalar.
    llvm::Value *address = cast->getOperand(0), *vector = address;
    uint64_t lane = 0;
    auto *extract = llvm::dyn_cast<llvm::ExtractElementInst>(address);
    if (extract) {
      auto *index =
          llvm::dyn_cast<llvm::ConstantInt>(extract->getIndexOperand());
      if (!index)
        continue;
      vector = extract->getVectorOperand();
      lane = index->getValue().getLimitedValue();
    }
    std::optional<Split> s = splitter.wide(vector);
    if (!s || lane >= s->offsets.size())
      continue;
    llvm::IRBuilder<> b(cast);
    llvm::Value *rest =
        extract ? b.CreateExtractElement(s->rest, extract->getIndexOperand())
                : s->rest;
    llvm::Value *ptr = b.CreateIntToPtr(rest, cast->getType());
    if (int64_t offset = s->offsets[lane])
      ptr = b.CreateGEP(b.getInt8Ty(), ptr, b.getInt64(offset));
    ptr->takeName(cast);
    cast->replaceAllUsesWith(ptr);
    cast->eraseFromParent();
    replaced.push_back(address);
    ++folded;
  }
  // The former address arithmetic where nothing else reads it, and the
  // rests no address took.
  replaced.append(splitter.created.begin(), splitter.created.end());
  llvm::RecursivelyDeleteTriviallyDeadInstructionsPermissive(replaced);
  return folded;
}

void foldRegisterOffsets(llvm::Module &m) {
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      foldRegisterOffsets(f);
}

} // namespace kiln::nvptx
