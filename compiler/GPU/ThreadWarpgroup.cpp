//===- ThreadWarpgroup.cpp - Products of warpgroup matrix instructions ----===//
//
// kiln.dot with a warpgroup instruction (`groupWarps` > 1: Hopper's
// wgmma) in the per-thread form: the instruction reads B, and A unless A
// is in registers, from shared memory through matrix descriptors. An
// operand read from a pipeline slot (`kiln_gpu.read_tile`) is read by the
// instruction straight from the slot when the slot's placement is one of
// the descriptors' canonical layouts; an A held in the instruction's A
// fragment stays in registers, unless it is invariant in a loop around the
// product (then it is stored before that loop, as below, and read through
// descriptors); any other operand (convert-tile-to-gpu-
// threads leaves loaded operands in the layout they were loaded in) is
// first stored into a buffer of its own, swizzled, K-major or MN-major
// (whichever its registers store widest), then fenced for the matrix unit. The instructions of one product are issued back to back
// and waited for once (`kiln_gpu.warpgroup_wait`).
//
// The canonical layouts (PTX ISA, "Shared memory matrix layout" of
// wgmma), for element (x, k) of an operand, x along M (A) or N (B), in
// bytes from the descriptor's start address, e the element size, S the
// swizzle width (128, 64 or 32 bytes; 0 none):
//
//   K-major,  S > 0:  (x / 8) SBO + (x % 8) S + k e
//   K-major,  S = 0:  (x / 8) SBO + (k / (16/e)) LBO + (x % 8) 16 + (k % (16/e)) e
//   MN-major, S > 0:  (x / (S/e)) LBO + (k / 8) SBO + (k % 8) S + (x % (S/e)) e
//   MN-major, S = 0:  (x / (16/e)) SBO + (k / 8) LBO + (k % 8) 16 + (x % (16/e)) e
//
// then, swizzled, address bits 4.. XOR-ed with bits 7.. (3, 2 or 1 bits for
// 128, 64, 32) of the whole shared address: a swizzled tile's 8-row atoms
// start on multiples of 8 S. The stage's shared layouts (getSharedLayout)
// swizzle 16-byte chunks by row exactly so for rows of 32 to 128 bytes,
// and cut longer rows into 128-byte atoms, so row-major tiles read along K
// (A) or along N (B) both have a descriptor.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <map>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::gpu;
using namespace kiln::gpu::threads;

int64_t kiln::gpu::threads::canonicalMatrixAddress(const MatrixDescriptor &d,
                                                   int64_t start,
                                                   int64_t elemBytes,
                                                   int64_t x, int64_t k) {
  int64_t e = elemBytes, s = d.swizzleBytes, a;
  if (!d.mnMajor)
    a = s ? (x / 8) * d.sbo + (x % 8) * s + k * e
          : (x / 8) * d.sbo + (k / (16 / e)) * d.lbo + (x % 8) * 16 +
                (k % (16 / e)) * e;
  else
    a = s ? (x / (s / e)) * d.lbo + (k / 8) * d.sbo + (k % 8) * s +
                (x % (s / e)) * e
          : (x / (16 / e)) * d.sbo + (k / 8) * d.lbo + (k % 8) * 16 +
                (x % (16 / e)) * e;
  a += start;
  if (s)
    a ^= ((a >> 7) & (s / 16 - 1)) << 4;
  return a;
}

uint64_t MatrixDescriptor::encode() const {
  uint64_t mode = swizzleBytes == 128 ? 1
                  : swizzleBytes == 64 ? 2
                  : swizzleBytes == 32 ? 3
                                       : 0;
  return (mode << 62) | (uint64_t(sbo >> 4) << 32) | (uint64_t(lbo >> 4) << 16);
}

