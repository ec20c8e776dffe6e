//===- NpyTest.cpp - .npy files and 16-bit float conversions --------------===//

#include "TestUtil.h"
#include "kiln/npy.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

float fromBits(uint32_t U) {
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

/// A .npy file with a hand-written header (any version, any dict).
std::string npyFile(const std::string &Dict, unsigned Major = 1,
                    const std::string &Data = "") {
  std::string Out = "\x93NUMPY";
  Out += char(Major);
  Out += '\0';
  std::string Header = Dict + "\n";
  if (Major == 1) {
    Out += char(Header.size() & 0xff);
    Out += char(Header.size() >> 8);
  } else {
    for (int I = 0; I < 4; ++I)
      Out += char(Header.size() >> (8 * I));
  }
  return Out + Header + Data;
}

std::string parseError(const std::string &Bytes) {
  auto A = parseNpy(reinterpret_cast<const uint8_t *>(Bytes.data()),
                    Bytes.size(), "a.npy");
  EXPECT_FALSE(A);
  return A ? "" : A.error().message();
}

TEST(Npy, RoundTripEveryDtype) {
  const ScalarType Types[] = {
      ScalarType::Bool, ScalarType::I8,  ScalarType::I16, ScalarType::I32,
      ScalarType::I64,  ScalarType::U8,  ScalarType::U16, ScalarType::U32,
      ScalarType::U64,  ScalarType::F16, ScalarType::F32, ScalarType::F64};
  const std::vector<std::vector<int64_t>> Shapes = {{}, {0}, {5}, {2, 3},
                                                    {2, 1, 4}};
  for (ScalarType T : Types)
    for (const auto &Shape : Shapes) {
      NpyArray A;
      A.Type = T;
      A.Shape = Shape;
      A.Data.resize(A.numElements() * typeSize(T));
      for (size_t I = 0; I < A.Data.size(); ++I)
        A.Data[I] = T == ScalarType::Bool ? uint8_t(I % 2) : uint8_t(I * 37);
      std::vector<uint8_t> Bytes = serializeNpy(A);
      ASSERT_EQ(std::memcmp(Bytes.data(), "\x93NUMPY\x01\x00", 8), 0);
      size_t HeaderLength = Bytes[8] | Bytes[9] << 8;
      EXPECT_EQ((10 + HeaderLength) % 64, 0u);
      EXPECT_EQ(Bytes[10 + HeaderLength - 1], '\n');
      auto B = parseNpy(Bytes.data(), Bytes.size(), "x.npy");
      ASSERT_TRUE(B) << typeName(T) << ": " << B.error().message();
      EXPECT_EQ(B->Type, T);
      EXPECT_EQ(B->Shape, Shape);
      EXPECT_EQ(B->Data, A.Data);
    }
}

TEST(Npy, HeaderText) {
  NpyArray A;
  A.Type = ScalarType::F32;
  A.Shape = {3};
  A.Data.resize(12);
  std::vector<uint8_t> Bytes = serializeNpy(A);
  std::string Header(Bytes.begin() + 10, Bytes.end() - 12);
  EXPECT_EQ(Bytes.size(), 128u + 12u);
  EXPECT_EQ(Header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(3,), }",
                         0),
            0u)
      << Header;
  EXPECT_EQ(npyDescr(ScalarType::U8), "|u1");
  EXPECT_EQ(npyDescr(ScalarType::I64), "<i8");
  EXPECT_EQ(npyDescr(ScalarType::BF16), "");
  EXPECT_EQ(npyTypeName(ScalarType::F16), "float16");
}

TEST(Npy, OtherVersionsAndSpellings) {
  std::string Data(8, '\x01');
  for (unsigned Major : {2u, 3u}) {
    std::string F = npyFile(
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", Major,
        Data);
    auto A = parseNpy(reinterpret_cast<const uint8_t *>(F.data()), F.size(),
                      "v.npy");
    ASSERT_TRUE(A) << A.error().message();
    EXPECT_EQ(A->Type, ScalarType::I32);
    EXPECT_EQ(A->Shape, (std::vector<int64_t>{2}));
  }
  // Double quotes, no trailing comma, other key order, '|' and '='.
  std::string F = npyFile(
      "{\"shape\": (1, 2),\"fortran_order\": False,\"descr\": \"=u2\"}", 1,
      std::string(4, '\0'));
  auto A = parseNpy(reinterpret_cast<const uint8_t *>(F.data()), F.size(),
                    "v.npy");
  ASSERT_TRUE(A) << A.error().message();
  EXPECT_EQ(A->Type, ScalarType::U16);
}

