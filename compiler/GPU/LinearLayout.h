//===- LinearLayout.h - Layouts as linear maps over GF(2) -------*- C++ -*-===//
//
// Every layout of the GPU stage — which thread holds which element of a
// tile, where an element lives in shared memory — is one LinearLayout: a
// map from the bits of some *input* indices (hardware: `register`, `lane`,
// `warp`; or `offset` for shared memory) to the bits of some *output*
// indices (the tile's dimensions `dim0`, `dim1`, ...). Every size is a
// power of two, as every Kiln tile is.
//
// The map is linear over GF(2): each bit of each input index has a *basis*
// vector (one coordinate per output dimension), and the image of an input
// is the XOR of the bases of its set bits:
//
//     L(x) = XOR over the set bits i of x of basis[i]
//
// A worked example. 4 lanes, 2 registers each, hold a 1-d tile of 8
// elements, two consecutive elements per lane ("sizePerThread = 2"):
//
//     register: [[1]]          bit 0 of the register moves 1 element
//     lane:     [[2], [4]]     bits 0 and 1 of the lane move 2 and 4
//     out:      dim0 = 8
//
//   lane 3, register 1 holds element 1 ^ 2 ^ 4 = 7; lane 1, register 0
//   holds element 2. Swap the roles (register [[4]], lane [[1], [2]]) and
//   lanes hold elements 0-3 in their first register, 4-7 in their second:
//   the same 8 elements, interleaved, which is how a coalescing layout and
//   a "one element per lane per register" layout differ.
//
// Why linear maps: one representation for blocked, sliced, matrix-unit and
// swizzled shared layouts, so that every question a pass asks is answered
// once, for all of them:
//
//   - compose:  (shared <- tile) ∘ (tile <- hardware) says at which shared
//               offset each (register, lane, warp) stores its element;
//   - invert / invertAndCompose: a conversion from layout A to layout B is
//               A⁻¹ ∘ B — for each hardware index of B, the hardware index
//               of A that holds the same element; whether it only moves
//               registers, or lanes within a warp, or must go through
//               shared memory follows from which bases differ;
//   - zero bases: a zero basis means the input bit does not change the
//               element: the data is broadcast (several lanes or warps
//               hold copies), as after a reduction or for a tile smaller
//               than the threads that hold it;
//   - product:  A * B puts B's outputs above A's (B repeats A), which is
//               how per-instruction fragments tile over warps and repeats.
//
// XOR (not +) is what makes swizzles expressible: a shared layout whose
// row bits also flip column bits is still linear. Triton's linear layouts
// are the idea this follows (learned from, not copied).
//
// This header needs only LLVM's ADT; it knows nothing of MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_GPU_LINEARLAYOUT_H
#define KILN_COMPILER_GPU_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace kiln::gpu {

/// Common dimension names.
namespace dims {
inline constexpr llvm::StringLiteral kRegister = "register";
inline constexpr llvm::StringLiteral kLane = "lane";
inline constexpr llvm::StringLiteral kWarp = "warp";
inline constexpr llvm::StringLiteral kOffset = "offset";
/// "dim0", "dim1", ...: the output dimensions of a tile layout.
std::string tileDim(unsigned d);
} // namespace dims

class LinearLayout {
public:
  /// The output coordinates of one input bit: one entry per output dim.
  using Basis = llvm::SmallVector<int32_t, 3>;

  struct InDim {
    std::string name;
    /// One basis per bit: the dimension's size is 2^bases.size().
    llvm::SmallVector<Basis, 8> bases;
  };
  struct OutDim {
    std::string name;
    int32_t size = 1; ///< a power of two
  };

  /// The empty layout: no inputs, no outputs (the unit of `*`).
  LinearLayout() = default;
  /// Asserts that every basis has one coordinate per output, each within
  /// its output's size, that sizes are powers of two and names unique.
  LinearLayout(llvm::SmallVector<InDim, 4> ins,
               llvm::SmallVector<OutDim, 3> outs);

