//===- RegisterOffsetsTest.cpp - Constant offsets into addresses, exactly -===//
//
// codegen/nvptx/RegisterOffsets.h rewrites addresses as a shared part plus
// a constant. The rewrite must give the same address for every input on
// which the original is defined (no poison), in the wrapping arithmetic of
// the tile program. Each case here is a function of the shapes the
// per-thread form produces; a small evaluator runs it before and after the
// rewrite on boundary and random inputs, and the number of rewritten
// addresses says where a constant must not move (a 32-bit wrap between the
// parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/RegisterOffsets.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Local.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

namespace {

/// One lane of a value; nullopt is poison.
using Lane = std::optional<llvm::APInt>;
using Value = std::vector<Lane>;

/// Runs `f` (arguments: integers) on `args`; the returned pointer as its
/// address, or nullopt where the result is poison.
class Evaluator {
public:
  std::optional<uint64_t> run(llvm::Function &f,
                              llvm::ArrayRef<uint64_t> args) {
    values.clear();
    for (auto [arg, v] : llvm::zip(f.args(), args))
      values[&arg] = {llvm::APInt(arg.getType()->getIntegerBitWidth(), v)};
    for (llvm::Instruction &inst : f.getEntryBlock()) {
      if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(&inst)) {
        Lane r = of(ret->getReturnValue())[0];
        if (!r)
          return std::nullopt;
        return r->getZExtValue();
      }
      values[&inst] = eval(inst);
    }
    ADD_FAILURE() << "no return";
    return std::nullopt;
  }

private:
  std::map<const llvm::Value *, Value> values;

  Value of(llvm::Value *v) {
    if (auto it = values.find(v); it != values.end())
      return it->second;
    auto *c = llvm::cast<llvm::Constant>(v);
    if (auto *vecTy = llvm::dyn_cast<llvm::FixedVectorType>(c->getType())) {
      Value lanes;
      for (unsigned i = 0; i < vecTy->getNumElements(); ++i)
        lanes.push_back(laneOf(c->getAggregateElement(i)));
      return lanes;
    }
    return {laneOf(c)};
  }

  static Lane laneOf(llvm::Constant *c) {
    if (auto *ci = llvm::dyn_cast<llvm::ConstantInt>(c))
      return ci->getValue();
    return std::nullopt; // poison
  }

  static Lane binary(const llvm::BinaryOperator &op, const llvm::APInt &a,
                     const llvm::APInt &b) {
    bool overflow = false;
    llvm::APInt r;
    switch (op.getOpcode()) {
    case llvm::Instruction::Add:
      if (op.hasNoSignedWrap())
        (void)a.sadd_ov(b, overflow);
      if (!overflow && op.hasNoUnsignedWrap())
        (void)a.uadd_ov(b, overflow);
      r = a + b;
      break;
    case llvm::Instruction::Mul:
      if (op.hasNoSignedWrap())
        (void)a.smul_ov(b, overflow);
      if (!overflow && op.hasNoUnsignedWrap())
        (void)a.umul_ov(b, overflow);
      r = a * b;
      break;
    case llvm::Instruction::Shl:
      if (b.uge(a.getBitWidth()))
        return std::nullopt;
      if (op.hasNoSignedWrap())
        (void)a.sshl_ov(b, overflow);
      if (!overflow && op.hasNoUnsignedWrap())
        (void)a.ushl_ov(b, overflow);
      r = a.shl(b);
      break;
    case llvm::Instruction::Or:
      if (llvm::cast<llvm::PossiblyDisjointInst>(op).isDisjoint() &&
          a.intersects(b))
        return std::nullopt;
      r = a | b;
      break;
    case llvm::Instruction::And:
      r = a & b;
      break;
    default:
      ADD_FAILURE() << "unexpected " << op.getOpcodeName();
      return std::nullopt;
    }
    if (overflow)
      return std::nullopt;
    return r;
  }

