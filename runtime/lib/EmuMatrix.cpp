//===- EmuMatrix.cpp - Matrix instructions of the emulated GPUs -----------===//
//
// Written from the vendors' ISA documents, independently of the compiler's
// fragment layouts (compiler/GPU, codegen/*/…Targets.cpp), so that a wrong
// layout in the compiler shows up as a wrong result in the emulator rather
// than being copied into it.
//
// NVIDIA, PTX ISA "Matrix fragments for mma.m16n8k*": in a warp, lane l has
// groupID = l >> 2 and threadID_in_group = l % 4 (g and t below). Element i
// of a lane's fragment (registers are packed low half first) sits at:
//
//   m16n8k16 .f16/.bf16  A (16x16): row g + 8 [i in 2,3,6,7]
//                                   col 2t + (i & 1) + 8 [i >= 4]
//                        B (16x8):  row 2t + (i & 1) + 8 [i >= 2], col g
//   m16n8k8  .tf32       A (16x8):  row g + 8 [i in 1,3], col t + 4 [i >= 2]
//                        B (8x8):   row t + 4 [i = 1], col g
//   m16n8k32 .s8/.e4m3/.e5m2
//                        A (16x32): row g + 8 [i in 4..7, 12..15]
//                                   col 4t + (i & 3) + 16 [i >= 8]
//                        B (32x8):  row 4t + (i & 3) + 16 [i >= 4], col g
//   C and D (16x8, f32 or s32): row g + 8 [i >= 2], col 2t + (i & 1)
//
// D = A B + C; products and sums are computed exactly (integers, wrapping
// at 32 bits) or in double precision and rounded once to f32 — within what
// the hardware's unspecified accumulation order allows. tf32 operands use
// the top 19 bits of their f32 (the hardware ignores the rest).
//
//===----------------------------------------------------------------------===//

#include "EmuDevice.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace kiln::rt::detail;

