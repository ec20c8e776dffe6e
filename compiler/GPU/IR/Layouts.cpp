//===- Layouts.cpp - The named layouts as linear layouts ------------------===//
//
// Each encoding of the kiln_gpu dialect is a constructor of a LinearLayout
// (compiler/GPU/LinearLayout.h); every question about layouts is then
// answered on the linear layout, once for all of them.
//
//===----------------------------------------------------------------------===//

#include "compiler/GPU/IR/KilnGPUDialect.h"

#include "compiler/GPU/TargetDesc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln::gpu;
using llvm::SmallVector;

namespace {

SmallVector<int32_t, 3> toSizes(ArrayRef<int64_t> shape) {
  SmallVector<int32_t, 3> sizes;
  for (int64_t s : shape) {
    assert(s > 0 && llvm::isPowerOf2_64(s) && "tiles have power-of-two shapes");
    sizes.push_back(int32_t(s));
  }
  return sizes;
}

SmallVector<StringRef, 3> tileDimNames(unsigned rank,
                                       SmallVector<std::string, 3> &storage) {
  storage.clear();
  for (unsigned d = 0; d < rank; ++d)
    storage.push_back(dims::tileDim(d));
  SmallVector<StringRef, 3> names;
  for (const std::string &s : storage)
    names.push_back(s);
  return names;
}

int32_t product(ArrayRef<int32_t> values) {
  int32_t p = 1;
  for (int32_t v : values)
    p *= v;
  return p;
}

} // namespace

//===----------------------------------------------------------------------===//
// blocked
//===----------------------------------------------------------------------===//

LogicalResult
BlockedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    ArrayRef<int32_t> sizePerThread,
                    ArrayRef<int32_t> threadsPerWarp,
                    ArrayRef<int32_t> warpsPerBlock, ArrayRef<int32_t> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWarp.size() != rank ||
      warpsPerBlock.size() != rank || order.size() != rank)
    return emitError() << "blocked layout: every list needs one entry per "
                          "dimension";
  for (ArrayRef<int32_t> list : {sizePerThread, threadsPerWarp, warpsPerBlock})
    for (int32_t v : list)
      if (v <= 0 || !llvm::isPowerOf2_32(v))
        return emitError() << "blocked layout: sizes must be powers of two";
  SmallVector<bool, 3> seen(rank, false);
  for (int32_t d : order) {
    if (d < 0 || size_t(d) >= rank || seen[d])
      return emitError() << "blocked layout: order must be a permutation";
    seen[d] = true;
  }
  return success();
}

LinearLayout BlockedAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  unsigned rank = shape.size();
  assert(rank == getOrder().size() && "layout rank matches the tile");
  LinearLayout l;
  for (int32_t d : getOrder())
    l = l * LinearLayout::identity1D(getSizePerThread()[d], dims::kRegister,
                                     dims::tileDim(d));
  for (int32_t d : getOrder())
    l = l * LinearLayout::identity1D(getThreadsPerWarp()[d], dims::kLane,
                                     dims::tileDim(d));
  for (int32_t d : getOrder())
    l = l * LinearLayout::identity1D(getWarpsPerBlock()[d], dims::kWarp,
                                     dims::tileDim(d));
  SmallVector<std::string, 3> storage;
  l = l.transposeOuts(tileDimNames(rank, storage));
  return l.fitToShape(toSizes(shape), dims::kRegister);
}

int32_t BlockedAttr::getNumWarps() const { return product(getWarpsPerBlock()); }

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

LinearLayout SliceAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t, 3> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  LinearLayout l = getParent().toLinearLayout(parentShape);
  l = l.removeOut(dims::tileDim(getDim())).removeZeroBases(dims::kRegister);
  // Renumber the outputs after the removed one.
  for (unsigned d = getDim() + 1; d < parentShape.size(); ++d)
    l = l.renameOut(dims::tileDim(d), dims::tileDim(d - 1));
  return l;
}

int32_t SliceAttr::getNumWarps() const { return getParent().getNumWarps(); }

//===----------------------------------------------------------------------===//
// mma and its operands
//===----------------------------------------------------------------------===//

