//===- ConvertGPUToNVVM.cpp - The per-thread form to NVVM + LLVM ----------===//
//
// convert-kiln-gpu-to-nvvm: maps each primitive of the GPU stage's
// per-thread form to NVVM (special registers, barriers, shuffles) or to
// LLVM memory ops on the global (1) and shared (3) address spaces, then
// lowers arith, math, vector, scf, cf and func to the LLVM dialect. The
// kernel becomes an `nvvm.kernel` with `nvvm.maxntid` = warps × 32 and
// reads its shared memory from one extern array, `kiln_shared`.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/NVPTXPasses.h"
#include "codegen/nvptx/NVPTXTargets.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/MathExpansion.h"
#include "compiler/GPU/PerThreadToLLVM.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln::nvptx {
#define GEN_PASS_DEF_CONVERTKILNGPUTONVVM
#include "codegen/nvptx/NVPTXPasses.h.inc"
} // namespace kiln::nvptx

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {


Value i32Const(OpBuilder &b, Location loc, int32_t v) {
  return llvmI32(b, loc, v);
}

//===----------------------------------------------------------------------===//
// Step 1: primitives (scf.if for masks, so that step 2 makes branches)
//===----------------------------------------------------------------------===//

/// One 32-bit `shfl.sync` over the full warp.
Value shfl32(OpBuilder &b, Location loc, NVVM::ShflKind kind, Value v,
             Value offset) {
  // c field: 0x1f clamps bfly/idx/down to the warp; up clamps at 0.
  int32_t clamp = kind == NVVM::ShflKind::up ? 0 : 0x1f;
  return NVVM::ShflOp::create(b, loc, v.getType(), i32Const(b, loc, -1), v,
                              offset, i32Const(b, loc, clamp),
                              NVVM::ShflKindAttr::get(b.getContext(), kind),
                              UnitAttr());
}

/// kiln_gpu.shuffle on any 8-64-bit scalar: moved as one or two i32.
Value lowerShuffle(OpBuilder &b, Location loc, ShuffleOp op) {
  NVVM::ShflKind kind = NVVM::ShflKind::bfly;
  switch (op.getKind()) {
  case ShuffleKind::xor_: kind = NVVM::ShflKind::bfly; break;
  case ShuffleKind::idx: kind = NVVM::ShflKind::idx; break;
  case ShuffleKind::up: kind = NVVM::ShflKind::up; break;
  case ShuffleKind::down: kind = NVVM::ShflKind::down; break;
  }
  return shuffleAsI32(b, loc, op.getValue(), [&](Value x) {
    return shfl32(b, loc, kind, x, op.getOffset());
  });
}

/// Packs a fragment's registers as mma.sync wants them: `perReg` elements
/// in each 32-bit register (f16 pairs stay vector<2xf16>, the others become
/// i32).
SmallVector<Value> packFragment(OpBuilder &b, Location loc, Value vec,
                                int64_t perReg, bool keepF16x2) {
  auto vt = cast<VectorType>(vec.getType());
  SmallVector<Value> regs;
  for (int64_t i = 0; i < vt.getNumElements(); i += perReg) {
    Value part = vector::ExtractStridedSliceOp::create(
        b, loc, vec, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{perReg},
        ArrayRef<int64_t>{1});
    if (keepF16x2) {
      regs.push_back(part);
      continue;
    }
    Value asI32 = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), part);
    regs.push_back(
        vector::ExtractOp::create(b, loc, asI32, ArrayRef<int64_t>{0}));
  }
  return regs;
}