  /// `in` of `size` maps onto `out` of `size` as the identity.
  static LinearLayout identity1D(int32_t size, llvm::StringRef in,
                                 llvm::StringRef out);
  /// `in` of `size` maps everything to element 0 of `out` (size 1): every
  /// index of `in` holds the same element (broadcast).
  static LinearLayout zeros1D(int32_t size, llvm::StringRef in,
                              llvm::StringRef out);
  /// `in` of `size` maps onto `out` with a stride: index i holds element
  /// i * stride (a power of two); `out` has size * stride elements.
  static LinearLayout strided1D(int32_t size, int32_t stride,
                                llvm::StringRef in, llvm::StringRef out);

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  llvm::ArrayRef<InDim> getInDims() const { return ins; }
  llvm::ArrayRef<OutDim> getOutDims() const { return outs; }
  bool hasInDim(llvm::StringRef name) const { return findIn(name) >= 0; }
  bool hasOutDim(llvm::StringRef name) const { return findOut(name) >= 0; }
  /// 1 for a dimension the layout does not have.
  int32_t getInDimSize(llvm::StringRef name) const;
  int32_t getInDimSizeLog2(llvm::StringRef name) const;
  int32_t getOutDimSize(llvm::StringRef name) const;
  int32_t getOutDimSizeLog2(llvm::StringRef name) const;
  /// Products of all input / output sizes.
  int64_t getTotalInSize() const;
  int64_t getTotalOutSize() const;
  unsigned getTotalInBits() const;
  unsigned getTotalOutBits() const;
  /// The basis of bit `bit` of input `in`.
  const Basis &getBasis(llvm::StringRef in, unsigned bit) const;

  /// The output coordinates (one per output dim, in order) of an input
  /// given as (name, index) pairs; missing inputs are 0.
  llvm::SmallVector<int32_t, 3>
  apply(llvm::ArrayRef<std::pair<llvm::StringRef, int32_t>> inputs) const;
  /// The same with one index per input dim, in order.
  llvm::SmallVector<int32_t, 3> applyIndices(llvm::ArrayRef<int32_t> in) const;
  /// The output as one integer: the outputs flattened, the *first* output
  /// dim in the lowest bits.
  uint64_t applyFlat(uint64_t flatIn) const;

  /// Every output index is reached by some input.
  bool isSurjective() const;
  /// No two inputs reach the same output.
  bool isInjective() const;
  bool isInvertible() const { return isSurjective() && isInjective(); }

  /// Bits of `in` whose basis is zero (flipping them never changes the
  /// element): bit i of the mask for bit i of the dimension.
  uint32_t getZeroBasesMask(llvm::StringRef in) const;
  /// Bits of `in` that can be flipped without changing the element, given
  /// every other input fixed: zero bases and bases that earlier bits of
  /// any input already span (for a broadcast layout these are the copies).
  uint32_t getFreeVariableMask(llvm::StringRef in) const;

  /// How many consecutive indices of input `in`, starting at 0, hold
  /// consecutive elements of output `out` (and keep every other output at
  /// 0): the widest vector a thread can move along `out`. A power of two.
  int32_t getNumConsecutive(llvm::StringRef in, llvm::StringRef out) const;

  //===--------------------------------------------------------------------===//
  // Algebra
  //===--------------------------------------------------------------------===//

  /// The product: inputs and outputs of both, `outer`'s outputs above this
  /// one's (an output present in both has the product of the sizes, and
  /// `outer`'s coordinates are scaled by this one's size); an input present
  /// in both gets this one's bits first, then `outer`'s.
  LinearLayout operator*(const LinearLayout &outer) const;

  /// `outer ∘ this`: this layout's outputs are `outer`'s inputs (same names
  /// in the same order; each of this output's sizes at most the matching
  /// input's size).
  LinearLayout compose(const LinearLayout &outer) const;

