//===- RunReportTest.cpp - kiln-run --check tolerances, --flops -----------===//
//
// The parts of kiln-run's --check and --bench that launch nothing
// (tools/kiln-run/RunReport.h): the tolerance of each dtype at its edges,
// NaN and infinity rules, exact integers, the worst element, the --flops
// expression, number formatting and tables.
//
//===----------------------------------------------------------------------===//

#include "RunReport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

using namespace kiln::rt;
using namespace kiln::runtool;

namespace {

template <typename T> std::vector<uint8_t> bytes(const std::vector<T> &V) {
  std::vector<uint8_t> Out(V.size() * sizeof(T));
  std::memcpy(Out.data(), V.data(), Out.size());
  return Out;
}

template <typename T>
Comparison compare(ScalarType Type, const std::vector<T> &A,
                   const std::vector<T> &B) {
  std::vector<uint8_t> BA = bytes(A), BB = bytes(B);
  return compareElements(Type, BA.data(), BB.data(), A.size());
}

const double Inf = std::numeric_limits<double>::infinity();
const float NaNf = std::numeric_limits<float>::quiet_NaN();
const float Inff = std::numeric_limits<float>::infinity();

TEST(RunReportTest, Tolerances) {
  EXPECT_EQ(toleranceFor(ScalarType::F32).str(), "|a-b| <= 1e-06 + 1e-05*|b|");
  EXPECT_EQ(toleranceFor(ScalarType::F16).str(), "|a-b| <= 0.001 + 0.01*|b|");
  EXPECT_EQ(toleranceFor(ScalarType::BF16).str(), "|a-b| <= 0.001 + 0.01*|b|");
  EXPECT_EQ(toleranceFor(ScalarType::F64).str(), "|a-b| <= 1e-13 + 1e-12*|b|");
  for (ScalarType T :
       {ScalarType::Bool, ScalarType::I8, ScalarType::I32, ScalarType::U64})
    EXPECT_TRUE(toleranceFor(T).Exact);
}

TEST(RunReportTest, F32RelativeAndAbsolute) {
  // |a-b| <= 1e-6 + 1e-5*|b|: at b = 1000 the bound is 0.010001.
  Comparison In = compare<float>(ScalarType::F32, {1000.0098f}, {1000.0f});
  EXPECT_EQ(In.Failures, 0u);
  EXPECT_GT(In.MaxAbs, 0.0097);
  EXPECT_TRUE(In.HasWorst); // differs, within tolerance
  Comparison Out = compare<float>(ScalarType::F32, {1000.0103f}, {1000.0f});
  EXPECT_EQ(Out.Failures, 1u);
  // Near zero the absolute floor decides: 9e-7 passes, 2e-6 does not.
  EXPECT_EQ(compare<float>(ScalarType::F32, {9e-7f}, {0.0f}).Failures, 0u);
  Comparison Zero = compare<float>(ScalarType::F32, {2e-6f}, {0.0f});
  EXPECT_EQ(Zero.Failures, 1u);
  EXPECT_EQ(Zero.MaxRel, Inf); // relative to b = 0
}

TEST(RunReportTest, F32SpecialValues) {
  // NaN = NaN, inf = inf, -0 = 0; NaN vs a number, inf vs -inf or a
  // number fail.
  Comparison Same =
      compare<float>(ScalarType::F32, {NaNf, Inff, -0.0f}, {NaNf, Inff, 0.0f});
  EXPECT_EQ(Same.Failures, 0u);
  EXPECT_FALSE(Same.HasWorst);
  Comparison Nan =
      compare<float>(ScalarType::F32, {1.0f, NaNf, 2.0f}, {1.0f, 3.0f, 2.5f});
  EXPECT_EQ(Nan.Failures, 2u);
  EXPECT_EQ(Nan.NanMismatches, 1u);
  EXPECT_EQ(Nan.Worst, 1u); // the NaN mismatch is the worst
  EXPECT_EQ(Nan.WorstA, "nan");
  EXPECT_EQ(Nan.WorstB, "3");
  EXPECT_DOUBLE_EQ(Nan.MaxAbs, 0.5); // NaN mismatches aside
  EXPECT_EQ(compare<float>(ScalarType::F32, {Inff}, {-Inff}).Failures, 1u);
  EXPECT_EQ(compare<float>(ScalarType::F32, {1e30f}, {Inff}).Failures, 1u);
  EXPECT_EQ(compare<float>(ScalarType::F32, {Inff}, {1e30f}).Failures, 1u);
}

TEST(RunReportTest, WorstIsRelativeToTolerance) {
  // 0.5 off at b = 1e6 is within tolerance (bound ~10); 0.001 off at b = 0
  // is not: the worst element is the second.
  Comparison C =
      compare<float>(ScalarType::F32, {1000000.5f, 0.001f}, {1000000.0f, 0.0f});
  EXPECT_EQ(C.Failures, 1u);
  EXPECT_EQ(C.Worst, 1u);
  EXPECT_DOUBLE_EQ(C.MaxAbs, 0.5);
  EXPECT_EQ(C.WorstA, "0.001");
  EXPECT_EQ(C.WorstB, "0");
}

TEST(RunReportTest, HalfAndBF16) {
  uint16_t One = floatToHalf(1.0f), Near = floatToHalf(1.0078125f),
           Far = floatToHalf(1.02f);
  EXPECT_EQ(compare<uint16_t>(ScalarType::F16, {Near}, {One}).Failures, 0u);
  EXPECT_EQ(compare<uint16_t>(ScalarType::F16, {Far}, {One}).Failures, 1u);
  uint16_t B1 = floatToBF16(1.0f), B2 = floatToBF16(1.0078125f),
           B3 = floatToBF16(1.03125f);
  EXPECT_EQ(compare<uint16_t>(ScalarType::BF16, {B2}, {B1}).Failures, 0u);
  Comparison C = compare<uint16_t>(ScalarType::BF16, {B3}, {B1});
  EXPECT_EQ(C.Failures, 1u);
  EXPECT_EQ(C.WorstA, "1.03");
}

TEST(RunReportTest, F64) {
  EXPECT_EQ(compare<double>(ScalarType::F64, {1.0 + 5e-13}, {1.0}).Failures,
            0u);
  EXPECT_EQ(compare<double>(ScalarType::F64, {1.0 + 5e-12}, {1.0}).Failures,
            1u);
  EXPECT_EQ(compare<double>(ScalarType::F64, {5e-14}, {0.0}).Failures, 0u);
  EXPECT_EQ(compare<double>(ScalarType::F64, {0.1}, {0.1}).Failures, 0u);
}

TEST(RunReportTest, IntegersAreExact) {
  Comparison C = compare<int32_t>(ScalarType::I32, {1, -1, 7}, {1, 1, 7});
  EXPECT_EQ(C.Failures, 1u);
  EXPECT_EQ(C.Worst, 1u);
  EXPECT_DOUBLE_EQ(C.MaxAbs, 2);
  EXPECT_DOUBLE_EQ(C.MaxRel, 2);
  EXPECT_EQ(C.WorstA, "-1");
  // The full range of i64 and u64, without overflow.
  Comparison Wide =
      compare<int64_t>(ScalarType::I64, {std::numeric_limits<int64_t>::min()},
                       {std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(Wide.Failures, 1u);
  EXPECT_DOUBLE_EQ(Wide.MaxAbs, 18446744073709551615.0);
  Comparison U = compare<uint64_t>(ScalarType::U64, {0}, {~uint64_t(0)});
  EXPECT_EQ(U.WorstB, "18446744073709551615");
  Comparison U8 = compare<uint8_t>(ScalarType::U8, {255}, {0});
  EXPECT_EQ(U8.MaxRel, Inf);
  EXPECT_EQ(compare<int8_t>(ScalarType::I8, {-128}, {-128}).Failures, 0u);
  // Bools compare as true/false.
  Comparison B = compare<uint8_t>(ScalarType::Bool, {1, 0, 2}, {2, 1, 1});
  EXPECT_EQ(B.Failures, 1u);
  EXPECT_EQ(B.Worst, 1u);
  EXPECT_EQ(B.WorstA, "false");
  EXPECT_EQ(B.WorstB, "true");
}

TEST(RunReportTest, FormatElement) {
  auto F32 = [](float V) {
    uint8_t B[4];
    std::memcpy(B, &V, 4);
    return formatElement(ScalarType::F32, B);
  };
  EXPECT_EQ(F32(0.1f), "0.1");
  EXPECT_EQ(F32(1.0f / 3), "0.33333334");
  EXPECT_EQ(F32(-Inff), "-inf");
  EXPECT_EQ(F32(1e20f), "1e+20");
  double D = 0.1;
  uint8_t B[8];
  std::memcpy(B, &D, 8);
  EXPECT_EQ(formatElement(ScalarType::F64, B), "0.1");
}

TEST(RunReportTest, FormatIndex) {
  EXPECT_EQ(formatIndex(7, {}), "7");
  EXPECT_EQ(formatIndex(7, {10}), "7");
  EXPECT_EQ(formatIndex(7, {2, 4}), "(1, 3)");
  EXPECT_EQ(formatIndex(23, {2, 3, 4}), "(1, 2, 3)");
}

double eval(const std::string &Text, std::map<std::string, double> V = {}) {
  Expected<FlopsExpr> E = FlopsExpr::parse(Text);
  EXPECT_TRUE(bool(E)) << Text << ": " << E.error().message();
  if (!E)
    return std::nan("");
  Expected<double> R = E->evaluate(V);
  EXPECT_TRUE(bool(R)) << Text << ": " << R.error().message();
  return R ? *R : std::nan("");
}

std::string parseError(const std::string &Text) {
  Expected<FlopsExpr> E = FlopsExpr::parse(Text);
  return E ? "" : E.error().message();
}

TEST(RunReportTest, FlopsExpressions) {
  EXPECT_EQ(eval("2+3*4"), 14);
  EXPECT_EQ(eval("(2+3)*4"), 20);
  EXPECT_EQ(eval("10-4-3"), 3); // left-associative
  EXPECT_EQ(eval("8/4/2"), 1);
  EXPECT_EQ(eval("10/4"), 2.5);
  EXPECT_EQ(eval("-2*-3"), 6);
  EXPECT_EQ(eval(" 1e3 + 0.5 "), 1000.5);
  EXPECT_EQ(eval("2*M*N*K", {{"M", 4096}, {"N", 4096}, {"K", 4096}}),
            2.0 * 4096 * 4096 * 4096);
  Expected<FlopsExpr> E = FlopsExpr::parse("M*N + M*K_2");
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(E->names(), (std::vector<std::string>{"M", "N", "K_2"}));
  Expected<double> Div = FlopsExpr::parse("1/(M-M)")->evaluate({{"M", 3}});
  ASSERT_FALSE(bool(Div));
  EXPECT_EQ(Div.error().message(), "division by zero");
}

TEST(RunReportTest, FlopsErrors) {
  EXPECT_EQ(parseError(""), "the expression is empty");
  EXPECT_EQ(parseError("2*"),
            "expected a number, an argument name or '(' at the end");
  EXPECT_EQ(parseError("*2"), "expected a number, an argument name or '(' at "
                              "column 1, found '*'");
  EXPECT_EQ(parseError("(1+2"),
            "expected ')' at the end to close the '(' at column 1");
  EXPECT_EQ(parseError("(1+2]"), "expected ')' at column 5 to close the '(' "
                                 "at column 1, found ']'");
  EXPECT_EQ(parseError("1 2"),
            "expected an operator (+ - * /) or the end at column 3, found '2'");
  EXPECT_EQ(parseError("a % b"),
            "expected an operator (+ - * /) or the end at column 3, found '%'");
  EXPECT_EQ(parseError("#"),
            "unexpected '#' at column 1 (the expression takes numbers, scalar "
            "argument names, + - * / and parentheses)");
  EXPECT_EQ(parseError("1..2"), "'1..2' at column 1 is not a number");
}

TEST(RunReportTest, FormatNumbers) {
  EXPECT_EQ(formatFixed(0), "0");
  EXPECT_EQ(formatFixed(0.0031249), "0.003125");
  EXPECT_EQ(formatFixed(12.346), "12.35");
  EXPECT_EQ(formatFixed(1234.5), "1234");
  EXPECT_EQ(formatFixed(3.41e-7), "3.41e-07");
  EXPECT_EQ(formatFixed(Inf), "inf");
  EXPECT_EQ(formatShort(1e-6), "1e-06");
  EXPECT_EQ(formatShort(0.03125), "0.0312");
}

TEST(RunReportTest, Table) {
  Table T({"name", ">n", "note"});
  T.addRow({"a", "1", "x"});
  T.addRow({"long", "1234", ""});
  char *Text = nullptr;
  size_t Size = 0;
  std::FILE *Out = open_memstream(&Text, &Size);
  T.print(Out);
  std::fclose(Out);
  EXPECT_EQ(std::string(Text, Size), "name     n  note\n"
                                     "a        1  x\n"
                                     "long  1234\n");
  std::free(Text);
}

} // namespace
