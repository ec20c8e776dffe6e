//===- ConvertGPUToEmu.cpp - The per-thread form as emulated host code -----===//
//
// convert-kiln-gpu-to-emu (EmuPasses.td): the per-thread form becomes the
// code of one GPU thread running on the CPU, with every primitive that
// involves other threads or shared memory a call into the emulator through
// the thread's callback table (runtime/include/kiln/emu_abi.h). The
// layout of KilnEmuThread and the order of KilnEmuOps are mirrored here.
//
//===----------------------------------------------------------------------===//

#include "codegen/emu/EmuPasses.h"
#include "codegen/host/HostPasses.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/MathExpansion.h"
#include "compiler/GPU/PerThreadToLLVM.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringMap.h"

namespace kiln::emu {
#define GEN_PASS_DEF_CONVERTKILNGPUTOEMU
#include "codegen/emu/EmuPasses.h.inc"
} // namespace kiln::emu

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;

namespace {

/// The bytes a vector access of `vt` moves.
int32_t vectorBytes(VectorType vt) {
  return int32_t(vt.getNumElements() * vt.getElementTypeBitWidth() / 8);
}

/// Byte offsets of KilnEmuThread's fields (emu_abi.h).
enum ThreadField : int32_t {
  kOps = 0,
  kThread = 8,
  kLane = 12,
  kWarp = 16,
  kProgramId = 20,
  kNumPrograms = 32,
};

/// Indices of KilnEmuOps's callbacks (emu_abi.h).
enum Callback : int32_t {
  kBarrier,
  kShuffle,
  kShared,
  kLoadMatrix,
  kMma,
  kAsyncCopy,
  kAsyncCommit,
  kAsyncWait,
  kPrintf,
  kTrap,
  kCheck,
  kWarpgroupMma,
  kWarpgroupWait,
  kMbarrierInit,
  kMbarrierArriveTx,
  kTensorLoad,
  kMbarrierWait,
};

class Lowering {
public:
  Lowering(ModuleOp module, Value thread)
      : module(module), thread(thread), ctx(module.getContext()),
        ptrTy(LLVM::LLVMPointerType::get(ctx)) {}

  LogicalResult run(func::FuncOp kernel);

private:
  Value i32(OpBuilder &b, Location loc, int32_t v) { return llvmI32(b, loc, v); }

  /// The thread's field at `offset`.
  Value field(OpBuilder &b, Location loc, int32_t offset, Type type) {
    Value p = LLVM::GEPOp::create(b, loc, ptrTy, b.getI8Type(), thread,
                                  ArrayRef<LLVM::GEPArg>{offset});
    return LLVM::LoadOp::create(b, loc, type, p);
  }

  /// A call of callback `index` with the thread as first argument.
  Value call(OpBuilder &b, Location loc, Callback index, Type result,
             ArrayRef<Value> args) {
    Value ops = field(b, loc, kOps, ptrTy);
    Value slot = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, ops,
                                     ArrayRef<LLVM::GEPArg>{int32_t(index)});
    Value fn = LLVM::LoadOp::create(b, loc, ptrTy, slot);
    SmallVector<Type> params{ptrTy};
    SmallVector<Value> operands{fn, thread};
    for (Value a : args) {
      params.push_back(a.getType());
      operands.push_back(a);
    }
    auto type = LLVM::LLVMFunctionType::get(
        result ? result : LLVM::LLVMVoidType::get(ctx), params);
    auto op = LLVM::CallOp::create(b, loc, type, operands);
    return result ? op.getResult() : Value();
  }

  /// A pointer to a constant C string (kept once per module).
  Value string(OpBuilder &b, Location loc, StringRef text) {
    auto it = strings.find(text);
    std::string name;
    if (it != strings.end()) {
      name = it->second;
    } else {
      name = "kiln_emu_str_" + std::to_string(strings.size());
      strings[text] = name;
      std::string bytes = text.str();
      bytes.push_back('\0');
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      LLVM::GlobalOp::create(
          mb, loc, LLVM::LLVMArrayType::get(mb.getI8Type(), bytes.size()),
          /*isConstant=*/true, LLVM::Linkage::Internal, name,
          mb.getStringAttr(bytes));
    }
    return LLVM::AddressOfOp::create(b, loc, ptrTy, name);
  }

