//===- ASTPrinter.cpp - Readable dump of the .tile AST --------------------===//

#include "dsl/ASTPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace kiln::dsl;
using llvm::raw_ostream;
using llvm::SMLoc;

static std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  // The shortest spelling that reads back as the same double.
  for (int prec = 1; prec <= 17; ++prec) {
    snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  // Keep it recognisable as a float: 1 -> 1.0.
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

static std::string quoteString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\\': out += "\\\\"; break;
    case '"': out += "\\\""; break;
    default:
      if (llvm::isPrint(c)) {
        out.push_back(c);
      } else {
        out += "\\x";
        out += llvm::hexdigit((static_cast<unsigned char>(c) >> 4) & 0xF);
        out += llvm::hexdigit(static_cast<unsigned char>(c) & 0xF);
      }
    }
  }
  out += "\"";
  return out;
}

static llvm::StringRef unarySpelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  case UnaryOp::BitNot: return "~";
  }
  return "?";
}

static std::string formatIndexItems(const IndexExpr &e) {
  std::string s = "[";
  for (size_t i = 0; i < e.items.size(); ++i) {
    if (i)
      s += ", ";
    s += e.items[i].kind == IndexItem::Kind::Keep ? ":" : "None";
  }
  return s + "]";
}

static std::string formatTypeArgs(const CallExpr &c) {
  if (c.typeArgs.empty())
    return "";
  std::string s = "<";
  for (size_t i = 0; i < c.typeArgs.size(); ++i) {
    if (i)
      s += ", ";
    s += formatTypeExpr(c.typeArgs[i]);
  }
  return s + ">";
}

std::string kiln::dsl::formatExprInline(const Expr *e) {
  if (!e)
    return "<null>";
  auto operand = [](const Expr *x) {
    std::string s = formatExprInline(x);
    if (x && llvm::isa<BinaryExpr>(x))
      return "(" + s + ")";
    return s;
  };
  switch (e->getKind()) {
  case ExprKind::IntLit:
    return std::to_string(llvm::cast<IntLitExpr>(e)->value);
  case ExprKind::FloatLit:
    return formatFloat(llvm::cast<FloatLitExpr>(e)->value);
  case ExprKind::BoolLit:
    return llvm::cast<BoolLitExpr>(e)->value ? "true" : "false";
  case ExprKind::StringLit:
    return quoteString(llvm::cast<StringLitExpr>(e)->value);
  case ExprKind::Ident:
    return llvm::cast<IdentExpr>(e)->name;
  case ExprKind::Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    return unarySpelling(u->op).str() + operand(u->operand.get());
  }
  case ExprKind::Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    return operand(b->lhs.get()) + " " + spelling(b->op).str() + " " +
           operand(b->rhs.get());
  }
  case ExprKind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    std::string s = c->callee + formatTypeArgs(*c) + "(";
    bool first = true;
    for (const ExprPtr &a : c->args) {
      if (!first)
        s += ", ";
      first = false;
      s += formatExprInline(a.get());
    }
    for (const NamedArg &a : c->namedArgs) {
      if (!first)
        s += ", ";
      first = false;
      s += a.name + " = " + formatExprInline(a.value.get());
    }
    return s + ")";
  }
  case ExprKind::Index: {
    auto *i = llvm::cast<IndexExpr>(e);
    return operand(i->base.get()) + formatIndexItems(*i);
  }
  case ExprKind::List: {
    auto *l = llvm::cast<ListExpr>(e);
    std::string s = "[";
    for (size_t i = 0; i < l->elements.size(); ++i) {
      if (i)
        s += ", ";
      s += formatExprInline(l->elements[i].get());
    }
    return s + "]";
  }
  }
  return "<expr>";
}

std::string kiln::dsl::formatTypeExpr(const TypeExpr &t) {
  std::string elem = spelling(t.elem).str();
  switch (t.kind) {
  case TypeExpr::Kind::Scalar:
    return elem;
  case TypeExpr::Kind::Pointer:
    return "*" + elem;
  case TypeExpr::Kind::Tile: {
    std::string s = "tile<" + elem + ", [";
    for (size_t i = 0; i < t.dims.size(); ++i) {
      if (i)
        s += ", ";
      s += formatExprInline(t.dims[i].get());
    }
    return s + "]>";
  }
  case TypeExpr::Kind::View:
    return "view<" + elem + ", " + std::to_string(t.rank) + ">";
  }
  return "<type>";
}

namespace {
class Printer {
public:
  Printer(llvm::SourceMgr &sm, raw_ostream &os) : sm(sm), os(os) {}

