//===- ConvertGPUToROCDL.cpp - The per-thread form to AMDGPU LLVM ---------===//
//
// convert-kiln-gpu-to-rocdl (AMDGPUPasses.td). Everything becomes plain LLVM
// and `llvm.amdgcn.*` intrinsics: no call into ocml, ockl or any device
// library, and no query the compiler can answer itself (the block size is
// the module's warps times the target's wave size).
//
//===----------------------------------------------------------------------===//

#include "codegen/amdgpu/AMDGPUPasses.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/MathExpansion.h"
#include "compiler/GPU/PerThreadToLLVM.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <functional>

namespace kiln::amdgpu {
#define GEN_PASS_DEF_CONVERTKILNGPUTOROCDL
#include "codegen/amdgpu/AMDGPUPasses.h.inc"
} // namespace kiln::amdgpu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

constexpr unsigned kConstant = 4;
/// The formats of the module's printf records (lowerPrintf); the backend
/// puts them in the image's resources.
constexpr llvm::StringLiteral kPrintFormatsAttr = "kiln_gpu.print_formats";

/// Agent (device) scope acquire-release, as the language's atomics promise.
constexpr llvm::StringLiteral kAgentScope = "agent";

Value i32Const(OpBuilder &b, Location loc, int32_t v) {
  return llvmI32(b, loc, v);
}

/// Buffer accesses (the offset form of kiln_gpu.load/store). A raw buffer
/// resource (stride 0) over the uniform base with a range of 2^31 bytes:
/// an offset at or past the range reads zero and writes nothing, so a
/// masked thread's offset is moved to 2^31 instead of branching around
/// the access.
constexpr int64_t kBufferRange = int64_t(1) << 31;

/// The resource's fourth word (format and range-check mode): GFX9 (CDNA)
/// and GFX10+ (RDNA) lay it out differently.
int32_t bufferFlags(StringRef arch) {
  return arch.starts_with("gfx9") ? 0x00027000 : 0x31027000;
}

/// The integer type a buffer access of `vt` moves (LLVM's buffer
/// intrinsics take i8, i16, i32 and vectors of i32), or null.
Type bufferAccessType(VectorType vt) {
  int64_t bits = vt.getNumElements() * vt.getElementTypeBitWidth();
  MLIRContext *ctx = vt.getContext();
  if (bits == 8 || bits == 16 || bits == 32)
    return IntegerType::get(ctx, bits);
  if (bits % 32 == 0 && bits <= 128)
    return VectorType::get({bits / 32}, IntegerType::get(ctx, 32));
  return Type();
}

/// The resource over `base` (uniform: read from the first lane, which
/// keeps it in SGPRs) and this thread's offset, moved past the range
/// where `mask` is false.
std::pair<Value, Value> bufferAddress(OpBuilder &b, Location loc, Value base,
                                      Value offset, Value mask,
                                      StringRef arch) {
  MLIRContext *ctx = b.getContext();
  Value uniform = ROCDL::ReadfirstlaneOp::create(b, loc, b.getI64Type(), base);
  Value ptr = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace), uniform);
  Value rsrc = ROCDL::MakeBufferRsrcOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 8), ptr,
      LLVM::ConstantOp::create(b, loc, b.getI16Type(), b.getI16IntegerAttr(0)),
      LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                               b.getI64IntegerAttr(kBufferRange)),
      i32Const(b, loc, bufferFlags(arch)));
  if (mask)
    offset = LLVM::SelectOp::create(
        b, loc, mask, offset, i32Const(b, loc, int32_t(uint32_t(kBufferRange))));
  return {rsrc, offset};
}

