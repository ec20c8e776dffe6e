// Prints what the two kernels of `kernels` wrote on the host.
#include "kernels.h"

#include <cstdio>
#include <vector>

int main() {
  auto Dev = kiln::rt::Device::open("host");
  auto S = Dev->createStream();
  const int N = 100;
  auto F = kiln::rt::DeviceArray<float>::allocate(*Dev, N);
  auto I = kiln::rt::DeviceArray<int32_t>::allocate(*Dev, N);
  if (kiln::rt::Error E = lt::fill_first(*S, *F, N)) {
    std::printf("fill_first: %s\n", E.message().c_str());
    return 1;
  }
  if (kiln::rt::Error E = lt::fill_second(*S, *I, N)) {
    std::printf("fill_second: %s\n", E.message().c_str());
    return 1;
  }
  std::vector<float> HF;
  std::vector<int32_t> HI;
  (void)F->download(*S, HF);
  (void)I->download(*S, HI);
  (void)S->synchronize();
  std::printf("first %g %g second %d %d\n", HF[0], HF[N - 1], HI[0], HI[N - 1]);
  // How fill_first's variant is chosen in the cached mode: the default
  // without a table, the shipped table with TUNED.
  auto K = lt::kiln_bundle_first.kernel(*Dev, "fill_first");
  kiln::rt::LaunchOptions Cached;
  Cached.Tuning = kiln::rt::TuningMode::Cached;
  auto Plan = K->launch(*S, {F->ptr().arg(), kiln::rt::Arg::i32(N)}, Cached);
  if (!Plan) {
    std::printf("plan: %s\n", Plan.error().message().c_str());
    return 1;
  }
  const kiln::rt::KernelInfo &Info = K->info();
  std::printf("fill_first: %zu variants, %zu shipped choices, launch: %s\n",
              Info.Variants.size(), Info.Tuned.size(),
              std::string(kiln::rt::choiceSourceName(Plan->Source)).c_str());
  return 0;
}
