//===- ExprTest.cpp - Grid and launch-condition expressions ---------------===//

#include "../../runtime/lib/Expr.h"

#include <gtest/gtest.h>

#include <climits>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

/// Names: runtime params a, b, c (indices 0-2) and const params X, Y.
Expr::Resolver resolver() {
  return [](std::string_view Name, std::string &Why) -> std::optional<ExprSlot> {
    const char *Params[] = {"a", "b", "c"};
    const char *Consts[] = {"X", "Y"};
    for (unsigned I = 0; I < 3; ++I)
      if (Name == Params[I])
        return ExprSlot{false, I};
    for (unsigned I = 0; I < 2; ++I)
      if (Name == Consts[I])
        return ExprSlot{true, I};
    Why = "unknown name '" + std::string(Name) + "'";
    return std::nullopt;
  };
}

Expected<int64_t> eval(const std::string &Text, std::vector<int64_t> Params,
                       std::vector<int64_t> Consts = {0, 0}) {
  Expected<Expr> E = Expr::parse(Text, resolver());
  if (!E)
    return E.takeError();
  return E->evaluate(Params, Consts);
}

int64_t value(const std::string &Text, std::vector<int64_t> Params = {0, 0, 0},
              std::vector<int64_t> Consts = {0, 0}) {
  Expected<int64_t> V = eval(Text, Params, Consts);
  EXPECT_TRUE(V) << Text << ": " << V.error().message();
  return V ? *V : -999999;
}

std::string error(const std::string &Text,
                  std::vector<int64_t> Params = {0, 0, 0}) {
  Expected<int64_t> V = eval(Text, Params);
  EXPECT_FALSE(V) << Text;
  return V ? "" : V.error().message();
}

TEST(Expr, Arithmetic) {
  EXPECT_EQ(value("42"), 42);
  EXPECT_EQ(value("-7"), -7);
  EXPECT_EQ(value("a", {5, 0, 0}), 5);
  EXPECT_EQ(value("(+ a X)", {5, 0, 0}, {10, 0}), 15);
  EXPECT_EQ(value("(- a b)", {5, 8, 0}), -3);
  EXPECT_EQ(value("(* a b)", {-6, 7, 0}), -42);
  EXPECT_EQ(value("(/ -7 2)"), -3);
  EXPECT_EQ(value("(% -7 2)"), -1);
  EXPECT_EQ(value("(/ 7 -2)"), -3);
  EXPECT_EQ(value("(neg a)", {3, 0, 0}), -3);
  EXPECT_EQ(value("(~ 0)"), -1);
  EXPECT_EQ(value("(& 12 10)"), 8);
  EXPECT_EQ(value("(| 12 10)"), 14);
  EXPECT_EQ(value("(^ 12 10)"), 6);
  EXPECT_EQ(value("(<< 1 40)"), int64_t(1) << 40);
  EXPECT_EQ(value("(>> -16 2)"), -4);
  EXPECT_EQ(value("(min a b)", {3, -4, 0}), -4);
  EXPECT_EQ(value("(max a b)", {3, -4, 0}), 3);
  EXPECT_EQ(value("  ( *  (cdiv a X)\n(cdiv b Y) ) ", {100, 50, 0}, {32, 16}),
            16);
}

TEST(Expr, CdivRoundsUp) {
  EXPECT_EQ(value("(cdiv 10 4)"), 3);
  EXPECT_EQ(value("(cdiv 8 4)"), 2);
  EXPECT_EQ(value("(cdiv 0 4)"), 0);
  EXPECT_EQ(value("(cdiv 1 1024)"), 1);
  EXPECT_EQ(value("(cdiv -10 4)"), -2);
  EXPECT_EQ(value("(cdiv -10 -4)"), 3);
  EXPECT_EQ(value("(cdiv 10 -4)"), -2);
}

TEST(Expr, Comparisons) {
  EXPECT_EQ(value("(< 1 2)"), 1);
  EXPECT_EQ(value("(<= 2 2)"), 1);
  EXPECT_EQ(value("(> 1 2)"), 0);
  EXPECT_EQ(value("(>= X a)", {1024, 0, 0}, {512, 0}), 0);
  EXPECT_EQ(value("(== 3 3)"), 1);
  EXPECT_EQ(value("(!= 3 3)"), 0);
  EXPECT_EQ(value("(! 0)"), 1);
  EXPECT_EQ(value("(! 5)"), 0);
  EXPECT_EQ(value("(&& 2 3)"), 1);
  EXPECT_EQ(value("(|| 0 0)"), 0);
  // && and || short-circuit: the division is not evaluated.
  EXPECT_EQ(value("(&& (!= b 0) (> (/ a b) 1))", {10, 0, 0}), 0);
  EXPECT_EQ(value("(|| (== b 0) (> (/ a b) 1))", {10, 0, 0}), 1);
}

TEST(Expr, WrapsWithoutUndefinedBehaviour) {
  EXPECT_EQ(value("(+ 9223372036854775807 1)"), INT64_MIN);
  EXPECT_EQ(value("(* 4611686018427387904 4)"), 0);
  EXPECT_EQ(value("(neg -9223372036854775808)"), INT64_MIN);
  EXPECT_EQ(value("(/ -9223372036854775808 -1)"), INT64_MIN);
  EXPECT_EQ(value("(% -9223372036854775808 -1)"), 0);
  EXPECT_EQ(value("(<< 3 63)"), INT64_MIN);
}

TEST(Expr, EvaluationErrors) {
  EXPECT_EQ(error("(/ a b)", {1, 0, 0}), "division by zero");
  EXPECT_EQ(error("(% a 0)"), "division by zero");
  EXPECT_EQ(error("(cdiv 5 0)"), "division by zero");
  EXPECT_EQ(error("(<< 1 64)"), "shift amount 64 is out of range");
  EXPECT_EQ(error("(>> 1 -1)"), "shift amount -1 is out of range");
}

TEST(Expr, ParseErrors) {
  EXPECT_EQ(error(""), "unexpected end of expression");
  EXPECT_EQ(error("(+ 1"), "unexpected end of expression");
  EXPECT_EQ(error("(+ 1 2 3)"), "expected ')' after the operands of '+'");
  EXPECT_EQ(error("(pow 2 3)"), "unknown operator 'pow'");
  EXPECT_EQ(error("()"), "expected an operator after '('");
  EXPECT_EQ(error(")"), "unexpected ')'");
  EXPECT_EQ(error("1 2"), "unexpected text after the expression");
  EXPECT_EQ(error("zz"), "unknown name 'zz'");
  EXPECT_EQ(error("12x"), "malformed integer '12x'");
  EXPECT_EQ(error("a.b"), "unexpected 'a.b'");
  EXPECT_EQ(error("99999999999999999999"),
            "integer '99999999999999999999' is out of range");
  EXPECT_EQ(error("-9223372036854775809"),
            "integer '-9223372036854775809' is out of range");
  std::string Deep;
  for (int I = 0; I < 200; ++I)
    Deep += "(neg ";
  Deep += "1" + std::string(200, ')');
  EXPECT_EQ(error(Deep), "expression is nested more than 128 deep");
  std::string Fine;
  for (int I = 0; I < 100; ++I)
    Fine += "(neg ";
  Fine += "1" + std::string(100, ')');
  EXPECT_EQ(value(Fine), 1);
}

TEST(Expr, ParamsRead) {
  Expected<Expr> E = Expr::parse("(+ (* c a) (+ X c))", resolver());
  ASSERT_TRUE(E);
  EXPECT_EQ(E->paramsRead(), (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(E->text(), "(+ (* c a) (+ X c))");
}

} // namespace
