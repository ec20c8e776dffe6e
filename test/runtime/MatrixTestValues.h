//===- MatrixTestValues.h - Small integers in matrix operand types -*- C++ -*-===//
//
// Encodings of small integers (|v| <= 8) in the operand types of the matrix
// instructions, for tests that feed the emulator's instructions
// (test/runtime/EmuMatrixTest.cpp, test/unit/MatrixLayoutTest.cpp): every
// product and sum of such values is exact in every type.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_RUNTIME_MATRIXTESTVALUES_H
#define KILN_TEST_RUNTIME_MATRIXTESTVALUES_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kiln::test {

/// TF32 covers f32 operands too (the same bits). The FNUZ fp8 kinds are
/// gfx942's (exponent bias 8 and 16).
enum class Kind { F16, BF16, TF32, S8, E4M3, E5M2, E4M3Fnuz, E5M2Fnuz };

/// Encodes a small integer (|v| <= 8) in the operand type.
inline void encode(Kind E, int V, uint8_t *Out) {
  float F = float(V);
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  switch (E) {
  case Kind::F16: {
    // Small integers: exponent rebias from 127 to 15, mantissa cut.
    uint16_t H = V == 0 ? 0
                        : uint16_t(((Bits >> 16) & 0x8000) |
                                   ((((Bits >> 23) & 0xff) - 112) << 10) |
                                   ((Bits >> 13) & 0x3ff));
    std::memcpy(Out, &H, 2);
    return;
  }
  case Kind::BF16: {
    uint16_t H = uint16_t(Bits >> 16);
    std::memcpy(Out, &H, 2);
    return;
  }
  case Kind::TF32:
    std::memcpy(Out, &Bits, 4);
    return;
  case Kind::S8:
    Out[0] = uint8_t(int8_t(V));
    return;
  case Kind::E4M3:
  case Kind::E5M2:
  case Kind::E4M3Fnuz:
  case Kind::E5M2Fnuz: {
    bool E4 = E == Kind::E4M3 || E == Kind::E4M3Fnuz;
    bool Fnuz = E == Kind::E4M3Fnuz || E == Kind::E5M2Fnuz;
    int ManBits = E4 ? 3 : 2, Bias = (E4 ? 7 : 15) + (Fnuz ? 1 : 0);
    if (V == 0) {
      Out[0] = 0;
      return;
    }
    int Exp = int((Bits >> 23) & 0xff) - 127 + Bias;
    uint32_t Man = (Bits >> (23 - ManBits)) & ((1u << ManBits) - 1);
    Out[0] = uint8_t(((Bits >> 31) << 7) | (uint32_t(Exp) << ManBits) | Man);
    return;
  }
  }
}

inline size_t elemBytes(Kind E) {
  return E == Kind::F16 || E == Kind::BF16 ? 2 : E == Kind::TF32 ? 4 : 1;
}

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_MATRIXTESTVALUES_H