TEST(Npy, Errors) {
  const std::string Dict1 =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_EQ(parseError("hello"), "a.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parseError(npyFile(Dict1, 4)),
            "a.npy: .npy format version 4.0 is not supported (1.0, 2.0 and "
            "3.0 are)");
  std::string Truncated = npyFile(Dict1);
  EXPECT_EQ(parseError(Truncated.substr(0, 30)),
            "a.npy: truncated .npy header");
  EXPECT_EQ(parseError(npyFile(Dict1, 1, std::string(5, '\0'))),
            "a.npy: truncated data: shape (2,) of float32 needs 8 bytes, the "
            "file has 5");
  EXPECT_EQ(parseError(npyFile(Dict1, 1, std::string(12, '\0'))),
            "a.npy: 4 unexpected bytes after the data");
  EXPECT_EQ(parseError(npyFile(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 1,
                std::string(8, '\0'))),
            "a.npy: Fortran-order arrays are not supported; save a C-order "
            "array (numpy.ascontiguousarray)");
  EXPECT_EQ(parseError(npyFile(
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 1,
                std::string(8, '\0'))),
            "a.npy: big-endian data ('>f4') is not supported; convert it "
            "with arr.astype(arr.dtype.newbyteorder('<'))");
  EXPECT_EQ(parseError(npyFile(
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }")),
            "a.npy: unsupported dtype '<c8' (supported: b1 i1 i2 i4 i8 u1 u2 "
            "u4 u8 f2 f4 f8)");
  EXPECT_EQ(parseError(npyFile("{'descr': [('a', '<f4')], 'fortran_order': "
                               "False, 'shape': (2,), }")),
            "a.npy: bad .npy header: 'descr' is not a simple dtype string "
            "(structured arrays are not supported)");
  EXPECT_EQ(parseError(npyFile("{'descr': '<f4', 'shape': (2,), }")),
            "a.npy: bad .npy header: it needs 'descr', 'fortran_order' and "
            "'shape'");
  EXPECT_EQ(parseError(npyFile(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }")),
            "a.npy: bad .npy header: expected ',' or ')' in 'shape'");
  EXPECT_EQ(parseError(npyFile(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")),
            "a.npy: bad .npy header: 'shape' holds something other than "
            "integers");
  EXPECT_EQ(parseError(npyFile("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296, 16), }")),
            "a.npy: shape (4294967296, 4294967296, 16) is too large");
  EXPECT_EQ(parseError(npyFile("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (4611686018427387905,), }")),
            "a.npy: truncated data: shape (4611686018427387905,) of float32 "
            "needs more bytes, the file has 0");
  EXPECT_EQ(parseError(npyFile("{'descr': '<f4'")),
            "a.npy: bad .npy header: expected ',' or '}'");
}

TEST(Npy, Files) {
  std::string Dir = tempDir();
  NpyArray A;
  A.Type = ScalarType::I16;
  A.Shape = {2, 2};
  A.Data = {1, 0, 2, 0, 3, 0, 4, 0};
  ASSERT_FALSE(writeNpyFile(Dir + "/a.npy", A));
  auto B = readNpyFile(Dir + "/a.npy");
  ASSERT_TRUE(B) << B.error().message();
  EXPECT_EQ(B->Data, A.Data);
  auto Missing = readNpyFile(Dir + "/missing.npy");
  ASSERT_FALSE(Missing);
  EXPECT_EQ(Missing.error().code(), ErrorCode::IO);
  EXPECT_EQ(Missing.error().message(),
            "cannot read '" + Dir + "/missing.npy': No such file or directory");
  Error E = writeNpyFile(Dir + "/no/such/dir/a.npy", A);
  ASSERT_TRUE(E);
  EXPECT_EQ(E.code(), ErrorCode::IO);
}

TEST(Npy, ConvertForParameters) {
  NpyArray F;
  F.Type = ScalarType::F32;
  F.Shape = {3};
  for (float V : {1.0f, fromBits(0x3f808000), -2.5f}) {
    uint8_t B[4];
    std::memcpy(B, &V, 4);
    F.Data.insert(F.Data.end(), B, B + 4);
  }
  auto Bf = convertForParam(F, ScalarType::BF16, "argument 'x' ('x.npy')");
  ASSERT_TRUE(Bf);
  ASSERT_EQ(Bf->size(), 6u);
  uint16_t Bits[3];
  std::memcpy(Bits, Bf->data(), 6);
  EXPECT_EQ(Bits[0], 0x3f80);
  EXPECT_EQ(Bits[1], 0x3f80); // a tie, to even
  EXPECT_EQ(Bits[2], 0xc020);
  NpyArray Out = convertForOutput(Bf->data(), ScalarType::BF16, {3});
  EXPECT_EQ(Out.Type, ScalarType::F32);
  float Back[3];
  std::memcpy(Back, Out.Data.data(), 12);
  EXPECT_EQ(Back[2], -2.5f);

  NpyArray Raw;
  Raw.Type = ScalarType::U16;
  Raw.Shape = {1};
  Raw.Data = {0x80, 0x3f};
  auto R = convertForParam(Raw, ScalarType::BF16, "argument 'x' ('x.npy')");
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, Raw.Data);

  NpyArray D;
  D.Type = ScalarType::F64;
  D.Shape = {0};
  auto E1 = convertForParam(D, ScalarType::BF16, "argument 'x' ('x.npy')");
  ASSERT_FALSE(E1);
  EXPECT_EQ(E1.error().message(),
            "argument 'x' ('x.npy') holds float64; a bf16 parameter takes "
            "float32 (rounded to nearest even) or uint16 (raw bf16 bits)");
  auto E2 = convertForParam(D, ScalarType::F32, "argument 'x' ('x.npy')");
  ASSERT_FALSE(E2);
  EXPECT_EQ(E2.error().message(),
            "argument 'x' ('x.npy') holds float64; the parameter is *f32, so "
            "it needs float32 ('<f4')");
  EXPECT_TRUE(convertForParam(D, ScalarType::F64, "x"));
}

TEST(BF16, RoundToNearestEven) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBF16(0.0f), 0x0000);
  EXPECT_EQ(floatToBF16(-0.0f), 0x8000);
  // Ties go to the even neighbour, in both directions.
  EXPECT_EQ(floatToBF16(fromBits(0x3f808000)), 0x3f80);
  EXPECT_EQ(floatToBF16(fromBits(0x3f818000)), 0x3f82);
  EXPECT_EQ(floatToBF16(fromBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBF16(fromBits(0x3f807fff)), 0x3f80);
  // 0.1 is 0.10009765625 in bf16 (language.md §9.7).
  EXPECT_EQ(bf16ToFloat(floatToBF16(0.1f)), 0.10009765625f);
  // Subnormals round too.
  EXPECT_EQ(floatToBF16(fromBits(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBF16(fromBits(0x00008000)), 0x0000);
}

TEST(BF16, InfinityOverflowAndNaN) {
  const float Inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToBF16(Inf), 0x7f80);
  EXPECT_EQ(floatToBF16(-Inf), 0xff80);
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBF16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(floatToBF16(fromBits(0x7f7f7fff)), 0x7f7f); // largest below
  EXPECT_EQ(floatToBF16(fromBits(0x7f7f8000)), 0x7f80); // tie to even: inf
  // NaNs stay NaN (never infinity), quiet, with their sign.
  EXPECT_EQ(floatToBF16(fromBits(0x7fc00000)), 0x7fc0);
  EXPECT_EQ(floatToBF16(fromBits(0xffc00000)), 0xffc0);
  EXPECT_EQ(floatToBF16(fromBits(0x7f800001)), 0x7fc0); // signalling
  EXPECT_EQ(floatToBF16(fromBits(0x7fffffff)), 0x7fff);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(fromBits(0x7f800001)))));
  // Every bf16 survives a round trip through float.
  for (uint32_t B = 0; B < 0x10000; ++B) {
    float F = bf16ToFloat(uint16_t(B));
    uint16_t Back = floatToBF16(F);
    if (std::isnan(F))
      EXPECT_EQ(Back, uint16_t(B | 0x40)) << B;
    else
      EXPECT_EQ(Back, B) << B;
  }
}

