//===- ThreadShared.cpp - Tiles in shared memory, per thread ---------------===//
//
// How a tile sits in shared memory (the swizzled shared layout of its
// shape) and how threads store and read it: one vector access per run of
// registers at consecutive offsets, or the target's matrix loads for the
// operands of matrix instructions. Layout conversions through shared
// memory, asynchronous copies into pipeline slots and reads of those slots
// all place elements through these helpers, so writer and reader agree.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/ThreadLowering.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kiln::gpu;

namespace kiln::gpu::threads {

SharedTile getSharedTile(Value buffer, Value base, ArrayRef<int64_t> shape,
                         Type elem, ArrayRef<unsigned> order) {
  SmallVector<int32_t, 3> s(shape.begin(), shape.end());
  int64_t elemBytes = getElementBytes(elem);
  std::optional<LinearLayout> where =
      getSharedLayout(s, elemBytes, order).invert();
  assert(where && "shared layouts are bijections");
  return SharedTile{buffer, base, elem, elemBytes, *where};
}

std::optional<TensorCopyPlan> planTensorCopy(ArrayRef<int64_t> shape,
                                             int64_t elemBytes) {
  unsigned rank = shape.size();
  if (rank == 0 || rank > 5 || llvm::any_of(shape, [](int64_t d) {
        return d <= 0 || !llvm::isPowerOf2_64(uint64_t(d));
      }))
    return std::nullopt;
  SmallVector<int32_t, 3> s(shape.begin(), shape.end());
  std::optional<LinearLayout> where =
      getSharedLayout(s, elemBytes, {}).invert();
  if (!where)
    return std::nullopt;
  SmallVector<std::string, 3> names;
  for (unsigned d = 0; d < rank; ++d)
    names.push_back(dims::tileDim(d));
  int64_t inner = shape.back(), total = 1;
  for (int64_t d : shape)
    total *= d;
  // The widest swizzle first: a piece's rows are exactly one swizzle span
  // (the hardware's rule), or, unswizzled, the whole innermost extent.
  for (int32_t swizzle : {128, 64, 32, 0}) {
    int64_t pieceInner = swizzle ? swizzle / elemBytes : inner;
    if (pieceInner < 1 || pieceInner > inner ||
        (pieceInner * elemBytes) % 16 != 0)
      continue;
    TensorCopyPlan plan;
    plan.swizzle = swizzle;
    plan.pieceBox.assign(shape.begin(), shape.end());
    plan.pieceBox.back() = pieceInner;
    if (llvm::any_of(plan.pieceBox, [](int64_t d) { return d > 256; }))
      continue;
    plan.pieces = inner / pieceInner;
    plan.pieceBytes = total / plan.pieces * elemBytes;
    plan.alignment = swizzle ? 8 * swizzle : 128;
    if (plan.pieceBytes % plan.alignment != 0)
      continue;
    // Every element where the placement has it: the hardware stores a
    // piece row-major from its byte 0, then XORs address bits 4.. with
    // bits 7.. (as many as the swizzle has 16-byte chunks).
    int64_t chunkMask = swizzle ? swizzle / 16 - 1 : 0;
    bool ok = true;
    SmallVector<std::pair<StringRef, int32_t>, 3> coords(rank);
    for (int64_t flat = 0; ok && flat < total; ++flat) {
      int64_t rest = flat;
      for (unsigned d = rank; d-- > 0;) {
        coords[d] = {names[d], int32_t(rest % shape[d])};
        rest /= shape[d];
      }
      int64_t col = coords.back().second, row = flat / inner;
      int64_t piece = col / pieceInner;
      int64_t at = piece * plan.pieceBytes +
                   (row * pieceInner + col % pieceInner) * elemBytes;
      at ^= ((at >> 7) & chunkMask) << 4;
      ok = at == int64_t(where->apply(coords)[0]) * elemBytes;
    }
    if (ok)
      return plan;
  }
  return std::nullopt;
}

Value allocShared(OpBuilder &b, Location loc, int64_t bytes,
                  int64_t alignment) {
  return SharedAllocOp::create(b, loc, SharedBufferType::get(b.getContext()),
                               b.getI64IntegerAttr(bytes),
                               b.getI64IntegerAttr(alignment), IntegerAttr());
}

int32_t getSharedRunWidth(const SharedTile &tile, const LinearLayout &l,
                          int32_t maxWidth) {
  LinearLayout toOffset = l.compose(tile.where);
  int32_t width = std::max<int32_t>(
      1, std::min<int32_t>({toOffset.getNumConsecutive(dims::kRegister,
                                                       dims::kOffset),
                            l.getInDimSize(dims::kRegister), maxWidth}));
  // A run starts at an offset aligned to its width (what the backends tell
  // LLVM of a shared_load/store) only when no lane or warp, and no
  // register above the run, moves the offset's low bits.
  for (StringRef hw : {dims::kLane, dims::kWarp, dims::kRegister}) {
    if (!toOffset.hasInDim(hw))
      continue;
    for (int bit = 0; bit < toOffset.getInDimSizeLog2(hw); ++bit)
      while (width > 1 && (hw != dims::kRegister || (1 << bit) >= width) &&
             (toOffset.getBasis(hw, bit)[0] & (width - 1)))
        width /= 2;
  }
  return width;
}

void forEachSharedRun(OpBuilder &b, Location loc, const SharedTile &tile,
                      const LinearLayout &l, int32_t width, bool skipCopies,
                      function_ref<void(int32_t, Value)> fn) {
  // Offsets are XOR-linear in (register, lane, warp): a register's offset
  // is the thread's part XOR a constant. A 16-byte chunk stays whole under
  // the swizzle, so a run of consecutive offsets is one vector access.
  LinearLayout toOffset = l.compose(tile.where);
  Value hwOffset = hardwareCoords(b, loc, toOffset)[0];
  uint32_t hwBits = hardwareBits(toOffset);
  uint32_t copies = l.getFreeVariableMask(dims::kRegister);
  int32_t regs = l.getInDimSize(dims::kRegister);
  for (int32_t r = 0; r < regs; r += width) {
    if (skipCopies && (uint32_t(r) & copies))
      continue; // a copy of an earlier register
    Value offset =
        xorConstantSplit(b, loc, hwOffset, hwBits,
                         registerCoords(toOffset, r)[0], tile.elemBytes);
    if (tile.base)
      offset = arith::AddIOp::create(b, loc, offset, tile.base);
    // A test fault (docs/emulator.md): every vector run one element off its
    // alignment, reads and writes alike (the data still round-trips).
    if (width > 1 && getTestFault("misalign-shared"))
      offset = arith::AddIOp::create(
          b, loc, offset, i32Const(b, loc, int32_t(tile.elemBytes)));
    fn(r, offset);
  }
}

void inOwnerThreads(OpBuilder &b, Location loc, const LinearLayout &l,
                    function_ref<void(OpBuilder &)> body) {
  Value pred = ownerPredicate(b, loc, l);
  if (!pred)
    return body(b);
  auto ifOp = scf::IfOp::create(b, loc, pred, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(b);
}

void storeSharedTile(OpBuilder &b, Location loc, const GPUTarget &target,
                     const SharedTile &tile, Value vec,
                     const LinearLayout &l) {
  int32_t width = getSharedRunWidth(
      tile, l,
      int32_t(std::max<int64_t>(1, target.maxVectorBytes / tile.elemBytes)));
  // Copies of one element held by several lanes or warps would write the
  // same value: only the thread whose free bits are zero writes.
  inOwnerThreads(b, loc, l, [&](OpBuilder &bb) {
    forEachSharedRun(bb, loc, tile, l, width, /*skipCopies=*/true,
                     [&](int32_t r, Value offset) {
                       SharedStoreOp::create(bb, loc, tile.buffer, offset,
                                             extractSlice(bb, loc, vec, r,
                                                          width));
                     });
  });
}

namespace {

/// Whether `shared_load_matrix` (`frag / 2` matrices of 8x8 16-bit
/// elements, transposed or not) delivers to every lane exactly the
/// fragment registers 0 .. frag - 1 that `toOffset` places (warp 0), when
/// lane l addresses row l % 8 of matrix l / 8 at `laneOffset(l)`; and whether
/// every row so addressed, in every warp and instruction tile, starts on 16
/// bytes. Written from the PTX ISA's ldmatrix: without .trans, lane l
/// receives elements 2 (l % 4) and 2 (l % 4) + 1 of row l / 4 of each
/// matrix; with .trans, element l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
bool matrixLoadDelivers(const LinearLayout &laneOffset,
                        const LinearLayout &toOffset, int32_t frag,
                        bool trans) {
  auto rowStart = [&](int32_t lane) {
    return laneOffset.apply({{dims::kLane, lane}})[0];
  };
  for (int32_t lane = 0; lane < 32; ++lane)
    if (rowStart(lane) % 8)
      return false;
  // Other instruction tiles and warps move whole rows.
  for (StringRef hw : {dims::kRegister, dims::kWarp}) {
    if (!toOffset.hasInDim(hw))
      continue;
    for (int bit = 0; bit < toOffset.getInDimSizeLog2(hw); ++bit)
      if ((hw != dims::kRegister || (1 << bit) >= frag) &&
          toOffset.getBasis(hw, bit)[0] % 8)
        return false;
  }
  for (int32_t lane = 0; lane < 32; ++lane)
    for (int32_t j = 0; j < frag; ++j) {
      int32_t matrix = j / 2;
      int32_t source = trans ? 8 * matrix + 2 * (lane % 4) + j % 2
                             : 8 * matrix + lane / 4;
      int32_t column = trans ? lane / 4 : 2 * (lane % 4) + j % 2;
      int32_t delivered = rowStart(source) ^ column;
      if (delivered != toOffset.apply({{dims::kRegister, j},
                                       {dims::kLane, lane}})[0])
        return false;
    }
  return true;
}

/// How the target's matrix loads read a 16-bit operand of a k=16 matrix
/// instruction (8 registers per A tile, 4 per B tile) from a tile: one
/// `shared_load_matrix` of `frag / 2` matrices per instruction tile (A: 4
/// matrices; B: 2), transposed or not — whichever delivers the fragment
/// from this tile's placement (a row-major tile gives A without and B with
/// the transposition; a B read from the transposed view of a row-major
/// tile, as K^T in attention, without). `laneOffset`: the element each
/// lane addresses.
struct MatrixLoadPlan {
  LinearLayout laneOffset;
  int32_t frag = 0;
  bool trans = false;
};

std::optional<MatrixLoadPlan>
planMatrixLoad(const GPUTarget &target, const SharedTile &tile,
               const LinearLayout &dstL, Type elem, Attribute encoding) {
  auto operand = dyn_cast_or_null<OperandAttr>(encoding);
  // (A transposed accumulator layout swaps the fragments; the matrix
  // loads below are written for the instruction's own A and B.)
  if (!operand || !target.hasMatrixLoad ||
      operand.getParent().getTransposed() ||
      elem.getIntOrFloatBitWidth() != 16)
    return std::nullopt;
  const MatrixInstr *instr =
      lookupMatrixInstr(operand.getParent().getInstr());
  bool isA = operand.getIndex() == 0;
  int32_t frag = isA ? 8 : 4;
  if (!instr || instr->k != 16 ||
      (isA ? instr->getARegisters() : instr->getBRegisters()) != frag)
    return std::nullopt;
  // The row each lane addresses (lane bits 0-2 walk a matrix's rows, bits 3
  // and 4 pick the matrix), as a layout, for each way of reading. A's four
  // matrices: (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
  // (rows 8-15, k 8-15); stored rows are A's rows, or k when transposed.
  // B's two: (k 0-7), (k 8-15) of 8 columns; stored rows are k when
  // transposed, B's columns otherwise.
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  int32_t rows = dstL.getOutDims()[0].size, cols = dstL.getOutDims()[1].size;
  using Bases = SmallVector<LinearLayout::Basis, 8>;
  struct Way {
    Bases lanes;
    bool trans;
  };
  SmallVector<Way, 2> ways;
  if (isA) {
    ways.push_back({{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 8}}, false});
    ways.push_back({{{0, 1}, {0, 2}, {0, 4}, {8, 0}, {0, 8}}, true});
  } else {
    ways.push_back({{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 0}}, true});
    ways.push_back({{{0, 1}, {0, 2}, {0, 4}, {8, 0}, {0, 0}}, false});
  }
  LinearLayout toOffset = dstL.compose(tile.where);
  for (const Way &way : ways) {
    LinearLayout laneRows({{dims::kLane.str(), way.lanes}},
                          {{d0, rows}, {d1, cols}});
    LinearLayout laneOffset = laneRows.compose(tile.where);
    if (matrixLoadDelivers(laneOffset, toOffset, frag, way.trans))
      return MatrixLoadPlan{laneOffset, frag, way.trans};
  }
  return std::nullopt;
}

/// Reads a matrix operand with the target's matrix loads (planMatrixLoad);
/// empty when they cannot (the generic element reads are used then).
SmallVector<std::pair<int64_t, Value>>
readMatrixOperand(OpBuilder &b, Location loc, const GPUTarget &target,
                  const SharedTile &tile, const LinearLayout &dstL,
                  VectorType dstType, Attribute encoding) {
  std::optional<MatrixLoadPlan> plan = planMatrixLoad(
      target, tile, dstL, dstType.getElementType(), encoding);
  if (!plan)
    return {};
  int32_t frag = plan->frag;
  LinearLayout toOffset = dstL.compose(tile.where);
  Value lanePart = hardwareCoords(b, loc, plan->laneOffset)[0];
  // The warp's part of the tile's corner (lane 0).
  Value warpPart = hardwareCoords(
      b, loc, toOffset.sublayout({dims::kWarp}, {dims::kOffset}))[0];
  Value base = arith::XOrIOp::create(b, loc, lanePart, warpPart);
  uint32_t hwBits = hardwareBits(plan->laneOffset) |
                    hardwareBits(toOffset.sublayout({dims::kWarp},
                                                    {dims::kOffset}));
  auto part = VectorType::get({frag}, dstType.getElementType());
  SmallVector<std::pair<int64_t, Value>> parts;
  int32_t regs = dstL.getInDimSize(dims::kRegister);
  for (int32_t r0 = 0; r0 < regs; r0 += frag) {
    // Offsets are XOR-linear in the coordinates, and a tile's corner,
    // the warp's share and a lane's row within the tile use disjoint
    // bits.
    Value offset =
        xorConstantSplit(b, loc, base, hwBits,
                         registerCoords(toOffset, r0)[0], tile.elemBytes);
    if (tile.base)
      offset = arith::AddIOp::create(b, loc, offset, tile.base);
    Value v = SharedLoadMatrixOp::create(
        b, loc, part, tile.buffer, offset, b.getI32IntegerAttr(frag / 2),
        plan->trans ? b.getUnitAttr() : UnitAttr());
    // Fragment register j of this tile is register r0 + j: the operand
    // layouts put the fragment's bits lowest.
    parts.push_back({r0, v});
  }
  return parts;
}

} // namespace

