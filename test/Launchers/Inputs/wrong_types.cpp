// Calls of types.tile's launchers (namespace t::u) that must not compile,
// one per CASE; CASE=0 is a correct call.
#include "types.h"

using namespace kiln::rt;

Error call(Stream &S, DeviceArray<float> &F, DeviceArray<bf16> &B,
           DeviceArray<uint16_t> &U) {
#if CASE == 0
  return t::u::scale(S, B, F, f16(1.5f), 2.0f, true, 16);
#elif CASE == 1
  // *bf16 wants DevicePtr<bf16>: a DevicePtr<float> does not convert.
  DevicePtr<float> X = F;
  return t::u::scale(S, X, F, f16(1.5f), 2.0f, true, 16);
#elif CASE == 2
  // Nor does a DeviceArray<float>.
  return t::u::scale(S, F, F, f16(1.5f), 2.0f, true, 16);
#elif CASE == 3
  // f16 is its own type: a float does not convert implicitly.
  return t::u::scale(S, B, F, 1.5f, 2.0f, true, 16);
#elif CASE == 4
  // 16-bit integers are not halves, though they have the same size.
  return t::u::all_types(S, {}, {}, {}, {}, {}, {}, {}, {}, U, {}, {}, {},
                         true, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {});
#endif
}