  Value eval(llvm::Instruction &inst) {
    Value out;
    if (auto *op = llvm::dyn_cast<llvm::BinaryOperator>(&inst)) {
      Value a = of(op->getOperand(0)), b = of(op->getOperand(1));
      for (auto [x, y] : llvm::zip(a, b))
        out.push_back(x && y ? binary(*op, *x, *y) : std::nullopt);
      return out;
    }
    if (auto *cast = llvm::dyn_cast<llvm::CastInst>(&inst)) {
      unsigned width = cast->getDestTy()->isPointerTy()
                           ? 64
                           : cast->getDestTy()->getScalarSizeInBits();
      for (Lane x : of(cast->getOperand(0))) {
        if (x && llvm::isa<llvm::ZExtInst>(cast) && cast->hasNonNeg() &&
            x->isNegative())
          x = std::nullopt;
        if (x)
          x = llvm::isa<llvm::SExtInst>(cast) ? x->sext(width)
                                              : x->zextOrTrunc(width);
        out.push_back(x);
      }
      return out;
    }
    if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) {
      EXPECT_TRUE(gep->getSourceElementType()->isIntegerTy(8));
      EXPECT_EQ(gep->getNumIndices(), 1u);
      Lane p = of(gep->getPointerOperand())[0];
      Lane i = of(gep->getOperand(1))[0];
      return {p && i ? Lane(*p + i->sextOrTrunc(64)) : std::nullopt};
    }
    if (auto *insert = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
      out = of(insert->getOperand(0));
      auto *index = llvm::cast<llvm::ConstantInt>(insert->getOperand(2));
      out[index->getZExtValue()] = of(insert->getOperand(1))[0];
      return out;
    }
    if (auto *extract = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
      auto *index = llvm::cast<llvm::ConstantInt>(extract->getIndexOperand());
      return {of(extract->getVectorOperand())[index->getZExtValue()]};
    }
    if (auto *shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
      Value a = of(shuffle->getOperand(0)), b = of(shuffle->getOperand(1));
      a.insert(a.end(), b.begin(), b.end());
      for (int m : shuffle->getShuffleMask())
        out.push_back(m < 0 ? std::nullopt : a[m]);
      return out;
    }
    ADD_FAILURE() << "unexpected " << inst.getOpcodeName();
    return {std::nullopt};
  }
};

/// Inputs: every pair of boundary values, then random ones.
/// The random inputs' seed: fresh per run, named in every failure.
const unsigned kSeed = std::random_device{}();

std::vector<std::pair<uint32_t, uint32_t>> inputs() {
  std::vector<uint32_t> edges = {
      0u,          1u,          2u,          15u,         16u,
      1023u,       1024u,       0x3fffffffu, 0x40000000u, 0x7ffff000u,
      0x7ffffbffu, 0x7ffffc00u, 0x7fffffffu, 0x80000000u, 0x80000400u,
      0xfffffc00u, 0xffffffffu};
  std::vector<std::pair<uint32_t, uint32_t>> in;
  for (uint32_t a : edges)
    for (uint32_t b : edges)
      in.emplace_back(a, b);
  std::mt19937 rng(kSeed);
  for (int i = 0; i < 4000; ++i)
    in.emplace_back(rng(), rng());
  return in;
}

/// Parses `body` as `@f(i64 %base, i32 %x, i32 %y)` returning its `%addr`
/// as a pointer, rewrites it, and checks both agree wherever the original
/// is defined. Returns how many addresses were rewritten.
unsigned check(llvm::StringRef body) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  std::string text =
      "define ptr addrspace(1) @f(i64 %base, i32 %x, i32 %y) {\n" + body.str() +
      "  %p = inttoptr i64 %addr to ptr addrspace(1)\n"
      "  ret ptr addrspace(1) %p\n}\n";
  auto parse = [&]() {
    auto m = llvm::parseAssemblyString(text, err, ctx);
    if (!m) {
      std::string msg;
      llvm::raw_string_ostream os(msg);
      err.print("case", os);
      ADD_FAILURE() << msg;
    }
    return m;
  };
  std::unique_ptr<llvm::Module> original = parse(), rewritten = parse();
  if (!original || !rewritten)
    return 0;
  unsigned folded =
      kiln::nvptx::foldRegisterOffsets(*rewritten->getFunction("f"));
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(*rewritten, &os)) {
    ADD_FAILURE() << msg;
    return folded;
  }
  // Nothing of the rewrite is left unused (a split given up halfway).
  for (llvm::Instruction &inst : rewritten->getFunction("f")->getEntryBlock())
    EXPECT_FALSE(llvm::isInstructionTriviallyDead(&inst))
        << "unused: " << inst.getName().str();
  SCOPED_TRACE("random inputs' seed " + std::to_string(kSeed));
  Evaluator ev;
  int defined = 0;
  for (auto [x, y] : inputs()) {
    uint64_t base = 0x00007f0012345670ull ^ (uint64_t(x) << 20);
    std::optional<uint64_t> want =
        ev.run(*original->getFunction("f"), {base, x, y});
    if (!want)
      continue;
    ++defined;
    std::optional<uint64_t> got =
        ev.run(*rewritten->getFunction("f"), {base, x, y});
    if (!got || *got != *want) {
      std::string after;
      llvm::raw_string_ostream as(after);
      rewritten->print(as, nullptr);
      std::string now = got ? llvm::utohexstr(*got) : "poison";
      ADD_FAILURE() << "x = " << x << ", y = " << y << ": "
                    << llvm::utohexstr(*want) << " became " << now << "\n"
                    << after;
      break;
    }
  }
  EXPECT_GT(defined, 100) << "too few inputs without poison";
  return folded;
}