/// kiln_gpu.mma -> nvvm.mma.sync (row-major A, column-major B).
FailureOr<Value> lowerMma(OpBuilder &b, Location loc, MmaOp op) {
  const MatrixInstr *instr = lookupMatrixInstr(op.getInstr());
  NVVM::MMATypes ptxType = NVVM::MMATypes::f16; // nvvm.mma.sync's (not fp8)
  int64_t perReg = 1;
  bool f16x2 = false;
  StringRef t = instr->aType;
  bool fp8 = !kiln::nvptx::ptxFp8Name(t).empty();
  if (fp8) {
    perReg = 4; // the PTX instruction itself, below
  } else if (t == "f16") {
    ptxType = NVVM::MMATypes::f16, perReg = 2, f16x2 = true;
  } else if (t == "bf16") {
    ptxType = NVVM::MMATypes::bf16, perReg = 2;
  } else if (t == "f32" && instr->tf32) {
    ptxType = NVVM::MMATypes::tf32, perReg = 1;
  } else if (t == "i8") {
    ptxType = NVVM::MMATypes::s8, perReg = 4;
  } else {
    return op.emitOpError("has no mma.sync form for ") << t;
  }
  SmallVector<Value> a = packFragment(b, loc, op.getA(), perReg, f16x2);
  SmallVector<Value> bb = packFragment(b, loc, op.getB(), perReg, f16x2);
  auto cType = cast<VectorType>(op.getC().getType());
  SmallVector<Value> c;
  for (int64_t i = 0; i < cType.getNumElements(); ++i)
    c.push_back(vector::ExtractOp::create(b, loc, op.getC(),
                                          ArrayRef<int64_t>{i}));
  SmallVector<Type> fields(cType.getNumElements(), cType.getElementType());
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  Value d;
  if (fp8) {
    // nvvm.mma.sync has no fp8 form and LLVM no intrinsic for it: the PTX
    // instruction itself (ISA 8.4, which the module then asks for), with
    // the accumulator tied to the result.
    std::string text = llvm::formatv(
        "mma.sync.aligned.m16n8k32.row.col.f32.{0}.{1}.f32 "
        "{{$0,$1,$2,$3}, {{$4,$5,$6,$7}, {{$8,$9}, {{$10,$11,$12,$13};",
        kiln::nvptx::ptxFp8Name(instr->aType),
        kiln::nvptx::ptxFp8Name(instr->bType));
    SmallVector<Value> operands(a);
    operands.append(bb);
    operands.append(c);
    d = LLVM::InlineAsmOp::create(
            b, loc, structType, operands, b.getStringAttr(text),
            b.getStringAttr("=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3"), UnitAttr(),
            UnitAttr(), LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(),
            ArrayAttr())
            .getResult(0);
    op->getParentOfType<ModuleOp>()->setAttr(kiln::nvptx::kMinPtxAttr,
                                             b.getI32IntegerAttr(84));
  } else {
    std::optional<NVVM::MMAIntOverflow> overflow;
    if (cType.getElementType().isInteger(32))
      overflow = NVVM::MMAIntOverflow::wrapped;
    d = NVVM::MmaOp::create(
        b, loc, structType, a, bb, c, {instr->m, instr->n, instr->k},
        std::nullopt, overflow,
        std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
  }
  SmallVector<Value> out;
  for (int64_t i = 0; i < cType.getNumElements(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
  return Value(vector::FromElementsOp::create(b, loc, cType, out));
}

/// Asks for PTX ISA `version` (x 10) at least (kMinPtxAttr).
void requirePtx(ModuleOp module, int32_t version) {
  auto current = module->getAttrOfType<IntegerAttr>(kiln::nvptx::kMinPtxAttr);
  if (!current || current.getInt() < version)
    module->setAttr(kiln::nvptx::kMinPtxAttr,
                    IntegerAttr::get(IntegerType::get(module.getContext(), 32),
                                     version));
}

/// A PTX statement without results (fences, barriers, copies), kept where
/// it is; `operands` with their `constraints` (clobbers at the end).
void inlinePtx(OpBuilder &b, Location loc, StringRef text,
               ValueRange operands = {}, StringRef constraints = "") {
  LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands,
                            b.getStringAttr(text),
                            b.getStringAttr(constraints), b.getUnitAttr(),
                            UnitAttr(), LLVM::TailCallKindAttr(),
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

/// The 32-bit shared-window address of byte `offset` of `buffer` (PTX's
/// `.shared` operands).
Value sharedAddress(OpBuilder &b, Location loc, Value buffer, Value offset) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(),
                                  sharedPointer(b, loc, buffer, offset));
}

/// The transaction barriers and tensor copies (TMA): PTX statements, as
/// CUTLASS's and Triton's Hopper kernels write them. The wait loops on
/// try_wait (which blocks for a time-limited while); the label is local
/// to the statement's braces, so each copy of the statement has its own.
void lowerTensorCopyOp(OpBuilder &b, Location loc, Operation *op) {
  if (auto init = dyn_cast<MbarrierInitOp>(op)) {
    inlinePtx(b, loc,
              llvm::formatv("mbarrier.init.shared::cta.b64 [$0], {0};",
                            init.getCount())
                  .str(),
              sharedAddress(b, loc, init.getBuffer(), init.getOffset()),
              "r,~{memory}");
    // Visible to the tensor copies' completions, not only to the threads.
    inlinePtx(b, loc, "fence.mbarrier_init.release.cluster;");
  } else if (auto arrive = dyn_cast<MbarrierArriveTxOp>(op)) {
    inlinePtx(b, loc,
              llvm::formatv("mbarrier.arrive.expect_tx.shared::cta.b64 _, "
                            "[$0], {0};",
                            arrive.getBytes())
                  .str(),
              sharedAddress(b, loc, arrive.getBuffer(), arrive.getOffset()),
              "r,~{memory}");
  } else if (auto wait = dyn_cast<MbarrierWaitOp>(op)) {
    inlinePtx(b, loc,
              "{\n.reg .pred p;\nkiln_wait:\n"
              "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
              "@!p bra kiln_wait;\n}",
              {sharedAddress(b, loc, wait.getBuffer(), wait.getOffset()),
               wait.getParity()},
              "r,r,~{memory}");
  } else if (auto inval = dyn_cast<MbarrierInvalOp>(op)) {
    inlinePtx(b, loc, "mbarrier.inval.shared::cta.b64 [$0];",
              sharedAddress(b, loc, inval.getBuffer(), inval.getOffset()),
              "r,~{memory}");
  } else if (auto load = dyn_cast<TensorLoadOp>(op)) {
    // PTX lists the coordinates innermost first.
    size_t rank = load.getCoords().size();
    SmallVector<Value> operands{
        sharedAddress(b, loc, load.getBuffer(), load.getOffset()),
        LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), load.getMap())};
    std::string coords, constraints = "r,l";
    for (size_t i = 0; i < rank; ++i) {
      operands.push_back(load.getCoords()[rank - 1 - i]);
      coords += llvm::formatv("{0}${1}", i ? ", " : "", i + 2).str();
      constraints += ",r";
    }
    operands.push_back(
        sharedAddress(b, loc, load.getBars(), load.getBarOffset()));
    constraints += ",r,~{memory}";
    inlinePtx(b, loc,
              llvm::formatv("cp.async.bulk.tensor.{0}d.shared::cluster.global."
                            "tile.mbarrier::complete_tx::bytes [$0], [$1, "
                            "{{{1}}], [${2}];",
                            rank, coords, rank + 2)
                  .str(),
              operands, constraints);
  }
}