std::optional<MatrixDescriptor> kiln::gpu::threads::planMatrixDescriptor(
    const LinearLayout &where, int64_t elemBytes, bool isA, int32_t extentX,
    ArrayRef<std::pair<int32_t, int32_t>> corners, bool allowMNMajor) {
  const int32_t extentK = int32_t(16 * 2 / elemBytes); // 32 bytes of K
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  // Bytes from the tile's start of operand element (x, k).
  auto offset = [&](int32_t x, int32_t k) -> int64_t {
    int32_t row = isA ? x : k, col = isA ? k : x;
    return elemBytes * where.apply({{d0, row}, {d1, col}})[0];
  };
  auto tileSize = [&](bool alongX) {
    return where.getInDimSize(alongX == isA ? d0 : d1);
  };
  int64_t origin = offset(0, 0);
  auto at = [&](int32_t x, int32_t k) -> int64_t {
    // Offsets along one axis of a tile too small to have them are unused
    // by the instruction.
    if (x >= tileSize(true) || k >= tileSize(false))
      return 16;
    return offset(x, k) - origin;
  };
  const int32_t core = int32_t(16 / elemBytes); // elements in 16 bytes
  for (bool mnMajor : {false, true})
    for (int32_t s : {128, 64, 32, 0}) {
      if (mnMajor && !allowMNMajor)
        break;
      MatrixDescriptor d{mnMajor, s, 16, 16};
      if (!mnMajor) {
        d.sbo = at(8, 0);
        if (!s)
          d.lbo = at(0, core);
      } else if (s) {
        d.lbo = extentX > s / elemBytes ? at(int32_t(s / elemBytes), 0) : 16;
        d.sbo = at(0, 8);
      } else {
        d.sbo = at(core, 0);
        d.lbo = at(0, 8);
      }
      if (d.lbo <= 0 || d.sbo <= 0 || d.lbo % 16 || d.sbo % 16 ||
          d.lbo >= (1 << 18) || d.sbo >= (1 << 18))
        continue;
      // The tile starts on 1024 bytes (the buffer and its slots are
      // aligned so): its offsets are the swizzle's address bits.
      bool ok = true;
      for (auto [cx, ck] : corners) {
        int64_t start = offset(cx, ck);
        ok = start % 16 == 0;
        for (int32_t x = 0; ok && x < extentX; ++x)
          for (int32_t k = 0; ok && k < extentK; ++k)
            ok = canonicalMatrixAddress(d, start, elemBytes, x, k) ==
                 offset(cx + x, ck + k);
        if (!ok)
          break;
      }
      if (ok)
        return d;
    }
  return std::nullopt;
}