  void printKernel(const KernelDecl &k);
  void printFn(const FnDecl &f);

private:
  raw_ostream &line(unsigned indent) {
    os.indent(indent * 2);
    return os;
  }
  void loc(SMLoc l) {
    if (!l.isValid() || !sm.FindBufferContainingLoc(l))
      return;
    auto [ln, col] = sm.getLineAndColumn(l);
    os << " @" << ln << ':' << col;
  }
  void type(const Expr &e) {
    if (e.type.kind != Type::Kind::Invalid)
      os << " : " << e.type.str();
  }
  void constParams(const std::vector<ConstParam> &ps, unsigned indent);
  void params(const std::vector<Param> &ps, unsigned indent);
  void expr(const Expr *e, unsigned indent);
  void stmt(const Stmt *s, unsigned indent);
  void stmts(const std::vector<StmtPtr> &ss, unsigned indent) {
    for (const StmtPtr &s : ss)
      stmt(s.get(), indent);
  }
  void labelled(llvm::StringRef label, const Expr *e, unsigned indent) {
    line(indent) << label << '\n';
    expr(e, indent + 1);
  }

  llvm::SourceMgr &sm;
  raw_ostream &os;
};
} // namespace

void Printer::constParams(const std::vector<ConstParam> &ps, unsigned indent) {
  for (const ConstParam &p : ps) {
    line(indent) << "const " << p.name << ": " << spelling(p.type);
    if (p.defaultValue)
      os << " = " << formatExprInline(p.defaultValue.get());
    os << '\n';
  }
}

void Printer::params(const std::vector<Param> &ps, unsigned indent) {
  for (const Param &p : ps) {
    line(indent) << "param " << p.name << ": " << formatTypeExpr(p.type);
    for (const Annotation &a : p.annotations)
      os << " @" << a.name << '(' << formatExprInline(a.value.get()) << ')';
    os << '\n';
  }
}

void Printer::printKernel(const KernelDecl &k) {
  os << "kernel " << k.name;
  loc(k.nameRange.Start);
  os << '\n';
  constParams(k.constParams, 1);
  params(k.params, 1);
  line(1) << "grid\n";
  for (const ExprPtr &g : k.grid)
    expr(g.get(), 2);
  if (k.tune) {
    const TuneClause &t = *k.tune;
    line(1) << "tune\n";
    for (const TuneEntry &e : t.entries) {
      line(2) << e.name << " in [";
      for (size_t i = 0; i < e.values.size(); ++i)
        os << (i ? ", " : "") << formatExprInline(e.values[i].get());
      os << "]\n";
    }
    if (t.where)
      labelled("where", t.where.get(), 2);
    if (t.hasKey) {
      line(2) << "key (";
      for (size_t i = 0; i < t.key.size(); ++i)
        os << (i ? ", " : "") << t.key[i]->name
           << (i < t.keyBuckets.size() && t.keyBuckets[i] != "pow2"
                   ? ": " + t.keyBuckets[i]
                   : std::string());
      os << ")\n";
    }
  }
  line(1) << "body\n";
  if (k.body)
    stmts(k.body->stmts, 2);
}

void Printer::printFn(const FnDecl &f) {
  os << "fn " << f.name;
  loc(f.nameRange.Start);
  os << '\n';
  constParams(f.constParams, 1);
  params(f.params, 1);
  if (f.returnType)
    line(1) << "returns " << formatTypeExpr(*f.returnType) << '\n';
  line(1) << "body\n";
  if (f.body)
    stmts(f.body->stmts, 2);
}

