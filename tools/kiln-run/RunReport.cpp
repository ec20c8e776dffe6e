//===- RunReport.cpp - --check comparisons, --flops, tables ---------------===//

#include "RunReport.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace kiln::rt;
using namespace kiln::runtool;

//===----------------------------------------------------------------------===//
// --check
//===----------------------------------------------------------------------===//

std::string Tolerance::str() const {
  if (Exact)
    return "exact";
  return "|a-b| <= " + formatShort(Atol) + " + " + formatShort(Rtol) + "*|b|";
}

Tolerance kiln::runtool::toleranceFor(ScalarType T) {
  switch (T) {
  case ScalarType::F8E4M3:
    return {false, 0.125, 1e-2}; // 3 mantissa bits
  case ScalarType::F8E5M2:
    return {false, 0.25, 1e-2}; // 2 mantissa bits
  case ScalarType::F16:
  case ScalarType::BF16:
    return {false, 1e-2, 1e-3};
  case ScalarType::F32:
    return {false, 1e-5, 1e-6};
  case ScalarType::F64:
    return {false, 1e-12, 1e-13};
  default:
    return {true, 0, 0};
  }
}

namespace {

double loadFloat(ScalarType T, const uint8_t *P) {
  uint64_t Bits = 0;
  std::memcpy(&Bits, P, typeSize(T)); // little-endian hosts only
  return floatValue(T, Bits);
}

/// An integer (or bool) element: its bits, zero-extended.
uint64_t loadBits(ScalarType T, const uint8_t *P) {
  uint64_t Bits = 0;
  std::memcpy(&Bits, P, typeSize(T)); // little-endian hosts only
  if (T == ScalarType::Bool)
    return Bits != 0;
  return Bits;
}

/// Sign-extends the low `Bytes` bytes.
int64_t signExtend(uint64_t Bits, size_t Bytes) {
  if (Bytes >= 8)
    return int64_t(Bits);
  unsigned Shift = unsigned(64 - 8 * Bytes);
  return int64_t(Bits << Shift) >> Shift;
}

/// |a - b| and |b| of two integers, exactly, as unsigned magnitudes.
void intDiff(ScalarType T, uint64_t A, uint64_t B, uint64_t &Diff,
             uint64_t &AbsB) {
  if (isSignedType(T)) {
    int64_t SA = signExtend(A, typeSize(T)), SB = signExtend(B, typeSize(T));
    Diff = SA >= SB ? uint64_t(SA) - uint64_t(SB) : uint64_t(SB) - uint64_t(SA);
    AbsB = SB < 0 ? 0 - uint64_t(SB) : uint64_t(SB);
    return;
  }
  Diff = A >= B ? A - B : B - A;
  AbsB = B;
}

} // namespace

Comparison kiln::runtool::compareElements(ScalarType T, const uint8_t *A,
                                          const uint8_t *B, uint64_t N) {
  Comparison C;
  C.Elements = N;
  const double Inf = std::numeric_limits<double>::infinity();
  Tolerance Tol = toleranceFor(T);
  size_t Size = typeSize(T);
  double WorstScore = -1;
  for (uint64_t I = 0; I < N; ++I) {
    const uint8_t *PA = A + I * Size, *PB = B + I * Size;
    double Diff, Rel, Score;
    bool Fails;
    if (isFloatType(T)) {
      double VA = loadFloat(T, PA), VB = loadFloat(T, PB);
      bool NanA = std::isnan(VA), NanB = std::isnan(VB);
      if ((NanA && NanB) || VA == VB)
        continue;
      if (NanA || NanB) {
        ++C.Failures;
        ++C.NanMismatches;
        Score = Inf;
        if (Score > WorstScore) {
          WorstScore = Score;
          C.HasWorst = true;
          C.Worst = I;
        }
        continue;
      }
      Diff = std::fabs(VA - VB);
      Rel = VB == 0 ? Inf : Diff / std::fabs(VB);
      double Allowed = Tol.Atol + Tol.Rtol * std::fabs(VB);
      // An infinity against anything else differs by infinity, whatever
      // the tolerance of an infinite reference says.
      Fails = std::isinf(Diff) || Diff > Allowed;
      Score = std::isinf(Diff) ? Inf : Diff / Allowed;
    } else {
      uint64_t BA = loadBits(T, PA), BB = loadBits(T, PB);
      if (BA == BB)
        continue;
      uint64_t D, AbsB;
      intDiff(T, BA, BB, D, AbsB);
      Diff = double(D);
      Rel = AbsB == 0 ? Inf : double(D) / double(AbsB);
      Fails = true;
      Score = Diff;
    }
    C.Failures += Fails;
    C.MaxAbs = std::max(C.MaxAbs, Diff);
    C.MaxRel = std::max(C.MaxRel, Rel);
    if (Score > WorstScore) {
      WorstScore = Score;
      C.HasWorst = true;
      C.Worst = I;
    }
  }
  if (C.HasWorst) {
    C.WorstA = formatElement(T, A + C.Worst * Size);
    C.WorstB = formatElement(T, B + C.Worst * Size);
  }
  return C;
}