static const MatrixInstr &findInstr(StringRef name) {
  const MatrixInstr *instr = lookupMatrixInstr(name);
  assert(instr && "layouts name registered matrix instructions");
  return *instr;
}

/// `l` over (dim0, dim1) with the two exchanged.
static LinearLayout transposed2D(const LinearLayout &l) {
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  LinearLayout t = l.renameOut(d0, "t").renameOut(d1, d0).renameOut("t", d1);
  SmallVector<StringRef, 2> order{d0, d1};
  return t.transposeOuts(order);
}

LinearLayout MmaAttr::getFragment(unsigned index) const {
  const MatrixInstr &instr = findInstr(getInstr());
  if (!getTransposed())
    return index == 0 ? instr.aLayout
                      : index == 1 ? instr.bLayout : instr.cLayout;
  // D^T = B^T A^T: A is the instruction's B operand, B its A operand.
  return transposed2D(index == 0   ? instr.bLayout
                      : index == 1 ? instr.aLayout
                                   : instr.cLayout);
}

int32_t MmaAttr::getTileRows() const {
  const MatrixInstr &instr = findInstr(getInstr());
  return getTransposed() ? instr.n : instr.m;
}

int32_t MmaAttr::getTileCols() const {
  const MatrixInstr &instr = findInstr(getInstr());
  return getTransposed() ? instr.m : instr.n;
}

LinearLayout MmaAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  LinearLayout l = getFragment(2) *
                   LinearLayout::identity1D(getWarpsPerBlock()[0],
                                            dims::kWarp, d0) *
                   LinearLayout::identity1D(getWarpsPerBlock()[1],
                                            dims::kWarp, d1);
  return l.fitToShape(toSizes(shape), dims::kRegister);
}

int32_t MmaAttr::getNumWarps() const { return product(getWarpsPerBlock()); }

LinearLayout OperandAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  ArrayRef<int32_t> warps = getParent().getWarpsPerBlock();
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  LinearLayout l = getParent().getFragment(getIndex());
  if (getIndex() == 0)
    l = l * LinearLayout::identity1D(warps[0], dims::kWarp, d0) *
        LinearLayout::zeros1D(warps[1], dims::kWarp, d1);
  else
    l = l * LinearLayout::zeros1D(warps[0], dims::kWarp, d0) *
        LinearLayout::identity1D(warps[1], dims::kWarp, d1);
  return l.fitToShape(toSizes(shape), dims::kRegister);
}

int32_t OperandAttr::getNumWarps() const {
  return getParent().getNumWarps();
}

static LogicalResult verifyTile(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> shape, unsigned rank,
                                StringRef what);

//===----------------------------------------------------------------------===//
// FMA dot operands
//===----------------------------------------------------------------------===//

LinearLayout DotOperandAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  std::string d0 = dims::tileDim(0), d1 = dims::tileDim(1);
  // The accumulator's layout with the other dimension cut to 1 (threads
  // along it hold copies; registers along it would be copies within a
  // thread, and go), and all of K in registers: for A, K first (its rows
  // are contiguous along K, so a thread's registers are runs a vector
  // access reads), for B after the columns (contiguous along N).
  if (getIndex() == 0)
    return (LinearLayout::identity1D(int32_t(shape[1]), dims::kRegister, d1) *
            getParent()
                .toLinearLayout({shape[0], 1})
                .removeZeroBases(dims::kRegister))
        .transposeOuts({d0, d1});
  return getParent()
             .toLinearLayout({1, shape[1]})
             .removeZeroBases(dims::kRegister) *
         LinearLayout::identity1D(int32_t(shape[0]), dims::kRegister, d0);
}

int32_t DotOperandAttr::getNumWarps() const {
  return getParent().getNumWarps();
}

LogicalResult DotOperandAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (getIndex() > 1)
    return emitError() << "operand index must be 0 (A) or 1 (B)";
  if (getParent().getOrder().size() != 2)
    return emitError() << "dot operand of a blocked layout of rank "
                       << getParent().getOrder().size();
  return verifyTile(emitError, shape, 2, "dot operand");
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