namespace {

/// Marks a `warpgroup_wait pending 1` whose batch is the loop's carried
/// accumulator, still in flight at the end of the iteration.
constexpr llvm::StringLiteral kInFlightAttr = "kiln_gpu.in_flight";

/// An operand the matrix unit reads from shared memory: the tile, and its
/// descriptor.
struct SharedOperand {
  SharedTile tile;
  MatrixDescriptor desc;
  bool fromSlot; ///< a pipeline slot (else a buffer of the product's own)
};

/// The warp bits of `l` (an operand layout) as a layout of their own, the
/// bits within one group cleared: the group's corner of the operand.
LinearLayout groupCorner(const LinearLayout &l, int32_t groupWarps) {
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  LinearLayout w = l.sublayout({dims::kWarp}, {d0, d1});
  SmallVector<LinearLayout::Basis, 8> bases;
  for (int bit = 0; bit < w.getInDimSizeLog2(dims::kWarp); ++bit) {
    LinearLayout::Basis basis = w.getBasis(dims::kWarp, bit);
    if ((1 << bit) < groupWarps)
      basis.assign(basis.size(), 0);
    bases.push_back(basis);
  }
  SmallVector<LinearLayout::OutDim, 3> outs(w.getOutDims().begin(),
                                            w.getOutDims().end());
  return LinearLayout({{dims::kWarp.str(), bases}}, outs);
}

/// A layout of a [rows, cols] operand tile over every thread of `warps`
/// warps of `lanes` lanes for a copy that turns it around (MN-major to
/// K-major): each thread holds blocks of `run` x `run` elements (a 32-bit
/// word of each of `run` rows); the first `lanesAlongX` lane bits go along
/// `x` (the slot's contiguous dimension), the other lane bits along the
/// other dimension, the warps along `x` then the other (each dimension
/// while the tile has bits left, else the other one; a zero basis once
/// the tile runs out: copies, which the store skips). With `xFirst` the
/// registers of a block run along `x` (the reads), else along the other
/// dimension (the writes): the same elements in the same threads.
LinearLayout turnaroundLayout(ArrayRef<int64_t> shape, unsigned x,
                              int32_t run, int32_t lanes, int32_t warps,
                              int32_t lanesAlongX, bool xFirst) {
  unsigned k = 1 - x;
  int32_t size[2] = {int32_t(shape[0]), int32_t(shape[1])};
  int32_t next[2] = {1, 1}; // the next unassigned bit of each dimension
  auto take = [&](unsigned d) {
    LinearLayout::Basis basis{0, 0};
    if (next[d] >= size[d])
      d = 1 - d; // this dimension is used up: the other one
    if (next[d] < size[d]) {
      basis[d] = next[d];
      next[d] *= 2;
    }
    return basis;
  };
  SmallVector<LinearLayout::Basis, 8> regs, laneBases, warpBases;
  for (unsigned d : xFirst ? std::array<unsigned, 2>{x, k}
                           : std::array<unsigned, 2>{k, x})
    for (int32_t i = 1; i < run; i *= 2)
      regs.push_back(take(d));
  for (int32_t i = 1, bit = 0; i < lanes; i *= 2, ++bit)
    laneBases.push_back(take(bit < lanesAlongX ? x : k));
  for (int32_t i = 1; i < warps; i *= 2)
    warpBases.push_back(take(x));
  while (next[x] < size[x] || next[k] < size[k])
    regs.push_back(take(x));
  return LinearLayout({{dims::kRegister.str(), regs},
                       {dims::kLane.str(), laneBases},
                       {dims::kWarp.str(), warpBases}},
                      {{dims::tileDim(0), size[0]},
                       {dims::tileDim(1), size[1]}});
}

/// The bank conflicts of one shared access of warp 0 through `l` into
/// `tile` (register 0's run, every lane): the most distinct bank-wide
/// words that one bank serves (1: none).
int32_t bankWays(const GPUTarget &target, const SharedTile &tile,
                 const LinearLayout &l) {
  LinearLayout toOffset = l.compose(tile.where);
  std::map<int64_t, std::set<int64_t>> words;
  for (int32_t lane = 0; lane < l.getInDimSize(dims::kLane); ++lane) {
    int64_t word = toOffset.apply({{dims::kLane, lane}})[0] * tile.elemBytes /
                   target.sharedBankBytes;
    words[word % target.sharedBanks].insert(word);
  }
  size_t ways = 1;
  for (auto &[bank, distinct] : words)
    ways = std::max(ways, distinct.size());
  return int32_t(ways);
}

/// Asynchronous copies (cp.async) write through the ordinary accesses'
/// proxy: each wait for copies into `buffer` is followed by a fence, before
/// the barrier that publishes the landed bytes to the matrix unit.
void fenceCopies(ConversionPatternRewriter &b, Value buffer) {
  OpBuilder::InsertionGuard g(b);
  for (Operation *user : buffer.getUsers()) {
    if (!isa<AsyncWaitOp>(user) || isa_and_nonnull<SharedFenceOp>(
                                       user->getNextNode()))
      continue;
    b.setInsertionPointAfter(user);
    SharedFenceOp::create(b, user->getLoc());
  }
}

} // namespace

