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
// AMD, the CDNA3 and RDNA3/RDNA4 ISA guides' matrix layouts (as AMD's Matrix
// Instruction Calculator prints them). Lane l, element i (E operand
// elements per lane):
//
//   MFMA 32x32xK  A: row l % 32, col E (l / 32) + i;  B: row E (l / 32) + i,
//                 col l % 32;  D (16): row 8 (i / 4) + 4 (l / 32) + i % 4,
//                 col l % 32
//   MFMA 16x16xK  A: row l % 16, col E (l / 16) + i;  B: row E (l / 16) + i,
//                 col l % 16;  D (4): row 4 (l / 16) + i, col l % 16
//   WMMA gfx11    A: row l % 16, col i (16 elements);  B: row i, col l % 16;
//                 lanes 16-31 must repeat lanes 0-15 (checked);
//                 D (8): row 2 i + l / 16, col l % 16
//   WMMA gfx12    16-bit A: row l % 16, col 4 (l / 16) + 8 (i / 4) + i % 4;
//                 8-bit A: col 8 (l / 16) + i; B likewise transposed;
//                 D (8): row 8 (l / 16) + i, col l % 16
//
// xf32 operands are read as tf32 (the stage rounds them first); gfx950's
// fp8 is OCP E4M3/E5M2, as NVIDIA's; gfx942's (the ".fnuz" names) is
// E4M3FNUZ/E5M2FNUZ: exponent bias 8/16, no infinity, 0x80 the only NaN.
//
// D = A B + C; products and sums are computed exactly (integers, wrapping
// at 32 bits) or in double precision and rounded once to f32 — within what
// the hardware's unspecified accumulation order allows. tf32 operands use
// the top 19 bits of their f32 (the hardware ignores the rest).
//
//===----------------------------------------------------------------------===//

#include "EmuDevice.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace kiln::rt::detail;

namespace {

enum class Elem { F16, BF16, TF32, F32, S8, E4M3, E5M2, E4M3Fnuz, E5M2Fnuz };

/// Whose layout tables apply.
enum class Family { NvMma, Mfma, WmmaGfx11, WmmaGfx12 };

struct Shape {
  int M, N, K;
};

int elemBytes(Elem E) {
  switch (E) {
  case Elem::F16:
  case Elem::BF16:
    return 2;
  case Elem::TF32:
  case Elem::F32:
    return 4;
  default:
    return 1;
  }
}

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

/// FNUZ fp8 with `ManBits` mantissa bits and exponent bias `Bias`.
double decodeFnuz(uint8_t B, int ManBits, int Bias) {
  if (B == 0x80)
    return NAN;
  int Exp = (B & 0x7f) >> ManBits, Man = B & ((1 << ManBits) - 1);
  double V = Exp == 0 ? std::ldexp(double(Man), 1 - Bias - ManBits)
                      : std::ldexp(double(Man | (1 << ManBits)),
                                   Exp - Bias - ManBits);
  return (B & 0x80) ? -V : V;
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
  case Elem::F32: {
    float F;
    std::memcpy(&F, P + 4 * I, 4);
    return F;
  }
  case Elem::S8:
    return double(int8_t(P[I]));
  case Elem::E4M3:
    return kiln::rt::f8e4m3ToFloat(P[I]);
  case Elem::E5M2:
    return kiln::rt::f8e5m2ToFloat(P[I]);
  case Elem::E4M3Fnuz:
    return decodeFnuz(P[I], 3, 8);
  case Elem::E5M2Fnuz:
    return decodeFnuz(P[I], 2, 16);
  }
  return 0;
}

struct InstrInfo {
  const char *Name;
  Family F;
  Shape S;
  Elem E; ///< A's elements (and B's, unless MixedB)
  bool IntAcc;
  int Lanes;
  bool MixedB = false; ///< B's elements are EB (fp8 E4M3 x E5M2)
  Elem EB = Elem::F16;
  Elem bElem() const { return MixedB ? EB : E; }
};

