//===- kiln/npy.h - NumPy .npy files ----------------------------*- C++ -*-===//
//
// Reading and writing NumPy's .npy format (versions 1.0, 2.0 and 3.0 of
// the header; little-endian, C order), for kiln-run and for host programs
// that feed kernels from Python. Dtypes: b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4
// f8. bfloat16, float8_e4m3fn and float8_e5m2 have no NumPy dtype: see
// convertForParam / convertForOutput.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_NPY_H
#define KILN_NPY_H

#include "kiln/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

/// A C-order array. `Type` is never BF16 or an fp8 type.
struct NpyArray {
  ScalarType Type = ScalarType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Data;

  /// Product of Shape (1 for a 0-d array).
  uint64_t numElements() const;
};

/// "<f4", "|b1", ...; empty for BF16 and the fp8 types.
std::string npyDescr(ScalarType T);
/// NumPy's name of the dtype: "float32", "int8", "bool" (ml_dtypes' names
/// for bf16 and fp8: "bfloat16", "float8_e4m3fn", "float8_e5m2").
std::string npyTypeName(ScalarType T);

/// Parses a whole .npy file held in memory. `Name` is used in messages.
Expected<NpyArray> parseNpy(const uint8_t *Data, size_t Size,
                            const std::string &Name);
Expected<NpyArray> readNpyFile(const std::string &Path);

/// The bytes of a version 1.0 file (2.0 when the header needs it).
std::vector<uint8_t> serializeNpy(const NpyArray &A);
Error writeNpyFile(const std::string &Path, const NpyArray &A);

/// The array's bytes as elements of `Param` (a pointer parameter's element
/// type): the dtype must be `Param`'s, except that bf16 takes float32
/// (rounded to nearest even) or uint16 (raw bits), and f8e4m3/f8e5m2 take
/// float32 (converted as kernels convert: floatToF8E4M3) or uint8 (raw
/// bits). `What` names the array
/// in messages ("argument 'x' ('x.npy')").
Expected<std::vector<uint8_t>> convertForParam(const NpyArray &A,
                                               ScalarType Param,
                                               const std::string &What);
/// An array of `Shape` from elements of `Param`; bf16 and fp8 become
/// float32 (exactly).
NpyArray convertForOutput(const uint8_t *Data, ScalarType Param,
                          const std::vector<int64_t> &Shape);

} // namespace kiln::rt

#endif // KILN_NPY_H