LogicalResult kiln::gpu::threads::lowerWarpgroupDot(
    kiln::DotOp op, Value aRegs, Value bRegs, Value acc,
    ConversionPatternRewriter &b, const Context &c, const MatrixInstr &instr,
    MmaAttr mma) {
  Location loc = op.getLoc();
  auto aType = cast<RankedTensorType>(op.getA().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  ArrayRef<int32_t> warps = mma.getWarpsPerBlock();
  int32_t group = instr.groupWarps;
  LinearLayout la = getLinearLayout(aType), lb = getLinearLayout(bType),
               lc = getLinearLayout(op.getType());
  int32_t rowsC = instr.m * warps[0], colsC = instr.n * warps[1];
  int64_t kSize = aType.getShape()[1];
  int32_t kSteps = int32_t(kSize / instr.k);
  Type elem = cast<VectorType>(bRegs.getType()).getElementType();
  int64_t elemBytes = getElementBytes(elem);

  // Every instruction tile's corner, as (x, k) of the operand: A's rows
  // step by a group's rows (64), B's columns by the instruction's N.
  auto corners = [&](bool isA) {
    SmallVector<std::pair<int32_t, int32_t>> out;
    int64_t extent = isA ? aType.getShape()[0] : bType.getShape()[1];
    int32_t step = isA ? instr.m * group : instr.n;
    for (int32_t x = 0; x < extent; x += step)
      for (int32_t k = 0; k < kSize; k += instr.k)
        out.push_back({x, k});
    return out;
  };

  // Stores the registers `regs` (held as `l` says) into a new buffer
  // placed as `tile` (1024-byte aligned: swizzle atoms) and fences them
  // for the matrix unit: an operand it reads from a buffer of its own.
  auto ownBuffer = [&](SharedTile tile, const MatrixDescriptor &d, Value regs,
                       const LinearLayout &l, ArrayRef<int64_t> shape) {
    int64_t bytes = elemBytes;
    for (int64_t dim : shape)
      bytes *= dim;
    tile.buffer = allocShared(b, loc, bytes, 1024);
    storeSharedTile(b, loc, *c.target, tile, regs, l);
    SharedFenceOp::create(b, loc);
    return SharedOperand{tile, d, false};
  };

  // The placement of such a buffer for an operand of `shape` held as `l`:
  // row- or column-major, whichever has a descriptor (MN-major ones only
  // where the instruction reads them) and lets `l`'s registers store the
  // widest runs (up to `maxWidth`); `width` gets that run.
  auto placeOwn = [&](ArrayRef<int64_t> shape, bool isA, const LinearLayout &l,
                      int32_t maxWidth, int32_t &width)
      -> std::optional<std::pair<SharedTile, MatrixDescriptor>> {
    int32_t extentX = isA ? instr.m * group : instr.n;
    std::optional<std::pair<SharedTile, MatrixDescriptor>> best;
    width = 0;
    for (SmallVector<unsigned, 2> order :
         {SmallVector<unsigned, 2>{1, 0}, SmallVector<unsigned, 2>{0, 1}}) {
      SharedTile t = getSharedTile(Value(), Value(), shape, elem, order);
      std::optional<MatrixDescriptor> d = planMatrixDescriptor(
          t.where, elemBytes, isA, extentX, corners(isA), instr.sharedMNMajor);
      int32_t w = d ? getSharedRunWidth(t, l, maxWidth) : 0;
      if (d && w > width) {
        best = {t, *d};
        width = w;
      }
    }
    return best;
  };

  // B turned around from its MN-major `slot` into a K-major buffer of the
  // product's own (see the caller), or nullopt where the layouts do not
  // give the threads whole 4-byte words at both ends. How many lane bits
  // go along N is chosen by the bank conflicts of the read and the write
  // (all along N reads whole rows of the slot but writes 8 rows of the
  // K-major buffer into few banks).
  auto turnAround = [&](const SharedTile &slot, const LinearLayout &l)
      -> std::optional<SharedOperand> {
    ArrayRef<int64_t> shape = bType.getShape();
    const unsigned x = 1; // N, the slot's contiguous dimension
    int32_t run = int32_t(4 / elemBytes);
    int32_t lanes = c.target->warpSize;
    int32_t warpCount = l.getInDimSize(dims::kWarp);
    auto layouts = [&](int32_t alongX) {
      return std::pair{turnaroundLayout(shape, x, run, lanes, warpCount,
                                        alongX, /*xFirst=*/true),
                       turnaroundLayout(shape, x, run, lanes, warpCount,
                                        alongX, /*xFirst=*/false)};
    };
    int32_t laneBits = llvm::Log2_32(uint32_t(lanes));
    auto [reads, writes] = layouts(laneBits);
    int32_t width = 0;
    auto placed = placeOwn(shape, /*isA=*/false, writes, run, width);
    if (!placed || width != run || getSharedRunWidth(slot, reads, run) != run)
      return std::nullopt;
    const SharedTile &tile = placed->first;
    int32_t best = -1, bestWays = 0;
    for (int32_t alongX = laneBits; alongX >= 0; --alongX) {
      auto [r, w] = layouts(alongX);
      if (getSharedRunWidth(slot, r, run) != run ||
          getSharedRunWidth(tile, w, run) != run)
        continue;
      int32_t ways =
          bankWays(*c.target, slot, r) + bankWays(*c.target, tile, w);
      if (best < 0 || ways < bestWays)
        best = alongX, bestWays = ways;
    }
    std::tie(reads, writes) = layouts(best);
    auto vecType =
        VectorType::get({reads.getInDimSize(dims::kRegister)}, elem);
    Value loaded = loadSharedTile(b, loc, *c.target, slot, reads, vecType,
                                  Attribute());
    // The same elements, registers ordered along K: `perm` gives each of
    // the writes' registers the reads' register that holds it.
    std::optional<SmallVector<int64_t>> perm =
        getRegisterPermutation(reads, writes);
    assert(perm && "both layouts put the same elements in each thread");
    Value turned =
        vector::ShuffleOp::create(b, loc, vecType, loaded, loaded, *perm);
    return ownBuffer(tile, placed->second, turned, writes, shape);
  };

  // Where the matrix unit reads an operand: its pipeline slot when that
  // is canonical, else a buffer of its own the registers are stored into.
  auto sharedOperand = [&](Value tileValue, Value regs, const LinearLayout &l,
                           bool isA) -> std::optional<SharedOperand> {
    int32_t extentX = isA ? instr.m * group : instr.n;
    if (auto read = tileValue.getDefiningOp<ReadTileOp>()) {
      SharedTile slot = readTileSource(b, loc, read, elem);
      auto alloc = read.getBuffer().getDefiningOp<SharedAllocOp>();
      int64_t tileBytes = elemBytes;
      for (int64_t d : read.getTileShape() ? *read.getTileShape()
                                           : read.getType().getShape())
        tileBytes *= d;
      if (alloc && tileBytes % 1024 == 0)
        if (std::optional<MatrixDescriptor> d = planMatrixDescriptor(
                slot.where, elemBytes, isA, extentX, corners(isA),
                instr.sharedMNMajor)) {
          // Swizzled atoms start on 1024 bytes at most.
          if (alloc.getAlignment() < 1024)
            b.modifyOpInPlace(alloc, [&] { alloc.setAlignment(1024); });
          fenceCopies(b, read.getBuffer());
          return SharedOperand{slot, *d, true};
        }
      // B for an instruction that reads only K-major operands (fp8) from a
      // slot that is MN-major (a row-major B, copied as it is in memory):
      // every thread turns blocks of 4-byte words around (read along N,
      // written along K) into a K-major buffer of the product's own, in
      // place of the operand fragments' registers (in which each warp of
      // a group would hold all of B). (An A in such a slot is read into
      // its register fragment, which the instruction takes.)
      if (!isA && !instr.sharedMNMajor && elemBytes < 4)
        if (std::optional<SharedOperand> turned = turnAround(slot, l))
          return turned;
    }
    // An A held in the A fragment stays in registers, unless the loop
    // around the product does not change it (attention's Q): then it is
    // stored once, before the outermost loop it is invariant in, and read
    // through descriptors, which frees its registers for the loop (64 per
    // thread for a 128x128 bf16 Q in one warpgroup) and spares the product
    // a register-A instruction's dependences.
    OpBuilder::InsertionGuard guard(b);
    if (isA && isa<OperandAttr>(aType.getEncoding())) {
      Operation *outside = nullptr;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
        if (isa<scf::ForOp, scf::WhileOp>(p) &&
            !p->isAncestor(regs.getParentBlock()->getParentOp()))
          outside = p;
      if (!outside)
        return std::nullopt; // from registers, in the A fragment
      b.setInsertionPoint(outside);
    }
    // K-major or MN-major, whichever the registers store with the widest
    // accesses (a row-major load of B has N contiguous in each thread).
    ArrayRef<int64_t> shape = (isA ? aType : bType).getShape();
    int32_t width = 0;
    auto placed = placeOwn(
        shape, isA, l,
        int32_t(std::max<int64_t>(1, c.target->maxVectorBytes / elemBytes)),
        width);
    if (!placed)
      return std::nullopt;
    return ownBuffer(placed->first, placed->second, regs, l, shape);
  };
  std::optional<SharedOperand> sa = sharedOperand(op.getA(), aRegs, la, true);
  std::optional<SharedOperand> sb = sharedOperand(op.getB(), bRegs, lb, false);
  if (!sb || (!sa && !isa<OperandAttr>(aType.getEncoding())))
    return op.emitOpError("operand has no matrix-descriptor layout");

  // This thread's group's corner of an operand (bytes, XOR-linear), and
  // the constant part of each instruction tile's. The groups' corners are
  // where the instruction's operand layout puts their warps (whatever
  // layout the registers stored into a buffer of the product's own had).
  LinearLayout groupsA = OperandAttr::get(b.getContext(), 0, mma)
                             .toLinearLayout(aType.getShape()),
               groupsB = OperandAttr::get(b.getContext(), 1, mma)
                             .toLinearLayout(bType.getShape());
  auto cornerOffset = [&](const SharedOperand &so, const LinearLayout &l,
                          int32_t row, int32_t col) -> Value {
    LinearLayout toOffset = groupCorner(l, group).compose(so.tile.where);
    Value hw = hardwareCoords(b, loc, toOffset)[0];
    int64_t constant =
        so.tile.where.apply({{dims::tileDim(0), row}, {dims::tileDim(1), col}})[0];
    Value offset = xorConstantSplit(b, loc, hw, hardwareBits(toOffset),
                                    constant, elemBytes);
    if (so.tile.base)
      offset = arith::AddIOp::create(b, loc, offset, so.tile.base);
    return offset;
  };

  auto gather = [&](Value vec, ArrayRef<int64_t> regs) {
    return gatherRegisters(b, loc, vec, regs);
  };
  auto cTiles = instructionTiles(lc, instr.getCRegisters(), rowsC, colsC);
  auto aTiles = instructionTiles(la, instr.getARegisters(), rowsC, instr.k);

  auto accType = cast<VectorType>(acc.getType());
  SmallVector<Value> accRegs;
  for (int64_t r = 0; r < accType.getNumElements(); ++r)
    accRegs.push_back(extractElement(b, loc, acc, r));
  SmallVector<Value> results;
  SmallVector<SmallVector<int64_t>> resultRegs;
  for (auto &[mn, cRegs] : cTiles) {
    if (llvm::is_contained(cRegs, -1))
      return op.emitOpError("accumulator layout does not cover whole "
                            "instruction tiles");
    Value d = gather(acc, cRegs);
    for (int32_t k = 0; k < kSteps; ++k) {
      Value aBuf, aOff, aVec;
      IntegerAttr aDesc;
      if (sa) {
        aBuf = sa->tile.buffer;
        aOff = cornerOffset(*sa, groupsA, mn.first * rowsC, k * instr.k);
        aDesc = b.getI64IntegerAttr(int64_t(sa->desc.encode()));
      } else {
        auto ai = aTiles.find({mn.first, k});
        if (ai == aTiles.end() || llvm::is_contained(ai->second, -1))
          return op.emitOpError("operand layouts do not cover the tile");
        aVec = gather(aRegs, ai->second);
      }
      Value bOff = cornerOffset(*sb, groupsB, k * instr.k, mn.second * colsC);
      d = WarpgroupMmaOp::create(
          b, loc, d.getType(), b.getStringAttr(instr.name), aBuf, aOff, aVec,
          sb->tile.buffer, bOff, d, aDesc,
          b.getI64IntegerAttr(int64_t(sb->desc.encode())),
          sa && sa->desc.mnMajor ? b.getUnitAttr() : UnitAttr(),
          sb->desc.mnMajor ? b.getUnitAttr() : UnitAttr());
    }
    results.push_back(d);
    resultRegs.push_back(cRegs);
  }
  // A product that only carries its loop's accumulator, both operands in
  // pipeline slots, stays in flight until the next iteration's wait (whose
  // copies start after it, tile-gpu-pipeline): `pending 1`, and a wait for
  // everything after the loop (finishInFlightProducts).
  // (markInFlightProducts found the loops before the conversion.)
  int64_t carriedIndex = -1;
  if (auto index = op->getAttrOfType<IntegerAttr>(kInFlightAttr))
    if (sa && sa->fromSlot && sb->fromSlot)
      carriedIndex = index.getInt();
  auto wait = WarpgroupWaitOp::create(
      b, loc, ValueRange(results).getTypes(), results,
      b.getI32IntegerAttr(carriedIndex >= 0 ? 1 : 0));
  if (carriedIndex >= 0)
    wait->setAttr(kInFlightAttr, b.getI64IntegerAttr(carriedIndex));
  for (auto [v, regs] : llvm::zip(wait.getResults(), resultRegs))
    for (auto [j, r] : llvm::enumerate(regs))
      accRegs[r] = extractElement(b, loc, v, j);
  b.replaceOp(op, vector::FromElementsOp::create(b, loc, accType, accRegs));
  return success();
}

bool kiln::gpu::threads::isWarpgroupProduct(kiln::DotOp dot) {
  auto mma = dyn_cast_or_null<MmaAttr>(dot.getType().getEncoding());
  const MatrixInstr *instr = mma ? lookupMatrixInstr(mma.getInstr()) : nullptr;
  return instr && instr->groupWarps > 1;
}

void kiln::gpu::threads::dropWarpgroupOperandConversions(Operation *root) {
  root->walk([](kiln::DotOp dot) {
    if (!isWarpgroupProduct(dot))
      return;
    for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
      auto convert = operand->get().getDefiningOp<ConvertLayoutOp>();
      if (!convert || !convert->hasOneUse())
        continue;
      bool isA = operand == &dot.getAMutable();
      if (isA && (convert->getBlock() != dot->getBlock() ||
                  !convert.getSrc().getDefiningOp<kiln::LoadOp>()))
        continue;
      operand->assign(convert.getSrc());
      convert.erase();
    }
  });
}