namespace {

enum class Elem { F16, BF16, TF32, S8, E4M3, E5M2 };

struct Shape {
  int M, N, K;
};

double decodeF16(uint16_t H) {
  int Sign = H >> 15, Exp = (H >> 10) & 0x1f, Man = H & 0x3ff;
  double V;
  if (Exp == 0)
    V = std::ldexp(double(Man), -24);
  else if (Exp == 31)
    V = Man ? NAN : INFINITY;
  else
    V = std::ldexp(double(Man | 0x400), Exp - 25);
  return Sign ? -V : V;
}

double decodeBF16(uint16_t H) {
  uint32_t Bits = uint32_t(H) << 16;
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

double decodeTF32(uint32_t Bits) {
  Bits &= 0xffffe000u;
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

/// OCP fp8: E4M3 (bias 7, no infinities, S.1111.111 is NaN) and E5M2
/// (bias 15, IEEE-like).
double decodeFP8(uint8_t B, bool E4M3) {
  int Sign = B >> 7;
  int ExpBits = E4M3 ? 4 : 5, ManBits = E4M3 ? 3 : 2, Bias = E4M3 ? 7 : 15;
  int Exp = (B >> ManBits) & ((1 << ExpBits) - 1), Man = B & ((1 << ManBits) - 1);
  double V;
  if (E4M3 && Exp == 15 && Man == 7)
    V = NAN;
  else if (!E4M3 && Exp == 31)
    V = Man ? NAN : INFINITY;
  else if (Exp == 0)
    V = std::ldexp(double(Man), 1 - Bias - ManBits);
  else
    V = std::ldexp(double(Man | (1 << ManBits)), Exp - Bias - ManBits);
  return Sign ? -V : V;
}

double element(const void *Regs, int I, Elem E) {
  const auto *P = static_cast<const uint8_t *>(Regs);
  switch (E) {
  case Elem::F16: {
    uint16_t H;
    std::memcpy(&H, P + 2 * I, 2);
    return decodeF16(H);
  }
  case Elem::BF16: {
    uint16_t H;
    std::memcpy(&H, P + 2 * I, 2);
    return decodeBF16(H);
  }
  case Elem::TF32: {
    uint32_t W;
    std::memcpy(&W, P + 4 * I, 4);
    return decodeTF32(W);
  }
  case Elem::S8:
    return double(int8_t(P[I]));
  case Elem::E4M3:
    return decodeFP8(P[I], true);
  case Elem::E5M2:
    return decodeFP8(P[I], false);
  }
  return 0;
}

/// Row and column of fragment element `I` of lane `L` (the tables above).
void aCoord(const Shape &S, int L, int I, int &Row, int &Col) {
  int G = L >> 2, T = L & 3;
  if (S.K == 16) {
    Row = G + ((I == 2 || I == 3 || I == 6 || I == 7) ? 8 : 0);
    Col = 2 * T + (I & 1) + (I >= 4 ? 8 : 0);
  } else if (S.K == 8) {
    Row = G + ((I == 1 || I == 3) ? 8 : 0);
    Col = T + (I >= 2 ? 4 : 0);
  } else {
    Row = G + (((I >= 4 && I < 8) || I >= 12) ? 8 : 0);
    Col = 4 * T + (I & 3) + (I >= 8 ? 16 : 0);
  }
}

void bCoord(const Shape &S, int L, int I, int &Row, int &Col) {
  int G = L >> 2, T = L & 3;
  Col = G;
  if (S.K == 16)
    Row = 2 * T + (I & 1) + (I >= 2 ? 8 : 0);
  else if (S.K == 8)
    Row = T + (I == 1 ? 4 : 0);
  else
    Row = 4 * T + (I & 3) + (I >= 4 ? 16 : 0);
}

void cCoord(int L, int I, int &Row, int &Col) {
  int G = L >> 2, T = L & 3;
  Row = G + (I >= 2 ? 8 : 0);
  Col = 2 * T + (I & 1);
}

bool nvidiaMma(const Shape &S, Elem E, bool IntAcc, const void *const *A,
               const void *const *B, const void *const *C, void *const *D) {
  int ARegs = S.M * S.K / 32, BRegs = S.K * S.N / 32, CRegs = S.M * S.N / 32;
  std::vector<double> MA(size_t(S.M * S.K)), MB(size_t(S.K * S.N)),
      MC(size_t(S.M * S.N));
  std::vector<int64_t> IA(MA.size()), IB(MB.size()), IC(MC.size());
  for (int L = 0; L < 32; ++L) {
    int R, Cl;
    for (int I = 0; I < ARegs; ++I) {
      aCoord(S, L, I, R, Cl);
      MA[size_t(R * S.K + Cl)] = element(A[L], I, E);
    }
    for (int I = 0; I < BRegs; ++I) {
      bCoord(S, L, I, R, Cl);
      MB[size_t(R * S.N + Cl)] = element(B[L], I, E);
    }
    for (int I = 0; I < CRegs; ++I) {
      cCoord(L, I, R, Cl);
      if (IntAcc) {
        int32_t V;
        std::memcpy(&V, static_cast<const uint8_t *>(C[L]) + 4 * I, 4);
        IC[size_t(R * S.N + Cl)] = V;
      } else {
        float V;
        std::memcpy(&V, static_cast<const uint8_t *>(C[L]) + 4 * I, 4);
        MC[size_t(R * S.N + Cl)] = V;
      }
    }
  }
  for (int L = 0; L < 32; ++L)
    for (int I = 0; I < CRegs; ++I) {
      int R, Cl;
      cCoord(L, I, R, Cl);
      auto *Out = static_cast<uint8_t *>(D[L]) + 4 * I;
      if (IntAcc) {
        uint32_t Sum = uint32_t(IC[size_t(R * S.N + Cl)]);
        for (int K = 0; K < S.K; ++K)
          Sum += uint32_t(int32_t(MA[size_t(R * S.K + K)]) *
                          int32_t(MB[size_t(K * S.N + Cl)]));
        std::memcpy(Out, &Sum, 4);
      } else {
        double Sum = MC[size_t(R * S.N + Cl)];
        for (int K = 0; K < S.K; ++K)
          Sum += MA[size_t(R * S.K + K)] * MB[size_t(K * S.N + Cl)];
        float F = float(Sum);
        std::memcpy(Out, &F, 4);
      }
    }
  return true;
}

} // namespace

bool kiln::rt::detail::emulateMatrixInstr(const std::string &Instr, int Lanes,
                                          const void *const *A,
                                          const void *const *B,
                                          const void *const *C,
                                          void *const *D, std::string &Message) {
  struct Known {
    const char *Name;
    Shape S;
    Elem E;
    bool IntAcc;
  };
  static const Known Table[] = {
      {"nv.mma.m16n8k16.f16", {16, 8, 16}, Elem::F16, false},
      {"nv.mma.m16n8k16.bf16", {16, 8, 16}, Elem::BF16, false},
      {"nv.mma.m16n8k8.tf32", {16, 8, 8}, Elem::TF32, false},
      {"nv.mma.m16n8k32.s8", {16, 8, 32}, Elem::S8, true},
      {"nv.mma.m16n8k32.e4m3", {16, 8, 32}, Elem::E4M3, false},
      {"nv.mma.m16n8k32.e5m2", {16, 8, 32}, Elem::E5M2, false},
  };
  for (const Known &K : Table)
    if (Instr == K.Name) {
      if (Lanes != 32) {
        Message = "matrix instruction '" + Instr + "' needs 32 lanes per warp";
        return false;
      }
      return nvidiaMma(K.S, K.E, K.IntAcc, A, B, C, D);
    }
  Message = "matrix instruction '" + Instr + "' is not emulated";
  return false;
}