/// A case: the function's body (defining `%addr`) and how many addresses
/// the rewrite may change: 0 where moving a constant would be wrong.
struct Case {
  const char *name;
  std::string body;
  unsigned folded;
};

/// `%splat`: `%hi` in every lane of an <8 x i32>; `%bases`: `%base` in the
/// lanes the accesses read (0 and 4), as the per-thread form builds them.
const std::string kSplat = R"(
  %x.v = insertelement <8 x i32> poison, i32 %hi, i64 0
  %splat = shufflevector <8 x i32> %x.v, <8 x i32> poison, <8 x i32> zeroinitializer
  %b.v = insertelement <8 x i64> poison, i64 %base, i64 0
  %bases = shufflevector <8 x i64> %b.v, <8 x i64> poison, <8 x i32> <i32 0, i32 poison, i32 poison, i32 poison, i32 0, i32 poison, i32 poison, i32 poison>
)";

/// Lane 4's address of `x + offs` (4-byte elements), offs = %splat +
/// the layout's register offsets through `combine` (`or disjoint`,
/// `add`).
std::string registerAddress(const char *hi, const char *combine) {
  return std::string("  %hi = ") + hi + "\n" + kSplat + "  %offs = " + combine +
         R"( <8 x i32> %splat, <i32 0, i32 1, i32 2, i32 3, i32 512, i32 513, i32 514, i32 515>
  %wide = sext <8 x i32> %offs to <8 x i64>
  %bytes = shl nsw <8 x i64> %wide, splat (i64 2)
  %addrs = add <8 x i64> %bytes, %bases
  %addr = extractelement <8 x i64> %addrs, i64 4
)";
}

/// `x + ((hi | c) << 3)` in bytes, the shift `shl <flag>` and its
/// extension to 64 bits `ext`.
std::string shiftedAddress(const char *hi, int32_t c, const char *flag,
                           const char *ext) {
  return std::string("  %hi = ") + hi + "\n  %offs = or disjoint i32 %hi, " +
         std::to_string(c) + "\n  %bytes = shl " + flag +
         " i32 %offs, 3\n  %wide = " + ext +
         " i32 %bytes to i64\n  %addr = add i64 %base, %wide\n";
}