void Printer::expr(const Expr *e, unsigned indent) {
  if (!e) {
    line(indent) << "<null>\n";
    return;
  }
  line(indent);
  switch (e->getKind()) {
  case ExprKind::IntLit:
    os << "int " << llvm::cast<IntLitExpr>(e)->value;
    type(*e);
    os << '\n';
    return;
  case ExprKind::FloatLit:
    os << "float " << formatFloat(llvm::cast<FloatLitExpr>(e)->value);
    type(*e);
    os << '\n';
    return;
  case ExprKind::BoolLit:
    os << "bool " << (llvm::cast<BoolLitExpr>(e)->value ? "true" : "false");
    type(*e);
    os << '\n';
    return;
  case ExprKind::StringLit:
    os << "string " << quoteString(llvm::cast<StringLitExpr>(e)->value);
    type(*e);
    os << '\n';
    return;
  case ExprKind::Ident:
    os << "ident " << llvm::cast<IdentExpr>(e)->name;
    type(*e);
    os << '\n';
    return;
  case ExprKind::Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    os << "unary " << unarySpelling(u->op);
    type(*e);
    os << '\n';
    expr(u->operand.get(), indent + 1);
    return;
  }
  case ExprKind::Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    os << "binary " << spelling(b->op);
    type(*e);
    os << '\n';
    expr(b->lhs.get(), indent + 1);
    expr(b->rhs.get(), indent + 1);
    return;
  }
  case ExprKind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    os << "call " << c->callee << formatTypeArgs(*c);
    type(*e);
    os << '\n';
    for (const ExprPtr &a : c->args)
      expr(a.get(), indent + 1);
    for (const NamedArg &a : c->namedArgs)
      labelled("named " + a.name, a.value.get(), indent + 1);
    return;
  }
  case ExprKind::Index: {
    auto *i = llvm::cast<IndexExpr>(e);
    os << "index " << formatIndexItems(*i);
    type(*e);
    os << '\n';
    expr(i->base.get(), indent + 1);
    return;
  }
  case ExprKind::List: {
    auto *l = llvm::cast<ListExpr>(e);
    os << "list";
    type(*e);
    os << '\n';
    for (const ExprPtr &x : l->elements)
      expr(x.get(), indent + 1);
    return;
  }
  }
}

void Printer::stmt(const Stmt *s, unsigned indent) {
  if (!s) {
    line(indent) << "<null>\n";
    return;
  }
  line(indent);
  switch (s->getKind()) {
  case StmtKind::Let: {
    auto *l = llvm::cast<LetStmt>(s);
    os << (l->isMutable ? "var " : "let ") << l->name;
    if (l->declaredType)
      os << ": " << formatTypeExpr(*l->declaredType);
    loc(s->getLoc());
    os << '\n';
    expr(l->init.get(), indent + 1);
    return;
  }
  case StmtKind::Assign: {
    auto *a = llvm::cast<AssignStmt>(s);
    os << "assign " << a->name;
    if (a->compound)
      os << ' ' << spelling(*a->compound) << '=';
    loc(s->getLoc());
    os << '\n';
    expr(a->value.get(), indent + 1);
    return;
  }
  case StmtKind::For: {
    auto *f = llvm::cast<ForStmt>(s);
    os << "for " << f->var;
    loc(s->getLoc());
    os << '\n';
    labelled("from", f->lo.get(), indent + 1);
    labelled("to", f->hi.get(), indent + 1);
    if (f->step)
      labelled("step", f->step.get(), indent + 1);
    line(indent + 1) << "body\n";
    if (f->body)
      stmts(f->body->stmts, indent + 2);
    return;
  }
  case StmtKind::If: {
    auto *i = llvm::cast<IfStmt>(s);
    os << "if";
    loc(s->getLoc());
    os << '\n';
    labelled("cond", i->cond.get(), indent + 1);
    line(indent + 1) << "then\n";
    if (i->thenBlock)
      stmts(i->thenBlock->stmts, indent + 2);
    if (i->elseBlock) {
      line(indent + 1) << "else\n";
      stmts(i->elseBlock->stmts, indent + 2);
    }
    return;
  }
  case StmtKind::Return: {
    auto *r = llvm::cast<ReturnStmt>(s);
    os << "return";
    loc(s->getLoc());
    os << '\n';
    if (r->value)
      expr(r->value.get(), indent + 1);
    return;
  }
  case StmtKind::ExprStmt: {
    os << "expr";
    loc(s->getLoc());
    os << '\n';
    expr(llvm::cast<ExprStmt>(s)->expr.get(), indent + 1);
    return;
  }
  case StmtKind::Block: {
    os << "block";
    loc(s->getLoc());
    os << '\n';
    stmts(llvm::cast<BlockStmt>(s)->stmts, indent + 1);
    return;
  }
  }
}

void kiln::dsl::printAST(const Module &m, llvm::SourceMgr &sm,
                         raw_ostream &os) {
  Printer printer(sm, os);
  // Kernels and functions in source order.
  size_t ki = 0, fi = 0;
  while (ki < m.kernels.size() || fi < m.functions.size()) {
    bool takeKernel =
        fi == m.functions.size() ||
        (ki < m.kernels.size() &&
         m.kernels[ki]->nameRange.Start.getPointer() <
             m.functions[fi]->nameRange.Start.getPointer());
    if (takeKernel)
      printer.printKernel(*m.kernels[ki++]);
    else
      printer.printFn(*m.functions[fi++]);
  }
}