/// kiln_gpu.load / store in the offset form as buffer accesses; false
/// (nothing done) for other ops and for sizes the intrinsics do not move.
bool lowerBufferAccess(OpBuilder &b, Operation *op, StringRef arch) {
  Location loc = op->getLoc();
  if (auto load = dyn_cast<GlobalLoadOp>(op)) {
    Type moved = load.getOffset() ? bufferAccessType(load.getType()) : Type();
    if (!moved)
      return false;
    auto [rsrc, offset] = bufferAddress(b, loc, load.getAddr(),
                                        load.getOffset(), load.getMask(), arch);
    Value zero = i32Const(b, loc, 0);
    Value raw = ROCDL::RawPtrBufferLoadOp::create(
        b, loc, moved, rsrc, offset, zero, zero, ArrayAttr(), ArrayAttr(),
        ArrayAttr());
    // `other` where masked, unless it is what an out-of-range read gives
    // (integer 0, +0.0; not -0.0), selected on the bits (LLVM 22's AMDGPU
    // assembly printer crashes on some selects of bf16 vectors on gfx11).
    Value other = load.getOther();
    if (load.getMask() && other && !matchPattern(other, m_Zero()) &&
        !matchPattern(other, m_PosZeroFloat()))
      raw = LLVM::SelectOp::create(
          b, loc, load.getMask(), raw,
          LLVM::BitcastOp::create(b, loc, moved, other));
    load.replaceAllUsesWith(
        LLVM::BitcastOp::create(b, loc, load.getType(), raw).getResult());
    load.erase();
    return true;
  }
  if (auto store = dyn_cast<GlobalStoreOp>(op)) {
    auto vt = cast<VectorType>(store.getValue().getType());
    Type moved = store.getOffset() ? bufferAccessType(vt) : Type();
    if (!moved)
      return false;
    auto [rsrc, offset] = bufferAddress(b, loc, store.getAddr(),
                                        store.getOffset(), store.getMask(),
                                        arch);
    Value zero = i32Const(b, loc, 0);
    Value raw = LLVM::BitcastOp::create(b, loc, moved, store.getValue());
    ROCDL::RawPtrBufferStoreOp::create(b, loc, raw, rsrc, offset, zero, zero,
                                       ArrayAttr(), ArrayAttr(), ArrayAttr());
    store.erase();
    return true;
  }
  return false;
}

/// A 32-bit lane exchange through `ds_bpermute` (any source lane of the
/// wave, addressed in bytes): `source` is the lane to read.
Value bpermute(OpBuilder &b, Location loc, Value source, Value v) {
  Value bytes = LLVM::ShlOp::create(b, loc, source, i32Const(b, loc, 2));
  return llvmIntrinsic(b, loc, "llvm.amdgcn.ds.bpermute", b.getI32Type(),
                   {bytes, v});
}

/// A 32-bit exchange with lane `lane ^ mask` for a constant `mask` without
/// an address, where the hardware has one: DPP `quad_perm` for 1 and 2
/// (the exchange folds into the ALU op that uses it), DPP `row_xmask`
/// (GFX10+) for 4 and 8, `ds_swizzle` in bit-mask mode (within 32 lanes)
/// for 4, 8 and 16 on GFX9. Null otherwise (32: across halves of a wave64).
std::function<Value(Value)> xorExchange(OpBuilder &b, Location loc,
                                        int64_t mask, StringRef arch) {
  auto dpp = [&b, loc](int32_t control) {
    return [&b, loc, control](Value x) {
      Type i32 = b.getI32Type();
      Value full = i32Const(b, loc, 0xF);
      Value bound = LLVM::ConstantOp::create(b, loc, b.getI1Type(),
                                             b.getBoolAttr(true));
      return llvmIntrinsic(b, loc, "llvm.amdgcn.update.dpp", i32,
                       {LLVM::PoisonOp::create(b, loc, i32), x,
                        i32Const(b, loc, control), full, full, bound});
    };
  };
  // quad_perm:[p0,p1,p2,p3] is p0 | p1 << 2 | p2 << 4 | p3 << 6.
  if (mask == 1)
    return dpp(1 | 0 << 2 | 3 << 4 | 2 << 6); // quad_perm:[1,0,3,2]
  if (mask == 2)
    return dpp(2 | 3 << 2 | 0 << 4 | 1 << 6); // quad_perm:[2,3,0,1]
  bool gfx9 = arch.starts_with("gfx9");
  if (!gfx9 && (mask == 4 || mask == 8))
    return dpp(0x160 | int32_t(mask)); // row_xmask:mask
  if (mask == 4 || mask == 8 || mask == 16)
    return [&b, loc, mask](Value x) {
      // Bit-mask mode: and 0x1F, or 0, xor `mask` (bits 14:10).
      return llvmIntrinsic(b, loc, "llvm.amdgcn.ds.swizzle", b.getI32Type(),
                       {x, i32Const(b, loc, 0x1F | int32_t(mask) << 10)});
    };
  return nullptr;
}