/// The elements of a per-thread vector.
SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value vec) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < cast<VectorType>(vec.getType()).getNumElements(); ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{i}));
  return out;
}

/// An inline-asm statement whose `values` (f32 or i32) are read and written
/// in place ("+f", "+r": outputs tied to inputs), after `inputs` of
/// `inputKinds` constraints; returns the values as the statement leaves
/// them. Ties keep LLVM from reading the registers of an asynchronous
/// instruction's result before the statement that waits for it, and from
/// writing registers an asynchronous instruction reads after the statement
/// that publishes them.
SmallVector<Value> asmInPlace(OpBuilder &b, Location loc, StringRef text,
                              ArrayRef<Value> values, ArrayRef<Value> inputs,
                              ArrayRef<StringRef> inputKinds) {
  size_t n = values.size();
  std::string constraints;
  SmallVector<Type> types;
  for (size_t i = 0; i < n; ++i) {
    types.push_back(values[i].getType());
    constraints += (i ? ",=" : "=");
    constraints += types.back().isF32() ? "f" : "r";
  }
  for (size_t i = 0; i < n; ++i)
    constraints += "," + std::to_string(i);
  for (StringRef kind : inputKinds)
    constraints += ("," + kind).str();
  SmallVector<Value> operands(values.begin(), values.end());
  operands.append(inputs.begin(), inputs.end());
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  Value r = LLVM::InlineAsmOp::create(
                b, loc, structType, operands, b.getStringAttr(text),
                b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
                .getResult(0);
  SmallVector<Value> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, r,
                                               ArrayRef<int64_t>{int64_t(i)}));
  return out;
}

/// A shared-memory matrix descriptor: `templ` (kiln_gpu.warpgroup_mma's
/// a_desc / b_desc) with the address of byte `offset` of `buffer`, bits 4-17
/// of its shared-window address, in bits 0-13.
Value matrixDescriptor(OpBuilder &b, Location loc, Value buffer, Value offset,
                       int64_t templ) {
  Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(),
                                        sharedPointer(b, loc, buffer, offset));
  Value field = LLVM::LShrOp::create(
      b, loc,
      LLVM::AndOp::create(b, loc, addr,
                          LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                                   int64_t(0x3FFFF))),
      LLVM::ConstantOp::create(b, loc, b.getI64Type(), int64_t(4)));
  return LLVM::OrOp::create(
      b, loc, field, LLVM::ConstantOp::create(b, loc, b.getI64Type(), templ));
}

/// A product that starts from zero (the first step of a fresh `dot`) reads
/// no accumulator: scale-d 0 and undefined inputs, so no register is zeroed
/// first. Zeroing them with moves while an earlier chain was in flight made
/// ptxas insert a warpgroup.wait there (C7517), serializing the chains.
bool startsFromZero(WarpgroupMmaOp op) {
  return matchPattern(op.getC(), m_AnyZeroFloat());
}

