//===- BundleReaderFuzzer.cpp - libFuzzer target for the runtime's reader -===//
//
// Feeds arbitrary bytes to the runtime's bundle reader (container, manifest
// JSON, grid and condition expressions) and .npy parser; a bundle that
// reads is loaded on the host device (no code object is opened) and every
// kernel is planned with zero-valued arguments, which evaluates its launch
// conditions and grid. Nothing may crash, hang or leak.
//
//===----------------------------------------------------------------------===//
#include "kiln/npy.h"
#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>

using namespace kiln::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  (void)parseNpy(Data, Size, "fuzz.npy");
  Expected<Bundle> B = Bundle::readMemory(Data, Size, "fuzz.kpack");
  if (!B)
    return 0;
  static Expected<Device> Host = Device::open("host");
  if (!Host)
    return 0;
  Expected<Module> M = Host->loadModule(*B);
  if (!M)
    return 0;
  for (const KernelInfo &Info : B->kernels()) {
    for (const VariantInfo &V : Info.Variants)
      (void)Info.variantConfig(V);
    Expected<Kernel> K = M->kernel(Info.Name);
    if (!K)
      continue;
    std::vector<Arg> Args;
    for (const ParamInfo &P : Info.Params)
      Args.push_back(P.Type.IsPointer ? Arg::pointer(nullptr)
                                      : Arg::scalarBits(P.Type.Element, 0));
    (void)K->plan(Args);
  }
  return 0;
}