DistributedLayoutAttr kiln::gpu::getLayout(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile)
    return {};
  return dyn_cast_or_null<DistributedLayoutAttr>(tile.getEncoding());
}

LinearLayout kiln::gpu::getLinearLayout(RankedTensorType type) {
  DistributedLayoutAttr layout = getLayout(type);
  assert(layout && "the tile has a distributed layout");
  return layout.toLinearLayout(type.getShape());
}

int64_t kiln::gpu::getRegistersPerThread(RankedTensorType type) {
  return getLinearLayout(type).getInDimSize(dims::kRegister);
}

RankedTensorType kiln::gpu::withLayout(RankedTensorType type,
                                       Attribute layout) {
  return RankedTensorType::get(type.getShape(), type.getElementType(), layout);
}

BlockedAttr kiln::gpu::getCoalescedLayout(MLIRContext *ctx,
                                          ArrayRef<int64_t> shape,
                                          ArrayRef<unsigned> order,
                                          int32_t vector, int32_t warpSize,
                                          int32_t numWarps) {
  unsigned rank = shape.size();
  SmallVector<int32_t, 3> spt(rank, 1), tpw(rank, 1), wpb(rank, 1);
  SmallVector<int64_t, 3> left(shape);
  // Elements per thread along the fastest dimension.
  spt[order[0]] = std::max<int64_t>(1, std::min<int64_t>(vector, shape[order[0]]));
  left[order[0]] /= spt[order[0]];
  // Lanes, fastest dimension first; what is left over goes to the slowest.
  int32_t lanes = warpSize;
  for (unsigned d : order) {
    int32_t take = int32_t(std::min<int64_t>(lanes, left[d]));
    tpw[d] = take;
    lanes /= take;
    left[d] /= take;
  }
  tpw[order.back()] *= lanes;
  // Warps: slowest dimension first (rows of a 2-d tile), then the others.
  int32_t warps = numWarps;
  for (unsigned d : llvm::reverse(order)) {
    int32_t take = int32_t(std::min<int64_t>(warps, std::max<int64_t>(1, left[d])));
    wpb[d] = take;
    warps /= take;
    left[d] = std::max<int64_t>(1, left[d] / take);
  }
  wpb[order.back()] *= warps;
  SmallVector<int32_t, 3> ord(order.begin(), order.end());
  return BlockedAttr::get(ctx, spt, tpw, wpb, ord);
}

BlockedAttr kiln::gpu::getDefaultBlockedLayout(MLIRContext *ctx,
                                               ArrayRef<int64_t> shape,
                                               int32_t warpSize,
                                               int32_t numWarps) {
  SmallVector<unsigned, 3> order;
  for (unsigned d = shape.size(); d-- > 0;)
    order.push_back(d);
  return getCoalescedLayout(ctx, shape, order, 1, warpSize, numWarps);
}

//===----------------------------------------------------------------------===//
// Tile types with a layout
//===----------------------------------------------------------------------===//

/// A layout fits tiles of one rank, whose dimensions are powers of two.
static LogicalResult verifyTile(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> shape, unsigned rank,
                                StringRef what) {
  if (shape.size() != rank)
    return emitError() << what << " layout of rank " << rank
                       << " on a tile of rank " << shape.size();
  for (int64_t d : shape)
    if (d <= 0 || !llvm::isPowerOf2_64(d))
      return emitError() << what
                         << " layout on a tile whose dimensions are not "
                            "static powers of two";
  return success();
}

LogicalResult
BlockedAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                            function_ref<InFlightDiagnostic()> emitError) const {
  return verifyTile(emitError, shape, getOrder().size(), "blocked");
}

LogicalResult
SliceAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                          function_ref<InFlightDiagnostic()> emitError) const {
  // The parent's rank, less the sliced dimension.
  unsigned parentRank = 2;
  if (auto b = dyn_cast<BlockedAttr>(getParent()))
    parentRank = b.getOrder().size();
  else if (isa<SliceAttr>(getParent()))
    return emitError() << "slice of a slice layout is not supported";
  if (getDim() >= parentRank)
    return emitError() << "slice dimension " << getDim()
                       << " outside its parent of rank " << parentRank;
  return verifyTile(emitError, shape, parentRank - 1, "slice");
}