TEST(Half, Conversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // a tie, to even: infinity
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // tie, to even
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // tie, to even
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(floatToHalf(fromBits(0x3f801000)), 0x3c00); // 1 + 2^-11: tie
  EXPECT_EQ(floatToHalf(fromBits(0x3f803000)), 0x3c02);
  EXPECT_EQ(floatToHalf(fromBits(0x7fc00000)), 0x7e00);
  EXPECT_EQ(floatToHalf(fromBits(0x7f800001)) & 0x7e00, 0x7e00);
  for (uint32_t H = 0; H < 0x10000; ++H) {
    float F = halfToFloat(uint16_t(H));
    if (std::isnan(F)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(F)))) << H;
      continue;
    }
    EXPECT_EQ(floatToHalf(F), H) << H;
  }
  EXPECT_EQ(halfToFloat(0x3e00), 1.5f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
}

} // namespace

TEST(Fp8, Conversions) {
  // Round to nearest even: 1.0625 is halfway between 1 and 1.125.
  EXPECT_EQ(floatToF8E4M3(1.0f), 0x38);
  EXPECT_EQ(floatToF8E4M3(1.0625f), 0x38);
  EXPECT_EQ(floatToF8E4M3(1.1875f), 0x3a);
  EXPECT_EQ(floatToF8E4M3(-2.0f), 0xc0);
  EXPECT_EQ(floatToF8E4M3(-0.0f), 0x80);
  // Subnormals: 2^-9 is the smallest; half of it ties to 0.
  EXPECT_EQ(floatToF8E4M3(0x1p-9f), 0x01);
  EXPECT_EQ(floatToF8E4M3(0x1p-10f), 0x00);
  EXPECT_EQ(floatToF8E4M3(0x3p-10f), 0x02);
  // Saturation: E4M3 has no infinity; E5M2 keeps it.
  EXPECT_EQ(floatToF8E4M3(448.0f), 0x7e);
  EXPECT_EQ(floatToF8E4M3(1e6f), 0x7e);
  EXPECT_EQ(floatToF8E4M3(-INFINITY), 0xfe);
  EXPECT_EQ(floatToF8E5M2(1e6f), 0x7b);
  EXPECT_EQ(floatToF8E5M2(INFINITY), 0x7c);
  EXPECT_EQ(floatToF8E5M2(-NAN) & 0x7f, 0x7f);
  EXPECT_EQ(floatToF8E4M3(NAN), 0x7f);
  // Decoding is exact.
  EXPECT_EQ(f8e4m3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(f8e4m3ToFloat(0x01), 0x1p-9f);
  EXPECT_TRUE(std::isnan(f8e4m3ToFloat(0xff)));
  EXPECT_EQ(f8e5m2ToFloat(0x7b), 57344.0f);
  EXPECT_EQ(f8e5m2ToFloat(0xfc), -INFINITY);
  EXPECT_EQ(f8e5m2ToFloat(0x01), 0x1p-16f);
  for (int C = 0; C < 256; ++C) {
    float V = f8e4m3ToFloat(uint8_t(C));
    if (!std::isnan(V))
      EXPECT_EQ(floatToF8E4M3(V), C) << "round trip of 0x" << std::hex << C;
  }
}

TEST(Npy, Fp8ForParamsAndOutputs) {
  NpyArray F;
  F.Type = ScalarType::F32;
  F.Shape = {2};
  for (float V : {1.0f, 1000.0f}) {
    uint8_t B[4];
    std::memcpy(B, &V, 4);
    F.Data.insert(F.Data.end(), B, B + 4);
  }
  auto Q = convertForParam(F, ScalarType::F8E4M3, "argument 'q' ('q.npy')");
  ASSERT_TRUE(Q);
  EXPECT_EQ(*Q, (std::vector<uint8_t>{0x38, 0x7e}));
  NpyArray Out = convertForOutput(Q->data(), ScalarType::F8E4M3, {2});
  EXPECT_EQ(Out.Type, ScalarType::F32);
  float Back[2];
  std::memcpy(Back, Out.Data.data(), 8);
  EXPECT_EQ(Back[0], 1.0f);
  EXPECT_EQ(Back[1], 448.0f);
  NpyArray Raw;
  Raw.Type = ScalarType::U8;
  Raw.Shape = {1};
  Raw.Data = {0x7c};
  auto R = convertForParam(Raw, ScalarType::F8E5M2, "x");
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, Raw.Data);
  NpyArray I;
  I.Type = ScalarType::I32;
  I.Shape = {0};
  auto E2 = convertForParam(I, ScalarType::F8E5M2, "argument 'x' ('x.npy')");
  ASSERT_FALSE(E2);
  EXPECT_EQ(E2.error().message(),
            "argument 'x' ('x.npy') holds int32; a f8e5m2 parameter takes "
            "float32 (rounded to nearest even, saturating) or uint8 (raw "
            "f8e5m2 bits)");
  EXPECT_EQ(npyTypeName(ScalarType::F8E4M3), "float8_e4m3fn");
  EXPECT_EQ(npyDescr(ScalarType::F8E5M2), "");
}
