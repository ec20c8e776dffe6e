//===- LinearLayout.cpp - Layouts as linear maps over GF(2) ---------------===//

#include "compiler/GPU/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <map>

using namespace kiln::gpu;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

std::string dims::tileDim(unsigned d) { return "dim" + std::to_string(d); }

namespace {

unsigned log2Exact(int64_t size) {
  assert(size > 0 && llvm::isPowerOf2_64(size) && "size is a power of two");
  return llvm::Log2_64(size);
}

/// Row echelon form over GF(2) of a list of columns (bit vectors), each
/// remembered with the combination of original columns that produced it.
/// Solving M x = t reduces t against the pivots.
class Echelon {
public:
  explicit Echelon(ArrayRef<uint64_t> columns) {
    for (auto [i, c] : llvm::enumerate(columns)) {
      uint64_t v = c, combo = uint64_t(1) << i;
      for (const Row &r : rows)
        if (v & r.pivot) {
          v ^= r.vec;
          combo ^= r.combo;
        }
      if (!v) {
        dependent |= uint64_t(1) << i;
        continue;
      }
      Row row{v & -v, v, combo};
      // Keep the form reduced: no other row has this pivot bit.
      for (Row &r : rows)
        if (r.vec & row.pivot) {
          r.vec ^= row.vec;
          r.combo ^= row.combo;
        }
      rows.push_back(row);
    }
  }

  unsigned rank() const { return rows.size(); }
  /// Columns that earlier columns already span.
  uint64_t getDependent() const { return dependent; }