/// Whether `op`'s accumulator registers were written by instructions other
/// than the warpgroup's (a chain's start, not from zero).
bool readsWrittenAccumulator(WarpgroupMmaOp op) {
  return !op.getC().getDefiningOp<WarpgroupMmaOp>() && !startsFromZero(op);
}

/// The registers a warpgroup instruction reads that other instructions
/// wrote: its A fragment (packed in pairs) and its accumulator where it
/// starts a chain, as its batch's wgmma.fence publishes them.
struct WarpgroupInputs {
  SmallVector<Value> a;
  SmallVector<Value> c;
};

/// kiln_gpu.warpgroup_mma -> wgmma.mma_async (A from a descriptor or from
/// registers, B from a descriptor; D += A B). The wgmma.fence is its
/// batch's (WarpgroupBatches); `in` holds the registers published by it.
FailureOr<Value> lowerWarpgroupMma(OpBuilder &b, Location loc,
                                   WarpgroupMmaOp op,
                                   const WarpgroupInputs &in) {
  const MatrixInstr *instr = lookupMatrixInstr(op.getInstr());
  StringRef t = instr->aType, tb = instr->bType;
  bool fp8 = !kiln::nvptx::ptxFp8Name(t).empty() &&
             !kiln::nvptx::ptxFp8Name(tb).empty();
  if (fp8) {
    t = kiln::nvptx::ptxFp8Name(t);
    tb = kiln::nvptx::ptxFp8Name(tb);
  } else if ((t != "f16" && t != "bf16") || tb != t) {
    return op.emitOpError("has no wgmma form for ") << t;
  }
  bool fromZero = startsFromZero(op);
  auto cType = cast<VectorType>(op.getC().getType());
  SmallVector<Value> c =
      fromZero ? SmallVector<Value>(cType.getNumElements(),
                                    LLVM::PoisonOp::create(
                                        b, loc, cType.getElementType()))
      : !in.c.empty() ? in.c
                      : elementsOf(b, loc, op.getC());
  size_t n = c.size();
  SmallVector<Value> inputs;
  SmallVector<StringRef> kinds;
  std::string aText;
  if (op.getA()) {
    for (Value r : in.a) {
      aText += (aText.empty() ? "{$" : ", $") + std::to_string(2 * n + inputs.size());
      inputs.push_back(r);
      kinds.push_back("r");
    }
    aText += "}";
  } else {
    aText = "$" + std::to_string(2 * n + inputs.size());
    inputs.push_back(matrixDescriptor(b, loc, op.getABuffer(), op.getAOffset(),
                                      *op.getADesc()));
    kinds.push_back("l");
  }
  std::string bText = "$" + std::to_string(2 * n + inputs.size());
  inputs.push_back(matrixDescriptor(b, loc, op.getBBuffer(), op.getBOffset(),
                                    op.getBDesc()));
  kinds.push_back("l");
  std::string dText;
  for (size_t i = 0; i < n; ++i)
    dText += (i ? ", $" : "{$") + std::to_string(i);
  dText += "}";
  // scale-d is a predicate: 1, accumulate; 0, D = A B. imm-scale-a/b 1; the
  // transpositions (the register form has none for A; fp8 has none at
  // all: its shared operands are K-major, which the verifier checks).
  std::string imms =
      fp8 ? std::string("1, 1")
      : op.getA()
          ? llvm::formatv("1, 1, {0}", op.getBTranspose() ? 1 : 0).str()
          : llvm::formatv("1, 1, {0}, {1}", op.getATranspose() ? 1 : 0,
                          op.getBTranspose() ? 1 : 0)
                .str();
  std::string text = llvm::formatv(
      "{{ .reg .pred p; setp.ne.b32 p, {6}, 0; "
      "wgmma.mma_async.sync.aligned.m64n{0}k{7}.f32.{1}.{8} {2}, {3}, {4}, p, "
      "{5}; }",
      instr->n, t, dText, aText, bText, imms, fromZero ? 0 : 1, instr->k, tb);
  SmallVector<Value> d = asmInPlace(b, loc, text, c, inputs, kinds);
  requirePtx(op->getParentOfType<ModuleOp>(), 80);
  return Value(vector::FromElementsOp::create(b, loc, cType, d));
}

/// kiln_gpu.warpgroup_wait -> wgmma.commit_group + wgmma.wait_group N, the
/// values passed through in place.
void lowerWarpgroupWait(OpBuilder &b, Location loc, WarpgroupWaitOp op) {
  SmallVector<Value> all;
  for (Value v : op.getValues())
    llvm::append_range(all, elementsOf(b, loc, v));
  std::string text = llvm::formatv(
      "wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned {0};",
      op.getPending());
  SmallVector<Value> out = asmInPlace(b, loc, text, all, {}, {});
  size_t next = 0;
  for (auto [v, r] : llvm::zip(op.getValues(), op.getResults())) {
    auto vt = cast<VectorType>(v.getType());
    ArrayRef<Value> part(out.data() + next, size_t(vt.getNumElements()));
    next += part.size();
    r.replaceAllUsesWith(vector::FromElementsOp::create(b, loc, vt, part));
  }
}

