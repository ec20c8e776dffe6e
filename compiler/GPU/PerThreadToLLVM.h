//===- PerThreadToLLVM.h - Lowering the per-thread form to LLVM -*- C++ -*-===//
//
// What every consumer of the GPU stage's per-thread form does the same way
// when it lowers to the LLVM dialect (codegen/nvptx for NVIDIA GPUs,
// codegen/amdgpu for AMD GPUs, codegen/emu for the CPU emulator): global and
// shared memory accesses (the GPUs'), masked accesses, atomics, the
// packing of printf arguments, and — once the backend has mapped the
// kiln_gpu primitives — the conversion of arith, math, vector, scf, cf and
// func to LLVM. The pointers given to these helpers are the backend's
// (an address space, or a host pointer).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_PERTHREADTOLLVM_H
#define KILN_COMPILER_GPU_PERTHREADTOLLVM_H

#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln::gpu {

/// An i32 LLVM constant.
mlir::Value llvmI32(mlir::OpBuilder &b, mlir::Location loc, int32_t v);
/// A call of the LLVM intrinsic `name` returning `result` (overloads
/// deduced from the types).
mlir::Value llvmIntrinsic(mlir::OpBuilder &b, mlir::Location loc,
                          llvm::StringRef name, mlir::Type result,
                          mlir::ValueRange args);

/// The address spaces of global and shared memory, numbered alike by the
/// NVPTX and AMDGPU targets.
constexpr unsigned kGlobalAddressSpace = 1, kSharedAddressSpace = 3;

/// The pointer to a 64-bit global address (a kernel's pointers are passed
/// as integers).
mlir::Value globalPointer(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value addr);

/// The address (i64) a `kiln_gpu.load`/`store` accesses: `addr`, or
/// `addr + zext(offset)` in their offset form (`offset` non-null).
mlir::Value accessAddress(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value addr, mlir::Value offset);
/// The address of byte `offset` of a shared buffer (its allocation's offset
/// into the dynamic shared array declareDynamicShared makes).
mlir::Value sharedPointer(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value buffer, mlir::Value offset);
/// Declares the module's dynamic shared memory (LDS): one external byte
/// array, sized at launch, aligned to 16 bytes or to the most any of the
/// module's buffers asks (the allocation's offsets keep their alignment
/// from there).
void declareDynamicShared(mlir::ModuleOp module);
/// The vector a shared-memory access of `vt` moves: a bool (i1) element is
/// one byte holding 0 or 1 (as getElementBytes counts it; LLVM would pack a
/// vector of i1 into bits), any other element itself.
mlir::VectorType sharedMemoryType(mlir::VectorType vt);
/// `value` as shared memory holds it (bools widened to bytes).
mlir::Value toSharedMemory(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value);
/// `raw`, read from shared memory as sharedMemoryType(`vt`), as `vt`.
mlir::Value fromSharedMemory(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value raw, mlir::VectorType vt);
/// Lowers kiln_gpu.load, store, shared_load and shared_store, which both
/// GPU targets map alike (through globalPointer and sharedPointer), and
/// erases `op`; false (nothing done) for any other op.
bool lowerMemoryAccess(mlir::OpBuilder &b, mlir::Operation *op);

/// `mask ? body() : otherwise()` as an `scf.if` yielding `type`, or just
/// body() without a mask.
mlir::Value
buildGuarded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mask,
             mlir::Type type,
             llvm::function_ref<mlir::Value(mlir::OpBuilder &)> body,
             llvm::function_ref<mlir::Value(mlir::OpBuilder &)> otherwise);

/// kiln_gpu.load / kiln_gpu.store at the LLVM pointer `ptr` (the op's
/// address in the backend's address space), masked by the op's mask.
mlir::Value lowerGlobalLoad(mlir::OpBuilder &b, GlobalLoadOp op,
                            mlir::Value ptr);
void lowerGlobalStore(mlir::OpBuilder &b, GlobalStoreOp op, mlir::Value ptr);

/// kiln_gpu.atomic_rmw / atomic_cas at `ptr`, acquire-release in the LLVM
/// sync scope `scope` ("" for the whole system).
mlir::Value lowerAtomicRMW(mlir::OpBuilder &b, AtomicRMWOp op, mlir::Value ptr,
                           llvm::StringRef scope);
mlir::Value lowerAtomicCAS(mlir::OpBuilder &b, AtomicCASOp op, mlir::Value ptr,
                           llvm::StringRef scope);

/// A shuffle of any 8-64-bit integer or float `v`, moved as one or two
/// i32 by `shuffle32` (the backend's 32-bit lane exchange): narrower values
/// widen, 64-bit ones move as two halves.
mlir::Value shuffleAsI32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         llvm::function_ref<mlir::Value(mlir::Value)> shuffle32);

/// kiln_gpu.printf's format as an internal global string of `module`, and
/// its arguments packed as CUDA's vprintf reads them (a struct of the
/// arguments, floats widened to f64 and integers under 32 bits to i32;
/// a null pointer when there are none).
std::pair<mlir::Value, mlir::Value>
buildPrintfArgs(mlir::OpBuilder &b, PrintfOp op, mlir::ModuleOp module,
                unsigned &counter);

/// The rest, after a backend mapped every kiln_gpu op: strided slices of
/// 1-d vectors become shuffles, scf becomes cf, and arith, math, vector,
/// cf and func become the LLVM dialect (64-bit index). `addLegal` adds the
/// backend's own dialects to the conversion target. `unrollWideVectors`:
/// elementwise arith on vectors of 64-bit elements becomes one op per
/// element (for targets with 32-bit registers, whose instruction selection
/// keeps such vectors whole: AMDGPU).
mlir::LogicalResult convertPerThreadToLLVM(
    mlir::ModuleOp module,
    llvm::function_ref<void(mlir::ConversionTarget &)> addLegal,
    bool unrollWideVectors = false);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_PERTHREADTOLLVM_H
