//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a major and a minor
// version byte, the header length (u16 little-endian for 1.x, u32 for 2.x
// and 3.x), then the header: a Python dict literal with 'descr',
// 'fortran_order' and 'shape', padded with spaces and ending in '\n'; then
// the data.
//
//===----------------------------------------------------------------------===//

#include "kiln/npy.h"

#include "Internal.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

using namespace kiln::rt;

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DtypeRow {
  char Kind;
  unsigned Size;
  ScalarType Type;
  const char *NumpyName;
};

const DtypeRow kDtypes[] = {
    {'b', 1, ScalarType::Bool, "bool"},   {'i', 1, ScalarType::I8, "int8"},
    {'i', 2, ScalarType::I16, "int16"},   {'i', 4, ScalarType::I32, "int32"},
    {'i', 8, ScalarType::I64, "int64"},   {'u', 1, ScalarType::U8, "uint8"},
    {'u', 2, ScalarType::U16, "uint16"},  {'u', 4, ScalarType::U32, "uint32"},
    {'u', 8, ScalarType::U64, "uint64"},  {'f', 2, ScalarType::F16, "float16"},
    {'f', 4, ScalarType::F32, "float32"}, {'f', 8, ScalarType::F64, "float64"},
};

const DtypeRow *findDtype(ScalarType T) {
  for (const DtypeRow &R : kDtypes)
    if (R.Type == T)
      return &R;
  return nullptr;
}

/// A tiny reader for the header's Python literal.
class HeaderParser {
public:
  HeaderParser(std::string_view Text) : Text(Text) {}

  std::string Descr;
  bool HaveDescr = false, HaveOrder = false, HaveShape = false;
  bool Fortran = false;
  std::vector<int64_t> Shape;
  std::string Message;

  bool parse() {
    skip();
    if (!eat('{'))
      return fail("expected '{'");
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string Key;
      if (!parseString(Key))
        return fail("expected a quoted key");
      skip();
      if (!eat(':'))
        return fail("expected ':' after '" + Key + "'");
      skip();
      if (Key == "descr") {
        if (!parseString(Descr))
          return fail("'descr' is not a simple dtype string (structured "
                      "arrays are not supported)");
        HaveDescr = true;
      } else if (Key == "fortran_order") {
        if (!parseBool(Fortran))
          return fail("'fortran_order' is not True or False");
        HaveOrder = true;
      } else if (Key == "shape") {
        if (!parseShape())
          return false;
        HaveShape = true;
      } else {
        return fail("unexpected key '" + Key + "'");
      }
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat('}'))
        break;
      return fail("expected ',' or '}'");
    }
    if (!HaveDescr || !HaveOrder || !HaveShape)
      return fail("it needs 'descr', 'fortran_order' and 'shape'");
    return true;
  }

private:
  bool parseString(std::string &Out) {
    if (Pos >= Text.size() || (Text[Pos] != '\'' && Text[Pos] != '"'))
      return false;
    char Quote = Text[Pos++];
    size_t End = Text.find(Quote, Pos);
    if (End == std::string_view::npos)
      return false;
    Out = std::string(Text.substr(Pos, End - Pos));
    Pos = End + 1;
    return true;
  }

  bool parseBool(bool &Out) {
    if (Text.substr(Pos, 4) == "True") {
      Pos += 4;
      Out = true;
      return true;
    }
    if (Text.substr(Pos, 5) == "False") {
      Pos += 5;
      Out = false;
      return true;
    }
    return false;
  }

  bool parseShape() {
    if (!eat('('))
      return fail("'shape' is not a tuple");
    while (true) {
      skip();
      if (eat(')'))
        return true;
      if (Pos >= Text.size() || !std::isdigit((unsigned char)Text[Pos]))
        return fail("'shape' holds something other than integers");
      int64_t V = 0;
      while (Pos < Text.size() && std::isdigit((unsigned char)Text[Pos])) {
        if (V > (INT64_MAX - 9) / 10)
          return fail("a dimension in 'shape' is too large");
        V = V * 10 + (Text[Pos++] - '0');
      }
      if (Shape.size() == limits::kMaxNpyRank)
        return fail("'shape' has more than " +
                    std::to_string(limits::kMaxNpyRank) +
                    " dimensions");
      Shape.push_back(V);
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat(')'))
        return true;
      return fail("expected ',' or ')' in 'shape'");
    }
  }

  void skip() {
    while (Pos < Text.size() && std::isspace((unsigned char)Text[Pos]))
      ++Pos;
  }
  bool eat(char C) {
    if (Pos < Text.size() && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  bool fail(std::string Why) {
    if (Message.empty())
      Message = std::move(Why);
    return false;
  }

  std::string_view Text;
  size_t Pos = 0;
};

Error npyError(const std::string &Name, const std::string &Message) {
  return Error(ErrorCode::InvalidArgument, Name + ": " + Message);
}

std::string shapeText(const std::vector<int64_t> &Shape) {
  std::string Out = "(";
  for (size_t I = 0; I < Shape.size(); ++I)
    Out += (I ? ", " : "") + std::to_string(Shape[I]);
  return Out + (Shape.size() == 1 ? ",)" : ")");
}

} // namespace