/// kiln_gpu.shuffle: an exchange without an address for xor shuffles with
/// a constant mask the hardware has (xorExchange), else the source lane as
/// the op defines it (own lane where `up`/`down` leave the wave), then
/// `ds_bpermute`; per 32 bits.
Value lowerShuffle(OpBuilder &b, Location loc, ShuffleOp op, Value lane,
                   int32_t waveSize, StringRef arch) {
  Value offset = op.getOffset();
  APInt mask;
  if (op.getKind() == ShuffleKind::xor_ &&
      matchPattern(offset, m_ConstantInt(&mask)))
    if (auto exchange = xorExchange(b, loc, mask.getSExtValue(), arch))
      return shuffleAsI32(b, loc, op.getValue(), exchange);
  Value source;
  switch (op.getKind()) {
  case ShuffleKind::xor_:
    source = LLVM::XOrOp::create(b, loc, lane, offset);
    break;
  case ShuffleKind::idx:
    source = offset;
    break;
  case ShuffleKind::up: {
    Value s = LLVM::SubOp::create(b, loc, lane, offset);
    Value inside = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, s,
                                        i32Const(b, loc, 0));
    source = LLVM::SelectOp::create(b, loc, inside, s, lane);
    break;
  }
  case ShuffleKind::down: {
    Value s = LLVM::AddOp::create(b, loc, lane, offset);
    Value inside = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, s,
                                        i32Const(b, loc, waveSize));
    source = LLVM::SelectOp::create(b, loc, inside, s, lane);
    break;
  }
  }
  return shuffleAsI32(b, loc, op.getValue(),
                      [&](Value x) { return bpermute(b, loc, source, x); });
}

/// How a fragment of Kiln's element type becomes the intrinsic's operand.
enum class Pack {
  AsIs,     ///< the vector itself (<4 x half>, <8 x bfloat>, <2 x float>)
  Scalar,   ///< its one element (f32 MFMA)
  AsI16,    ///< bf16 as <N x i16> (the `.1k` MFMA, RDNA WMMA)
  AsInt,    ///< packed into one integer (i8 MFMA: i32 or i64)
  AsI32Vec, ///< packed into <N x i32> (iu8 WMMA)
};

struct MatrixIntrinsic {
  const char *instr;     ///< the target description's name
  const char *intrinsic; ///< llvm.amdgcn.*
  Pack pack;
  bool wmmaIU8 = false;  ///< (sign A, A, sign B, B, C, clamp)
  bool wmma = false;     ///< (A, B, C)
};