const Case kCases[] = {
    // `program_id(0) * BLOCK + arange`: the layout's register offsets in
    // the low bits, apart from the rest; lane 4 gets its own 2048 bytes.
    {"DisjointRegisterOffsets",
     registerAddress("shl i32 %x, 10", "or disjoint"), 1},
    // `k + arange` with k unconstrained: the sum may wrap at 32 bits, so
    // each register keeps its own sign extension.
    {"WrappingSum", registerAddress("add i32 %x, 0", "add"), 0},
    // `add nsw` with a constant under a sign extension: no wrap.
    {"NoSignedWrapSum", R"(
  %offs = add nsw i32 %x, 96
  %wide = sext i32 %offs to i64
  %bytes = mul i64 %wide, 12
  %addr = add i64 %base, %bytes
)",
     1},
    // An unsigned chain: zext of a shifted disjoint or.
    {"ZeroExtendedShift", shiftedAddress("shl i32 %x, 4", 7, "nuw", "zext"), 1},
    // `shl nsw` under a sign extension moves a small offset out...
    {"SignedShiftOfSmallOffset",
     shiftedAddress("shl i32 %x, 4", 5, "nsw", "sext"), 1},
    // ... but not an offset the shift would move into the sign bit:
    // defined where x's top three bits are set (bits 28-31 of the or all
    // ones), where sext(hi << 3) + (2^28 << 3) is 2^32 off.
    {"SignedShiftIntoTheSign",
     shiftedAddress("and i32 %x, -536805377", 1 << 28, "nsw", "sext"), 0},
    // Two computed operands of a disjoint or under a sign extension: where
    // both split by disjoint bits...
    {"DisjointOperands", R"(
  %a.hi = shl i32 %x, 8
  %a = or disjoint i32 %a.hi, 3
  %b.lo = and i32 %y, 240
  %b = or disjoint i32 %b.lo, 4
  %offs = or disjoint i32 %a, %b
  %wide = sext i32 %offs to i64
  %addr = add i64 %base, %wide
)",
     1},
    // ... but not with an `add nsw` part, which may wrap against the other
    // operand's rest.
    {"OperandWithAddedConstant", R"(
  %a.hi = shl i32 %x, 8
  %a = add nsw i32 %a.hi, -1
  %b = and i32 %y, 255
  %offs = or disjoint i32 %a, %b
  %wide = sext i32 %offs to i64
  %addr = add i64 %base, %wide
)",
     0},
    // A 64-bit disjoint or whose operand gave up a constant: the rests
    // may share bits (a0 = 6 and b = 2 where a = 8), so they are added,
    // not or-ed.
    {"WideDisjointOrOfRests", R"(
  %wx = zext i32 %x to i64
  %a0 = and i64 %wx, 6
  %a = add i64 %a0, 2
  %wy = zext i32 %y to i64
  %b = and i64 %wy, 2
  %v = or disjoint i64 %a, %b
  %addr = add i64 %base, %v
)",
     1},
    // Unused lanes of a constant are poison after InstCombine: they read
    // as 0 (lane 4, the one used, keeps its 2048 bytes).
    {"PoisonLanes", std::string("  %hi = shl i32 %x, 10\n") + kSplat + R"(
  %offs = or disjoint <8 x i32> %splat, <i32 0, i32 poison, i32 poison, i32 poison, i32 512, i32 poison, i32 poison, i32 poison>
  %wide = sext <8 x i32> %offs to <8 x i64>
  %bytes = shl nsw <8 x i64> %wide, <i64 2, i64 poison, i64 poison, i64 poison, i64 2, i64 poison, i64 poison, i64 poison>
  %addrs = add <8 x i64> %bytes, %bases
  %addr = extractelement <8 x i64> %addrs, i64 4
)",
     1},
    // Both operands of a disjoint or split (their rests added), then a
    // shift that would move the offsets into the sign: given up after the
    // operands' rests were built, and none of them left behind.
    {"GivenUpHalfway", R"(
  %a.hi = and i32 %x, -536870912
  %a = or disjoint i32 %a.hi, 268435456
  %b.lo = and i32 %y, 240
  %b = or disjoint i32 %b.lo, 4
  %o = or disjoint i32 %a, %b
  %s = shl nsw i32 %o, 3
  %wide = sext i32 %s to i64
  %addr = add i64 %base, %wide
)",
     0},
    // 64-bit arithmetic wraps modulo 2^64 on both sides: constants move out
    // of any order of additions and scalings.
    {"WideArithmetic", R"(
  %wx = sext i32 %x to i64
  %wy = zext i32 %y to i64
  %a = add i64 %wx, -40
  %b = mul i64 %a, 6
  %c = add i64 %wy, 7
  %d = shl i64 %c, 1
  %e = add i64 %b, %d
  %addr = add i64 %base, %e
)",
     1},
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class RegisterOffsets : public testing::TestWithParam<Case> {};

TEST_P(RegisterOffsets, SameAddressWhereDefined) {
  EXPECT_EQ(check(GetParam().body), GetParam().folded);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RegisterOffsets, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
