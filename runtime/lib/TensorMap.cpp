//===- TensorMap.cpp - An image's tensor maps at launch -------------------===//
//
// An sm_90a fast-path image may load views with Hopper's tensor memory
// accelerator (TMA): it then takes, after the kernel's parameters, one
// tensor map per view (docs/bundle.md, "tensor_maps"). Each launch that
// considers such an image evaluates its maps from the arguments and checks
// what TMA requires of them (cuTensorMapEncodeTiled's rules); a map that
// breaks one makes the image unusable for that launch, as broken
// assumptions do, and the runtime takes the next image (the generic one).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstdio>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr int64_t kMaxSize = int64_t(1) << 32;        ///< elements, per dim
constexpr int64_t kMaxStrideBytes = int64_t(1) << 40; ///< exclusive

std::string hex(uint64_t V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", (unsigned long long)V);
  return Buf;
}

} // namespace

Expected<std::vector<TensorMap>> kiln::rt::detail::evaluateTensorMaps(
    const KernelInfo &K, const std::vector<TensorMapExprs> &Maps,
    const std::vector<Arg> &Args, const std::vector<int64_t> &Values,
    const std::vector<int64_t> &Consts) {
  std::vector<TensorMap> Out;
  Out.reserve(Maps.size());
  for (size_t I = 0; I < Maps.size(); ++I) {
    const TensorMapExprs &X = Maps[I];
    std::string Where = "tensor map " + std::to_string(I) + " (" +
                        K.Params[X.Param].Name + "): ";
    auto Broken = [&](const std::string &Why) {
      return Error(ErrorCode::LaunchRefused, Where + Why);
    };
    TensorMap M;
    M.Base = Args[X.Param].bits();
    M.Rank = unsigned(X.Sizes.size());
    M.ElemBytes = X.ElemBytes;
    M.Type = X.Type;
    M.Swizzle = X.Swizzle;
    if (M.Base % 16 != 0)
      return Broken("its base " + hex(M.Base) + " is not 16-byte aligned");
    for (unsigned D = 0; D < M.Rank; ++D) {
      M.Box[D] = int32_t(X.Box[D]);
      Expected<int64_t> Size = X.Sizes[D].evaluate(Values, Consts);
      if (!Size)
        return Broken("size " + std::to_string(D) + " '" +
                      X.Sizes[D].text() + "': " + Size.error().message());
      if (*Size < 1 || *Size > kMaxSize)
        return Broken("size " + std::to_string(D) + " '" +
                      X.Sizes[D].text() + "' is " + std::to_string(*Size) +
                      ", outside 1 to 2^32");
      M.Sizes[D] = *Size;
      Expected<int64_t> Stride = X.Strides[D].evaluate(Values, Consts);
      if (!Stride)
        return Broken("stride " + std::to_string(D) + " '" +
                      X.Strides[D].text() + "': " + Stride.error().message());
      std::string Shown = "stride " + std::to_string(D) + " '" +
                          X.Strides[D].text() + "' is " +
                          std::to_string(*Stride);
      if (D + 1 == M.Rank) {
        if (*Stride != 1)
          return Broken(Shown + ", but the innermost stride must be 1");
        M.Strides[D] = M.ElemBytes;
        continue;
      }
      if (*Stride < 1 || *Stride >= kMaxStrideBytes / int64_t(M.ElemBytes))
        return Broken(Shown + " elements, outside 1 to 2^40 bytes");
      M.Strides[D] = *Stride * int64_t(M.ElemBytes);
      if (M.Strides[D] % 16 != 0)
        return Broken(Shown + " elements, " + std::to_string(M.Strides[D]) +
                      " bytes: not a multiple of 16 bytes");
    }
    int64_t Row = int64_t(M.Box[M.Rank - 1]) * M.ElemBytes;
    if (Row % 16 != 0)
      return Broken("its box's rows are " + std::to_string(Row) +
                    " bytes, not a multiple of 16");
    if (M.Swizzle > 0 && Row > M.Swizzle)
      return Broken("its box's rows are " + std::to_string(Row) +
                    " bytes, wider than its swizzle of " +
                    std::to_string(M.Swizzle) + " bytes");
    Out.push_back(M);
  }
  return Out;
}
