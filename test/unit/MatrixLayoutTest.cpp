//===- MatrixLayoutTest.cpp - Compiler fragments against the emulator -----===//
//
// Every matrix instruction of every registered arch (codegen/nvptx and
// codegen/amdgpu target descriptions) is fed through the emulator's own
// implementation (runtime/lib/EmuMatrix.cpp, written separately from the
// vendors' ISA documents): small-integer A, B and C are spread over the
// lanes as the *compiler's* fragment layouts say, the emulator runs the
// instruction, and D, gathered by the compiler's accumulator layout, must
// be A B + C exactly. The two descriptions of each layout must agree.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/EmuDevice.h"
#include "../runtime/MatrixTestValues.h"

#include "codegen/amdgpu/AMDGPUTargets.h"
#include "codegen/nvptx/NVPTXTargets.h"
#include "compiler/GPU/TargetDesc.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace kiln::gpu;
using namespace kiln::test;

namespace {

struct Named {
  const MatrixInstr *instr;
  int32_t lanes;
  std::string arch;
};

/// Every matrix instruction of every arch, once per name.
std::vector<Named> allInstrs() {
  kiln::nvptx::registerNVPTXTargets();
  kiln::amdgpu::registerAMDGPUTargets();
  std::vector<Named> out;
  std::set<std::string> seen;
  for (const std::string &arch : getGPUTargetNames()) {
    const GPUTarget *t = lookupGPUTarget(arch);
    for (const MatrixInstr &i : t->matrixInstrs)
      if (seen.insert(i.name).second)
        out.push_back({&i, t->warpSize, arch});
  }
  return out;
}

Kind kindOf(const std::string &type) {
  if (type == "f16")
    return Kind::F16;
  if (type == "bf16")
    return Kind::BF16;
  if (type == "i8")
    return Kind::S8;
  if (type == "f8E4M3FN")
    return Kind::E4M3;
  if (type == "f8E5M2")
    return Kind::E5M2;
  return Kind::TF32; // f32 bits
}

std::pair<int32_t, int32_t> at(const LinearLayout &l, int32_t reg,
                               int32_t lane) {
  auto c = l.apply({{"register", reg}, {"lane", lane}});
  return {c[0], c[1]};
}

TEST(MatrixLayouts, CompilerAndEmulatorAgree) {
  std::vector<Named> instrs = allInstrs();
  ASSERT_GE(instrs.size(), 20u);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  for (const Named &n : instrs) {
    const MatrixInstr &mi = *n.instr;
    SCOPED_TRACE(mi.name + " (" + n.arch + ")");
    Kind kind = kindOf(mi.aType);
    bool isInt = mi.accType == "i32";
    int32_t m = mi.m, nn = mi.n, k = mi.k, lanes = n.lanes;
    ASSERT_EQ(mi.aLayout.getInDimSize("lane"), lanes);
    std::vector<int> a(size_t(m * k)), b(size_t(k * nn)), c(size_t(m * nn));
    for (int &v : a)
      v = small(rng);
    for (int &v : b)
      v = small(rng);
    for (int &v : c)
      v = small(rng) * 8;
    size_t eb = elemBytes(kind);
    int32_t aRegs = mi.getARegisters(), bRegs = mi.getBRegisters(),
            cRegs = mi.getCRegisters();
    using Lanes = std::vector<std::vector<uint8_t>>;
    Lanes la(size_t(lanes), std::vector<uint8_t>(size_t(aRegs) * eb)),
        lb(size_t(lanes), std::vector<uint8_t>(size_t(bRegs) * eb)),
        lc(size_t(lanes), std::vector<uint8_t>(size_t(cRegs) * 4)),
        ld(size_t(lanes), std::vector<uint8_t>(size_t(cRegs) * 4, 0xAB));
    // Every element of each operand is held by some (lane, register).
    std::set<std::pair<int32_t, int32_t>> coveredA, coveredB, coveredC;
    for (int32_t l = 0; l < lanes; ++l) {
      for (int32_t r = 0; r < aRegs; ++r) {
        auto [i, kk] = at(mi.aLayout, r, l);
        coveredA.insert({i, kk});
        encode(kind, a[size_t(i * k + kk)], &la[size_t(l)][size_t(r) * eb]);
      }
      for (int32_t r = 0; r < bRegs; ++r) {
        auto [kk, j] = at(mi.bLayout, r, l);
        coveredB.insert({kk, j});
        encode(kind, b[size_t(kk * nn + j)], &lb[size_t(l)][size_t(r) * eb]);
      }
      for (int32_t r = 0; r < cRegs; ++r) {
        auto [i, j] = at(mi.cLayout, r, l);
        coveredC.insert({i, j});
        if (isInt) {
          int32_t v = c[size_t(i * nn + j)];
          std::memcpy(&lc[size_t(l)][size_t(r) * 4], &v, 4);
        } else {
          float v = float(c[size_t(i * nn + j)]);
          std::memcpy(&lc[size_t(l)][size_t(r) * 4], &v, 4);
        }
      }
    }
    EXPECT_EQ(coveredA.size(), size_t(m * k));
    EXPECT_EQ(coveredB.size(), size_t(k * nn));
    ASSERT_EQ(coveredC.size(), size_t(m * nn)) << "accumulator not a bijection";
    std::vector<const void *> pa, pb, pc;
    std::vector<void *> pd;
    for (int32_t l = 0; l < lanes; ++l) {
      pa.push_back(la[size_t(l)].data());
      pb.push_back(lb[size_t(l)].data());
      pc.push_back(lc[size_t(l)].data());
      pd.push_back(ld[size_t(l)].data());
    }
    std::string message;
    ASSERT_TRUE(kiln::rt::detail::emulateMatrixInstr(
        mi.name, lanes, pa.data(), pb.data(), pc.data(), pd.data(), message))
        << message;
    int wrong = 0;
    for (int32_t l = 0; l < lanes; ++l)
      for (int32_t r = 0; r < cRegs; ++r) {
        auto [i, j] = at(mi.cLayout, r, l);
        long want = c[size_t(i * nn + j)];
        for (int32_t kk = 0; kk < k; ++kk)
          want += long(a[size_t(i * k + kk)]) * b[size_t(kk * nn + j)];
        double got;
        if (isInt) {
          int32_t v;
          std::memcpy(&v, &ld[size_t(l)][size_t(r) * 4], 4);
          got = v;
        } else {
          float v;
          std::memcpy(&v, &ld[size_t(l)][size_t(r) * 4], 4);
          got = v;
        }
        if (got != double(want) && wrong++ < 3)
          ADD_FAILURE() << "D[" << i << ", " << j << "] (lane " << l
                        << ", register " << r << ") = " << got << ", want "
                        << want;
      }
    EXPECT_EQ(wrong, 0);
  }
}

// A wrong layout in the compiler must show up: the same instruction fed
// with lanes 0 and 1 swapped gives a wrong D (and for RDNA3's WMMA, upper
// half-waves that do not repeat the lower ones are refused).
TEST(MatrixLayouts, EmulatorNoticesSwappedLanes) {
  for (const Named &n : allInstrs()) {
    const MatrixInstr &mi = *n.instr;
    SCOPED_TRACE(mi.name);
    Kind kind = kindOf(mi.aType);
    size_t eb = elemBytes(kind);
    int32_t lanes = n.lanes;
    using Lanes = std::vector<std::vector<uint8_t>>;
    Lanes la(static_cast<size_t>(lanes)), lb(static_cast<size_t>(lanes)),
        lc(static_cast<size_t>(lanes)), ld(static_cast<size_t>(lanes));
    for (int32_t l = 0; l < lanes; ++l) {
      la[size_t(l)].resize(size_t(mi.getARegisters()) * eb);
      lb[size_t(l)].resize(size_t(mi.getBRegisters()) * eb);
      lc[size_t(l)].assign(size_t(mi.getCRegisters()) * 4, 0);
      ld[size_t(l)].assign(size_t(mi.getCRegisters()) * 4, 0);
      for (int32_t r = 0; r < mi.getARegisters(); ++r) {
        auto [i, kk] = at(mi.aLayout, r, l);
        encode(kind, (i * 3 + kk) % 5 - 2, &la[size_t(l)][size_t(r) * eb]);
      }
      for (int32_t r = 0; r < mi.getBRegisters(); ++r) {
        auto [kk, j] = at(mi.bLayout, r, l);
        encode(kind, (kk + 2 * j) % 7 - 3, &lb[size_t(l)][size_t(r) * eb]);
      }
    }
    auto run = [&](std::vector<std::vector<uint8_t>> &out, bool &ok) {
      std::vector<const void *> pa, pb, pc;
      std::vector<void *> pd;
      for (int32_t l = 0; l < lanes; ++l) {
        pa.push_back(la[size_t(l)].data());
        pb.push_back(lb[size_t(l)].data());
        pc.push_back(lc[size_t(l)].data());
        pd.push_back(out[size_t(l)].data());
      }
      std::string message;
      ok = kiln::rt::detail::emulateMatrixInstr(mi.name, lanes, pa.data(),
                                                pb.data(), pc.data(),
                                                pd.data(), message);
    };
    bool ok = false;
    run(ld, ok);
    ASSERT_TRUE(ok);
    std::vector<std::vector<uint8_t>> swapped = ld;
    std::swap(la[0], la[1]);
    run(swapped, ok);
    if (ok)
      EXPECT_NE(swapped, ld);
  }
}

} // namespace
