// `kernels_static` links the static runtime.
#include "kernels_static.h"

#include <cstdio>
#include <vector>

int main() {
  auto Dev = kiln::rt::Device::open("host");
  auto S = Dev->createStream();
  std::vector<int64_t> X = {1, -2, 3}, Y;
  auto DX = kiln::rt::DeviceArray<int64_t>::allocate(*Dev, 3);
  auto DY = kiln::rt::DeviceArray<int64_t>::allocate(*Dev, 3);
  (void)DX->upload(*S, X);
  if (kiln::rt::Error E = lt::st::triple(*S, *DX, *DY, 3)) {
    std::printf("triple: %s\n", E.message().c_str());
    return 1;
  }
  (void)DY->download(*S, Y);
  (void)S->synchronize();
  std::printf("static %lld %lld %lld\n", (long long)Y[0], (long long)Y[1],
              (long long)Y[2]);
  return 0;
}