  /// The op's source location as a string argument.
  Value where(OpBuilder &b, Operation *op) {
    return string(b, op->getLoc(), kiln::locationText(op->getLoc()));
  }

  Value hostPtr(OpBuilder &b, Location loc, Value addr) {
    return LLVM::IntToPtrOp::create(b, loc, ptrTy, addr);
  }

  /// Byte offset of a shared access: the buffer's plus the op's.
  Value sharedOffset(OpBuilder &b, Location loc, Value buffer, Value offset) {
    auto alloc = buffer.getDefiningOp<SharedAllocOp>();
    return LLVM::AddOp::create(b, loc, offset,
                               i32(b, loc, int32_t(*alloc.getOffset())));
  }

  /// A stack slot holding `v` (a vector of registers).
  Value spill(OpBuilder &b, Location loc, Value v) {
    Value slot = stackSlot(b, loc, v.getType());
    LLVM::StoreOp::create(b, loc, v, slot);
    return slot;
  }
  /// A stack slot in the function's entry block: a static alloca, not
  /// one more per iteration of a loop the op is in.
  Value stackSlot(OpBuilder &b, Location loc, Type type) {
    OpBuilder::InsertionGuard g(b);
    Operation *fn = b.getInsertionBlock()->getParentOp();
    while (fn && !isa<func::FuncOp>(fn))
      fn = fn->getParentOp();
    if (fn)
      b.setInsertionPointToStart(&fn->getRegion(0).front());
    return LLVM::AllocaOp::create(
        b, loc, ptrTy, type,
        LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                 b.getI64IntegerAttr(1)));
  }

  /// In checked builds, an i1 that is true when the emulator accepts an
  /// access of `bytes` at `ptr`; null otherwise.
  Value check(OpBuilder &b, Operation *op, Value ptr, int64_t bytes,
              bool isStore) {
    if (!checked)
      return Value();
    Location loc = op->getLoc();
    Value ok = call(b, loc, kCheck, b.getI32Type(),
                    {ptr,
                     LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                              b.getI64IntegerAttr(bytes)),
                     i32(b, loc, isStore), where(b, op)});
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, ok,
                                i32(b, loc, 0));
  }

  LogicalResult lower(Operation *op);

  ModuleOp module;
  Value thread;
  MLIRContext *ctx;
  Type ptrTy;
  bool checked = false;
  unsigned printfCounter = 0;
  llvm::StringMap<std::string> strings;
};