const MatrixIntrinsic kMatrixIntrinsics[] = {
    {"amd.mfma.32x32x8.f16", "llvm.amdgcn.mfma.f32.32x32x8f16", Pack::AsIs},
    {"amd.mfma.16x16x16.f16", "llvm.amdgcn.mfma.f32.16x16x16f16", Pack::AsIs},
    {"amd.mfma.32x32x8.bf16", "llvm.amdgcn.mfma.f32.32x32x8bf16.1k", Pack::AsI16},
    {"amd.mfma.16x16x16.bf16", "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", Pack::AsI16},
    {"amd.mfma.32x32x16.f16", "llvm.amdgcn.mfma.f32.32x32x16.f16", Pack::AsIs},
    {"amd.mfma.16x16x32.f16", "llvm.amdgcn.mfma.f32.16x16x32.f16", Pack::AsIs},
    {"amd.mfma.32x32x16.bf16", "llvm.amdgcn.mfma.f32.32x32x16.bf16", Pack::AsIs},
    {"amd.mfma.16x16x32.bf16", "llvm.amdgcn.mfma.f32.16x16x32.bf16", Pack::AsIs},
    {"amd.mfma.32x32x4.xf32", "llvm.amdgcn.mfma.f32.32x32x4.xf32", Pack::AsIs},
    {"amd.mfma.16x16x8.xf32", "llvm.amdgcn.mfma.f32.16x16x8.xf32", Pack::AsIs},
    {"amd.mfma.32x32x2.f32", "llvm.amdgcn.mfma.f32.32x32x2f32", Pack::Scalar},
    {"amd.mfma.16x16x4.f32", "llvm.amdgcn.mfma.f32.16x16x4f32", Pack::Scalar},
    {"amd.mfma.32x32x2.f32.tf32", "llvm.amdgcn.mfma.f32.32x32x2f32", Pack::Scalar},
    {"amd.mfma.16x16x4.f32.tf32", "llvm.amdgcn.mfma.f32.16x16x4f32", Pack::Scalar},
    {"amd.mfma.32x32x8.i8", "llvm.amdgcn.mfma.i32.32x32x8i8", Pack::AsInt},
    {"amd.mfma.16x16x16.i8", "llvm.amdgcn.mfma.i32.16x16x16i8", Pack::AsInt},
    {"amd.mfma.32x32x16.i8", "llvm.amdgcn.mfma.i32.32x32x16.i8", Pack::AsInt},
    {"amd.mfma.16x16x32.i8", "llvm.amdgcn.mfma.i32.16x16x32.i8", Pack::AsInt},
    {"amd.mfma.32x32x16.fp8", "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", Pack::AsInt},
    {"amd.mfma.16x16x32.fp8", "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", Pack::AsInt},
    {"amd.mfma.32x32x16.bf8", "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", Pack::AsInt},
    {"amd.mfma.16x16x32.bf8", "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", Pack::AsInt},
    {"amd.mfma.32x32x16.fp8_bf8", "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", Pack::AsInt},
    {"amd.mfma.16x16x32.fp8_bf8", "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", Pack::AsInt},
    {"amd.mfma.32x32x16.bf8_fp8", "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", Pack::AsInt},
    {"amd.mfma.16x16x32.bf8_fp8", "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", Pack::AsInt},
    // gfx942 reads the same intrinsics' operands as FNUZ fp8.
    {"amd.mfma.32x32x16.fp8.fnuz", "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", Pack::AsInt},
    {"amd.mfma.16x16x32.fp8.fnuz", "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", Pack::AsInt},
    {"amd.mfma.32x32x16.bf8.fnuz", "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", Pack::AsInt},
    {"amd.mfma.16x16x32.bf8.fnuz", "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", Pack::AsInt},
    {"amd.mfma.32x32x16.fp8_bf8.fnuz", "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", Pack::AsInt},
    {"amd.mfma.16x16x32.fp8_bf8.fnuz", "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", Pack::AsInt},
    {"amd.mfma.32x32x16.bf8_fp8.fnuz", "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", Pack::AsInt},
    {"amd.mfma.16x16x32.bf8_fp8.fnuz", "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", Pack::AsInt},
    {"amd.wmma.gfx11.f16", "llvm.amdgcn.wmma.f32.16x16x16.f16", Pack::AsIs, false, true},
    {"amd.wmma.gfx11.bf16", "llvm.amdgcn.wmma.f32.16x16x16.bf16", Pack::AsI16, false, true},
    {"amd.wmma.gfx11.i8", "llvm.amdgcn.wmma.i32.16x16x16.iu8", Pack::AsI32Vec, true, true},
    {"amd.wmma.gfx12.f16", "llvm.amdgcn.wmma.f32.16x16x16.f16", Pack::AsIs, false, true},
    {"amd.wmma.gfx12.bf16", "llvm.amdgcn.wmma.f32.16x16x16.bf16", Pack::AsI16, false, true},
    {"amd.wmma.gfx12.i8", "llvm.amdgcn.wmma.i32.16x16x16.iu8", Pack::AsI32Vec, true, true},
};