/// kiln_gpu.shared_load_matrix -> ldmatrix.sync.aligned.m8n8.xN[.trans]:
/// each 32-bit register holds one matrix's two elements of this lane.
Value lowerLoadMatrix(OpBuilder &b, Location loc, SharedLoadMatrixOp op) {
  int32_t count = op.getCount();
  Type i32 = b.getI32Type();
  Type res = count == 1 ? i32
                        : Type(LLVM::LLVMStructType::getLiteral(
                              b.getContext(), SmallVector<Type>(count, i32)));
  Value loaded = NVVM::LdMatrixOp::create(
      b, loc, res, sharedPointer(b, loc, op.getBuffer(), op.getOffset()), count,
      op.getTranspose() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  VectorType type = op.getType();
  auto pair = VectorType::get({2}, type.getElementType());
  Value result = LLVM::ZeroOp::create(b, loc, type);
  for (int32_t j = 0; j < count; ++j) {
    Value reg = count == 1 ? loaded
                           : Value(LLVM::ExtractValueOp::create(
                                 b, loc, loaded, ArrayRef<int64_t>{j}));
    Value two = LLVM::BitcastOp::create(b, loc, pair, reg);
    result = vector::InsertStridedSliceOp::create(
        b, loc, two, result, ArrayRef<int64_t>{2 * j}, ArrayRef<int64_t>{1});
  }
  return result;
}

/// Device-scope acquire-release, as the language's atomics promise.
constexpr llvm::StringLiteral kDeviceScope = "device";

/// kiln_gpu.printf -> vprintf(format, packed arguments): the CUDA driver's
/// device printf (no library is linked). Floats go as double, small
/// integers as i32, as C varargs do.
void lowerPrintf(OpBuilder &b, Location loc, PrintfOp op, ModuleOp module,
                 unsigned &counter) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  if (!module.lookupSymbol("vprintf")) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    LLVM::LLVMFuncOp::create(
        mb, loc, "vprintf",
        LLVM::LLVMFunctionType::get(mb.getI32Type(), {ptrTy, ptrTy}));
  }
  auto [format, packed] = buildPrintfArgs(b, op, module, counter);
  LLVM::CallOp::create(b, loc, TypeRange{b.getI32Type()}, "vprintf",
                       ValueRange{format, packed});
}

/// Moves the pure, region-free ops that compute `v` (up to `depth` levels)
/// before `start`, in `start`'s block, where that is all it takes for `v` to
/// dominate `start`. False where it is not (a value loaded from memory
/// after `start`, an op of another block).
bool hoistBefore(Value v, Operation *start, DominanceInfo &dom, int depth) {
  if (dom.properlyDominates(v, start))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0 || def->getBlock() != start->getBlock() ||
      def->getNumRegions() || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!hoistBefore(operand, start, dom, depth - 1))
      return false;
  def->moveBefore(start);
  return true;
}

/// The warpgroup instructions of a block between two waits (or control
/// flow), in batches that issue under one wgmma.fence: the fence publishes
/// every register of the batch that other instructions wrote (A fragments,
/// the accumulators chains start from), tied through it so that none is
/// written after it. One fence per batch, as ptxas wants it: a fence before
/// every register-A instruction made ptxas track each one on its own
/// (attention's products issued one k-step at a time). An instruction
/// whose registers cannot all be computed before the batch's first one
/// starts a new batch.
struct WarpgroupBatches {
  explicit WarpgroupBatches(ModuleOp module) {
    DominanceInfo dom(module);
    module.walk([&](Block *block) {
      Operation *start = nullptr;
      for (Operation &op : *block) {
        if (isa<WarpgroupWaitOp>(op) || op.getNumRegions()) {
          start = nullptr;
          continue;
        }
        auto wg = dyn_cast<WarpgroupMmaOp>(op);
        if (!wg)
          continue;
        // Decided before any instruction is lowered (a lowered chain's
        // accumulator no longer comes from a warpgroup instruction).
        bool readsC = readsWrittenAccumulator(wg);
        bool joins =
            start && (!wg.getA() || hoistBefore(wg.getA(), start, dom, 4)) &&
            (!readsC || hoistBefore(wg.getC(), start, dom, 4));
        if (!joins)
          start = wg;
        members[start].push_back(wg);
        if (readsC)
          startsChain.insert(wg);
      }
    });
  }

