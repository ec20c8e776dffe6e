//===- Expr.cpp - Grid and launch-condition expressions -------------------===//

#include "Expr.h"

#include <algorithm>
#include <cctype>
#include <climits>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr unsigned kMaxDepth = limits::kMaxExprDepth;
constexpr size_t kMaxLength = limits::kMaxExprBytes;

struct OpSpelling {
  std::string_view Text;
  Expr::Op Kind;
  unsigned Arity;
};

const OpSpelling kOps[] = {
    {"+", Expr::Op::Add, 2},     {"-", Expr::Op::Sub, 2},
    {"*", Expr::Op::Mul, 2},     {"/", Expr::Op::Div, 2},
    {"%", Expr::Op::Rem, 2},     {"<", Expr::Op::Lt, 2},
    {"<=", Expr::Op::Le, 2},     {">", Expr::Op::Gt, 2},
    {">=", Expr::Op::Ge, 2},     {"==", Expr::Op::Eq, 2},
    {"!=", Expr::Op::Ne, 2},     {"&&", Expr::Op::LAnd, 2},
    {"||", Expr::Op::LOr, 2},    {"&", Expr::Op::And, 2},
    {"|", Expr::Op::Or, 2},      {"^", Expr::Op::Xor, 2},
    {"<<", Expr::Op::Shl, 2},    {">>", Expr::Op::Shr, 2},
    {"neg", Expr::Op::Neg, 1},   {"!", Expr::Op::Not, 1},
    {"~", Expr::Op::BitNot, 1},  {"cdiv", Expr::Op::CDiv, 2},
    {"min", Expr::Op::Min, 2},   {"max", Expr::Op::Max, 2},
};

bool isNameStart(char C) { return std::isalpha((unsigned char)C) || C == '_'; }
bool isNameChar(char C) { return std::isalnum((unsigned char)C) || C == '_'; }
bool isDelimiter(char C) {
  return C == '(' || C == ')' || std::isspace((unsigned char)C);
}

class Parser {
public:
  Parser(std::string_view Text, const Expr::Resolver &Resolve,
         std::vector<Expr::Node> &Nodes, std::vector<unsigned> &ParamsRead)
      : Text(Text), Resolve(Resolve), Nodes(Nodes), ParamsRead(ParamsRead) {}

  /// Parses one expression; returns its node index or -1 with Message set.
  int32_t parse(unsigned Depth) {
    skipSpace();
    if (Pos >= Text.size())
      return fail("unexpected end of expression");
    if (Depth > kMaxDepth)
      return fail("expression is nested more than " +
                  std::to_string(kMaxDepth) + " deep");
    char C = Text[Pos];
    if (C == '(')
      return parseList(Depth);
    if (C == ')')
      return fail("unexpected ')'");
    std::string_view Atom = readAtom();
    if (Atom.empty())
      return fail("unexpected character");
    if (std::isdigit((unsigned char)Atom[0]) ||
        (Atom.size() > 1 && Atom[0] == '-' &&
         std::isdigit((unsigned char)Atom[1])))
      return parseInteger(Atom);
    if (!isNameStart(Atom[0]) ||
        !std::all_of(Atom.begin(), Atom.end(), isNameChar))
      return fail("unexpected '" + std::string(Atom) + "'");
    std::string Why;
    std::optional<ExprSlot> Slot = Resolve(Atom, Why);
    if (!Slot)
      return fail(Why);
    Expr::Node N;
    N.Kind = Expr::Op::Name;
    N.Slot = *Slot;
    if (!Slot->IsConst)
      ParamsRead.push_back(Slot->Index);
    return add(N);
  }

  bool atEnd() {
    skipSpace();
    return Pos >= Text.size();
  }

  std::string Message;

private:
  int32_t parseList(unsigned Depth) {
    ++Pos; // '('
    skipSpace();
    std::string_view Head = readAtom();
    const OpSpelling *Spelling = nullptr;
    for (const OpSpelling &S : kOps)
      if (S.Text == Head)
        Spelling = &S;
    if (!Spelling)
      return fail(Head.empty() ? "expected an operator after '('"
                               : "unknown operator '" + std::string(Head) +
                                     "'");
    Expr::Node N;
    N.Kind = Spelling->Kind;
    N.Lhs = parse(Depth + 1);
    if (N.Lhs < 0)
      return -1;
    if (Spelling->Arity == 2) {
      N.Rhs = parse(Depth + 1);
      if (N.Rhs < 0)
        return -1;
    }
    skipSpace();
    if (Pos >= Text.size() || Text[Pos] != ')')
      return fail("expected ')' after the operands of '" +
                  std::string(Spelling->Text) + "'");
    ++Pos;
    return add(N);
  }

  int32_t parseInteger(std::string_view Atom) {
    bool Negative = Atom[0] == '-';
    uint64_t Magnitude = 0;
    for (char C : Atom.substr(Negative ? 1 : 0)) {
      if (!std::isdigit((unsigned char)C))
        return fail("malformed integer '" + std::string(Atom) + "'");
      unsigned Digit = C - '0';
      if (Magnitude > (UINT64_MAX - Digit) / 10)
        return fail("integer '" + std::string(Atom) + "' is out of range");
      Magnitude = Magnitude * 10 + Digit;
    }
    if (Negative && Magnitude > uint64_t(INT64_MAX) + 1)
      return fail("integer '" + std::string(Atom) + "' is out of range");
    Expr::Node N;
    N.Kind = Expr::Op::Literal;
    N.Value = int64_t(Negative ? 0 - Magnitude : Magnitude);
    return add(N);
  }