LogicalResult
MmaAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                        function_ref<InFlightDiagnostic()> emitError) const {
  if (!lookupMatrixInstr(getInstr()))
    return emitError() << "unknown matrix instruction '" << getInstr() << "'";
  if (getWarpsPerBlock().size() != 2)
    return emitError() << "mma layout needs warps for rows and columns";
  return verifyTile(emitError, shape, 2, "mma");
}

LogicalResult
OperandAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                            function_ref<InFlightDiagnostic()> emitError) const {
  if (getIndex() > 1)
    return emitError() << "operand index must be 0 (A) or 1 (B)";
  return getParent().verifyEncoding(shape, elementType, emitError);
}

LinearLayout kiln::gpu::getSharedLayout(ArrayRef<int32_t> shape,
                                        int64_t elemBytes,
                                        ArrayRef<unsigned> order) {
  unsigned rank = shape.size();
  // Dimensions fastest first: `order`, by default row-major (the offset's
  // low bits walk the last dimension).
  SmallVector<unsigned, 3> dimsFastFirst(order.begin(), order.end());
  if (dimsFastFirst.empty())
    for (unsigned d = rank; d-- > 0;)
      dimsFastFirst.push_back(d);
  assert(dimsFastFirst.size() == rank && "order names every dimension");
  LinearLayout::InDim offset{dims::kOffset.str(), {}};
  SmallVector<LinearLayout::OutDim, 3> outs;
  for (unsigned d = 0; d < rank; ++d)
    outs.push_back({dims::tileDim(d), shape[d]});
  auto addBases = [&](unsigned d, int32_t from, int32_t to) {
    for (int32_t c = from; c < to; c *= 2) {
      LinearLayout::Basis b(rank, 0);
      b[d] = c;
      offset.bases.push_back(std::move(b));
    }
  };
  bool swizzled = rank >= 2 && elemBytes <= 16;
  // Rows of more than 128 bytes are cut into 128-byte columns of the
  // tile (atoms), stored one after the other: the bits of a row beyond
  // 128 bytes come after the rows' bits (the layout of Hopper's matrix
  // descriptors, which read 128-byte rows; the banks see the same).
  int32_t atomCols = shape[dimsFastFirst[0]];
  if (swizzled)
    atomCols = std::min<int32_t>(atomCols, int32_t(std::max<int64_t>(
                                               1, 128 / elemBytes)));
  unsigned colDim = dimsFastFirst[0];
  addBases(colDim, 1, atomCols);
  for (auto [i, d] : llvm::enumerate(ArrayRef(dimsFastFirst).drop_front())) {
    addBases(d, 1, shape[d]);
    if (i == 0) // after the rows: the atoms
      addBases(colDim, atomCols, shape[colDim]);
  }
  if (swizzled) {
    // The rows are the second-fastest dimension (slower ones, unit ones
    // from a view's box included, stack whole tiles). Chunks of 16 bytes;
    // a bank line is 128 bytes (32 banks of 4).
    int32_t rows = shape[dimsFastFirst[1]], cols = atomCols;
    int32_t chunkElems = int32_t(16 / elemBytes);
    int32_t chunks = std::max(1, cols / chunkElems);
    int64_t rowBytes = int64_t(cols) * elemBytes;
    int32_t perPhase = int32_t(std::max<int64_t>(1, 128 / rowBytes));
    int32_t maxPhase = std::min(8, chunks);
    // Row bit j (from log2(perPhase) on) also flips chunk bit j - that.
    unsigned colBits = llvm::Log2_32(cols);
    unsigned phaseShift = llvm::Log2_32(perPhase);
    for (unsigned j = 0; j < llvm::Log2_32(rows); ++j) {
      unsigned k = j - phaseShift;
      if (j < phaseShift || k >= llvm::Log2_32(maxPhase))
        continue;
      offset.bases[colBits + j][colDim] ^= chunkElems << k;
    }
  }
  return LinearLayout({std::move(offset)}, std::move(outs));
}
