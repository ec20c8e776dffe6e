//===- Types.cpp - Scalar types, conversions, arguments -------------------===//

#include "Fault.h"
#include "Internal.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <cstdio>
#include <cstring>

using namespace kiln::rt;

namespace {

struct TypeRow {
  std::string_view Name;
  size_t Size;
};

const TypeRow kTypes[] = {
    {"bool", 1}, {"i8", 1},  {"i16", 2},  {"i32", 4}, {"i64", 8},
    {"u8", 1},   {"u16", 2}, {"u32", 4},  {"u64", 8}, {"f16", 2},
    {"bf16", 2}, {"f32", 4}, {"f64", 8}, {"f8e4m3", 1}, {"f8e5m2", 1},
};

uint32_t floatBits(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  return U;
}

float bitsFloat(uint32_t U) {
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

} // namespace

std::string_view kiln::rt::typeName(ScalarType T) {
  return kTypes[unsigned(T)].Name;
}

size_t kiln::rt::typeSize(ScalarType T) { return kTypes[unsigned(T)].Size; }

bool kiln::rt::isIntegerType(ScalarType T) {
  return T >= ScalarType::I8 && T <= ScalarType::U64;
}

bool kiln::rt::isSignedType(ScalarType T) {
  return T >= ScalarType::I8 && T <= ScalarType::I64;
}

bool kiln::rt::isFloatType(ScalarType T) { return T >= ScalarType::F16; }

bool kiln::rt::isFp8(ScalarType T) {
  return T == ScalarType::F8E4M3 || T == ScalarType::F8E5M2;
}

std::optional<ScalarType> kiln::rt::parseScalarType(std::string_view Name) {
  for (unsigned I = 0; I < std::size(kTypes); ++I)
    if (kTypes[I].Name == Name)
      return ScalarType(I);
  return std::nullopt;
}

std::string ParamType::str() const {
  return (IsPointer ? "*" : "") + std::string(typeName(Element));
}

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

uint16_t kiln::rt::floatToBF16(float Value) {
  uint32_t U = floatBits(Value);
  if ((U & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign and payload, quiet
    return uint16_t((U >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits; a carry into the exponent
  // is right (it reaches infinity from the largest finite values).
  U += 0x7fffu + ((U >> 16) & 1u);
  return uint16_t(U >> 16);
}

float kiln::rt::bf16ToFloat(uint16_t Bits) {
  return bitsFloat(uint32_t(Bits) << 16);
}

uint16_t kiln::rt::floatToHalf(float Value) {
  uint32_t U = floatBits(Value);
  uint32_t Sign = (U >> 16) & 0x8000u;
  U &= 0x7fffffffu;
  if (U > 0x7f800000u) // NaN: quiet, keep the high payload bits
    return uint16_t(Sign | 0x7e00u | ((U >> 13) & 0x3ffu));
  if (U >= 0x47800000u) // 2^16 and above (and inf): infinity
    return uint16_t(Sign | 0x7c00u);
  if (U < 0x38800000u) {
    // Subnormal or zero: adding 0.5 (whose ulp is 2^-24, the half
    // subnormal step) leaves round-to-even(|x| / 2^-24) in the low bits.
    const uint32_t Magic = 126u << 23;
    uint32_t R = floatBits(bitsFloat(U) + bitsFloat(Magic)) - Magic;
    return uint16_t(Sign | R);
  }
  uint32_t Odd = (U >> 13) & 1u;
  U += (uint32_t(15 - 127) << 23) + 0xfffu + Odd;
  return uint16_t(Sign | (U >> 13));
}

float kiln::rt::halfToFloat(uint16_t Bits) {
  uint32_t Sign = uint32_t(Bits & 0x8000u) << 16;
  uint32_t Exp = (Bits >> 10) & 0x1fu;
  uint32_t Mant = Bits & 0x3ffu;
  if (Exp == 0x1f)
    return bitsFloat(Sign | 0x7f800000u | (Mant << 13));
  if (Exp == 0) {
    float F = float(Mant) * (1.0f / 16777216.0f); // exact: Mant * 2^-24
    return bitsFloat(Sign | floatBits(F));
  }
  return bitsFloat(Sign | ((Exp + 112) << 23) | (Mant << 13));
}

//===----------------------------------------------------------------------===//
// fp8
//===----------------------------------------------------------------------===//

namespace {

/// The two OCP formats: stored mantissa bits, exponent bias, whether the
/// all-ones exponent is an infinity (E5M2) and the largest finite encoding.
struct Fp8Format {
  int MantBits;
  int Bias;
  bool HasInf;
  uint32_t MaxFinite;
};
constexpr Fp8Format kE4M3{3, 7, false, 0x7e};
constexpr Fp8Format kE5M2{2, 15, true, 0x7b};

uint8_t encodeFp8(float Value, const Fp8Format &F) {
  uint32_t U = floatBits(Value);
  uint32_t Sign = (U >> 24) & 0x80u;
  uint32_t A = U & 0x7fffffffu;
  if (A > 0x7f800000u)
    return uint8_t(Sign | 0x7fu);
  if (A == 0x7f800000u)
    return uint8_t(Sign | (F.HasInf ? 0x7cu : F.MaxFinite));
  uint32_t Q;
  if (A < uint32_t(127 + 1 - F.Bias) << 23) {
    // Below the normal range: |x| / (the subnormal step), rounded to an
    // integer (the scaling by a power of two is exact; nearbyint rounds to
    // nearest even in the default mode).
    float Scaled = bitsFloat(A) * std::ldexp(1.0f, F.Bias - 1 + F.MantBits);
    Q = uint32_t(std::nearbyint(Scaled));
  } else {
    int Shift = 23 - F.MantBits;
    uint32_t R = A + (1u << (Shift - 1)) - 1 + ((A >> Shift) & 1u);
    Q = (R >> Shift) - (uint32_t(127 - F.Bias) << F.MantBits);
  }
  return uint8_t(Sign | std::min(Q, F.MaxFinite));
}

float decodeFp8(uint8_t Bits, const Fp8Format &F) {
  uint32_t Sign = uint32_t(Bits & 0x80u) << 24;
  uint32_t Mag = Bits & 0x7fu;
  uint32_t Out;
  if (F.HasInf && Mag >= 0x7cu)
    Out = Mag == 0x7cu ? 0x7f800000u : 0x7fc00000u;
  else if (!F.HasInf && Mag == 0x7fu)
    Out = 0x7fc00000u;
  else if (Mag < (1u << F.MantBits)) // zero or subnormal: exact
    Out = floatBits(float(Mag) * std::ldexp(1.0f, 1 - F.Bias - F.MantBits));
  else
    Out = (Mag << (23 - F.MantBits)) + (uint32_t(127 - F.Bias) << 23);
  return bitsFloat(Sign | Out);
}

} // namespace

uint8_t kiln::rt::floatToF8E4M3(float Value) { return encodeFp8(Value, kE4M3); }

uint64_t kiln::rt::toFloatBits(ScalarType T, double Value) {
  switch (T) {
  case ScalarType::F16:
    return floatToHalf(float(Value));
  case ScalarType::BF16:
    return floatToBF16(float(Value));
  case ScalarType::F8E4M3:
    return floatToF8E4M3(float(Value));
  case ScalarType::F8E5M2:
    return floatToF8E5M2(float(Value));
  case ScalarType::F32:
    return floatBits(float(Value));
  default: {
    uint64_t Bits;
    std::memcpy(&Bits, &Value, 8);
    return Bits;
  }
  }
}

double kiln::rt::floatValue(ScalarType T, uint64_t Bits) {
  switch (T) {
  case ScalarType::F16:
    return halfToFloat(uint16_t(Bits));
  case ScalarType::BF16:
    return bf16ToFloat(uint16_t(Bits));
  case ScalarType::F8E4M3:
    return f8e4m3ToFloat(uint8_t(Bits));
  case ScalarType::F8E5M2:
    return f8e5m2ToFloat(uint8_t(Bits));
  case ScalarType::F32:
    return bitsFloat(uint32_t(Bits));
  default: {
    double D;
    std::memcpy(&D, &Bits, 8);
    return D;
  }
  }
}
float kiln::rt::f8e4m3ToFloat(uint8_t Bits) { return decodeFp8(Bits, kE4M3); }
uint8_t kiln::rt::floatToF8E5M2(float Value) { return encodeFp8(Value, kE5M2); }
float kiln::rt::f8e5m2ToFloat(uint8_t Bits) { return decodeFp8(Bits, kE5M2); }

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

Arg Arg::pointer(const Buffer &B, std::optional<ScalarType> Element) {
  Arg A = pointer(B.data(), Element);
  A.DeviceTag = B.deviceTag();
  A.BufferBytes = B.size();
  return A;
}

Arg Arg::pointer(const void *Address, std::optional<ScalarType> Element) {
  Arg A;
  A.Pointer = true;
  A.Typed = Element.has_value();
  A.Type = Element.value_or(ScalarType::U8);
  A.Address = Address;
  A.Bits = uint64_t(uintptr_t(Address));
  std::memcpy(A.Storage, &Address, sizeof(Address));
  return A;
}

Arg Arg::advanced(size_t Bytes) const {
  if (!Pointer)
    return *this;
  Arg A = *this;
  // Integer arithmetic: advancing a null pointer is no undefined behavior.
  A.Address = reinterpret_cast<const void *>(uintptr_t(Address) + Bytes);
  A.Bits = uint64_t(uintptr_t(A.Address));
  std::memcpy(A.Storage, &A.Address, sizeof(A.Address));
  A.BufferBytes = Bytes < BufferBytes ? BufferBytes - Bytes : 0;
  return A;
}

Arg Arg::scalarBits(ScalarType T, uint64_t Bits) {
  Arg A;
  A.Type = T;
  size_t Size = typeSize(T);
  if (Size < 8)
    Bits &= (uint64_t(1) << (8 * Size)) - 1;
  if (T == ScalarType::Bool)
    Bits = Bits != 0;
  A.Bits = Bits;
  // The natural representation: the value of the type, stored in its size.
  switch (Size) {
  case 1: {
    uint8_t V = uint8_t(Bits);
    std::memcpy(A.Storage, &V, 1);
    break;
  }
  case 2: {
    uint16_t V = uint16_t(Bits);
    std::memcpy(A.Storage, &V, 2);
    break;
  }
  case 4: {
    uint32_t V = uint32_t(Bits);
    std::memcpy(A.Storage, &V, 4);
    break;
  }
  default:
    std::memcpy(A.Storage, &Bits, 8);
    break;
  }
  return A;
}

Arg Arg::f32(float V) { return scalarBits(ScalarType::F32, floatBits(V)); }

Arg Arg::f64(double V) {
  uint64_t U;
  std::memcpy(&U, &V, 8);
  return scalarBits(ScalarType::F64, U);
}

int64_t Arg::asInt64() const {
  if (!isSignedType(Type))
    return int64_t(Bits);
  unsigned Width = unsigned(8 * typeSize(Type));
  if (Width == 64)
    return int64_t(Bits);
  uint64_t SignBit = uint64_t(1) << (Width - 1);
  return int64_t((Bits ^ SignBit) - SignBit);
}

const void *Arg::storage() const { return Storage; }

std::string Arg::str() const {
  if (Pointer) {
    char Hex[32];
    std::snprintf(Hex, sizeof(Hex), "0x%llx", (unsigned long long)Bits);
    return (Typed ? "*" + std::string(typeName(Type)) : "pointer") + " " + Hex;
  }
  std::string Out(typeName(Type));
  Out += ' ';
  if (Type == ScalarType::Bool)
    return Out + (Bits ? "true" : "false");
  if (isSignedType(Type))
    return Out + std::to_string(asInt64());
  if (isIntegerType(Type))
    return Out + std::to_string(Bits);
  double D = floatValue(Type, Bits);
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%g", D);
  return Out + Buf;
}

//===----------------------------------------------------------------------===//
// Kernels and names
//===----------------------------------------------------------------------===//

std::string KernelInfo::variantName(const VariantInfo &V) const {
  return Name + "_v" + std::to_string(V.Index);
}

std::string KernelInfo::variantConfig(const VariantInfo &V) const {
  std::string Out;
  for (size_t I = 0; I < ConstParams.size() && I < V.ConstValues.size(); ++I) {
    if (I)
      Out += ", ";
    Out += ConstParams[I] + "=";
    if (I < ConstIsBool.size() && ConstIsBool[I])
      Out += V.ConstValues[I] ? "true" : "false";
    else
      Out += std::to_string(V.ConstValues[I]);
  }
  return Out;
}

uint64_t LaunchPlan::programs() const {
  return uint64_t(Grid[0]) * uint64_t(Grid[1]) * uint64_t(Grid[2]);
}

std::string kiln::rt::nearestName(std::string_view Name,
                                  const std::vector<std::string> &Candidates) {
  // Optimal string alignment distance (a transposition costs 1).
  auto Distance = [](std::string_view A, std::string_view B) {
    std::vector<std::vector<size_t>> D(A.size() + 1,
                                       std::vector<size_t>(B.size() + 1));
    for (size_t I = 0; I <= A.size(); ++I)
      D[I][0] = I;
    for (size_t J = 0; J <= B.size(); ++J)
      D[0][J] = J;
    for (size_t I = 1; I <= A.size(); ++I)
      for (size_t J = 1; J <= B.size(); ++J) {
        size_t Cost = A[I - 1] == B[J - 1] ? 0 : 1;
        D[I][J] = std::min({D[I - 1][J] + 1, D[I][J - 1] + 1,
                            D[I - 1][J - 1] + Cost});
        if (I > 1 && J > 1 && A[I - 1] == B[J - 2] && A[I - 2] == B[J - 1])
          D[I][J] = std::min(D[I][J], D[I - 2][J - 2] + 1);
      }
    return D[A.size()][B.size()];
  };
  if (Name.size() > 256)
    return "";
  std::string Best;
  size_t BestDistance = std::max<size_t>(1, Name.size() / 3) + 1;
  for (const std::string &C : Candidates) {
    if (C.size() > 256)
      continue;
    size_t Dist = Distance(Name, C);
    if (Dist < BestDistance) {
      BestDistance = Dist;
      Best = C;
    }
  }
  return Best;
}

std::string kiln::rt::detail::joinNames(const std::vector<std::string> &Names) {
  std::string Out;
  for (const std::string &N : Names) {
    if (!Out.empty())
      Out += ", ";
    Out += N;
  }
  return Out;
}

std::string kiln::rt::detail::byteSize(uint64_t Bytes) {
  const char *Units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  unsigned U = 0;
  uint64_t Whole = Bytes;
  while (U < 4 && Whole >= 1024 && Whole % 1024 == 0) {
    Whole /= 1024;
    ++U;
  }
  if (U == 0 && Bytes >= 1024) {
    char Buf[32];
    double V = double(Bytes);
    while (U < 4 && V >= 1024) {
      V /= 1024;
      ++U;
    }
    std::snprintf(Buf, sizeof(Buf), "%.1f %s", V, Units[U]);
    return Buf;
  }
  return std::to_string(Whole) + " " + Units[U];
}

Expected<std::vector<uint8_t>>
kiln::rt::detail::readWholeFile(const std::string &Path, uint64_t Limit,
                                const char *What) {
  // Size 0: not known (a pipe, a file that grows while read).
  auto TooLarge = [&](uint64_t Size) {
    return Error(ErrorCode::InvalidArgument,
                 "cannot read '" + Path + "': it is " +
                     (Size ? byteSize(Size) + ", " : std::string()) +
                     "over the limit of " + byteSize(Limit) + " for a " +
                     What);
  };
  std::FILE *F = nullptr;
  if (fault::inject(fault::Point::FileRead, "fopen"))
    errno = EIO;
  else
    F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return Error(ErrorCode::IO,
                 "cannot read '" + Path + "': " + std::strerror(errno));
  struct stat St;
  if (fstat(fileno(F), &St) == 0 && S_ISREG(St.st_mode) &&
      uint64_t(St.st_size) > Limit) {
    std::fclose(F);
    return TooLarge(uint64_t(St.st_size));
  }
  std::vector<uint8_t> Bytes;
  uint8_t Chunk[1 << 16];
  bool Failed = false;
  try {
    size_t N;
    while ((N = std::fread(Chunk, 1, sizeof(Chunk), F)) > 0) {
      // A file that grows while read (or a pipe) is held to the limit too.
      if (N > Limit - Bytes.size()) {
        std::fclose(F);
        return TooLarge(0);
      }
      Bytes.insert(Bytes.end(), Chunk, Chunk + N);
    }
    Failed = std::ferror(F);
    if (!Failed && fault::inject(fault::Point::FileRead, "fread")) {
      Failed = true;
      errno = EIO;
    }
  } catch (const std::bad_alloc &) {
    std::fclose(F);
    return Error(ErrorCode::OutOfMemory,
                 "cannot read '" + Path + "': out of memory");
  }
  int SavedErrno = errno;
  std::fclose(F);
  if (Failed)
    return Error(ErrorCode::IO, "cannot read '" + Path +
                                    "': " + std::strerror(SavedErrno));
  return Bytes;
}