  /// The inverse of an invertible layout (outputs become inputs).
  std::optional<LinearLayout> invert() const;

  /// A right inverse of a surjective layout: for each output, an input that
  /// reaches it (the one whose free bits are 0). Empty if not surjective.
  std::optional<LinearLayout> pseudoInvert() const;

  /// Given this: X -> T and `other`: Y -> T with the same outputs, the
  /// layout X -> Y that maps each x to a y holding the same element
  /// (other(y) == this(x)). `other` must reach every element this one
  /// reaches. This is the data movement of a layout conversion from
  /// `other` to this.
  std::optional<LinearLayout>
  invertAndCompose(const LinearLayout &other) const;

  /// The layout restricted to some inputs and outputs (bases projected).
  LinearLayout sublayout(llvm::ArrayRef<llvm::StringRef> inNames,
                         llvm::ArrayRef<llvm::StringRef> outNames) const;
  /// Reorders the outputs (every output named exactly once).
  LinearLayout transposeOuts(llvm::ArrayRef<llvm::StringRef> order) const;
  /// Reorders the inputs (every input named exactly once).
  LinearLayout transposeIns(llvm::ArrayRef<llvm::StringRef> order) const;
  /// Renames an output.
  LinearLayout renameOut(llvm::StringRef from, llvm::StringRef to) const;
  /// Drops output `out`; bases keep their other coordinates.
  LinearLayout removeOut(llvm::StringRef out) const;
  /// Inserts output `name` of size 1 at position `pos`.
  LinearLayout insertOut(unsigned pos, llvm::StringRef name) const;
  /// Drops the bits of input `in` whose basis is zero (a thread no longer
  /// keeps copies in registers).
  LinearLayout removeZeroBases(llvm::StringRef in) const;
  /// Clamps the outputs to `sizes` (one per output): every basis coordinate
  /// at or beyond the size becomes 0 (those inputs hold copies), and an
  /// output smaller than `sizes` grows by new `register` bits — i.e. the
  /// layout tiled or cut to exactly the tile. Sizes are powers of two.
  LinearLayout fitToShape(llvm::ArrayRef<int32_t> sizes,
                          llvm::StringRef repeatIn) const;
  /// The outputs, viewed row-major (the last output fastest), reshaped to
  /// `newOuts` of the same total size.
  LinearLayout reshapeOuts(llvm::ArrayRef<OutDim> newOuts) const;

  bool operator==(const LinearLayout &other) const;
  bool operator!=(const LinearLayout &other) const { return !(*this == other); }

  /// `register: [[1], [16]], lane: [...] -> dim0 = 128` style text.
  std::string str() const;

private:
  int findIn(llvm::StringRef name) const;
  int findOut(llvm::StringRef name) const;
  /// Bit offset of each output in the flattened output (first output low).
  llvm::SmallVector<unsigned, 3> outBitOffsets() const;
  uint64_t flatten(const Basis &b) const;
  Basis unflatten(uint64_t flat) const;
  /// Every input bit's flattened basis, inputs in order.
  llvm::SmallVector<uint64_t, 32> flatColumns() const;
  void verify() const;

  llvm::SmallVector<InDim, 4> ins;
  llvm::SmallVector<OutDim, 3> outs;
};

/// A layout conversion from `src` to `dst` (two layouts of one tile over
/// `register`, `lane`, `warp`) that moves no data between threads: when
/// each lane and warp bit moves both layouts' coordinates alike (lanes
/// holding copies included) and every register's part of the dst
/// coordinates is some src register's part, the src register each dst
/// register takes; nullopt otherwise.
std::optional<llvm::SmallVector<int64_t>>
getRegisterPermutation(const LinearLayout &src, const LinearLayout &dst);

} // namespace kiln::gpu

#endif // KILN_COMPILER_GPU_LINEARLAYOUT_H
