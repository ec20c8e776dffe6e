//===- RunReport.h - --check comparisons, --flops, tables -------*- C++ -*-===//
//
// The pieces of `kiln-run --check` / `--bench` that do not launch anything:
// the per-dtype tolerances and the element-wise comparison of two results,
// the `--flops` expression, number formatting and plain-text tables. No
// LLVM or MLIR here (kiln-run links only the runtime).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUN_RUNREPORT_H
#define KILN_TOOLS_KILN_RUN_RUNREPORT_H

#include "kiln/runtime.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace kiln::runtool {

//===----------------------------------------------------------------------===//
// --check
//===----------------------------------------------------------------------===//

/// How close a result element `a` must be to the reference element `b`.
/// Floats: `a` fails when |a - b| > Atol + Rtol * |b|; equal values
/// (infinities of the same sign included) and two NaNs pass, a NaN against
/// a number fails. Exact types (integers, bool) fail when a != b.
struct Tolerance {
  bool Exact = true;
  double Rtol = 0;
  double Atol = 0;
  /// "exact", "|a-b| <= 1e-06 + 1e-05*|b|".
  std::string str() const;
};

/// f32: rtol 1e-5, atol 1e-6; f16/bf16: rtol 1e-2, atol 1e-3; f64: rtol
/// 1e-12, atol 1e-13; f8e4m3: rtol 0.125, atol 1e-2 (f8e5m2: rtol 0.25),
/// about one unit in the last place; integers and bool: exact.
Tolerance toleranceFor(rt::ScalarType T);

/// The comparison of one argument's elements, `A` (the result checked)
/// against `B` (the reference).
struct Comparison {
  uint64_t Elements = 0;
  /// Elements beyond the tolerance (NaN mismatches included).
  uint64_t Failures = 0;
  /// Of those, a NaN against a number.
  uint64_t NanMismatches = 0;
  /// The largest |a - b| and |a - b| / |b| (infinite when b = 0 and a != b)
  /// over the elements that are not NaN mismatches.
  double MaxAbs = 0;
  double MaxRel = 0;
  /// The element furthest beyond (or nearest to) its tolerance, the first
  /// one if several are; absent when every element is equal.
  bool HasWorst = false;
  uint64_t Worst = 0;
  std::string WorstA, WorstB; ///< the two values there, formatted
};

/// Compares `N` elements of type `T` (bytes as a device stores them: bf16
/// and f16 as 16-bit patterns, fp8 as bytes, bool as one byte).
Comparison compareElements(rt::ScalarType T, const uint8_t *A, const uint8_t *B,
                           uint64_t N);

/// An element's value in its shortest round-trip form ("0.1", "nan",
/// "-inf", "42", "true").
std::string formatElement(rt::ScalarType T, const uint8_t *Element);

/// A flat index in C order as coordinates: "7" for 0-d and 1-d shapes,
/// "(1, 3)" otherwise.
std::string formatIndex(uint64_t Flat, const std::vector<int64_t> &Shape);

//===----------------------------------------------------------------------===//
// --flops
//===----------------------------------------------------------------------===//

/// An arithmetic expression over scalar arguments (`2*M*N*K`): `+ - * /`,
/// unary minus, parentheses, decimal numbers and argument names, evaluated
/// in double precision (exact for integers up to 2^53).
/// Parses a scalar literal for parameter P ("42", "-1", "0x10", "1.5",
/// "true"); the message names the argument and says what is wrong.
rt::Expected<rt::Arg> parseScalar(const rt::ParamInfo &P,
                                  const std::string &Text);

class FlopsExpr {
public:
  /// Parses `Text`; the message says what is wrong and where, without
  /// prefix ("expected a number, an argument name or '(' at the end").
  static rt::Expected<FlopsExpr> parse(const std::string &Text);

  const std::string &text() const { return Text; }
  /// The names the expression reads, in order of first use.
  const std::vector<std::string> &names() const { return Names; }
  /// Evaluates with every name in `Values` (a division by zero is an
  /// error whose message names it).
  rt::Expected<double>
  evaluate(const std::map<std::string, double> &Values) const;

  struct Node {
    char Op = 0; ///< 'n' number, 'v' name, '+', '-', '*', '/', 'u' (negate)
    double Value = 0;
    std::string Name;
    int Lhs = -1, Rhs = -1;
  };

private:
  std::string Text;
  std::vector<Node> Nodes;
  int Root = -1;
  std::vector<std::string> Names;
};

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// `V` with about 4 significant digits ("0.003125", "12.35", "1235"); in
/// %.3g below 0.001 ("3.41e-07").
std::string formatFixed(double V);
/// `V` in %.3g ("1e-06", "0.0312", "0", "inf").
std::string formatShort(double V);

/// A plain-text table: a header row, columns two spaces apart, text
/// columns left-aligned and numeric ones right-aligned; no trailing blanks.
class Table {
public:
  /// `Columns` names the columns; a name starting with '>' is
  /// right-aligned (the '>' is not printed).
  explicit Table(std::vector<std::string> Columns);
  void addRow(std::vector<std::string> Cells);
  void print(std::FILE *Out) const;

private:
  std::vector<std::string> Header;
  std::vector<bool> Right;
  std::vector<std::vector<std::string>> Rows;
};

} // namespace kiln::runtool

#endif // KILN_TOOLS_KILN_RUN_RUNREPORT_H