std::string kiln::runtool::formatElement(ScalarType T, const uint8_t *P) {
  char Buf[64];
  if (T == ScalarType::Bool)
    return loadBits(T, P) ? "true" : "false";
  if (isIntegerType(T)) {
    uint64_t Bits = loadBits(T, P);
    if (isSignedType(T))
      std::snprintf(Buf, sizeof Buf, "%lld",
                    (long long)signExtend(Bits, typeSize(T)));
    else
      std::snprintf(Buf, sizeof Buf, "%llu", (unsigned long long)Bits);
    return Buf;
  }
  double V = loadFloat(T, P);
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  // The shortest %g form that reads back as the same element.
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::snprintf(Buf, sizeof Buf, "%.*g", Precision, V);
    double Back = std::strtod(Buf, nullptr);
    if (toFloatBits(T, Back) == toFloatBits(T, V))
      break;
  }
  return Buf;
}

std::string kiln::runtool::formatIndex(uint64_t Flat,
                                       const std::vector<int64_t> &Shape) {
  if (Shape.size() <= 1)
    return std::to_string(Flat);
  std::vector<uint64_t> Coords(Shape.size());
  for (size_t D = Shape.size(); D-- > 0;) {
    uint64_t Extent = Shape[D] > 0 ? uint64_t(Shape[D]) : 1;
    Coords[D] = Flat % Extent;
    Flat /= Extent;
  }
  std::string Text = "(";
  for (size_t D = 0; D < Coords.size(); ++D)
    Text += (D ? ", " : "") + std::to_string(Coords[D]);
  return Text + ")";
}

//===----------------------------------------------------------------------===//
// --flops
//===----------------------------------------------------------------------===//

namespace {

class FlopsParser {
public:
  FlopsParser(const std::string &Text, std::vector<FlopsExpr::Node> &Nodes,
              std::vector<std::string> &Names)
      : Text(Text), Nodes(Nodes), Names(Names) {}

  /// The whole text; -1 with `Message` set on error.
  int parseAll() {
    int Root = parseSum();
    if (Root < 0)
      return -1;
    skipSpace();
    if (Pos < Text.size()) {
      fail("expected an operator (+ - * /) or the end " + where() + ", found " +
           found());
      return -1;
    }
    return Root;
  }

  std::string Message;

private:
  void skipSpace() {
    while (Pos < Text.size() && std::isspace((unsigned char)Text[Pos]))
      ++Pos;
  }
  std::string where() const {
    return Pos < Text.size() ? "at column " + std::to_string(Pos + 1)
                             : std::string("at the end");
  }
  std::string found() const { return "'" + std::string(1, Text[Pos]) + "'"; }
  void fail(const std::string &M) {
    if (Message.empty())
      Message = M;
  }
  int add(FlopsExpr::Node N) {
    Nodes.push_back(std::move(N));
    return int(Nodes.size() - 1);
  }
  int binary(char Op, int L, int R) {
    FlopsExpr::Node N;
    N.Op = Op;
    N.Lhs = L;
    N.Rhs = R;
    return add(std::move(N));
  }

  int parseSum() {
    int L = parseProduct();
    while (L >= 0) {
      skipSpace();
      if (Pos >= Text.size() || (Text[Pos] != '+' && Text[Pos] != '-'))
        break;
      char Op = Text[Pos++];
      int R = parseProduct();
      if (R < 0)
        return -1;
      L = binary(Op, L, R);
    }
    return L;
  }

  int parseProduct() {
    int L = parseUnary();
    while (L >= 0) {
      skipSpace();
      if (Pos >= Text.size() || (Text[Pos] != '*' && Text[Pos] != '/'))
        break;
      char Op = Text[Pos++];
      int R = parseUnary();
      if (R < 0)
        return -1;
      L = binary(Op, L, R);
    }
    return L;
  }

  int parseUnary() {
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == '-') {
      ++Pos;
      int Operand = parseUnary();
      if (Operand < 0)
        return -1;
      return binary('u', Operand, -1);
    }
    return parsePrimary();
  }