  /// At a batch's first instruction: the fence, with every member's inputs
  /// through it.
  void publish(OpBuilder &b, Location loc, Operation *start) {
    auto it = members.find(start);
    if (it == members.end())
      return;
    SmallVector<Value> all;
    for (Operation *m : it->second) {
      auto wg = cast<WarpgroupMmaOp>(m);
      WarpgroupInputs &in = inputs[m];
      if (wg.getA()) {
        // 32-bit registers: two 16-bit or four 8-bit elements.
        auto vt = cast<VectorType>(wg.getA().getType());
        in.a = packFragment(b, loc, wg.getA(),
                            32 / vt.getElementTypeBitWidth(),
                            /*keepF16x2=*/false);
      }
      if (startsChain.contains(m))
        in.c = elementsOf(b, loc, wg.getC());
      llvm::append_range(all, in.a);
      llvm::append_range(all, in.c);
    }
    if (all.empty()) {
      inlinePtx(b, loc, "wgmma.fence.sync.aligned;");
      return;
    }
    SmallVector<Value> out =
        asmInPlace(b, loc, "wgmma.fence.sync.aligned;", all, {}, {});
    size_t next = 0;
    for (Operation *m : it->second) {
      WarpgroupInputs &in = inputs[m];
      for (Value &v : in.a)
        v = out[next++];
      for (Value &v : in.c)
        v = out[next++];
    }
  }

  DenseMap<Operation *, SmallVector<Operation *>> members;
  /// Members that read an accumulator other instructions wrote.
  DenseSet<Operation *> startsChain;
  DenseMap<Operation *, WarpgroupInputs> inputs;
};