/// Elements of A, B and C/D that one lane holds.
int aElems(const InstrInfo &In) {
  return In.F == Family::WmmaGfx11 ? In.S.K : In.S.M * In.S.K / In.Lanes;
}
int bElems(const InstrInfo &In) {
  return In.F == Family::WmmaGfx11 ? In.S.K : In.S.K * In.S.N / In.Lanes;
}
int cElems(const InstrInfo &In) { return In.S.M * In.S.N / In.Lanes; }

/// Row and column of element `I` of lane `L` (the tables above).
void aCoord(const InstrInfo &In, int L, int I, int &Row, int &Col) {
  const Shape &S = In.S;
  switch (In.F) {
  case Family::NvMma: {
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
    return;
  }
  case Family::Mfma: {
    int E = aElems(In);
    Row = L % S.M;
    Col = E * (L / S.M) + I;
    return;
  }
  case Family::WmmaGfx11:
    Row = L % 16;
    Col = I;
    return;
  case Family::WmmaGfx12:
    Row = L % 16;
    Col = elemBytes(In.E) == 1 ? 8 * (L / 16) + I
                               : 4 * (L / 16) + 8 * (I / 4) + I % 4;
    return;
  }
}

void bCoord(const InstrInfo &In, int L, int I, int &Row, int &Col) {
  const Shape &S = In.S;
  switch (In.F) {
  case Family::NvMma: {
    int G = L >> 2, T = L & 3;
    Col = G;
    if (S.K == 16)
      Row = 2 * T + (I & 1) + (I >= 2 ? 8 : 0);
    else if (S.K == 8)
      Row = T + (I == 1 ? 4 : 0);
    else
      Row = 4 * T + (I & 3) + (I >= 4 ? 16 : 0);
    return;
  }
  case Family::Mfma:
  case Family::WmmaGfx11:
  case Family::WmmaGfx12:
    // B's (k, column) is A's (row, k) transposed, N for M.
    aCoord(In, L, I, Col, Row);
    return;
  }
}

void cCoord(const InstrInfo &In, int L, int I, int &Row, int &Col) {
  switch (In.F) {
  case Family::NvMma: {
    int G = L >> 2, T = L & 3;
    Row = G + (I >= 2 ? 8 : 0);
    Col = 2 * T + (I & 1);
    return;
  }
  case Family::Mfma:
    Col = L % In.S.M;
    Row = In.S.M == 32 ? 8 * (I / 4) + 4 * (L / 32) + I % 4
                       : 4 * (L / 16) + I;
    return;
  case Family::WmmaGfx11:
    Row = 2 * I + L / 16;
    Col = L % 16;
    return;
  case Family::WmmaGfx12:
    Row = 8 * (L / 16) + I;
    Col = L % 16;
    return;
  }
}