  int parsePrimary() {
    skipSpace();
    if (Pos >= Text.size()) {
      fail("expected a number, an argument name or '(' at the end");
      return -1;
    }
    char C = Text[Pos];
    if (C == '(') {
      size_t Open = Pos++;
      int Inner = parseSum();
      if (Inner < 0)
        return -1;
      skipSpace();
      if (Pos >= Text.size() || Text[Pos] != ')') {
        fail("expected ')' " + where() + " to close the '(' at column " +
             std::to_string(Open + 1) +
             (Pos < Text.size() ? ", found " + found() : ""));
        return -1;
      }
      ++Pos;
      return Inner;
    }
    if (std::isdigit((unsigned char)C) || C == '.') {
      size_t Start = Pos;
      while (Pos < Text.size() &&
             (std::isdigit((unsigned char)Text[Pos]) || Text[Pos] == '.'))
        ++Pos;
      if (Pos < Text.size() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
        size_t Save = Pos++;
        if (Pos < Text.size() && (Text[Pos] == '+' || Text[Pos] == '-'))
          ++Pos;
        if (Pos < Text.size() && std::isdigit((unsigned char)Text[Pos]))
          while (Pos < Text.size() && std::isdigit((unsigned char)Text[Pos]))
            ++Pos;
        else
          Pos = Save;
      }
      std::string Number = Text.substr(Start, Pos - Start);
      char *End = nullptr;
      double V = std::strtod(Number.c_str(), &End);
      if (*End || !std::isfinite(V)) {
        fail("'" + Number + "' at column " + std::to_string(Start + 1) +
             " is not a number");
        return -1;
      }
      FlopsExpr::Node N;
      N.Op = 'n';
      N.Value = V;
      return add(std::move(N));
    }
    if (std::isalpha((unsigned char)C) || C == '_') {
      size_t Start = Pos;
      while (Pos < Text.size() &&
             (std::isalnum((unsigned char)Text[Pos]) || Text[Pos] == '_'))
        ++Pos;
      FlopsExpr::Node N;
      N.Op = 'v';
      N.Name = Text.substr(Start, Pos - Start);
      if (std::find(Names.begin(), Names.end(), N.Name) == Names.end())
        Names.push_back(N.Name);
      return add(std::move(N));
    }
    if (C == ')' || C == '+' || C == '*' || C == '/')
      fail("expected a number, an argument name or '(' " + where() +
           ", found " + found());
    else
      fail("unexpected " + found() + " " + where() +
           " (the expression takes numbers, scalar argument names, "
           "+ - * / and parentheses)");
    return -1;
  }

  const std::string &Text;
  std::vector<FlopsExpr::Node> &Nodes;
  std::vector<std::string> &Names;
  size_t Pos = 0;
};

} // namespace

Expected<FlopsExpr> FlopsExpr::parse(const std::string &Text) {
  FlopsExpr E;
  E.Text = Text;
  bool Blank = true;
  for (char C : Text)
    Blank &= std::isspace((unsigned char)C) != 0;
  if (Blank)
    return Error(ErrorCode::InvalidArgument, "the expression is empty");
  FlopsParser P(E.Text, E.Nodes, E.Names);
  E.Root = P.parseAll();
  if (E.Root < 0)
    return Error(ErrorCode::InvalidArgument, P.Message);
  return E;
}

Expected<double>
FlopsExpr::evaluate(const std::map<std::string, double> &Values) const {
  // Nodes are created after their operands: evaluate in order.
  std::vector<double> V(Nodes.size());
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const Node &N = Nodes[I];
    switch (N.Op) {
    case 'n':
      V[I] = N.Value;
      break;
    case 'v': {
      auto It = Values.find(N.Name);
      if (It == Values.end())
        return Error(ErrorCode::InvalidArgument,
                     "no value for '" + N.Name + "'");
      V[I] = It->second;
      break;
    }
    case 'u':
      V[I] = -V[N.Lhs];
      break;
    case '+':
      V[I] = V[N.Lhs] + V[N.Rhs];
      break;
    case '-':
      V[I] = V[N.Lhs] - V[N.Rhs];
      break;
    case '*':
      V[I] = V[N.Lhs] * V[N.Rhs];
      break;
    case '/':
      if (V[N.Rhs] == 0)
        return Error(ErrorCode::InvalidArgument, "division by zero");
      V[I] = V[N.Lhs] / V[N.Rhs];
      break;
    }
  }
  return V[Root];
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string kiln::runtool::formatFixed(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  if (V == 0)
    return "0";
  int Decimals = 3 - int(std::floor(std::log10(std::fabs(V))));
  if (Decimals > 6) // below 0.001: "3.41e-07"
    return formatShort(V);
  Decimals = std::max(Decimals, 0);
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.*f", Decimals, V);
  return Buf;
}

std::string kiln::runtool::formatShort(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.3g", V);
  return Buf;
}