LogicalResult lowerPrimitives(ModuleOp module) {
  unsigned printfCounter = 0;
  WarpgroupBatches batches(module);

  auto result = module.walk([&](Operation *op) -> WalkResult {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (lowerMemoryAccess(b, op))
      return WalkResult::advance();
    if (auto id = dyn_cast<HwIdOp>(op)) {
      Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
      Value v = tid;
      if (id.getKind() == HwIdKind::lane)
        v = LLVM::AndOp::create(b, loc, tid, i32Const(b, loc, 31));
      else if (id.getKind() == HwIdKind::warp)
        v = LLVM::LShrOp::create(b, loc, tid, i32Const(b, loc, 5));
      id.replaceAllUsesWith(v);
      id.erase();
    } else if (auto pid = dyn_cast<kiln::ProgramIdOp>(op)) {
      Value v;
      switch (pid.getAxis()) {
      case ProgramAxis::x: v = NVVM::BlockIdXOp::create(b, loc, b.getI32Type()); break;
      case ProgramAxis::y: v = NVVM::BlockIdYOp::create(b, loc, b.getI32Type()); break;
      case ProgramAxis::z: v = NVVM::BlockIdZOp::create(b, loc, b.getI32Type()); break;
      }
      pid.replaceAllUsesWith(v);
      pid.erase();
    } else if (auto np = dyn_cast<kiln::NumProgramsOp>(op)) {
      Value v;
      switch (np.getAxis()) {
      case ProgramAxis::x: v = NVVM::GridDimXOp::create(b, loc, b.getI32Type()); break;
      case ProgramAxis::y: v = NVVM::GridDimYOp::create(b, loc, b.getI32Type()); break;
      case ProgramAxis::z: v = NVVM::GridDimZOp::create(b, loc, b.getI32Type()); break;
      }
      np.replaceAllUsesWith(v);
      np.erase();
    } else if (auto lm = dyn_cast<SharedLoadMatrixOp>(op)) {
      lm.replaceAllUsesWith(lowerLoadMatrix(b, loc, lm));
      lm.erase();
    } else if (auto cp = dyn_cast<AsyncCopyOp>(op)) {
      // cp.async (.cg, bypassing L1, for 16 bytes); a false mask copies
      // zero source bytes, which fills the destination with zeros.
      int32_t size = cp.getSize();
      Value srcSize;
      if (Value m = cp.getMask())
        srcSize = arith::SelectOp::create(b, loc, m, i32Const(b, loc, size),
                                          i32Const(b, loc, 0));
      NVVM::CpAsyncOp::create(
          b, loc, sharedPointer(b, loc, cp.getBuffer(), cp.getOffset()),
          globalPointer(b, loc, cp.getAddr()), b.getI32IntegerAttr(size),
          NVVM::LoadCacheModifierKindAttr::get(
              b.getContext(), size == 16 ? NVVM::LoadCacheModifierKind::CG
                                         : NVVM::LoadCacheModifierKind::CA),
          srcSize);
      cp.erase();
    } else if (isa<AsyncCommitOp>(op)) {
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
      op->erase();
    } else if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
      NVVM::CpAsyncWaitGroupOp::create(b, loc, wait.getPending());
      wait.erase();
    } else if (auto bar = dyn_cast<BarrierOp>(op)) {
      NVVM::Barrier0Op::create(b, loc);
      bar.erase();
    } else if (auto shfl = dyn_cast<ShuffleOp>(op)) {
      shfl.replaceAllUsesWith(lowerShuffle(b, loc, shfl));
      shfl.erase();
    } else if (auto rmw = dyn_cast<kiln::gpu::AtomicRMWOp>(op)) {
      rmw.replaceAllUsesWith(lowerAtomicRMW(
          b, rmw, globalPointer(b, loc, rmw.getAddr()), kDeviceScope));
      rmw.erase();
    } else if (auto cas = dyn_cast<kiln::gpu::AtomicCASOp>(op)) {
      cas.replaceAllUsesWith(lowerAtomicCAS(
          b, cas, globalPointer(b, loc, cas.getAddr()), kDeviceScope));
      cas.erase();
    } else if (auto pf = dyn_cast<PrintfOp>(op)) {
      lowerPrintf(b, loc, pf, module, printfCounter);
      pf.erase();
    } else if (isa<TrapOp>(op)) {
      LLVM::Trap::create(b, loc);
      op->erase();
    } else if (auto wg = dyn_cast<WarpgroupMmaOp>(op)) {
      batches.publish(b, loc, wg);
      FailureOr<Value> v = lowerWarpgroupMma(b, loc, wg, batches.inputs[wg]);
      if (failed(v))
        return WalkResult::interrupt();
      wg.replaceAllUsesWith(*v);
      wg.erase();
    } else if (auto wait = dyn_cast<WarpgroupWaitOp>(op)) {
      lowerWarpgroupWait(b, loc, wait);
      wait.erase();
    } else if (isa<SharedFenceOp>(op)) {
      inlinePtx(b, loc, "fence.proxy.async.shared::cta;");
      op->erase();
    } else if (isa<MbarrierInitOp, MbarrierArriveTxOp, MbarrierWaitOp,
                   MbarrierInvalOp, TensorLoadOp>(op)) {
      lowerTensorCopyOp(b, loc, op);
      requirePtx(module, 80);
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
  // Buffers are now only offsets.
  module.walk([](SharedAllocOp a) {
    if (a->use_empty())
      a.erase();
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Math that is an instruction
//===----------------------------------------------------------------------===//

/// An f32 op computed per element by `scalar` (scalars, and 1-D vectors
/// unrolled: the instructions it uses are scalar). Added with benefit 2, so
/// that it wins over MLIR's polynomial approximations in the same set.
template <typename Op>
struct PerElementF32 : OpRewritePattern<Op> {
  using Scalar = Value (*)(OpBuilder &, Location, ArrayRef<Value>);
  PerElementF32(MLIRContext *ctx, Scalar scalar)
      : OpRewritePattern<Op>(ctx, /*benefit=*/2), scalar(scalar) {}

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Type ty = op.getType();
    if (getElementTypeOrSelf(ty) != rewriter.getF32Type())
      return failure();
    auto vecTy = dyn_cast<VectorType>(ty);
    if (vecTy && (vecTy.getRank() != 1 || vecTy.isScalable()))
      return failure();
    Location loc = op.getLoc();
    if (!vecTy) {
      rewriter.replaceOp(op, scalar(rewriter, loc,
                                    SmallVector<Value>(op->getOperands())));
      return success();
    }
    Value result = arith::ConstantOp::create(rewriter, loc, vecTy,
                                             rewriter.getZeroAttr(vecTy));
    for (int64_t i = 0; i < vecTy.getNumElements(); ++i) {
      SmallVector<Value> xs;
      for (Value operand : op->getOperands())
        xs.push_back(vector::ExtractOp::create(rewriter, loc, operand, i));
      result =
          vector::InsertOp::create(rewriter, loc, scalar(rewriter, loc, xs),
                                   result, i);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  Scalar scalar;
};

Value f32Const(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// f32 `exp2` as the hardware's `ex2.approx.ftz.f32`: within 2 ulp where the
/// result is normal (PTX ISA). MLIR's expansion, exp(x * ln 2), rounds the
/// product, which costs |x * ln 2| * 2^-24 of relative accuracy: 1.3e-6 at
/// x = 50, over docs/language.md 9.4's 1e-6 (seen on an H100). The `.ftz`
/// form flushes subnormal inputs and results to zero, which 9.3 allows the
/// transcendental functions; the form that keeps them costs a compare, two
/// multiplies and a select around every MUFU.EX2 (ptxas scales the input
/// and the result), a third of attention's inner loop.
Value exp2ViaEx2(OpBuilder &b, Location loc, ArrayRef<Value> x) {
  return llvmIntrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32", b.getF32Type(),
                       x[0]);
}

/// f32 `exp` through `ex2.approx.ftz.f32`: t = x log2(e) rounded, then
/// exp(x) = 2^t e^d with d = x - t ln 2 (two fused multiply-adds with ln 2
/// in two parts, the Cody-Waite reduction: d is tiny and nearly exact), and
/// e^d ~ 1 + d: y = fma(2^t, d, 2^t). Without d, the rounding of t would
/// cost |x| * 2^-24 relative (4.8e-6 at x = 80, near sigmoid's 5e-6 bound);
/// with it the error is ex2's own. Where 2^t is infinite or zero, or x is
/// not finite (d would be NaN), 2^t itself is the answer: the correction
/// applies for |t| < 128 (below 2^-126 the result is flushed, as exp2's).
/// Eight instructions, against some twenty for MLIR's polynomial.
Value expViaEx2(OpBuilder &b, Location loc, ArrayRef<Value> x) {
  Value t = arith::MulFOp::create(b, loc, x[0],
                                  f32Const(b, loc, 1.44269502162933349609375f));
  Value negT = arith::NegFOp::create(b, loc, t);
  // ln 2 in two parts: 0.693145751953125 + 1.428606765330187e-6.
  Value d = math::FmaOp::create(b, loc, negT,
                                f32Const(b, loc, 0.693145751953125f), x[0]);
  d = math::FmaOp::create(b, loc, negT, f32Const(b, loc, 1.428606765330187e-6f),
                          d);
  Value r = exp2ViaEx2(b, loc, t);
  Value y = math::FmaOp::create(b, loc, r, d, r);
  Value inRange = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, t),
      f32Const(b, loc, 128.0f));
  return arith::SelectOp::create(b, loc, inRange, y, r);
}

/// f32 division as `div.full.f32`: within 2 ulp over the whole range,
/// subnormals kept (PTX ISA), which is docs/language.md 9.4's bound for `/`.
/// IEEE `div.rn.f32` is correctly rounded at several times the cost (a
/// scaled reciprocal and Newton steps, plus a branch to a slow path).
Value divViaDivFull(OpBuilder &b, Location loc, ArrayRef<Value> ab) {
  return llvmIntrinsic(b, loc, "llvm.nvvm.div.full", b.getF32Type(), ab);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertKilnGPUToNVVMPass
    : public kiln::nvptx::impl::ConvertKilnGPUToNVVMBase<
          ConvertKilnGPUToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto warps = module->getAttrOfType<IntegerAttr>(
        KilnGPUDialect::getWarpsAttrName());
    int32_t threads = (warps ? warps.getInt() : 4) * 32;

    // Shared memory: one extern array; its size (the kernel's
    // kiln_gpu.shared_bytes) is a launch parameter (dynamic shared memory).
    for (auto fn : module.getOps<func::FuncOp>()) {
      // Argument attributes are Kiln's (names, promises): LLVM has no use
      // for them.
      // A tensor map is the 128-byte, 64-byte aligned parameter itself,
      // read in place by the tensor copies (`__grid_constant__`).
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        bool tensorMap = bool(fn.getArgAttr(i, kTensorMapAttr));
        fn.setArgAttrs(i, ArrayRef<NamedAttribute>{});
        if (!tensorMap)
          continue;
        Builder b(ctx);
        fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(LLVM::LLVMArrayType::get(
                          IntegerType::get(ctx, 8), 128)));
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(64));
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
      }
      fn->setAttr("nvvm.kernel", UnitAttr::get(ctx));
      fn->setAttr("nvvm.maxntid",
                  DenseI32ArrayAttr::get(ctx, {threads, 1, 1}));
    }
    declareDynamicShared(module);

    if (failed(lowerPrimitives(module)))
      return signalPassFailure();

    // Math without libdevice (compiler/GPU/MathExpansion.h); exp2 and exp
    // through the hardware's ex2.approx, f32 division as div.full.
    if (failed(lowerGPUMath(module, {}, "NVIDIA", "libdevice",
                            [&](RewritePatternSet &patterns) {
                              patterns.add<PerElementF32<math::Exp2Op>>(
                                  ctx, exp2ViaEx2);
                              patterns.add<PerElementF32<math::ExpOp>>(
                                  ctx, expViaEx2);
                              patterns.add<PerElementF32<arith::DivFOp>>(
                                  ctx, divViaDivFull);
                            })))
      return signalPassFailure();

    if (failed(convertPerThreadToLLVM(module, [](ConversionTarget &target) {
          target.addLegalDialect<NVVM::NVVMDialect>();
        })))
      return signalPassFailure();
  }
};

} // namespace