uint64_t NpyArray::numElements() const {
  uint64_t N = 1;
  for (int64_t D : Shape)
    N *= uint64_t(D);
  return N;
}

std::string kiln::rt::npyDescr(ScalarType T) {
  const DtypeRow *R = findDtype(T);
  if (!R)
    return "";
  return std::string(R->Size == 1 ? "|" : "<") + R->Kind +
         std::to_string(R->Size);
}

std::string kiln::rt::npyTypeName(ScalarType T) {
  switch (T) {
  case ScalarType::BF16:
    return "bfloat16";
  case ScalarType::F8E4M3:
    return "float8_e4m3fn";
  case ScalarType::F8E5M2:
    return "float8_e5m2";
  default:
    return findDtype(T)->NumpyName;
  }
}

Expected<NpyArray> kiln::rt::parseNpy(const uint8_t *Data, size_t Size,
                                      const std::string &Name) {
  if (Size < kMagicSize + 4 || std::memcmp(Data, kMagic, kMagicSize) != 0)
    return npyError(Name, "not a .npy file (bad magic)");
  unsigned Major = Data[6], Minor = Data[7];
  size_t HeaderLength, HeaderStart;
  if (Major == 1) {
    HeaderLength = size_t(Data[8]) | size_t(Data[9]) << 8;
    HeaderStart = 10;
  } else if (Major == 2 || Major == 3) {
    if (Size < 12)
      return npyError(Name, "truncated .npy header");
    HeaderLength = size_t(Data[8]) | size_t(Data[9]) << 8 |
                   size_t(Data[10]) << 16 | size_t(Data[11]) << 24;
    HeaderStart = 12;
  } else {
    return npyError(Name, ".npy format version " + std::to_string(Major) +
                              "." + std::to_string(Minor) +
                              " is not supported (1.0, 2.0 and 3.0 are)");
  }
  if (HeaderLength > limits::kMaxNpyHeaderBytes)
    return npyError(Name, "the header is " + std::to_string(HeaderLength) +
                              " bytes, over the limit of " +
                              std::to_string(limits::kMaxNpyHeaderBytes));
  if (HeaderLength > Size - HeaderStart)
    return npyError(Name, "truncated .npy header");
  std::string_view Header(reinterpret_cast<const char *>(Data + HeaderStart),
                          HeaderLength);
  HeaderParser P(Header);
  if (!P.parse())
    return npyError(Name, "bad .npy header: " + P.Message);

  NpyArray A;
  const std::string &D = P.Descr;
  if (D.size() >= 2 && D[0] == '>' && D.substr(1) != "b1" &&
      D.substr(1) != "i1" && D.substr(1) != "u1")
    return npyError(Name, "big-endian data ('" + D +
                              "') is not supported; convert it with "
                              "arr.astype(arr.dtype.newbyteorder('<'))");
  bool Found = false;
  for (const DtypeRow &R : kDtypes) {
    std::string Body = std::string(1, R.Kind) + std::to_string(R.Size);
    bool OrderOk = D.size() == Body.size() + 1 &&
                   (D[0] == '<' || D[0] == '|' || D[0] == '=' ||
                    (R.Size == 1 && D[0] == '>'));
    if (OrderOk && D.substr(1) == Body) {
      A.Type = R.Type;
      Found = true;
    }
  }
  if (!Found)
    return npyError(Name, "unsupported dtype '" + D +
                              "' (supported: b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 "
                              "f4 f8)");
  if (P.Fortran)
    return npyError(Name, "Fortran-order arrays are not supported; save a "
                          "C-order array (numpy.ascontiguousarray)");
  A.Shape = P.Shape;
  uint64_t Elements = 1;
  for (int64_t Dim : A.Shape) {
    if (Dim && Elements > UINT64_MAX / uint64_t(Dim))
      return npyError(Name, "shape " + shapeText(A.Shape) + " is too large");
    Elements *= uint64_t(Dim);
  }
  size_t ElemSize = typeSize(A.Type);
  size_t DataStart = HeaderStart + HeaderLength;
  uint64_t Available = Size - DataStart;
  if (Elements > UINT64_MAX / ElemSize || Elements * ElemSize > Available)
    return npyError(Name, "truncated data: shape " + shapeText(A.Shape) +
                              " of " + npyTypeName(A.Type) + " needs " +
                              (Elements > UINT64_MAX / ElemSize
                                   ? std::string("more")
                                   : std::to_string(Elements * ElemSize)) +
                              " bytes, the file has " +
                              std::to_string(Available));
  if (Elements * ElemSize < Available)
    return npyError(Name, std::to_string(Available - Elements * ElemSize) +
                              " unexpected bytes after the data");
  try {
    A.Data.assign(Data + DataStart, Data + Size);
  } catch (const std::bad_alloc &) {
    return Error(ErrorCode::OutOfMemory, Name + ": out of memory");
  }
  return A;
}

Expected<NpyArray> kiln::rt::readNpyFile(const std::string &Path) {
  Expected<std::vector<uint8_t>> Bytes = detail::readWholeFile(Path);
  if (!Bytes)
    return Bytes.error();
  return parseNpy(Bytes->data(), Bytes->size(), Path);
}

