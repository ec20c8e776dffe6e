//===- Expr.h - Grid and launch-condition expressions -----------*- C++ -*-===//
//
// The manifest records each grid axis and each launch-time condition in a
// prefix form (docs/bundle.md): integers, names, and `(op a b)` / `(op a)`.
// An Expr is parsed once when the bundle is read, with its names resolved
// to runtime-param or const-param slots, and evaluated at every launch in
// 64-bit integer arithmetic (wrapping; `/` and `%` truncate).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_EXPR_H
#define KILN_RUNTIME_EXPR_H

#include "kiln/runtime.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt::detail {

/// Where a name's value comes from.
struct ExprSlot {
  bool IsConst = false; ///< a const param (else a runtime param)
  unsigned Index = 0;   ///< into the const values / the runtime params
};

class Expr {
public:
  /// Resolves a name to a slot, or returns a message saying why it cannot.
  using Resolver =
      std::function<std::optional<ExprSlot>(std::string_view, std::string &)>;

  /// Parses `Text`; the error message says what is wrong (no prefix).
  static Expected<Expr> parse(std::string_view Text, const Resolver &Resolve);

  /// Evaluates with the runtime params' integer values (`Params`, indexed
  /// by runtime param) and the variant's const values. Division by zero
  /// and out-of-range shifts are errors (message without prefix).
  Expected<int64_t> evaluate(const std::vector<int64_t> &Params,
                             const std::vector<int64_t> &Consts) const;

  const std::string &text() const { return Text; }
  /// The runtime params the expression reads, ascending, no duplicates.
  const std::vector<unsigned> &paramsRead() const { return ParamsRead; }

  enum class Op : uint8_t {
    Literal, Name,
    Add, Sub, Mul, Div, Rem, Lt, Le, Gt, Ge, Eq, Ne, LAnd, LOr,
    And, Or, Xor, Shl, Shr, Neg, Not, BitNot, CDiv, Min, Max
  };
  struct Node {
    Op Kind = Op::Literal;
    int64_t Value = 0;   ///< Literal
    ExprSlot Slot;       ///< Name
    int32_t Lhs = -1, Rhs = -1;
  };

private:
  Expected<int64_t> eval(int32_t Index, const std::vector<int64_t> &Params,
                         const std::vector<int64_t> &Consts) const;

  std::string Text;
  std::vector<Node> Nodes;
  int32_t Root = -1;
  std::vector<unsigned> ParamsRead;
};

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_EXPR_H