Table::Table(std::vector<std::string> Columns) {
  for (std::string &C : Columns) {
    bool R = !C.empty() && C[0] == '>';
    Right.push_back(R);
    Header.push_back(R ? C.substr(1) : C);
  }
}

void Table::addRow(std::vector<std::string> Cells) {
  Cells.resize(Header.size());
  Rows.push_back(std::move(Cells));
}

void Table::print(std::FILE *Out) const {
  std::vector<size_t> Width(Header.size());
  for (size_t C = 0; C < Header.size(); ++C) {
    Width[C] = Header[C].size();
    for (const auto &Row : Rows)
      Width[C] = std::max(Width[C], Row[C].size());
  }
  auto PrintRow = [&](const std::vector<std::string> &Row) {
    std::string Line;
    for (size_t C = 0; C < Row.size(); ++C) {
      std::string Pad(Width[C] - Row[C].size(), ' ');
      if (C)
        Line += "  ";
      Line += Right[C] ? Pad + Row[C] : Row[C] + Pad;
    }
    while (!Line.empty() && Line.back() == ' ')
      Line.pop_back();
    std::fprintf(Out, "%s\n", Line.c_str());
  };
  PrintRow(Header);
  for (const auto &Row : Rows)
    PrintRow(Row);
}

/// Parses a scalar literal for parameter P.
Expected<Arg> kiln::runtool::parseScalar(const ParamInfo &P,
                                         const std::string &Text) {
  ScalarType T = P.Type.Element;
  std::string What = "argument '" + P.Name + "' (" + P.Type.str() + "): ";
  auto Bad = [&](const std::string &Why) {
    return Error(ErrorCode::InvalidArgument, What + Why);
  };
  if (T == ScalarType::Bool) {
    if (Text == "true" || Text == "1")
      return Arg::boolean(true);
    if (Text == "false" || Text == "0")
      return Arg::boolean(false);
    return Bad("'" + Text + "' is not a bool (true, false, 1 or 0)");
  }
  if (isIntegerType(T)) {
    bool Negative = !Text.empty() && Text[0] == '-';
    std::string Digits = Text.substr(Negative ? 1 : 0);
    int Base = 10;
    if (Digits.size() > 2 && Digits[0] == '0' &&
        (Digits[1] == 'x' || Digits[1] == 'X')) {
      Base = 16;
      Digits = Digits.substr(2);
    }
    if (Digits.empty() || Digits[0] == '-' || Digits[0] == '+' ||
        std::isspace((unsigned char)Digits[0]))
      return Bad("'" + Text + "' is not an integer");
    char *End = nullptr;
    errno = 0;
    unsigned long long Magnitude = std::strtoull(Digits.c_str(), &End, Base);
    if (*End)
      return Bad("'" + Text + "' is not an integer");
    unsigned Bits = unsigned(8 * typeSize(T));
    std::string Range = "'" + Text + "' does not fit in " +
                        std::string(typeName(T));
    if (errno == ERANGE)
      return Bad(Range);
    if (isSignedType(T)) {
      uint64_t Limit = uint64_t(1) << (Bits - 1); // |min|
      if (Negative ? Magnitude > Limit : Magnitude > Limit - 1)
        return Bad(Range);
      uint64_t V = Negative ? 0 - uint64_t(Magnitude) : uint64_t(Magnitude);
      return Arg::scalarBits(T, V);
    }
    if (Negative && Magnitude != 0)
      return Bad(Range);
    if (Bits < 64 && Magnitude >> Bits)
      return Bad(Range);
    return Arg::scalarBits(T, Magnitude);
  }
  char *End = nullptr;
  errno = 0;
  double D = std::strtod(Text.c_str(), &End);
  if (Text.empty() || *End || std::isspace((unsigned char)Text[0]))
    return Bad("'" + Text + "' is not a number");
  std::string Range = "'" + Text + "' is out of range for " +
                      std::string(typeName(T));
  if (errno == ERANGE && std::isinf(D))
    return Bad(Range);
  if (isFp8(T)) {
    // fp8 conversions saturate: a finite value beyond the largest finite
    // one is refused rather than clamped.
    double Max = T == ScalarType::F8E4M3 ? 448.0 : 57344.0;
    if (std::isfinite(D) && std::fabs(D) > Max)
      return Bad(Range);
    if (T == ScalarType::F8E4M3 && std::isinf(D))
      return Bad("f8e4m3 has no infinity");
  }
  Arg A = Arg::scalarBits(T, toFloatBits(T, D));
  // A finite literal must stay finite in its type.
  if (std::isfinite(D) && std::isinf(floatValue(T, A.bits())))
    return Bad(Range);
  return A;
}