  std::string_view readAtom() {
    size_t Start = Pos;
    while (Pos < Text.size() && !isDelimiter(Text[Pos]))
      ++Pos;
    return Text.substr(Start, Pos - Start);
  }

  void skipSpace() {
    while (Pos < Text.size() && std::isspace((unsigned char)Text[Pos]))
      ++Pos;
  }

  int32_t add(const Expr::Node &N) {
    Nodes.push_back(N);
    return int32_t(Nodes.size() - 1);
  }

  int32_t fail(std::string Why) {
    if (Message.empty())
      Message = std::move(Why);
    return -1;
  }

  std::string_view Text;
  const Expr::Resolver &Resolve;
  std::vector<Expr::Node> &Nodes;
  std::vector<unsigned> &ParamsRead;
  size_t Pos = 0;
};

Error evalError(std::string Message) {
  return Error(ErrorCode::LaunchRefused, std::move(Message));
}

int64_t wrap(uint64_t V) { return int64_t(V); }

} // namespace

Expected<Expr> Expr::parse(std::string_view Text, const Resolver &Resolve) {
  if (Text.size() > kMaxLength)
    return Error(ErrorCode::InvalidBundle,
                 "expression is " + std::to_string(Text.size()) +
                     " bytes, over the limit of " +
                     std::to_string(kMaxLength));
  Expr E;
  E.Text = std::string(Text);
  Parser P(Text, Resolve, E.Nodes, E.ParamsRead);
  E.Root = P.parse(0);
  if (E.Root >= 0 && !P.atEnd())
    E.Root = -1, P.Message = "unexpected text after the expression";
  if (E.Root < 0)
    return Error(ErrorCode::InvalidBundle, P.Message);
  std::sort(E.ParamsRead.begin(), E.ParamsRead.end());
  E.ParamsRead.erase(std::unique(E.ParamsRead.begin(), E.ParamsRead.end()),
                     E.ParamsRead.end());
  return E;
}

Expected<int64_t> Expr::evaluate(const std::vector<int64_t> &Params,
                                 const std::vector<int64_t> &Consts) const {
  return eval(Root, Params, Consts);
}

Expected<int64_t> Expr::eval(int32_t Index, const std::vector<int64_t> &Params,
                             const std::vector<int64_t> &Consts) const {
  const Node &N = Nodes[Index];
  switch (N.Kind) {
  case Op::Literal:
    return N.Value;
  case Op::Name: {
    const std::vector<int64_t> &Values = N.Slot.IsConst ? Consts : Params;
    if (N.Slot.Index >= Values.size())
      return evalError("internal error: unbound name");
    return Values[N.Slot.Index];
  }
  default:
    break;
  }

  Expected<int64_t> L = eval(N.Lhs, Params, Consts);
  if (!L)
    return L;
  int64_t A = *L;
  // && and || short-circuit, so that `(&& (!= b 0) (> (/ a b) 1))` works.
  if (N.Kind == Op::LAnd && A == 0)
    return int64_t(0);
  if (N.Kind == Op::LOr && A != 0)
    return int64_t(1);
  switch (N.Kind) {
  case Op::Neg:
    return wrap(0 - uint64_t(A));
  case Op::Not:
    return int64_t(A == 0);
  case Op::BitNot:
    return ~A;
  default:
    break;
  }

  Expected<int64_t> R = eval(N.Rhs, Params, Consts);
  if (!R)
    return R;
  int64_t B = *R;
  switch (N.Kind) {
  case Op::Add:
    return wrap(uint64_t(A) + uint64_t(B));
  case Op::Sub:
    return wrap(uint64_t(A) - uint64_t(B));
  case Op::Mul:
    return wrap(uint64_t(A) * uint64_t(B));
  case Op::Div:
  case Op::Rem:
  case Op::CDiv: {
    if (B == 0)
      return evalError("division by zero");
    if (A == INT64_MIN && B == -1) // wraps, as two's complement does
      return N.Kind == Op::Rem ? int64_t(0) : INT64_MIN;
    int64_t Q = A / B, Rm = A % B;
    if (N.Kind == Op::Rem)
      return Rm;
    if (N.Kind == Op::CDiv && Rm != 0 && ((A < 0) == (B < 0)))
      ++Q; // ceiling: round up when the exact quotient is positive
    return Q;
  }
  case Op::Lt:
    return int64_t(A < B);
  case Op::Le:
    return int64_t(A <= B);
  case Op::Gt:
    return int64_t(A > B);
  case Op::Ge:
    return int64_t(A >= B);
  case Op::Eq:
    return int64_t(A == B);
  case Op::Ne:
    return int64_t(A != B);
  case Op::LAnd:
  case Op::LOr:
    return int64_t(B != 0);
  case Op::And:
    return A & B;
  case Op::Or:
    return A | B;
  case Op::Xor:
    return A ^ B;
  case Op::Shl:
  case Op::Shr:
    if (B < 0 || B >= 64)
      return evalError("shift amount " + std::to_string(B) +
                       " is out of range");
    if (N.Kind == Op::Shl)
      return wrap(uint64_t(A) << B);
    return A >> B; // arithmetic
  case Op::Min:
    return std::min(A, B);
  case Op::Max:
    return std::max(A, B);
  default:
    return evalError("internal error: bad expression node");
  }
}
