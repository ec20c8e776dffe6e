//===- ThreadLowering.h - The per-thread conversion's parts -----*- C++ -*-===//
//
// convert-tile-to-gpu-threads (ConvertToThreads.cpp) turns each tile into
// the vector of registers one thread holds. Its patterns live in one file
// per op family (ThreadDataMovement, ThreadMemory, ThreadReductions,
// ThreadDot); this header holds what they share: the patterns' context
// and base class, and helpers that compute, from a tile's linear layout,
// which element each register of this thread holds.
//
// Not installed; only the stage's own files include it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_THREADLOWERING_H
#define KILN_COMPILER_GPU_THREADLOWERING_H

#include "compiler/GPU/LinearLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>

namespace kiln {
class DotOp;
} // namespace kiln

namespace kiln::gpu {

class AxisInfoAnalysis;
class MmaAttr;
class ReadTileOp;
struct GPUTarget;
struct MatrixInstr;

namespace threads {

/// What every pattern of the conversion may read.
struct Context {
  const GPUTarget *target;
  const AxisInfoAnalysis *axis;
  bool checked; ///< assertions are compiled (checked builds)
};

/// Base of the patterns: the converted (per-thread vector) type of a tile.
template <typename OpTy>
class ThreadPattern : public mlir::OpConversionPattern<OpTy> {
public:
  ThreadPattern(const mlir::TypeConverter &tc, mlir::MLIRContext *ctx,
                const Context &c)
      : mlir::OpConversionPattern<OpTy>(tc, ctx), c(c) {}

protected:
  mlir::VectorType convertedType(mlir::Type t) const {
    return llvm::cast<mlir::VectorType>(
        this->getTypeConverter()->convertType(t));
  }
  const Context &c;
};

/// An i32 constant.
mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// This thread's part of a layout's coordinates: for each output dim, the
/// XOR of the lane and warp bases of the bits set in this thread's ids —
/// or in `lane` and `warp` when given (another thread's).
llvm::SmallVector<mlir::Value, 3>
hardwareCoords(mlir::OpBuilder &b, mlir::Location loc, const LinearLayout &l,
               mlir::Value lane = {}, mlir::Value warp = {});

/// True for the one thread among the copies of each element (its lane and
/// warp bits that hold copies are zero); null when no thread holds copies.
mlir::Value ownerPredicate(mlir::OpBuilder &b, mlir::Location loc,
                           const LinearLayout &l);

/// The row-major element index of register `r`'s part of the coordinates
/// (XOR it with the thread's part: row-major offsets of power-of-two tiles
/// are the coordinates' bits side by side).
int64_t registerFlat(const LinearLayout &l, int32_t r);

/// Row-major element index of `coords` (one i32 per output of a layout).
mlir::Value flatOf(mlir::OpBuilder &b, mlir::Location loc,
                   llvm::ArrayRef<mlir::Value> coords,
                   llvm::ArrayRef<LinearLayout::OutDim> outs);

/// The bits of output 0 that some lane or warp bit of `l` can set (an
/// offset layout's thread part stays within them).
uint32_t hardwareBits(const LinearLayout &l);

/// `hw ^ c`, with `hw` within `hwBits`, as `(hw ^ (c & hwBits)) + (c &
/// ~hwBits)`: the same value, but the constant part the target's
/// addressing folds into an instruction's offset stays out of the
/// per-register computation (fewer live address registers).
mlir::Value xorConstantSplit(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value hw, uint32_t hwBits, int64_t c,
                             int64_t scale);

/// The register part of register `r`'s coordinates.
llvm::SmallVector<int32_t, 3> registerCoords(const LinearLayout &l,
                                             int32_t r);

/// The layout with its outputs cut to `sizes` (coordinates beyond them
/// wrap: those threads read copies).
LinearLayout cutTo(const LinearLayout &l, llvm::ArrayRef<int64_t> sizes);

/// Element `i` of a per-thread vector, and `n` elements from `i` on.
mlir::Value extractElement(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value vec, int64_t i);
mlir::Value extractSlice(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value vec, int64_t i, int64_t n);

/// Register indices of each instruction tile of a matrix operand held as
/// `l`: tiles keyed by (row tile, column tile) of `tileRows` x `tileCols`
/// (an instruction tile times the warps along each dimension), registers
/// in fragment order (`fragRegs` per tile; -1 where `l` has none).
std::map<std::pair<int32_t, int32_t>, llvm::SmallVector<int64_t>>
instructionTiles(const LinearLayout &l, int32_t fragRegs, int32_t tileRows,
                 int32_t tileCols);

/// The registers `regs` of the per-thread vector `vec`, as a vector.
mlir::Value gatherRegisters(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value vec, llvm::ArrayRef<int64_t> regs);

/// A tile in shared memory, its elements placed as `getSharedLayout` says,
/// from byte `base` (i32; null for 0) of `buffer` on.
struct SharedTile {
  mlir::Value buffer, base;
  mlir::Type elem; ///< the per-thread element type
  int64_t elemBytes = 1;
  /// Tile coordinates -> element offset (the shared layout's inverse).
  LinearLayout where;
};
SharedTile getSharedTile(mlir::Value buffer, mlir::Value base,
                         llvm::ArrayRef<int64_t> shape, mlir::Type elem,
                         llvm::ArrayRef<unsigned> order = {});

/// How tensor copies (TMA) put a tile of `shape` where getSharedLayout
/// places it: as `pieces` boxes of `pieceBox` (the shape with its
/// innermost dimension cut to `pieceBox.back()` elements), piece j from
/// innermost coordinate j x pieceBox.back() on, at byte j x pieceBytes,
/// with the hardware's `swizzle` (bytes; 0: none) on a buffer aligned to
/// `alignment`.
struct TensorCopyPlan {
  int32_t swizzle = 0;
  llvm::SmallVector<int64_t, 3> pieceBox;
  int64_t pieces = 1;
  int64_t pieceBytes = 0;
  int64_t alignment = 128;
};
/// The plan, or nullopt when no tensor copy writes that placement (or the
/// shape is beyond the hardware's boxes: rank 1-5, at most 256 per
/// dimension, rows of whole 16 bytes).
std::optional<TensorCopyPlan> planTensorCopy(llvm::ArrayRef<int64_t> shape,
                                             int64_t elemBytes);

/// Where the tile a `kiln_gpu.read_tile` reads sits (its slot, its view
/// composed in: `where` takes the result's coordinates); `elem` is the
/// per-thread element type.
SharedTile readTileSource(mlir::OpBuilder &b, mlir::Location loc,
                          ReadTileOp op, mlir::Type elem);

/// Shared-memory accesses per thread (vector stores of `srcL`'s registers,
/// copies skipped, plus vector or matrix loads of `dstL`'s) to move a tile
/// through `tile`: what a conversion's choice of shared layout minimizes.
int64_t countSharedAccesses(const GPUTarget &target, const SharedTile &tile,
                            const LinearLayout &srcL, const LinearLayout &dstL,
                            mlir::Attribute dstEncoding);

/// A new shared buffer of `bytes`.
mlir::Value allocShared(mlir::OpBuilder &b, mlir::Location loc, int64_t bytes,
                        int64_t alignment);

/// The longest run (a power of two, at most `maxWidth`) of consecutive
/// registers of `l` that sit at consecutive offsets of `tile`.
int32_t getSharedRunWidth(const SharedTile &tile, const LinearLayout &l,
                          int32_t maxWidth);

/// Calls `fn(r, byteOffset)` for every run of `width` registers of `l`
/// (from getSharedRunWidth), with the byte offset in the buffer of
/// register `r`'s element; with `skipCopies`, runs that repeat an earlier
/// register's elements are left out.
void forEachSharedRun(
    mlir::OpBuilder &b, mlir::Location loc, const SharedTile &tile,
    const LinearLayout &l, int32_t width, bool skipCopies,
    llvm::function_ref<void(int32_t r, mlir::Value byteOffset)> fn);

/// Emits `body` so that it runs only in the one thread among the copies of
/// each element of `l` (inside an `scf.if` when threads hold copies).
void inOwnerThreads(mlir::OpBuilder &b, mlir::Location loc,
                    const LinearLayout &l,
                    llvm::function_ref<void(mlir::OpBuilder &)> body);

/// Stores the registers `vec`, held as `l` says, into `tile` (each element
/// written once).
void storeSharedTile(mlir::OpBuilder &b, mlir::Location loc,
                     const GPUTarget &target, const SharedTile &tile,
                     mlir::Value vec, const LinearLayout &l);

/// Reads `tile` into the registers of `l` (per-thread type `type`); with
/// a matrix-instruction operand `encoding`, through the target's matrix
/// loads where it has them.
mlir::Value loadSharedTile(mlir::OpBuilder &b, mlir::Location loc,
                           const GPUTarget &target, const SharedTile &tile,
                           const LinearLayout &l, mlir::VectorType type,
                           mlir::Attribute encoding);

/// `vec` (held as `l` says) as computed by the owner of each element —
/// what the other threads holding copies have is replaced by the owner's
/// value, through a shared buffer. `vec` itself when no thread holds
/// copies.
mlir::Value broadcastFromOwners(mlir::OpBuilder &b, mlir::Location loc,
                                const GPUTarget &target, mlir::Value vec,
                                const LinearLayout &l);

/// A scalar computed once per program: `compute` runs in thread 0 only
/// (inside an scf.if), and every thread gets its result through shared
/// memory. For side effects that must happen once (scalar atomics).
mlir::Value broadcastFromThreadZero(
    mlir::OpBuilder &b, mlir::Location loc,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &)> compute);

/// How a load or store through a tile of pointers accesses memory:
/// `vector` consecutive elements at once, `alignment` bytes aligned.
struct AccessPlan {
  int32_t vector = 1;
  int64_t alignment = 1;
  int64_t elemBytes = 1;
};
AccessPlan planAccess(const Context &c, mlir::Value ptr, mlir::Value mask,
                      mlir::RankedTensorType ptrType);

/// An access through a tile of pointers in the offset form of
/// `kiln_gpu.load`/`store`: the uniform base address (i64) and this
/// thread's byte offset from it per register (vector of i32).
struct OffsetAccess {
  mlir::Value base, offsets;
};

/// The offset form of accesses through `ptrTile` (`vector` elements
/// each), on a target with range-checked accesses, when the pointers are
/// a scalar pointer plus scalar offsets (the uniform base) plus tiles of
/// offsets that stay in [0, 2^31) bytes whatever the scalars are. As in
/// the axis analysis, the offsets are assumed not to wrap around, so that
/// `p + (u + l)` is `(p + u) + l`. nullopt otherwise (then the accesses
/// take the tile of addresses).
std::optional<OffsetAccess>
planOffsetAccess(mlir::ConversionPatternRewriter &b, mlir::Location loc,
                 const Context &c, mlir::Value ptrTile, int32_t vector);

/// The registers of a load through the tile of pointers `ptrTile` (masked
/// by `maskTile`, may be null), given their per-thread forms `ptr`, `mask`
/// and `other` (null: zero): as many consecutive elements per access as
/// planAccess allows.
mlir::Value loadRegisters(mlir::ConversionPatternRewriter &b, mlir::Location loc,
                          const Context &c, mlir::Value ptrTile,
                          mlir::Value maskTile, mlir::Value ptr,
                          mlir::Value mask, mlir::Value other,
                          mlir::VectorType type);

/// How a warpgroup matrix instruction finds an operand in shared memory:
/// the PTX ISA's canonical layouts (ThreadWarpgroup.cpp has the formulas).
/// `mnMajor`: elements along M (A) or N (B) contiguous, else along K;
/// `swizzleBytes`: 128, 64, 32 or 0; the leading and stride byte offsets.
struct MatrixDescriptor {
  bool mnMajor = false;
  int32_t swizzleBytes = 0;
  int64_t lbo = 16, sbo = 16;
  /// The 64-bit descriptor with a zero start address.
  uint64_t encode() const;
};

/// The shared address (from a 1024-byte aligned origin) the matrix unit
/// reads for element (x, k) of an operand described by `d` whose
/// descriptor starts at `start`: x along M (A) or N (B).
int64_t canonicalMatrixAddress(const MatrixDescriptor &d, int64_t start,
                               int64_t elemBytes, int64_t x, int64_t k);

/// The descriptor under which every instruction tile of an operand placed
/// as `where` says (operand coordinates -> element offset from a
/// 1024-byte aligned start) reads exactly that placement: the tiles
/// start at `corners` ((x, k) pairs) and span `extentX` x 32 bytes of K.
/// MN-major layouts only with `allowMNMajor` (the instruction's
/// MatrixInstr::sharedMNMajor). nullopt when no canonical layout matches.
std::optional<MatrixDescriptor>
planMatrixDescriptor(const LinearLayout &where, int64_t elemBytes, bool isA,
                     int32_t extentX,
                     llvm::ArrayRef<std::pair<int32_t, int32_t>> corners,
                     bool allowMNMajor);

/// kiln.dot with a warpgroup instruction (ThreadWarpgroup.cpp); `a`, `b`
/// and `acc` are the per-thread operands.
mlir::LogicalResult lowerWarpgroupDot(kiln::DotOp op, mlir::Value a,
                                      mlir::Value b, mlir::Value acc,
                                      mlir::ConversionPatternRewriter &rw,
                                      const Context &c,
                                      const MatrixInstr &instr, MmaAttr mma);

/// Marks an `scf.for` whose copies tile-gpu-pipeline starts after the
/// products (at the end of the iteration): the only loops whose warpgroup
/// products may stay in flight across iterations.
inline constexpr llvm::StringLiteral kCopiesAfterProductsAttr =
    "kiln_gpu.copies_after_products";

/// Whether `dot` has a warpgroup instruction's layout (groupWarps > 1).
bool isWarpgroupProduct(kiln::DotOp dot);

/// Before the conversion: a warpgroup product reads B from shared memory,
/// so a B not read from a pipeline slot is stored there in whatever layout
/// it has — a conversion into the nominal operand layout (itself a trip
/// through shared memory) is dropped. Likewise an A loaded in the
/// product's block (the generic images, which do not pipeline); an A
/// computed in registers (attention's probabilities) or loaded once before
/// a loop (its Q) keeps its conversion and stays in registers.
void dropWarpgroupOperandConversions(mlir::Operation *root);

/// Whether `dot` only carries its loop's accumulator: its result is
/// yielded and the iter arg feeds only it.
bool carriesOnly(kiln::DotOp dot);

/// Before the conversion: marks the warpgroup products that may stay in
/// flight across their loop's iterations — in a loop marked
/// kCopiesAfterProductsAttr, the product only carries the accumulator
/// (carriesOnly) and reads both operands from pipeline slots.
void markInFlightProducts(mlir::Operation *root);
/// After the conversion: a K loop whose warpgroup products stay in flight
/// across iterations (`warpgroup_wait pending 1`, ThreadWarpgroup.cpp)
/// gets a `warpgroup_wait pending 0` on its accumulator right after it.
void finishInFlightProducts(mlir::Operation *root);

/// The patterns, by family.
void populateDataMovementPatterns(const mlir::TypeConverter &tc,
                                  mlir::RewritePatternSet &patterns,
                                  const Context &c);
void populateElementwisePatterns(const mlir::TypeConverter &tc,
                                 mlir::RewritePatternSet &patterns,
                                 const Context &c);
void populateMemoryPatterns(const mlir::TypeConverter &tc,
                            mlir::RewritePatternSet &patterns,
                            const Context &c);
void populateReductionPatterns(const mlir::TypeConverter &tc,
                               mlir::RewritePatternSet &patterns,
                               const Context &c);
/// After the conversion: a loop whose accumulator is divided by 4 on
/// entry to FNUZ fp8 matrix instructions and multiplied by 4 after them
/// (and used nowhere else) carries it divided instead, so the scalings run
/// once around the loop, not every iteration. Exact: both are powers of
/// two.
void hoistAccumulatorScaling(mlir::Operation *root);
void populateDotPatterns(const mlir::TypeConverter &tc,
                         mlir::RewritePatternSet &patterns, const Context &c);

} // namespace threads
} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_THREADLOWERING_H