Value packOperand(OpBuilder &b, Location loc, Value v, Pack pack) {
  auto vt = cast<VectorType>(v.getType());
  int64_t n = vt.getNumElements();
  unsigned bits = vt.getElementTypeBitWidth();
  switch (pack) {
  case Pack::AsIs:
    return v;
  case Pack::Scalar:
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{0});
  case Pack::AsI16:
    return vector::BitCastOp::create(
        b, loc, VectorType::get({n}, b.getI16Type()), v);
  case Pack::AsInt: {
    Type wide = b.getIntegerType(unsigned(n) * bits);
    Value one = vector::BitCastOp::create(b, loc, VectorType::get({1}, wide), v);
    return vector::ExtractOp::create(b, loc, one, ArrayRef<int64_t>{0});
  }
  case Pack::AsI32Vec:
    return vector::BitCastOp::create(
        b, loc, VectorType::get({n * bits / 32}, b.getI32Type()), v);
  }
  return v;
}

/// kiln_gpu.mma -> the MFMA or WMMA intrinsic of the instruction.
FailureOr<Value> lowerMma(OpBuilder &b, Location loc, MmaOp op) {
  const MatrixIntrinsic *mi = nullptr;
  for (const MatrixIntrinsic &m : kMatrixIntrinsics)
    if (op.getInstr() == m.instr)
      mi = &m;
  if (!mi)
    return op.emitOpError("has no AMD matrix instruction named '")
           << op.getInstr() << "'";
  Value a = packOperand(b, loc, op.getA(), mi->pack);
  Value bv = packOperand(b, loc, op.getB(), mi->pack);
  Value c = op.getC();
  Type result = c.getType();
  Value f = LLVM::ConstantOp::create(b, loc, b.getI1Type(),
                                     b.getBoolAttr(false));
  Value t = LLVM::ConstantOp::create(b, loc, b.getI1Type(),
                                     b.getBoolAttr(true));
  SmallVector<Value> args;
  if (mi->wmmaIU8)
    args = {t, a, t, bv, c, f}; // signed A, signed B, no clamp
  else if (mi->wmma)
    args = {a, bv, c};
  else
    args = {a, bv, c, i32Const(b, loc, 0), i32Const(b, loc, 0),
            i32Const(b, loc, 0)}; // cbsz, abid, blgp
  return llvmIntrinsic(b, loc, mi->intrinsic, result, args);
}

/// A field of the HSA kernel dispatch packet (constant address space).
Value dispatchField(OpBuilder &b, Location loc, int32_t byteOffset) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext(), kConstant);
  Value packet = llvmIntrinsic(b, loc, "llvm.amdgcn.dispatch.ptr", ptrTy, {});
  Value field = LLVM::GEPOp::create(b, loc, ptrTy, b.getI8Type(), packet,
                                    ValueRange{i32Const(b, loc, byteOffset)});
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), field, /*alignment=*/4,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true);
}