bool matrixProduct(const InstrInfo &In, const void *const *A, const void *const *B,
                   const void *const *C, void *const *D, std::string &Message) {
  const Shape &S = In.S;
  int ARegs = aElems(In), BRegs = bElems(In), CRegs = cElems(In);
  if (In.F == Family::WmmaGfx11) {
    // The upper half-wave repeats the lower one's operands.
    size_t ABytes = size_t(ARegs * elemBytes(In.E)),
           BBytes = size_t(BRegs * elemBytes(In.E));
    for (int L = 16; L < 32; ++L)
      if (std::memcmp(A[L], A[L - 16], ABytes) ||
          std::memcmp(B[L], B[L - 16], BBytes)) {
        Message = "matrix instruction '" + std::string(In.Name) + "': lane " +
                  std::to_string(L) + " holds other operands than lane " +
                  std::to_string(L - 16) +
                  " (lanes 16-31 must repeat lanes 0-15)";
        return false;
      }
  }
  std::vector<double> MA(size_t(S.M * S.K)), MB(size_t(S.K * S.N)),
      MC(size_t(S.M * S.N));
  std::vector<int64_t> IC(MC.size());
  for (int L = 0; L < In.Lanes; ++L) {
    int R, Cl;
    for (int I = 0; I < ARegs; ++I) {
      aCoord(In, L, I, R, Cl);
      MA[size_t(R * S.K + Cl)] = element(A[L], I, In.E);
    }
    for (int I = 0; I < BRegs; ++I) {
      bCoord(In, L, I, R, Cl);
      MB[size_t(R * S.N + Cl)] = element(B[L], I, In.bElem());
    }
    for (int I = 0; I < CRegs; ++I) {
      cCoord(In, L, I, R, Cl);
      if (In.IntAcc) {
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
  for (int L = 0; L < In.Lanes; ++L)
    for (int I = 0; I < CRegs; ++I) {
      int R, Cl;
      cCoord(In, L, I, R, Cl);
      auto *Out = static_cast<uint8_t *>(D[L]) + 4 * I;
      if (In.IntAcc) {
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
  static const InstrInfo Table[] = {
      {"nv.mma.m16n8k16.f16", Family::NvMma, {16, 8, 16}, Elem::F16, false, 32},
      {"nv.mma.m16n8k16.bf16", Family::NvMma, {16, 8, 16}, Elem::BF16, false, 32},
      {"nv.mma.m16n8k8.tf32", Family::NvMma, {16, 8, 8}, Elem::TF32, false, 32},
      {"nv.mma.m16n8k32.s8", Family::NvMma, {16, 8, 32}, Elem::S8, true, 32},
      {"nv.mma.m16n8k32.e4m3", Family::NvMma, {16, 8, 32}, Elem::E4M3, false, 32},
      {"nv.mma.m16n8k32.e5m2", Family::NvMma, {16, 8, 32}, Elem::E5M2, false, 32},
      {"nv.mma.m16n8k32.e4m3.e5m2", Family::NvMma, {16, 8, 32}, Elem::E4M3, false, 32, true, Elem::E5M2},
      {"nv.mma.m16n8k32.e5m2.e4m3", Family::NvMma, {16, 8, 32}, Elem::E5M2, false, 32, true, Elem::E4M3},
      // CDNA (wave64).
      {"amd.mfma.32x32x8.f16", Family::Mfma, {32, 32, 8}, Elem::F16, false, 64},
      {"amd.mfma.16x16x16.f16", Family::Mfma, {16, 16, 16}, Elem::F16, false, 64},
      {"amd.mfma.32x32x8.bf16", Family::Mfma, {32, 32, 8}, Elem::BF16, false, 64},
      {"amd.mfma.16x16x16.bf16", Family::Mfma, {16, 16, 16}, Elem::BF16, false, 64},
      {"amd.mfma.32x32x16.f16", Family::Mfma, {32, 32, 16}, Elem::F16, false, 64},
      {"amd.mfma.16x16x32.f16", Family::Mfma, {16, 16, 32}, Elem::F16, false, 64},
      {"amd.mfma.32x32x16.bf16", Family::Mfma, {32, 32, 16}, Elem::BF16, false, 64},
      {"amd.mfma.16x16x32.bf16", Family::Mfma, {16, 16, 32}, Elem::BF16, false, 64},
      {"amd.mfma.32x32x4.xf32", Family::Mfma, {32, 32, 4}, Elem::TF32, false, 64},
      {"amd.mfma.16x16x8.xf32", Family::Mfma, {16, 16, 8}, Elem::TF32, false, 64},
      {"amd.mfma.32x32x2.f32", Family::Mfma, {32, 32, 2}, Elem::F32, false, 64},
      {"amd.mfma.16x16x4.f32", Family::Mfma, {16, 16, 4}, Elem::F32, false, 64},
      {"amd.mfma.32x32x2.f32.tf32", Family::Mfma, {32, 32, 2}, Elem::F32, false, 64},
      {"amd.mfma.16x16x4.f32.tf32", Family::Mfma, {16, 16, 4}, Elem::F32, false, 64},
      {"amd.mfma.32x32x8.i8", Family::Mfma, {32, 32, 8}, Elem::S8, true, 64},
      {"amd.mfma.16x16x16.i8", Family::Mfma, {16, 16, 16}, Elem::S8, true, 64},
      {"amd.mfma.32x32x16.i8", Family::Mfma, {32, 32, 16}, Elem::S8, true, 64},
      {"amd.mfma.16x16x32.i8", Family::Mfma, {16, 16, 32}, Elem::S8, true, 64},
      {"amd.mfma.32x32x16.fp8", Family::Mfma, {32, 32, 16}, Elem::E4M3, false, 64},
      {"amd.mfma.16x16x32.fp8", Family::Mfma, {16, 16, 32}, Elem::E4M3, false, 64},
      {"amd.mfma.32x32x16.bf8", Family::Mfma, {32, 32, 16}, Elem::E5M2, false, 64},
      {"amd.mfma.16x16x32.bf8", Family::Mfma, {16, 16, 32}, Elem::E5M2, false, 64},
      {"amd.mfma.32x32x16.fp8_bf8", Family::Mfma, {32, 32, 16}, Elem::E4M3, false, 64, true, Elem::E5M2},
      {"amd.mfma.16x16x32.fp8_bf8", Family::Mfma, {16, 16, 32}, Elem::E4M3, false, 64, true, Elem::E5M2},
      {"amd.mfma.32x32x16.bf8_fp8", Family::Mfma, {32, 32, 16}, Elem::E5M2, false, 64, true, Elem::E4M3},
      {"amd.mfma.16x16x32.bf8_fp8", Family::Mfma, {16, 16, 32}, Elem::E5M2, false, 64, true, Elem::E4M3},
      {"amd.mfma.32x32x16.fp8.fnuz", Family::Mfma, {32, 32, 16}, Elem::E4M3Fnuz, false, 64},
      {"amd.mfma.16x16x32.fp8.fnuz", Family::Mfma, {16, 16, 32}, Elem::E4M3Fnuz, false, 64},
      {"amd.mfma.32x32x16.bf8.fnuz", Family::Mfma, {32, 32, 16}, Elem::E5M2Fnuz, false, 64},
      {"amd.mfma.16x16x32.bf8.fnuz", Family::Mfma, {16, 16, 32}, Elem::E5M2Fnuz, false, 64},
      {"amd.mfma.32x32x16.fp8_bf8.fnuz", Family::Mfma, {32, 32, 16}, Elem::E4M3Fnuz, false, 64, true, Elem::E5M2Fnuz},
      {"amd.mfma.16x16x32.fp8_bf8.fnuz", Family::Mfma, {16, 16, 32}, Elem::E4M3Fnuz, false, 64, true, Elem::E5M2Fnuz},
      {"amd.mfma.32x32x16.bf8_fp8.fnuz", Family::Mfma, {32, 32, 16}, Elem::E5M2Fnuz, false, 64, true, Elem::E4M3Fnuz},
      {"amd.mfma.16x16x32.bf8_fp8.fnuz", Family::Mfma, {16, 16, 32}, Elem::E5M2Fnuz, false, 64, true, Elem::E4M3Fnuz},
      // RDNA (wave32).
      {"amd.wmma.gfx11.f16", Family::WmmaGfx11, {16, 16, 16}, Elem::F16, false, 32},
      {"amd.wmma.gfx11.bf16", Family::WmmaGfx11, {16, 16, 16}, Elem::BF16, false, 32},
      {"amd.wmma.gfx11.i8", Family::WmmaGfx11, {16, 16, 16}, Elem::S8, true, 32},
      {"amd.wmma.gfx12.f16", Family::WmmaGfx12, {16, 16, 16}, Elem::F16, false, 32},
      {"amd.wmma.gfx12.bf16", Family::WmmaGfx12, {16, 16, 16}, Elem::BF16, false, 32},
      {"amd.wmma.gfx12.i8", Family::WmmaGfx12, {16, 16, 16}, Elem::S8, true, 32},
  };
  for (const InstrInfo &In : Table)
    if (Instr == In.Name) {
      if (Lanes != In.Lanes) {
        Message = "matrix instruction '" + Instr + "' needs " +
                  std::to_string(In.Lanes) + " lanes per warp";
        return false;
      }
      return matrixProduct(In, A, B, C, D, Message);
    }
  Message = "matrix instruction '" + Instr + "' is not emulated";
  return false;
}

//===----------------------------------------------------------------------===//
// Warpgroup instructions (wgmma)
//===----------------------------------------------------------------------===//
//
// PTX ISA, wgmma: "Register fragments" and "Shared memory matrix layout".
// In warp w of the group, lane l has g = l >> 2, t = l % 4. D (N/2 f32):
// element i at row 16 w + g + 8 [(i >> 1) & 1], column 8 (i >> 2) + 2t +
// (i & 1). A from registers: mma.m16n8k16's A fragment (k16, 16-bit types)
// or mma.m16n8k32's (k32, e4m3/e5m2), rows + 16 w. Shared fp8 operands are
// K-major only (the ISA's transposes are for 16-bit types).
//
// A shared operand's element (x, k) — x the row of A or the column of B —
// is at a byte address built from the descriptor: start (bits 0-13), LBO
// (16-29), SBO (32-45), each x 16 bytes, and the swizzle mode (62-63: 1 =
// 128 bytes, 2 = 64, 3 = 32, 0 = none, S below). Operands are made of
// 8 x 16-byte core matrices; K-major operands keep 16 bytes of K together,
// MN-major ones 16 bytes of x:
//
//   K-major,  no swizzle:  8 rows x along SBO, 8-element K blocks along LBO
//   K-major,  S bytes:     rows of S bytes, 8-row atoms along SBO
//   MN-major, no swizzle:  8-element x blocks along SBO, 8 K rows along LBO
//   MN-major, S bytes:     K rows of S bytes of x, 8-row atoms along SBO,
//                          S-byte x blocks along LBO
//
// and a swizzled address has its 16-byte chunk index (bits 4..) XOR-ed
// with its row within the atom (bits 7..), over log2(S / 16) bits.

namespace {

int64_t wgmmaAddress(uint64_t Desc, bool MNMajor, int64_t X, int64_t K,
                     int64_t ElemBytes) {
  int64_t Start = int64_t(Desc & 0x3fff) << 4;
  int64_t Lbo = int64_t((Desc >> 16) & 0x3fff) << 4;
  int64_t Sbo = int64_t((Desc >> 32) & 0x3fff) << 4;
  static const int64_t Widths[4] = {0, 128, 64, 32};
  int64_t S = Widths[Desc >> 62];
  int64_t Per16 = 16 / ElemBytes; // elements in 16 bytes
  int64_t Addr;
  if (!MNMajor) {
    if (S == 0)
      Addr = Start + (X / 8) * Sbo + (K / Per16) * Lbo + (X % 8) * 16 +
             (K % Per16) * ElemBytes;
    else
      Addr = Start + (X / 8) * Sbo + (X % 8) * S + K * ElemBytes;
  } else {
    int64_t PerRow = S ? S / ElemBytes : Per16;
    if (S == 0)
      Addr = Start + (X / Per16) * Sbo + (K / 8) * Lbo + (K % 8) * 16 +
             (X % Per16) * ElemBytes;
    else
      Addr = Start + (X / PerRow) * Lbo + (K / 8) * Sbo + (K % 8) * S +
             (X % PerRow) * ElemBytes;
  }
  if (S) {
    int64_t RowBits = S / 16 - 1; // 7, 3 or 1
    Addr ^= ((Addr >> 7) & RowBits) << 4;
  }
  return Addr;
}

} // namespace

bool kiln::rt::detail::emulateWarpgroupMatrixInstr(
    const std::string &Instr, int WarpInGroup, uint64_t DescA,
    const void *const *A, uint64_t DescB, int Flags, const void *const *C,
    void *const *D, const uint8_t *(*Read)(void *Ctx, int64_t Offset),
    void *Ctx, double *Scratch, std::string &Message) {
  // "nv.wgmma.m64n<N>k16.<f16|bf16>", "nv.wgmma.m64n<N>k32.<e4m3|e5m2>",
  // "nv.wgmma.m64n<N>k32.<e4m3|e5m2>.<e4m3|e5m2>" (A's type, then B's)
  int N = 0, K = 0;
  char Type[16] = {0};
  Elem E = Elem::F16, EB = Elem::F16;
  bool Known =
      std::sscanf(Instr.c_str(), "nv.wgmma.m64n%dk%d.%15s", &N, &K, Type) ==
          3 &&
      N >= 8 && N <= 256 && N % 8 == 0;
  std::string TA = Type, TB = Type;
  if (size_t Dot = TA.find('.'); Dot != std::string::npos) {
    TB = TA.substr(Dot + 1);
    TA.resize(Dot);
  }
  auto fp8 = [](const std::string &T, Elem &Out) {
    Out = T == "e4m3" ? Elem::E4M3 : Elem::E5M2;
    return T == "e4m3" || T == "e5m2";
  };
  if (Known && K == 16 && TA == "f16" && TB == TA)
    E = EB = Elem::F16;
  else if (Known && K == 16 && TA == "bf16" && TB == TA)
    E = EB = Elem::BF16;
  else if (!(Known && K == 32 && fp8(TA, E) && fp8(TB, EB)))
    Known = false;
  if (!Known) {
    Message = "matrix instruction '" + Instr + "' is not emulated";
    return false;
  }
  // The ISA has transposes (MN-major shared operands) for 16-bit types
  // only.
  if (K == 32 && (Flags & 3)) {
    Message = "'" + Instr + "' reads only K-major operands from shared memory";
    return false;
  }
  const int Rows = 16, Lanes = 32, Bytes = elemBytes(E);
  auto sharedElement = [&](uint64_t Desc, bool MNMajor, int X, int Kk,
                           Elem Type) {
    int64_t Addr = wgmmaAddress(Desc, MNMajor, X, Kk, Bytes);
    return element(Read(Ctx, Addr & ~int64_t(15)) + (Addr & 15), 0, Type);
  };
  double *MA = Scratch, *MB = Scratch + Rows * K;
  if (A) {
    // mma.m16n8k16's or m16n8k32's A fragment.
    InstrInfo In{"", Family::NvMma, {16, 8, K}, E, false, 32};
    for (int L = 0; L < Lanes; ++L)
      for (int I = 0; I < aElems(In); ++I) {
        int R, Cl;
        aCoord(In, L, I, R, Cl);
        MA[size_t(R * K + Cl)] = element(A[L], I, E);
      }
  } else {
    for (int R = 0; R < Rows; ++R)
      for (int Kk = 0; Kk < K; ++Kk)
        MA[size_t(R * K + Kk)] =
            sharedElement(DescA, Flags & 1, 16 * WarpInGroup + R, Kk, E);
  }
  for (int Kk = 0; Kk < K; ++Kk)
    for (int Cl = 0; Cl < N; ++Cl)
      MB[size_t(Kk * N + Cl)] = sharedElement(DescB, Flags & 2, Cl, Kk, EB);
  for (int L = 0; L < Lanes; ++L) {
    int G = L >> 2, T = L & 3;
    for (int I = 0; I < N / 2; ++I) {
      int R = G + 8 * ((I >> 1) & 1), Cl = 8 * (I >> 2) + 2 * T + (I & 1);
      float Acc;
      std::memcpy(&Acc, static_cast<const uint8_t *>(C[L]) + 4 * I, 4);
      double Sum = Acc;
      for (int Kk = 0; Kk < K; ++Kk)
        Sum += MA[size_t(R * K + Kk)] * MB[size_t(Kk * N + Cl)];
      float F = float(Sum);
      std::memcpy(static_cast<uint8_t *>(D[L]) + 4 * I, &F, 4);
    }
  }
  return true;
}
