//===- EmuMatrixTest.cpp - The emulator's matrix instructions -------------===//
//
// Each emulated matrix instruction (runtime/lib/EmuMatrix.cpp) against a
// plain matrix product: random A, B, C (small integers, so every product
// and sum is exact in every type) are spread over the 32 lanes as the PTX
// ISA's fragment figures place them, the instruction runs, and D gathered
// the same way must equal A B + C.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/EmuDevice.h"
#include "MatrixTestValues.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace kiln::rt::detail;
using namespace kiln::test;

namespace {

struct Case {
  const char *Instr;
  int K;
  Kind Elem;
};

// The PTX ISA's fragment figures (g = lane >> 2, t = lane % 4).
void aPos(int K, int L, int I, int &R, int &C) {
  int G = L >> 2, T = L & 3;
  if (K == 16) {
    R = G + (I % 4 >= 2 ? 8 : 0);
    C = T * 2 + I % 2 + (I >= 4 ? 8 : 0);
  } else if (K == 8) {
    R = G + (I % 2 ? 8 : 0);
    C = T + (I >= 2 ? 4 : 0);
  } else {
    R = G + (I % 8 >= 4 ? 8 : 0);
    C = T * 4 + I % 4 + (I >= 8 ? 16 : 0);
  }
}
void bPos(int K, int L, int I, int &R, int &C) {
  int G = L >> 2, T = L & 3;
  C = G;
  if (K == 16)
    R = T * 2 + I % 2 + (I >= 2 ? 8 : 0);
  else if (K == 8)
    R = T + (I ? 4 : 0);
  else
    R = T * 4 + I % 4 + (I >= 4 ? 16 : 0);
}
void cPos(int L, int I, int &R, int &C) {
  R = (L >> 2) + (I >= 2 ? 8 : 0);
  C = (L & 3) * 2 + I % 2;
}

class EmuMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(EmuMatrix, MatchesPlainProduct) {
  const Case &P = GetParam();
  const int M = 16, N = 8, K = P.K;
  bool Int = P.Elem == Kind::S8;
  std::mt19937 Rng(1234 + K);
  std::uniform_int_distribution<int> Small(-4, 4);
  std::vector<int> A(size_t(M * K)), B(size_t(K * N)), C(size_t(M * N));
  for (int &V : A)
    V = Small(Rng);
  for (int &V : B)
    V = Small(Rng);
  for (int &V : C)
    V = Small(Rng) * 8;
  size_t EB = elemBytes(P.Elem);
  int ARegs = M * K / 32, BRegs = K * N / 32, CRegs = M * N / 32;
  std::vector<std::vector<uint8_t>> LA(32, std::vector<uint8_t>(ARegs * EB)),
      LB(32, std::vector<uint8_t>(BRegs * EB)),
      LC(32, std::vector<uint8_t>(CRegs * 4)),
      LD(32, std::vector<uint8_t>(CRegs * 4, 0xAB));
  for (int L = 0; L < 32; ++L) {
    int R, Cl;
    for (int I = 0; I < ARegs; ++I) {
      aPos(K, L, I, R, Cl);
      encode(P.Elem, A[size_t(R * K + Cl)], &LA[size_t(L)][I * EB]);
    }
    for (int I = 0; I < BRegs; ++I) {
      bPos(K, L, I, R, Cl);
      encode(P.Elem, B[size_t(R * N + Cl)], &LB[size_t(L)][I * EB]);
    }
    for (int I = 0; I < CRegs; ++I) {
      cPos(L, I, R, Cl);
      if (Int) {
        int32_t V = C[size_t(R * N + Cl)];
        std::memcpy(&LC[size_t(L)][I * 4], &V, 4);
      } else {
        float V = float(C[size_t(R * N + Cl)]);
        std::memcpy(&LC[size_t(L)][I * 4], &V, 4);
      }
    }
  }
  std::vector<const void *> PA, PB, PC;
  std::vector<void *> PD;
  for (int L = 0; L < 32; ++L) {
    PA.push_back(LA[size_t(L)].data());
    PB.push_back(LB[size_t(L)].data());
    PC.push_back(LC[size_t(L)].data());
    PD.push_back(LD[size_t(L)].data());
  }
  std::string Message;
  ASSERT_TRUE(emulateMatrixInstr(P.Instr, 32, PA.data(), PB.data(), PC.data(),
                                 PD.data(), Message))
      << Message;
  for (int L = 0; L < 32; ++L)
    for (int I = 0; I < CRegs; ++I) {
      int R, Cl;
      cPos(L, I, R, Cl);
      long Want = C[size_t(R * N + Cl)];
      for (int Kk = 0; Kk < K; ++Kk)
        Want += long(A[size_t(R * K + Kk)]) * B[size_t(Kk * N + Cl)];
      double Got;
      if (Int) {
        int32_t V;
        std::memcpy(&V, &LD[size_t(L)][I * 4], 4);
        Got = V;
      } else {
        float V;
        std::memcpy(&V, &LD[size_t(L)][I * 4], 4);
        Got = V;
      }
      ASSERT_EQ(Got, double(Want))
          << P.Instr << ": D[" << R << ", " << Cl << "] (lane " << L
          << ", register " << I << ")";
    }
}

INSTANTIATE_TEST_SUITE_P(
    Instructions, EmuMatrix,
    ::testing::Values(Case{"nv.mma.m16n8k16.f16", 16, Kind::F16},
                      Case{"nv.mma.m16n8k16.bf16", 16, Kind::BF16},
                      Case{"nv.mma.m16n8k8.tf32", 8, Kind::TF32},
                      Case{"nv.mma.m16n8k32.s8", 32, Kind::S8},
                      Case{"nv.mma.m16n8k32.e4m3", 32, Kind::E4M3},
                      Case{"nv.mma.m16n8k32.e5m2", 32, Kind::E5M2}),
    [](const ::testing::TestParamInfo<Case> &I) {
      std::string Name = I.param.Instr;
      for (char &C : Name)
        if (C == '.')
          C = '_';
      return Name;
    });

TEST(EmuMatrixErrors, UnknownInstruction) {
  std::string Message;
  EXPECT_FALSE(emulateMatrixInstr("nv.mma.m8n8k4.f64", 32, nullptr, nullptr,
                                  nullptr, nullptr, Message));
  EXPECT_EQ(Message, "matrix instruction 'nv.mma.m8n8k4.f64' is not emulated");
}

} // namespace