/// What a print record names its format by: FNV-1a (32-bit) of its bytes
/// (the runtime hashes the formats of the image's resources the same way:
/// runtime/lib/GpuDevice.h, printFormatHash).
uint32_t printFormatHash(StringRef format) {
  uint32_t h = 2166136261u;
  for (unsigned char c : format.bytes()) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

/// Kiln's print buffer (docs/codegen-amdgpu.md, "print and assert"): the
/// kernel's last argument, `printBuffer` (an i64 address), points to
/// {u64 reserved bytes, u64 capacity, records[capacity bytes], u64 trap}.
/// A printf reserves 8 + 8 x args bytes with one atomic add and, if they
/// fit, writes a record {u32 format hash, u32 argument count, one 8-byte
/// slot per argument: integers sign-extended to i64 (i1 zero-extended),
/// floats as f64 bits}. The runtime formats the records on the host after
/// the stream synchronizes; what does not fit is counted, not written.
///
/// With `isTrapMessage` the record is the message of the trap that follows
/// (a failed assertion): only the first thread of the launch to claim the
/// trap word (0 -> ~0) writes it, and then stores its offset + 1 there, so
/// the runtime reports that record as the launch's error.
void lowerPrintf(OpBuilder &b, Location loc, PrintfOp op, Value printBuffer,
                 bool isTrapMessage) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type(), i8 = b.getI8Type();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace);
  auto i64Const = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  auto at = [&](Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptrTy, i8, base, ValueRange{offset});
  };
  SmallVector<Value> slots;
  for (Value v : op.getArgs()) {
    Type t = v.getType();
    if (isa<FloatType>(t)) {
      if (!t.isF64())
        v = LLVM::FPExtOp::create(b, loc, b.getF64Type(), v);
      v = LLVM::BitcastOp::create(b, loc, i64, v);
    } else if (t.getIntOrFloatBitWidth() == 1) {
      v = LLVM::ZExtOp::create(b, loc, i64, v);
    } else if (t.getIntOrFloatBitWidth() < 64) {
      v = LLVM::SExtOp::create(b, loc, i64, v);
    }
    slots.push_back(v);
  }
  int64_t bytes = 8 + 8 * int64_t(slots.size());
  Value base = globalPointer(b, loc, printBuffer);
  OpBuilder::InsertionGuard g(b);
  Value capacity = LLVM::LoadOp::create(b, loc, i64, at(base, i64Const(8)));
  Value trapWord;
  if (isTrapMessage) {
    trapWord = at(base, LLVM::AddOp::create(b, loc, capacity, i64Const(16)));
    auto claim = LLVM::AtomicCmpXchgOp::create(
        b, loc, trapWord, i64Const(0), i64Const(-1),
        LLVM::AtomicOrdering::monotonic, LLVM::AtomicOrdering::monotonic,
        kAgentScope);
    Value first = LLVM::ExtractValueOp::create(b, loc, claim, 1);
    auto claimed = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(&claimed.getThenRegion().front());
  }
  Value offset = LLVM::AtomicRMWOp::create(
      b, loc, LLVM::AtomicBinOp::add, base, i64Const(bytes),
      LLVM::AtomicOrdering::monotonic, kAgentScope);
  Value end = LLVM::AddOp::create(b, loc, offset, i64Const(bytes));
  Value fits = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ule, end,
                                    capacity);
  auto ifOp = scf::IfOp::create(b, loc, fits, /*withElse=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value record = at(base, LLVM::AddOp::create(b, loc, offset, i64Const(16)));
  LLVM::StoreOp::create(
      b, loc,
      i32Const(b, loc, int32_t(printFormatHash(op.getFormat()))), record);
  LLVM::StoreOp::create(b, loc, i32Const(b, loc, int32_t(slots.size())),
                        at(record, i64Const(4)));
  for (auto [i, v] : llvm::enumerate(slots))
    LLVM::StoreOp::create(b, loc, v, at(record, i64Const(8 + 8 * int64_t(i))));
  if (trapWord) // atomic: other failing threads compare-and-swap it
    LLVM::StoreOp::create(b, loc,
                          LLVM::AddOp::create(b, loc, offset, i64Const(1)),
                          trapWord, /*alignment=*/8, /*isVolatile=*/false,
                          /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                          LLVM::AtomicOrdering::monotonic, kAgentScope);
}