std::vector<uint8_t> kiln::rt::serializeNpy(const NpyArray &A) {
  std::string Dict = "{'descr': '" + npyDescr(A.Type) +
                     "', 'fortran_order': False, 'shape': " +
                     shapeText(A.Shape) + ", }";
  // Pad with spaces so that magic + version + length + header is a
  // multiple of 64 bytes, ending in '\n' (as NumPy writes it).
  bool V2 = Dict.size() + 1 + 10 > 65535;
  size_t Prefix = V2 ? 12 : 10;
  size_t Total = (Prefix + Dict.size() + 1 + 63) / 64 * 64;
  Dict.append(Total - Prefix - Dict.size() - 1, ' ');
  Dict += '\n';
  std::vector<uint8_t> Out(kMagic, kMagic + kMagicSize);
  Out.push_back(V2 ? 2 : 1);
  Out.push_back(0);
  size_t Length = Dict.size();
  for (unsigned I = 0; I < (V2 ? 4u : 2u); ++I)
    Out.push_back(uint8_t(Length >> (8 * I)));
  Out.insert(Out.end(), Dict.begin(), Dict.end());
  Out.insert(Out.end(), A.Data.begin(), A.Data.end());
  return Out;
}

Error kiln::rt::writeNpyFile(const std::string &Path, const NpyArray &A) {
  std::vector<uint8_t> Bytes;
  try {
    Bytes = serializeNpy(A);
  } catch (const std::bad_alloc &) {
    return Error(ErrorCode::OutOfMemory, Path + ": out of memory");
  }
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return Error(ErrorCode::IO,
                 "cannot write '" + Path + "': " + std::strerror(errno));
  bool Ok = std::fwrite(Bytes.data(), 1, Bytes.size(), F) == Bytes.size();
  int SavedErrno = errno;
  Ok &= std::fclose(F) == 0;
  if (!Ok)
    return Error(ErrorCode::IO, "cannot write '" + Path +
                                    "': " + std::strerror(SavedErrno));
  return Error::success();
}

namespace {

/// The float types NumPy has no dtype for: kiln-run exchanges them as
/// float32 values, or as their raw bits in an unsigned integer array
/// (`Raw`).
struct NarrowFloat {
  ScalarType Type;
  ScalarType Raw;
};

const NarrowFloat kNarrowFloats[] = {
    {ScalarType::BF16, ScalarType::U16},
    {ScalarType::F8E4M3, ScalarType::U8},
    {ScalarType::F8E5M2, ScalarType::U8},
};

const NarrowFloat *findNarrowFloat(ScalarType T) {
  for (const NarrowFloat &N : kNarrowFloats)
    if (N.Type == T)
      return &N;
  return nullptr;
}

} // namespace

Expected<std::vector<uint8_t>>
kiln::rt::convertForParam(const NpyArray &A, ScalarType Param,
                          const std::string &What) {
  if (const NarrowFloat *N = findNarrowFloat(Param)) {
    if (A.Type == N->Raw)
      return A.Data; // raw bits
    std::string Name(typeName(Param));
    if (A.Type != ScalarType::F32)
      return Error(ErrorCode::InvalidArgument,
                   What + " holds " + npyTypeName(A.Type) + "; a " + Name +
                       " parameter takes float32 (rounded to nearest even" +
                       (isFp8(Param) ? ", saturating" : "") + ") or " +
                       npyTypeName(N->Raw) + " (raw " + Name + " bits)");
    size_t Size = typeSize(Param);
    std::vector<uint8_t> Out(A.Data.size() / 4 * Size);
    for (size_t I = 0; I < A.Data.size() / 4; ++I) {
      float F;
      std::memcpy(&F, &A.Data[4 * I], 4);
      uint64_t B = toFloatBits(Param, F);
      std::memcpy(&Out[Size * I], &B, Size); // little-endian low bytes
    }
    return Out;
  }
  if (A.Type != Param)
    return Error(ErrorCode::InvalidArgument,
                 What + " holds " + npyTypeName(A.Type) + "; the parameter is *" +
                     std::string(typeName(Param)) + ", so it needs " +
                     npyTypeName(Param) + " ('" + npyDescr(Param) + "')");
  return A.Data;
}

NpyArray kiln::rt::convertForOutput(const uint8_t *Data, ScalarType Param,
                                    const std::vector<int64_t> &Shape) {
  NpyArray A;
  A.Shape = Shape;
  uint64_t N = A.numElements();
  if (!findNarrowFloat(Param)) {
    A.Type = Param;
    A.Data.assign(Data, Data + N * typeSize(Param));
    return A;
  }
  size_t Size = typeSize(Param);
  A.Type = ScalarType::F32;
  A.Data.resize(N * 4);
  for (uint64_t I = 0; I < N; ++I) {
    uint64_t B = 0;
    std::memcpy(&B, Data + Size * I, Size);
    float F = float(floatValue(Param, B)); // exact
    std::memcpy(&A.Data[4 * I], &F, 4);
  }
  return A;
}