  /// A combination x of columns with M x = target, if one exists; it uses
  /// pivot columns only.
  std::optional<uint64_t> solve(uint64_t target) const {
    uint64_t combo = 0;
    for (const Row &r : rows)
      if (target & r.pivot) {
        target ^= r.vec;
        combo ^= r.combo;
      }
    if (target)
      return std::nullopt;
    return combo;
  }

private:
  struct Row {
    uint64_t pivot; ///< the lowest set bit of vec, unique among rows
    uint64_t vec;
    uint64_t combo;
  };
  SmallVector<Row, 32> rows;
  uint64_t dependent = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

LinearLayout::LinearLayout(SmallVector<InDim, 4> ins,
                           SmallVector<OutDim, 3> outs)
    : ins(std::move(ins)), outs(std::move(outs)) {
  verify();
}

void LinearLayout::verify() const {
#ifndef NDEBUG
  for (auto [i, o] : llvm::enumerate(outs)) {
    assert(o.size > 0 && llvm::isPowerOf2_32(o.size) &&
           "output sizes are powers of two");
    for (unsigned j = 0; j < i; ++j)
      assert(outs[j].name != o.name && "output names are unique");
  }
  for (auto [i, in] : llvm::enumerate(ins)) {
    for (unsigned j = 0; j < i; ++j)
      assert(ins[j].name != in.name && "input names are unique");
    for (const Basis &b : in.bases) {
      assert(b.size() == outs.size() && "one coordinate per output");
      for (auto [c, o] : llvm::zip(b, outs))
        assert(c >= 0 && c < o.size && "coordinate within its output");
    }
  }
  assert(getTotalInBits() <= 64 && getTotalOutBits() <= 64 &&
         "layouts hold at most 2^64 indices");
#endif
}

LinearLayout LinearLayout::identity1D(int32_t size, StringRef in,
                                      StringRef out) {
  return strided1D(size, 1, in, out);
}

LinearLayout LinearLayout::strided1D(int32_t size, int32_t stride,
                                     StringRef in, StringRef out) {
  InDim d{in.str(), {}};
  for (unsigned b = 0, e = log2Exact(size); b < e; ++b)
    d.bases.push_back({int32_t(stride << b)});
  return LinearLayout({std::move(d)}, {{out.str(), size * stride}});
}

LinearLayout LinearLayout::zeros1D(int32_t size, StringRef in, StringRef out) {
  InDim d{in.str(), {}};
  for (unsigned b = 0, e = log2Exact(size); b < e; ++b)
    d.bases.push_back({0});
  return LinearLayout({std::move(d)}, {{out.str(), 1}});
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

int LinearLayout::findIn(StringRef name) const {
  for (auto [i, d] : llvm::enumerate(ins))
    if (d.name == name)
      return i;
  return -1;
}

int LinearLayout::findOut(StringRef name) const {
  for (auto [i, d] : llvm::enumerate(outs))
    if (d.name == name)
      return i;
  return -1;
}

int32_t LinearLayout::getInDimSizeLog2(StringRef name) const {
  int i = findIn(name);
  return i < 0 ? 0 : ins[i].bases.size();
}
int32_t LinearLayout::getInDimSize(StringRef name) const {
  return int32_t(1) << getInDimSizeLog2(name);
}
int32_t LinearLayout::getOutDimSize(StringRef name) const {
  int i = findOut(name);
  return i < 0 ? 1 : outs[i].size;
}
int32_t LinearLayout::getOutDimSizeLog2(StringRef name) const {
  return log2Exact(getOutDimSize(name));
}

unsigned LinearLayout::getTotalInBits() const {
  unsigned n = 0;
  for (const InDim &d : ins)
    n += d.bases.size();
  return n;
}
unsigned LinearLayout::getTotalOutBits() const {
  unsigned n = 0;
  for (const OutDim &d : outs)
    n += log2Exact(d.size);
  return n;
}
int64_t LinearLayout::getTotalInSize() const {
  return int64_t(1) << getTotalInBits();
}
int64_t LinearLayout::getTotalOutSize() const {
  return int64_t(1) << getTotalOutBits();
}

const LinearLayout::Basis &LinearLayout::getBasis(StringRef in,
                                                  unsigned bit) const {
  int i = findIn(in);
  assert(i >= 0 && bit < ins[i].bases.size() && "no such input bit");
  return ins[i].bases[bit];
}

SmallVector<unsigned, 3> LinearLayout::outBitOffsets() const {
  SmallVector<unsigned, 3> offsets;
  unsigned bit = 0;
  for (const OutDim &o : outs) {
    offsets.push_back(bit);
    bit += log2Exact(o.size);
  }
  return offsets;
}

uint64_t LinearLayout::flatten(const Basis &b) const {
  uint64_t flat = 0;
  for (auto [c, off] : llvm::zip(b, outBitOffsets()))
    flat |= uint64_t(c) << off;
  return flat;
}

LinearLayout::Basis LinearLayout::unflatten(uint64_t flat) const {
  Basis b;
  for (auto [o, off] : llvm::zip(outs, outBitOffsets()))
    b.push_back(int32_t((flat >> off) & uint64_t(o.size - 1)));
  return b;
}

SmallVector<uint64_t, 32> LinearLayout::flatColumns() const {
  SmallVector<uint64_t, 32> cols;
  for (const InDim &d : ins)
    for (const Basis &b : d.bases)
      cols.push_back(flatten(b));
  return cols;
}

SmallVector<int32_t, 3>
LinearLayout::apply(ArrayRef<std::pair<StringRef, int32_t>> inputs) const {
  Basis out(outs.size(), 0);
  for (auto [name, value] : inputs) {
    int i = findIn(name);
    assert(i >= 0 && "no such input");
    assert(value >= 0 && value < getInDimSize(name) && "input out of range");
    for (auto [bit, b] : llvm::enumerate(ins[i].bases))
      if (value & (int32_t(1) << bit))
        for (unsigned k = 0; k < out.size(); ++k)
          out[k] ^= b[k];
  }
  return out;
}

SmallVector<int32_t, 3> LinearLayout::applyIndices(ArrayRef<int32_t> in) const {
  assert(in.size() == ins.size() && "one index per input");
  SmallVector<std::pair<StringRef, int32_t>, 4> pairs;
  for (auto [d, v] : llvm::zip(ins, in))
    pairs.push_back({d.name, v});
  return apply(pairs);
}

uint64_t LinearLayout::applyFlat(uint64_t flatIn) const {
  uint64_t out = 0;
  for (auto [i, c] : llvm::enumerate(flatColumns()))
    if (flatIn & (uint64_t(1) << i))
      out ^= c;
  return out;
}

bool LinearLayout::isSurjective() const {
  return Echelon(flatColumns()).rank() == getTotalOutBits();
}

bool LinearLayout::isInjective() const {
  return Echelon(flatColumns()).rank() == getTotalInBits();
}

uint32_t LinearLayout::getZeroBasesMask(StringRef in) const {
  int i = findIn(in);
  if (i < 0)
    return 0;
  uint32_t mask = 0;
  for (auto [bit, b] : llvm::enumerate(ins[i].bases))
    if (llvm::all_of(b, [](int32_t c) { return c == 0; }))
      mask |= uint32_t(1) << bit;
  return mask;
}

uint32_t LinearLayout::getFreeVariableMask(StringRef in) const {
  int i = findIn(in);
  if (i < 0)
    return 0;
  unsigned first = 0;
  for (int k = 0; k < i; ++k)
    first += ins[k].bases.size();
  uint64_t dependent = Echelon(flatColumns()).getDependent();
  return uint32_t((dependent >> first) &
                  ((uint64_t(1) << ins[i].bases.size()) - 1));
}

int32_t LinearLayout::getNumConsecutive(StringRef in, StringRef out) const {
  int i = findIn(in), o = findOut(out);
  if (i < 0 || o < 0)
    return 1;
  int32_t n = 1;
  for (const Basis &b : ins[i].bases) {
    for (unsigned k = 0; k < b.size(); ++k)
      if (b[k] != (int(k) == o ? n : 0))
        return n;
    n *= 2;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// Algebra
//===----------------------------------------------------------------------===//

LinearLayout LinearLayout::operator*(const LinearLayout &outer) const {
  SmallVector<OutDim, 3> newOuts = outs;
  for (const OutDim &o : outer.outs) {
    int k = findOut(o.name);
    if (k < 0)
      newOuts.push_back(o);
    else
      newOuts[k].size *= o.size;
  }
  // A basis of `src` (coordinates over src's outputs) in the new outputs,
  // each coordinate multiplied by `scale(name)`.
  auto remap = [&](const LinearLayout &src, const Basis &b, bool isOuter) {
    Basis r(newOuts.size(), 0);
    for (auto [o, c] : llvm::zip(src.outs, b)) {
      int k = 0;
      while (newOuts[k].name != o.name)
        ++k;
      r[k] = isOuter ? c * getOutDimSize(o.name) : c;
    }
    return r;
  };
  SmallVector<InDim, 4> newIns;
  for (const InDim &d : ins) {
    InDim n{d.name, {}};
    for (const Basis &b : d.bases)
      n.bases.push_back(remap(*this, b, false));
    newIns.push_back(std::move(n));
  }
  for (const InDim &d : outer.ins) {
    int k = -1;
    for (auto [j, n] : llvm::enumerate(newIns))
      if (n.name == d.name)
        k = j;
    if (k < 0) {
      newIns.push_back({d.name, {}});
      k = newIns.size() - 1;
    }
    for (const Basis &b : d.bases)
      newIns[k].bases.push_back(remap(outer, b, true));
  }
  return LinearLayout(std::move(newIns), std::move(newOuts));
}

LinearLayout LinearLayout::compose(const LinearLayout &outer) const {
  SmallVector<InDim, 4> newIns;
  for (const InDim &d : ins) {
    InDim n{d.name, {}};
    for (const Basis &b : d.bases) {
      SmallVector<std::pair<StringRef, int32_t>, 3> pairs;
      for (auto [o, c] : llvm::zip(outs, b)) {
        assert(o.size <= outer.getInDimSize(o.name) &&
               "outer takes this layout's outputs as inputs");
        pairs.push_back({o.name, c});
      }
      n.bases.push_back(outer.apply(pairs));
    }
    newIns.push_back(std::move(n));
  }
  return LinearLayout(std::move(newIns), outer.outs);
}

std::optional<LinearLayout> LinearLayout::pseudoInvert() const {
  Echelon e(flatColumns());
  if (e.rank() != getTotalOutBits())
    return std::nullopt;
  // Inputs of the inverse: this layout's outputs; outputs: its inputs.
  SmallVector<OutDim, 3> newOuts;
  for (const InDim &d : ins)
    newOuts.push_back({d.name, int32_t(1) << d.bases.size()});
  SmallVector<InDim, 4> newIns;
  auto comboToBasis = [&](uint64_t combo) {
    Basis b;
    unsigned bit = 0;
    for (const InDim &d : ins) {
      unsigned n = d.bases.size();
      b.push_back(int32_t((combo >> bit) & ((uint64_t(1) << n) - 1)));
      bit += n;
    }
    return b;
  };
  for (auto [o, off] : llvm::zip(outs, outBitOffsets())) {
    InDim n{o.name, {}};
    for (unsigned bit = 0, e2 = log2Exact(o.size); bit < e2; ++bit)
      n.bases.push_back(comboToBasis(*e.solve(uint64_t(1) << (off + bit))));
    newIns.push_back(std::move(n));
  }
  return LinearLayout(std::move(newIns), std::move(newOuts));
}

std::optional<LinearLayout> LinearLayout::invert() const {
  if (!isInvertible())
    return std::nullopt;
  return pseudoInvert();
}

std::optional<LinearLayout>
LinearLayout::invertAndCompose(const LinearLayout &other) const {
  // Express this layout's bases in `other`'s flattened outputs.
  SmallVector<uint64_t, 32> otherCols = other.flatColumns();
  Echelon e(otherCols);
  SmallVector<OutDim, 3> newOuts;
  for (const InDim &d : other.ins)
    newOuts.push_back({d.name, int32_t(1) << d.bases.size()});
  SmallVector<InDim, 4> newIns;
  SmallVector<unsigned, 3> otherOffsets = other.outBitOffsets();
  for (const InDim &d : ins) {
    InDim n{d.name, {}};
    for (const Basis &b : d.bases) {
      uint64_t target = 0;
      for (auto [o, c] : llvm::zip(outs, b)) {
        int k = other.findOut(o.name);
        if (k < 0) {
          if (c != 0)
            return std::nullopt;
          continue;
        }
        if (c >= other.outs[k].size)
          return std::nullopt;
        target |= uint64_t(c) << otherOffsets[k];
      }
      std::optional<uint64_t> combo = e.solve(target);
      if (!combo)
        return std::nullopt;
      Basis r;
      unsigned bit = 0;
      for (const InDim &od : other.ins) {
        unsigned w = od.bases.size();
        r.push_back(int32_t((*combo >> bit) & ((uint64_t(1) << w) - 1)));
        bit += w;
      }
      n.bases.push_back(std::move(r));
    }
    newIns.push_back(std::move(n));
  }
  return LinearLayout(std::move(newIns), std::move(newOuts));
}

LinearLayout LinearLayout::sublayout(ArrayRef<StringRef> inNames,
                                     ArrayRef<StringRef> outNames) const {
  SmallVector<int, 3> outIdx;
  SmallVector<OutDim, 3> newOuts;
  for (StringRef name : outNames) {
    int k = findOut(name);
    assert(k >= 0 && "no such output");
    outIdx.push_back(k);
    newOuts.push_back(outs[k]);
  }
  SmallVector<InDim, 4> newIns;
  for (StringRef name : inNames) {
    int i = findIn(name);
    assert(i >= 0 && "no such input");
    InDim n{ins[i].name, {}};
    for (const Basis &b : ins[i].bases) {
      Basis r;
      for (int k : outIdx)
        r.push_back(b[k]);
      n.bases.push_back(std::move(r));
    }
    newIns.push_back(std::move(n));
  }
  return LinearLayout(std::move(newIns), std::move(newOuts));
}

LinearLayout LinearLayout::transposeOuts(ArrayRef<StringRef> order) const {
  assert(order.size() == outs.size() && "every output named once");
  SmallVector<StringRef, 4> inNames;
  for (const InDim &d : ins)
    inNames.push_back(d.name);
  return sublayout(inNames, order);
}

LinearLayout LinearLayout::transposeIns(ArrayRef<StringRef> order) const {
  assert(order.size() == ins.size() && "every input named once");
  SmallVector<InDim, 4> newIns;
  for (StringRef name : order) {
    int i = findIn(name);
    assert(i >= 0 && "no such input");
    newIns.push_back(ins[i]);
  }
  return LinearLayout(std::move(newIns), outs);
}

LinearLayout LinearLayout::renameOut(StringRef from, StringRef to) const {
  LinearLayout r = *this;
  int k = findOut(from);
  assert(k >= 0 && findOut(to) < 0 && "renaming an output to a new name");
  r.outs[k].name = to.str();
  return r;
}

LinearLayout LinearLayout::removeOut(StringRef out) const {
  SmallVector<StringRef, 3> outNames, inNames;
  for (const OutDim &o : outs)
    if (o.name != out)
      outNames.push_back(o.name);
  for (const InDim &d : ins)
    inNames.push_back(d.name);
  return sublayout(inNames, outNames);
}

LinearLayout LinearLayout::insertOut(unsigned pos, StringRef name) const {
  assert(pos <= outs.size() && findOut(name) < 0 && "a new output");
  LinearLayout r = *this;
  r.outs.insert(r.outs.begin() + pos, OutDim{name.str(), 1});
  for (InDim &d : r.ins)
    for (Basis &b : d.bases)
      b.insert(b.begin() + pos, 0);
  return r;
}

LinearLayout LinearLayout::removeZeroBases(StringRef in) const {
  LinearLayout r = *this;
  int i = findIn(in);
  if (i < 0)
    return r;
  llvm::erase_if(r.ins[i].bases, [](const Basis &b) {
    return llvm::all_of(b, [](int32_t c) { return c == 0; });
  });
  return r;
}

LinearLayout LinearLayout::fitToShape(ArrayRef<int32_t> sizes,
                                      StringRef repeatIn) const {
  assert(sizes.size() == outs.size() && "one size per output");
  LinearLayout r = *this;
  // Cut: coordinates beyond the tile wrap (the inputs hold copies).
  for (InDim &d : r.ins)
    for (Basis &b : d.bases)
      for (auto [c, s] : llvm::zip(b, sizes))
        c &= s - 1;
  int rep = r.findIn(repeatIn);
  if (rep < 0) {
    r.ins.push_back({repeatIn.str(), {}});
    rep = r.ins.size() - 1;
  }
  // Grow: repeat along each output that is too small, the last output
  // (the fastest of a row-major tile) first.
  for (int k = int(outs.size()) - 1; k >= 0; --k) {
    for (int32_t c = outs[k].size; c < sizes[k]; c *= 2) {
      Basis b(outs.size(), 0);
      b[k] = c;
      r.ins[rep].bases.push_back(std::move(b));
    }
  }
  for (auto [o, s] : llvm::zip(r.outs, sizes))
    o.size = s;
  r.verify();
  return r;
}

LinearLayout LinearLayout::reshapeOuts(ArrayRef<OutDim> newOuts) const {
  int64_t total = 1;
  for (const OutDim &o : newOuts)
    total *= o.size;
  assert(total == getTotalOutSize() && "reshape keeps the number of elements");
  (void)total;
  auto rowMajor = [](ArrayRef<OutDim> shape, ArrayRef<int32_t> coords) {
    uint64_t flat = 0;
    for (auto [o, c] : llvm::zip(shape, coords))
      flat = (flat << log2Exact(o.size)) | uint64_t(c);
    return flat;
  };
  SmallVector<InDim, 4> newIns;
  for (const InDim &d : ins) {
    InDim n{d.name, {}};
    for (const Basis &b : d.bases) {
      uint64_t flat = rowMajor(outs, b);
      Basis r(newOuts.size(), 0);
      for (int k = int(newOuts.size()) - 1; k >= 0; --k) {
        unsigned w = log2Exact(newOuts[k].size);
        r[k] = int32_t(flat & ((uint64_t(1) << w) - 1));
        flat >>= w;
      }
      n.bases.push_back(std::move(r));
    }
    newIns.push_back(std::move(n));
  }
  return LinearLayout(std::move(newIns), SmallVector<OutDim, 3>(newOuts));
}

bool LinearLayout::operator==(const LinearLayout &other) const {
  if (ins.size() != other.ins.size() || outs.size() != other.outs.size())
    return false;
  for (auto [a, b] : llvm::zip(outs, other.outs))
    if (a.name != b.name || a.size != b.size)
      return false;
  for (auto [a, b] : llvm::zip(ins, other.ins))
    if (a.name != b.name || a.bases != b.bases)
      return false;
  return true;
}

std::string LinearLayout::str() const {
  std::string s;
  for (auto [i, d] : llvm::enumerate(ins)) {
    if (i)
      s += ", ";
    s += d.name + ": [";
    for (auto [j, b] : llvm::enumerate(d.bases)) {
      if (j)
        s += ", ";
      s += "[";
      for (auto [k, c] : llvm::enumerate(b)) {
        if (k)
          s += ", ";
        s += std::to_string(c);
      }
      s += "]";
    }
    s += "]";
  }
  s += " -> ";
  for (auto [i, o] : llvm::enumerate(outs)) {
    if (i)
      s += ", ";
    s += o.name + " = " + std::to_string(o.size);
  }
  return s;
}

std::optional<llvm::SmallVector<int64_t>>
kiln::gpu::getRegisterPermutation(const LinearLayout &srcL,
                                  const LinearLayout &dstL) {
  size_t outs = dstL.getOutDims().size();
  auto part = [&](const LinearLayout &l, llvm::StringRef in, int32_t v) {
    return l.hasInDim(in) ? l.apply({{in, v}})
                          : LinearLayout::Basis(outs, 0);
  };
  for (llvm::StringRef hw : {dims::kLane, dims::kWarp}) {
    int bits = std::max(dstL.hasInDim(hw) ? dstL.getInDimSizeLog2(hw) : 0,
                        srcL.hasInDim(hw) ? srcL.getInDimSizeLog2(hw) : 0);
    for (int bit = 0; bit < bits; ++bit)
      if (part(dstL, hw, int32_t(1) << bit) !=
          part(srcL, hw, int32_t(1) << bit))
        return std::nullopt;
  }
  std::map<LinearLayout::Basis, int64_t> srcRegs;
  int32_t srcN = srcL.hasInDim(dims::kRegister)
                     ? srcL.getInDimSize(dims::kRegister) : 1;
  for (int32_t r = 0; r < srcN; ++r)
    srcRegs.insert({part(srcL, dims::kRegister, r), r});
  llvm::SmallVector<int64_t> mask;
  int32_t dstN = dstL.hasInDim(dims::kRegister)
                     ? dstL.getInDimSize(dims::kRegister) : 1;
  for (int32_t r = 0; r < dstN; ++r) {
    auto it = srcRegs.find(part(dstL, dims::kRegister, r));
    if (it == srcRegs.end())
      return std::nullopt;
    mask.push_back(it->second);
  }
  return mask;
}