LogicalResult lowerPrimitives(ModuleOp module, int32_t threads,
                              int32_t waveSize, StringRef arch) {
  // The module's print formats, once each (kiln_gpu.print_formats).
  SmallVector<Attribute> formats;
  // Traps whose message the printf before them wrote into the print buffer.
  llvm::SmallPtrSet<Operation *, 4> messageTraps;
  auto result = module.walk([&](Operation *op) -> WalkResult {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (lowerBufferAccess(b, op, arch) || lowerMemoryAccess(b, op))
      return WalkResult::advance();
    auto tid = [&] {
      return llvmIntrinsic(b, loc, "llvm.amdgcn.workitem.id.x", b.getI32Type(),
                       {});
    };
    if (auto id = dyn_cast<HwIdOp>(op)) {
      Value v = tid();
      if (id.getKind() == HwIdKind::lane)
        v = LLVM::AndOp::create(b, loc, v, i32Const(b, loc, waveSize - 1));
      else if (id.getKind() == HwIdKind::warp)
        v = LLVM::LShrOp::create(b, loc, v,
                                 i32Const(b, loc, llvm::Log2_32(waveSize)));
      id.replaceAllUsesWith(v);
      id.erase();
    } else if (auto pid = dyn_cast<kiln::ProgramIdOp>(op)) {
      static const char *const names[] = {"llvm.amdgcn.workgroup.id.x",
                                          "llvm.amdgcn.workgroup.id.y",
                                          "llvm.amdgcn.workgroup.id.z"};
      Value v = llvmIntrinsic(b, loc, names[unsigned(pid.getAxis())],
                          b.getI32Type(), {});
      pid.replaceAllUsesWith(v);
      pid.erase();
    } else if (auto np = dyn_cast<kiln::NumProgramsOp>(op)) {
      // grid_size_x/y/z (work-items) at bytes 12/16/20 of the dispatch
      // packet; blocks are `threads` x 1 x 1.
      unsigned axis = unsigned(np.getAxis());
      Value v = dispatchField(b, loc, 12 + 4 * int32_t(axis));
      if (axis == 0)
        v = LLVM::UDivOp::create(b, loc, v, i32Const(b, loc, threads));
      np.replaceAllUsesWith(v);
      np.erase();
    } else if (isa<SharedLoadMatrixOp, AsyncCopyOp, AsyncCommitOp,
                   AsyncWaitOp>(op)) {
      op->emitOpError("is not available on AMD targets (their description "
                      "has no matrix loads or asynchronous copies)");
      return WalkResult::interrupt();
    } else if (isa<BarrierOp>(op)) {
      // LDS writes before the barrier are visible after it.
      LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release,
                            "workgroup");
      llvmIntrinsic(b, loc, "llvm.amdgcn.s.barrier", Type(), {});
      LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acquire,
                            "workgroup");
      op->erase();
    } else if (auto shfl = dyn_cast<ShuffleOp>(op)) {
      Value lane = LLVM::AndOp::create(b, loc, tid(),
                                       i32Const(b, loc, waveSize - 1));
      shfl.replaceAllUsesWith(
          lowerShuffle(b, loc, shfl, lane, waveSize, arch));
      shfl.erase();
    } else if (auto rmw = dyn_cast<kiln::gpu::AtomicRMWOp>(op)) {
      rmw.replaceAllUsesWith(lowerAtomicRMW(
          b, rmw, globalPointer(b, loc, rmw.getAddr()), kAgentScope));
      rmw.erase();
    } else if (auto cas = dyn_cast<kiln::gpu::AtomicCASOp>(op)) {
      cas.replaceAllUsesWith(lowerAtomicCAS(
          b, cas, globalPointer(b, loc, cas.getAddr()), kAgentScope));
      cas.erase();
    } else if (auto pf = dyn_cast<PrintfOp>(op)) {
      auto fn = pf->getParentOfType<func::FuncOp>();
      Operation *trap = pf->getNextNode();
      bool isTrapMessage = isa_and_nonnull<TrapOp>(trap);
      if (isTrapMessage)
        messageTraps.insert(trap);
      lowerPrintf(b, loc, pf, fn.getArgument(fn.getNumArguments() - 1),
                  isTrapMessage);
      if (!llvm::is_contained(formats, pf.getFormatAttr()))
        formats.push_back(pf.getFormatAttr());
      pf.erase();
    } else if (isa<TrapOp>(op)) {
      // A trap with a message in the print buffer ends its wave
      // (s_endpgm; the waves at a barrier stop waiting for it) and the
      // runtime reports the message when the stream synchronizes; s_trap
      // would end the process or leave the device unusable first. One
      // without a message traps.
      if (messageTraps.contains(op))
        llvmIntrinsic(b, loc, "llvm.amdgcn.endpgm", Type(), {});
      else
        LLVM::Trap::create(b, loc);
      op->erase();
    } else if (auto mma = dyn_cast<MmaOp>(op)) {
      FailureOr<Value> v = lowerMma(b, loc, mma);
      if (failed(v))
        return WalkResult::interrupt();
      mma.replaceAllUsesWith(*v);
      mma.erase();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (!formats.empty())
    module->setAttr(kPrintFormatsAttr, ArrayAttr::get(module.getContext(),
                                                      formats));
  module.walk([](SharedAllocOp a) {
    if (a->use_empty())
      a.erase();
  });
  return success();
}

struct ConvertKilnGPUToROCDLPass
    : public kiln::amdgpu::impl::ConvertKilnGPUToROCDLBase<
          ConvertKilnGPUToROCDLPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto arch = module->getAttrOfType<StringAttr>(
        KilnGPUDialect::getTargetAttrName());
    const GPUTarget *target = arch ? lookupGPUTarget(arch.getValue()) : nullptr;
    if (!target || target->backend != "amdgpu") {
      module.emitError("convert-kiln-gpu-to-rocdl needs an AMD target in "
                       "kiln_gpu.target");
      return signalPassFailure();
    }
    auto warps = module->getAttrOfType<IntegerAttr>(
        KilnGPUDialect::getWarpsAttrName());
    int32_t threads = int32_t(warps ? warps.getInt() : 4) * target->warpSize;

    // A kernel that prints takes the print buffer as its last argument
    // (lowerPrintf).
    bool prints = module.walk([](PrintfOp) { return WalkResult::interrupt(); })
                      .wasInterrupted();
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (prints && !fn.isExternal())
        (void)fn.insertArgument(fn.getNumArguments(),
                                IntegerType::get(ctx, 64), {}, fn.getLoc());
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.setArgAttrs(i, ArrayRef<NamedAttribute>{});
      fn->setAttr("rocdl.kernel", UnitAttr::get(ctx));
      std::string size = std::to_string(threads);
      fn->setAttr("rocdl.flat_work_group_size",
                  StringAttr::get(ctx, size + "," + size));
      fn->setAttr("rocdl.reqd_work_group_size",
                  DenseI32ArrayAttr::get(ctx, {threads, 1, 1}));
    }
    declareDynamicShared(module);

    if (failed(lowerPrimitives(module, threads, target->warpSize, target->arch)))
      return signalPassFailure();

    // Math without ocml (compiler/GPU/MathExpansion.h): exp2, log2, exp
    // and log stay LLVM's intrinsics, which the AMDGPU backend expands
    // inline around v_exp_f32/v_log_f32 (with the range and denormal
    // scaling ocml would do).
    if (failed(lowerGPUMath(module, {"exp2", "log2", "exp", "log"}, "AMD",
                            "ocml", nullptr)))
      return signalPassFailure();

    // Vectors of 64-bit elements (tiles of addresses) as scalars: the
    // AMDGPU backend otherwise keeps every lane of them, in SGPR copies
    // that spill (attention on gfx942: 184 -> 162 VGPRs, 106 -> 70 SGPRs).
    if (failed(convertPerThreadToLLVM(
            module,
            [](ConversionTarget &target) {
              target.addLegalDialect<ROCDL::ROCDLDialect>();
            },
            /*unrollWideVectors=*/true)))
      return signalPassFailure();
  }
};

} // namespace