LogicalResult Lowering::run(func::FuncOp kernel) {
  checked = module->hasAttr("kiln.check_bounds");
  SmallVector<Operation *> ops;
  kernel.walk([&](Operation *op) {
    if (isa<KilnGPUDialect>(op->getDialect()) ||
        isa<kiln::ProgramIdOp, kiln::NumProgramsOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(lower(op)))
      return failure();
  // Buffers are only offsets now.
  kernel.walk([](SharedAllocOp a) {
    if (a->use_empty())
      a.erase();
  });
  return success();
}

LogicalResult Lowering::lower(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32Ty = b.getI32Type();
  if (auto id = dyn_cast<HwIdOp>(op)) {
    int32_t offset = id.getKind() == HwIdKind::thread ? kThread
                     : id.getKind() == HwIdKind::lane ? kLane
                                                      : kWarp;
    id.replaceAllUsesWith(field(b, loc, offset, i32Ty));
  } else if (auto pid = dyn_cast<kiln::ProgramIdOp>(op)) {
    pid.replaceAllUsesWith(field(
        b, loc, kProgramId + 4 * int32_t(pid.getAxis()), i32Ty));
  } else if (auto np = dyn_cast<kiln::NumProgramsOp>(op)) {
    np.replaceAllUsesWith(field(
        b, loc, kNumPrograms + 4 * int32_t(np.getAxis()), i32Ty));
  } else if (auto load = dyn_cast<GlobalLoadOp>(op)) {
    Value ptr = hostPtr(
        b, loc, accessAddress(b, loc, load.getAddr(), load.getOffset()));
    int64_t bytes = vectorBytes(load.getType());
    Value v;
    if (checked) {
      // The check only where the mask lets the access through.
      VectorType vt = load.getType();
      auto fallback = [&](OpBuilder &bb) -> Value {
        return load.getOther() ? load.getOther()
                               : Value(LLVM::ZeroOp::create(bb, loc, vt));
      };
      v = buildGuarded(
          b, loc, load.getMask(), vt,
          [&](OpBuilder &bb) -> Value {
            return buildGuarded(
                bb, loc, check(bb, op, ptr, bytes, false), vt,
                [&](OpBuilder &bbb) -> Value {
                  return LLVM::LoadOp::create(bbb, loc, vt, ptr,
                                              load.getAlignment());
                },
                fallback);
          },
          fallback);
    } else {
      v = lowerGlobalLoad(b, load, ptr);
    }
    load.replaceAllUsesWith(v);
  } else if (auto store = dyn_cast<GlobalStoreOp>(op)) {
    Value ptr = hostPtr(
        b, loc, accessAddress(b, loc, store.getAddr(), store.getOffset()));
    if (checked) {
      int64_t bytes =
          vectorBytes(cast<VectorType>(store.getValue().getType()));
      Value mask = store.getMask();
      auto ifOp = scf::IfOp::create(
          b, loc, mask ? mask : Value(LLVM::ConstantOp::create(
                                    b, loc, b.getI1Type(), b.getBoolAttr(true))),
          false);
      OpBuilder bb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
      bb.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
      auto inner = scf::IfOp::create(bb, loc, check(bb, op, ptr, bytes, true),
                                     false);
      OpBuilder bbb =
          OpBuilder::atBlockBegin(&inner.getThenRegion().front());
      bbb.setInsertionPoint(inner.getThenRegion().front().getTerminator());
      LLVM::StoreOp::create(bbb, loc, store.getValue(), ptr,
                            store.getAlignment());
    } else {
      lowerGlobalStore(b, store, ptr);
    }
  } else if (isa<SharedAllocOp>(op)) {
    return success(); // erased once unused
  } else if (auto sl = dyn_cast<SharedLoadOp>(op)) {
    VectorType vt = sl.getType();
    VectorType mem = sharedMemoryType(vt);
    Value p = call(b, loc, kShared, ptrTy,
                   {sharedOffset(b, loc, sl.getBuffer(), sl.getOffset()),
                    i32(b, loc, vectorBytes(mem)), i32(b, loc, 0),
                    where(b, op)});
    sl.replaceAllUsesWith(fromSharedMemory(
        b, loc, LLVM::LoadOp::create(b, loc, mem, p, 1), vt));
  } else if (auto ss = dyn_cast<SharedStoreOp>(op)) {
    Value value = toSharedMemory(b, loc, ss.getValue());
    Value p = call(b, loc, kShared, ptrTy,
                   {sharedOffset(b, loc, ss.getBuffer(), ss.getOffset()),
                    i32(b, loc, vectorBytes(cast<VectorType>(value.getType()))),
                    i32(b, loc, 1), where(b, op)});
    LLVM::StoreOp::create(b, loc, value, p, 1);
  } else if (auto lm = dyn_cast<SharedLoadMatrixOp>(op)) {
    VectorType vt = lm.getType();
    Value out = stackSlot(b, loc, vt);
    call(b, loc, kLoadMatrix, Type(),
         {sharedOffset(b, loc, lm.getBuffer(), lm.getOffset()),
          i32(b, loc, lm.getCount()), i32(b, loc, lm.getTranspose() ? 1 : 0),
          out, where(b, op)});
    lm.replaceAllUsesWith(LLVM::LoadOp::create(b, loc, vt, out).getResult());
  } else if (isa<BarrierOp>(op)) {
    call(b, loc, kBarrier, Type(), {where(b, op)});
  } else if (auto shfl = dyn_cast<ShuffleOp>(op)) {
    Type type = shfl.getType();
    unsigned bits = type.getIntOrFloatBitWidth();
    Type asInt = b.getIntegerType(bits);
    Value x = type.isInteger() ? shfl.getValue()
                               : LLVM::BitcastOp::create(b, loc, asInt,
                                                         shfl.getValue());
    if (bits < 64)
      x = LLVM::ZExtOp::create(b, loc, b.getI64Type(), x);
    int32_t kind = 0;
    switch (shfl.getKind()) {
    case ShuffleKind::xor_: kind = 0; break;
    case ShuffleKind::idx: kind = 1; break;
    case ShuffleKind::up: kind = 2; break;
    case ShuffleKind::down: kind = 3; break;
    }
    Value r = call(b, loc, kShuffle, b.getI64Type(),
                   {i32(b, loc, kind), x, i32(b, loc, int32_t(bits)),
                    shfl.getOffset(), where(b, op)});
    if (bits < 64)
      r = LLVM::TruncOp::create(b, loc, asInt, r);
    if (!type.isInteger())
      r = LLVM::BitcastOp::create(b, loc, type, r);
    shfl.replaceAllUsesWith(r);
  } else if (auto mma = dyn_cast<MmaOp>(op)) {
    Value d = stackSlot(b, loc, mma.getType());
    call(b, loc, kMma, Type(),
         {string(b, loc, mma.getInstr()), spill(b, loc, mma.getA()),
          spill(b, loc, mma.getB()), spill(b, loc, mma.getC()), d,
          where(b, op)});
    mma.replaceAllUsesWith(
        LLVM::LoadOp::create(b, loc, mma.getType(), d).getResult());
  } else if (auto wg = dyn_cast<WarpgroupMmaOp>(op)) {
    // Descriptors get the operand's shared offset in their start field.
    auto desc = [&](Value buffer, Value offset, int64_t templ) -> Value {
      Value off = LLVM::ZExtOp::create(b, loc, b.getI64Type(),
                                       sharedOffset(b, loc, buffer, offset));
      Value field = LLVM::LShrOp::create(
          b, loc, off, LLVM::ConstantOp::create(b, loc, b.getI64Type(), 4));
      return LLVM::OrOp::create(
          b, loc, field,
          LLVM::ConstantOp::create(b, loc, b.getI64Type(), templ));
    };
    Value zero64 = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 0);
    Value aDesc = wg.getA() ? zero64
                            : desc(wg.getABuffer(), wg.getAOffset(),
                                   *wg.getADesc());
    Value aRegs = wg.getA() ? spill(b, loc, wg.getA())
                            : Value(LLVM::ZeroOp::create(b, loc, ptrTy));
    int32_t flags = (wg.getATranspose() ? 1 : 0) | (wg.getBTranspose() ? 2 : 0);
    Value d = stackSlot(b, loc, wg.getType());
    call(b, loc, kWarpgroupMma, Type(),
         {string(b, loc, wg.getInstr()), aDesc, aRegs,
          desc(wg.getBBuffer(), wg.getBOffset(), wg.getBDesc()),
          i32(b, loc, flags), spill(b, loc, wg.getC()), d, where(b, op)});
    wg.replaceAllUsesWith(
        LLVM::LoadOp::create(b, loc, wg.getType(), d).getResult());
  } else if (auto wait = dyn_cast<WarpgroupWaitOp>(op)) {
    call(b, loc, kWarpgroupWait, Type(),
         {i32(b, loc, wait.getPending()), where(b, op)});
    wait.replaceAllUsesWith(wait.getValues());
  } else if (isa<SharedFenceOp>(op)) {
    // Nothing to order: the emulator has one kind of shared access.
  } else if (auto rmw = dyn_cast<kiln::gpu::AtomicRMWOp>(op)) {
    rmw.replaceAllUsesWith(
        lowerAtomicRMW(b, rmw, hostPtr(b, loc, rmw.getAddr()), ""));
  } else if (auto cas = dyn_cast<kiln::gpu::AtomicCASOp>(op)) {
    cas.replaceAllUsesWith(
        lowerAtomicCAS(b, cas, hostPtr(b, loc, cas.getAddr()), ""));
  } else if (auto pf = dyn_cast<PrintfOp>(op)) {
    auto [format, packed] = buildPrintfArgs(b, pf, module, printfCounter);
    call(b, loc, kPrintf, Type(), {format, packed});
  } else if (isa<TrapOp>(op)) {
    call(b, loc, kTrap, Type(), {where(b, op)});
  } else if (auto cp = dyn_cast<AsyncCopyOp>(op)) {
    Value valid = cp.getMask()
                      ? Value(LLVM::ZExtOp::create(b, loc, i32Ty, cp.getMask()))
                      : i32(b, loc, 1);
    Value src = hostPtr(b, loc, cp.getAddr());
    if (checked) {
      // The source is read when the wait lands the copy, past any check
      // there: check it now, like a load, where the mask lets it through
      // (the emulator's check ends the program when it fails).
      Value mask = cp.getMask()
                       ? cp.getMask()
                       : Value(LLVM::ConstantOp::create(b, loc, b.getI1Type(),
                                                        b.getBoolAttr(true)));
      auto ifOp = scf::IfOp::create(b, loc, mask, false);
      OpBuilder bb(ifOp.getThenRegion().front().getTerminator());
      check(bb, op, src, cp.getSize(), false);
    }
    call(b, loc, kAsyncCopy, Type(),
         {sharedOffset(b, loc, cp.getBuffer(), cp.getOffset()), src,
          i32(b, loc, cp.getSize()), valid, where(b, op)});
  } else if (isa<AsyncCommitOp>(op)) {
    call(b, loc, kAsyncCommit, Type(), {});
  } else if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
    call(b, loc, kAsyncWait, Type(),
         {i32(b, loc, wait.getPending()), where(b, op)});
  } else if (auto init = dyn_cast<MbarrierInitOp>(op)) {
    call(b, loc, kMbarrierInit, Type(),
         {sharedOffset(b, loc, init.getBuffer(), init.getOffset()),
          i32(b, loc, int32_t(init.getCount())), where(b, op)});
  } else if (auto arrive = dyn_cast<MbarrierArriveTxOp>(op)) {
    call(b, loc, kMbarrierArriveTx, Type(),
         {sharedOffset(b, loc, arrive.getBuffer(), arrive.getOffset()),
          i32(b, loc, int32_t(arrive.getBytes())), where(b, op)});
  } else if (auto wait = dyn_cast<MbarrierWaitOp>(op)) {
    call(b, loc, kMbarrierWait, Type(),
         {sharedOffset(b, loc, wait.getBuffer(), wait.getOffset()),
          wait.getParity(), where(b, op)});
  } else if (isa<MbarrierInvalOp>(op)) {
    // Nothing to end: the emulator's barriers are its own records, which
    // the next initialization of the bytes replaces.
  } else if (auto load = dyn_cast<TensorLoadOp>(op)) {
    // The coordinates in an i32 array on the stack, outermost first.
    auto arrayTy = LLVM::LLVMArrayType::get(b.getI32Type(),
                                            load.getCoords().size());
    Value coords = stackSlot(b, loc, arrayTy);
    for (auto [i, c] : llvm::enumerate(load.getCoords())) {
      Value at = LLVM::GEPOp::create(b, loc, ptrTy, arrayTy, coords,
                                     ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      LLVM::StoreOp::create(b, loc, c, at);
    }
    call(b, loc, kTensorLoad, Type(),
         {load.getMap(),
          sharedOffset(b, loc, load.getBuffer(), load.getOffset()), coords,
          sharedOffset(b, loc, load.getBars(), load.getBarOffset()),
          where(b, op)});
  } else {
    return op->emitOpError("is not emulated yet");
  }
  op->erase();
  return success();
}

/// `entry(void **args, KilnEmuThread *thread)`: loads each argument from
/// `args` as the host ABI stores it and calls the kernel with the thread.
void buildEntry(OpBuilder &b, func::FuncOp kernel, StringRef entry) {
  Location loc = kernel.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto fn = func::FuncOp::create(b, loc, entry,
                                 b.getFunctionType({ptrTy, ptrTy}, {}));
  Block *block = fn.addEntryBlock();
  OpBuilder eb = OpBuilder::atBlockBegin(block);
  Value args = block->getArgument(0);
  SmallVector<Value> operands;
  ArrayRef<Type> params = kernel.getArgumentTypes();
  for (unsigned i = 0; i + 1 < params.size(); ++i) {
    Value slot = LLVM::GEPOp::create(eb, loc, ptrTy, ptrTy, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value p = LLVM::LoadOp::create(eb, loc, ptrTy, slot);
    Type t = params[i];
    if (t.isInteger(1)) {
      Value byte = LLVM::LoadOp::create(eb, loc, eb.getI8Type(), p);
      operands.push_back(LLVM::ICmpOp::create(
          eb, loc, LLVM::ICmpPredicate::ne, byte,
          LLVM::ConstantOp::create(eb, loc, eb.getI8Type(),
                                   eb.getI8IntegerAttr(0))));
    } else {
      operands.push_back(LLVM::LoadOp::create(eb, loc, t, p));
    }
  }
  operands.push_back(block->getArgument(1));
  func::CallOp::create(eb, loc, kernel, operands);
  func::ReturnOp::create(eb, loc);
}

struct ConvertKilnGPUToEmuPass
    : public kiln::emu::impl::ConvertKilnGPUToEmuBase<ConvertKilnGPUToEmuPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    func::FuncOp kernel;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("kiln.kernel"))
        kernel = fn;
    if (!kernel) {
      module.emitError("the module has no kernel");
      return signalPassFailure();
    }
    // The kernel takes the thread last and becomes a private function;
    // the entry keeps its name.
    std::string entry = kernel.getSymName().str();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      kernel.setArgAttrs(i, ArrayRef<NamedAttribute>{});
    if (failed(kernel.insertArgument(kernel.getNumArguments(), ptrTy,
                                     DictionaryAttr(), kernel.getLoc())))
      return signalPassFailure();
    Value thread = kernel.getArgument(kernel.getNumArguments() - 1);
    kernel.setSymName(entry + "_thread");
    kernel.setPrivate();
    kernel->removeAttr("kiln.kernel");
    {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      buildEntry(b, kernel, entry);
    }
    if (failed(Lowering(module, thread).run(kernel)))
      return signalPassFailure();

    // bf16 arithmetic in f32 (x86 has none, and LLVM would call libgcc's
    // missing __truncsfbf2), bf16 conversions expanded; math functions
    // without an LLVM intrinsic from libm.
    {
      PassManager pm(ctx);
      arith::ArithEmulateUnsupportedFloatsOptions emulate;
      emulate.sourceTypeStrs = {"bf16"};
      emulate.targetTypeStr = "f32";
      pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
      if (failed(runPipeline(pm, module)))
        return signalPassFailure();
      // bf16 conversions and ceildiv/floordiv expanded; maximumf/minimumf
      // stay, for LLVM's maximum/minimum (signed zeros ordered).
      RewritePatternSet patterns(ctx);
      kiln::populateHalfF64ConversionPatterns(patterns);
      arith::populateExpandBFloat16Patterns(patterns);
      arith::populateCeilFloorDivExpandOpsPatterns(patterns);
      if (failed(applyPatternsGreedily(module, std::move(patterns))))
        return signalPassFailure();
    }
    // The GPU backends' own expansions where they are plain arithmetic
    // (sin and cos, f64 functions: compiler/GPU/MathExpansion.h), so that
    // the emulator computes what the GPUs do; what stays (f32 exp, log,
    // tanh, ...: hardware approximations there) comes from libm.
    {
      RewritePatternSet patterns(ctx);
      kiln::gpu::populateMathExpansionPatterns(patterns);
      if (failed(applyPatternsGreedily(module, std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      populateMathToLibmConversionPatterns(patterns);
      ConversionTarget target(*ctx);
      target.addLegalDialect<func::FuncDialect, LLVM::LLVMDialect>();
      target.addIllegalOp<math::TanhOp, math::ErfOp, math::AtanOp,
                          math::Atan2Op, math::AcosOp, math::AsinOp,
                          math::TanOp, math::SinhOp, math::CoshOp,
                          math::AsinhOp, math::AcoshOp, math::AtanhOp,
                          math::CbrtOp, math::ExpM1Op, math::Log1pOp>();
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(module, target, std::move(patterns))))
        return signalPassFailure();
    }
    if (failed(convertPerThreadToLLVM(module, [](ConversionTarget &) {})))
      return signalPassFailure();
  }
};

} // namespace