bool kiln::gpu::threads::carriesOnly(kiln::DotOp dot) {
  auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
  if (!loop || !dot->hasOneUse() || !isa<scf::YieldOp>(*dot->user_begin()))
    return false;
  BlockArgument carried =
      loop.getRegionIterArgs()[dot->use_begin()->getOperandNumber()];
  return dot.getAcc() == carried && carried.hasOneUse();
}

void kiln::gpu::threads::markInFlightProducts(Operation *root) {
  root->walk([](kiln::DotOp dot) {
    // Only where tile-gpu-pipeline started the copies after the products.
    auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
    if (!isWarpgroupProduct(dot) || !loop ||
        !loop->hasAttr(kCopiesAfterProductsAttr) || !carriesOnly(dot) ||
        !dot.getA().getDefiningOp<ReadTileOp>() ||
        !dot.getB().getDefiningOp<ReadTileOp>())
      return;
    dot->setAttr(kInFlightAttr,
                 IntegerAttr::get(IntegerType::get(dot.getContext(), 64),
                                  dot->use_begin()->getOperandNumber()));
  });
}

void kiln::gpu::threads::finishInFlightProducts(Operation *root) {
  root->walk([](WarpgroupWaitOp wait) {
    auto index = wait->getAttrOfType<IntegerAttr>(kInFlightAttr);
    if (!index)
      return;
    wait->removeAttr(kInFlightAttr);
    // The loop's result `index` is the last batch's accumulator, still in
    // flight: wait for it right after the loop, before anything reads it.
    auto loop = cast<scf::ForOp>(wait->getParentOp());
    Value result = loop.getResult(unsigned(index.getInt()));
    OpBuilder b(loop->getContext());
    b.setInsertionPointAfter(loop);
    auto done = WarpgroupWaitOp::create(b, loop.getLoc(),
                                        TypeRange{result.getType()},
                                        ValueRange{result},
                                        b.getI32IntegerAttr(0));
    // Every group's last reads of the slots are done past this barrier:
    // what follows may reuse their bytes (the barrier pass orders accesses
    // at the instructions, not at their waits).
    BarrierOp::create(b, loop.getLoc());
    result.replaceAllUsesExcept(done.getResult(0), done);
  });
}