Value loadSharedTile(OpBuilder &b, Location loc, const GPUTarget &target,
                     const SharedTile &tile, const LinearLayout &l,
                     VectorType type, Attribute encoding) {
  SmallVector<std::pair<int64_t, Value>> parts =
      readMatrixOperand(b, loc, target, tile, l, type, encoding);
  if (parts.empty()) {
    int32_t width = getSharedRunWidth(
        tile, l,
        int32_t(std::max<int64_t>(1, target.maxVectorBytes / tile.elemBytes)));
    auto part = VectorType::get({width}, type.getElementType());
    forEachSharedRun(b, loc, tile, l, width, /*skipCopies=*/false,
                     [&](int32_t r, Value offset) {
                       parts.push_back({r, SharedLoadOp::create(
                                               b, loc, part, tile.buffer,
                                               offset)});
                     });
  }
  Value result =
      arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (auto [r, p] : parts)
    result = vector::InsertStridedSliceOp::create(
        b, loc, p, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
  return result;
}

int64_t countSharedAccesses(const GPUTarget &target, const SharedTile &tile,
                            const LinearLayout &srcL, const LinearLayout &dstL,
                            Attribute dstEncoding) {
  int32_t maxWidth =
      int32_t(std::max<int64_t>(1, target.maxVectorBytes / tile.elemBytes));
  int64_t writes =
      (int64_t(srcL.getInDimSize(dims::kRegister)) >>
       llvm::popcount(srcL.getFreeVariableMask(dims::kRegister))) /
      getSharedRunWidth(tile, srcL, maxWidth);
  int64_t regs = dstL.getInDimSize(dims::kRegister);
  std::optional<MatrixLoadPlan> plan =
      planMatrixLoad(target, tile, dstL, tile.elem, dstEncoding);
  int64_t reads = regs / (plan ? plan->frag
                               : getSharedRunWidth(tile, dstL, maxWidth));
  return writes + reads;
}

Value broadcastFromOwners(OpBuilder &b, Location loc, const GPUTarget &target,
                          Value vec, const LinearLayout &l) {
  if (!ownerPredicate(b, loc, l))
    return vec; // no thread holds copies
  auto vt = cast<VectorType>(vec.getType());
  SmallVector<int64_t, 3> shape;
  for (const LinearLayout::OutDim &o : l.getOutDims())
    shape.push_back(o.size);
  SharedTile tile = getSharedTile(Value(), Value(), shape, vt.getElementType());
  tile.buffer = allocShared(b, loc, l.getTotalOutSize() * tile.elemBytes,
                            std::max<int64_t>(16, tile.elemBytes));
  storeSharedTile(b, loc, target, tile, vec, l);
  return loadSharedTile(b, loc, target, tile, l, vt, Attribute());
}

Value broadcastFromThreadZero(OpBuilder &b, Location loc,
                              function_ref<Value(OpBuilder &)> compute) {
  Value isFirst = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, HwIdOp::create(b, loc, HwIdKind::thread),
      i32Const(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
  Value buf;
  Type type;
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value v = compute(b);
    type = v.getType();
    int64_t bytes = getElementBytes(type);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPoint(ifOp);
      buf = allocShared(b, loc, std::max<int64_t>(bytes, 4), 16);
    }
    SharedStoreOp::create(b, loc, buf, i32Const(b, loc, 0),
                          vector::BroadcastOp::create(
                              b, loc, VectorType::get({1}, type), v));
  }
  Value read = SharedLoadOp::create(b, loc, VectorType::get({1}, type), buf,
                                    i32Const(b, loc, 0));
  return extractElement(b, loc, read, 0);
}

} // namespace kiln::gpu::threads
