//===- ParserTest.cpp - Tests of the .tile parser and AST printer ---------===//

#include "dsl/ASTPrinter.h"
#include "dsl/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

using namespace kiln::dsl;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size()))
    ++n;
  return n;
}

struct Parsed {
  llvm::SourceMgr sm;
  std::string errors;
  std::unique_ptr<Module> module;
  unsigned numErrors = 0;

  llvm::StringRef text(llvm::SMRange r) const {
    return llvm::StringRef(r.Start.getPointer(),
                           r.End.getPointer() - r.Start.getPointer());
  }
  std::string ast() {
    std::string s;
    llvm::raw_string_ostream os(s);
    printAST(*module, sm, os);
    os.flush();
    return s;
  }
  const KernelDecl &kernel(size_t i = 0) const { return *module->kernels.at(i); }
  const std::vector<StmtPtr> &body(size_t i = 0) const {
    return kernel(i).body->stmts;
  }
};

std::unique_ptr<Parsed> parse(llvm::StringRef src) {
  auto r = std::make_unique<Parsed>();
  unsigned id = r->sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(src, "test.tile"), llvm::SMLoc());
  llvm::raw_string_ostream os(r->errors);
  DiagnosticEngine diag(r->sm, &os);
  r->module = parseModule(r->sm, id, diag);
  os.flush();
  r->numErrors = diag.getNumErrors();
  return r;
}

/// Parses `stmts` as the body of a kernel.
std::unique_ptr<Parsed> parseBody(llvm::StringRef stmts) {
  return parse(("kernel k(x: *f32, n: i32) grid (1) {\n" + stmts + "\n}\n")
                   .str());
}

/// Parses `expr` as `let v = expr;` and returns its inline form, or the
/// errors.
std::string exprForm(llvm::StringRef expr) {
  auto r = parse(("kernel k() grid (1) { let v = " + expr + "; }").str());
  if (!r->errors.empty())
    return "ERROR: " + r->errors;
  auto *let = cast<LetStmt>(r->body()[0].get());
  return formatExprInline(let->init.get());
}

const char *kSoftmax = R"(// Row softmax: one program per row.
kernel softmax<BLOCK: i32>(x: *f32, y: *f32, rows: i32, cols: i32, stride: i32)
    grid (rows)
    tune BLOCK in [256, 512, 1024, 2048, 4096], warps in [4, 8, 16]
         where BLOCK >= cols key (cols)
{
    let row  = program_id(0);
    let offs = arange(0, BLOCK);
    let mask = offs < cols;
    let v = load(x + row * stride + offs, mask = mask, other = -inf);
    let e = exp(v - max(v, 0));
    store(y + row * stride + offs, e / sum(e, 0), mask = mask);
}
)";

const char *kMatmul = R"(// C = A @ B with f32 accumulation, grouped program order for L2 reuse.
kernel matmul<BM: i32, BN: i32, BK: i32, GROUP: i32 = 8>(
    a: *f16, b: *f16, c: *f16, M: i32, N: i32, K: i32,
    lda: i32 @div(8), ldb: i32 @div(8), ldc: i32 @div(8))
    grid (cdiv(M, BM) * cdiv(N, BN))
    tune BM in [64, 128], BN in [64, 128, 256], BK in [32, 64],
         warps in [4, 8], stages in [2, 3, 4]
         where BM * BN <= 128 * 256 key (M, N, K)
{
    let pid = program_id(0);
    let tiles_m = cdiv(M, BM);
    let tiles_n = cdiv(N, BN);
    let group = pid / (GROUP * tiles_n);
    let first_m = group * GROUP;
    let rows_in_group = min(tiles_m - first_m, GROUP);
    let in_group = pid % (GROUP * tiles_n);
    let pm = first_m + in_group % rows_in_group;
    let pn = in_group / rows_in_group;

    let A = view(a, [M, K], [lda, 1]);
    let B = view(b, [K, N], [ldb, 1]);
    let C = view(c, [M, N], [ldc, 1]);
    var acc = zeros<f32>([BM, BN]);
    for k in range(0, K, BK) {
        acc = dot(load(A, [pm * BM, k], [BM, BK]), load(B, [k, pn * BN], [BK, BN]), acc);
    }
    store(C, [pm * BM, pn * BN], cast<f16>(acc));
}
)";

} // namespace

//===----------------------------------------------------------------------===//
// The specification's examples
//===----------------------------------------------------------------------===//

TEST(Parser, SoftmaxExample) {
  auto r = parse(kSoftmax);
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  ASSERT_EQ(r->module->kernels.size(), 1u);
  const KernelDecl &k = r->kernel();
  EXPECT_EQ(k.name, "softmax");
  ASSERT_EQ(k.constParams.size(), 1u);
  EXPECT_EQ(k.constParams[0].name, "BLOCK");
  EXPECT_EQ(k.constParams[0].type, ScalarKind::I32);
  ASSERT_EQ(k.params.size(), 5u);
  EXPECT_EQ(k.params[0].type.kind, TypeExpr::Kind::Pointer);
  EXPECT_EQ(k.params[0].type.elem, ScalarKind::F32);
  EXPECT_EQ(k.params[2].type.kind, TypeExpr::Kind::Scalar);
  ASSERT_EQ(k.grid.size(), 1u);
  EXPECT_EQ(cast<IdentExpr>(k.grid[0].get())->name, "rows");
  ASSERT_TRUE(k.tune.has_value());
  ASSERT_EQ(k.tune->entries.size(), 2u);
  EXPECT_EQ(k.tune->entries[0].name, "BLOCK");
  EXPECT_EQ(k.tune->entries[0].values.size(), 5u);
  EXPECT_EQ(k.tune->entries[1].name, "warps");
  ASSERT_TRUE(k.tune->where);
  EXPECT_EQ(formatExprInline(k.tune->where.get()), "BLOCK >= cols");
  EXPECT_TRUE(k.tune->hasKey);
  ASSERT_EQ(k.tune->key.size(), 1u);
  EXPECT_EQ(k.tune->key[0]->name, "cols");
  ASSERT_EQ(k.body->stmts.size(), 6u);
  auto *v = cast<LetStmt>(k.body->stmts[3].get());
  auto *load = cast<CallExpr>(v->init.get());
  EXPECT_EQ(load->callee, "load");
  ASSERT_EQ(load->args.size(), 1u);
  ASSERT_EQ(load->namedArgs.size(), 2u);
  EXPECT_EQ(load->namedArgs[1].name, "other");
  EXPECT_EQ(formatExprInline(load->namedArgs[1].value.get()), "-inf");
  EXPECT_TRUE(isa<ExprStmt>(k.body->stmts[5].get()));
  EXPECT_EQ(r->text(k.range).substr(0, 14), "kernel softmax");
  EXPECT_EQ(r->text(k.range).back(), '}');
}

TEST(Parser, MatmulExample) {
  auto r = parse(kMatmul);
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  const KernelDecl &k = r->kernel();
  EXPECT_EQ(k.name, "matmul");
  ASSERT_EQ(k.constParams.size(), 4u);
  ASSERT_TRUE(k.constParams[3].defaultValue);
  EXPECT_EQ(cast<IntLitExpr>(k.constParams[3].defaultValue.get())->value, 8u);
  ASSERT_EQ(k.params.size(), 9u);
  ASSERT_EQ(k.params[6].annotations.size(), 1u);
  EXPECT_EQ(k.params[6].annotations[0].name, "div");
  EXPECT_EQ(formatExprInline(k.grid[0].get()),
            "cdiv(M, BM) * cdiv(N, BN)");
  ASSERT_EQ(k.tune->entries.size(), 5u);
  EXPECT_EQ(k.tune->entries[4].name, "stages");
  EXPECT_EQ(formatExprInline(k.tune->where.get()),
            "(BM * BN) <= (128 * 256)");
  ASSERT_EQ(k.tune->key.size(), 3u);
  ASSERT_EQ(k.body->stmts.size(), 15u);
  auto *acc = cast<LetStmt>(k.body->stmts[12].get());
  EXPECT_TRUE(acc->isMutable);
  auto *zeros = cast<CallExpr>(acc->init.get());
  ASSERT_EQ(zeros->typeArgs.size(), 1u);
  EXPECT_EQ(zeros->typeArgs[0].elem, ScalarKind::F32);
  auto *loop = cast<ForStmt>(k.body->stmts[13].get());
  EXPECT_EQ(loop->var, "k");
  ASSERT_TRUE(loop->step);
  ASSERT_EQ(loop->body->stmts.size(), 1u);
  auto *assign = cast<AssignStmt>(loop->body->stmts[0].get());
  EXPECT_EQ(assign->name, "acc");
  EXPECT_FALSE(assign->compound.has_value());
}

TEST(Parser, BothExamplesInOneFile) {
  auto r = parse(std::string(kSoftmax) + kMatmul);
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  EXPECT_EQ(r->module->kernels.size(), 2u);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(Parser, Precedence) {
  EXPECT_EQ(exprForm("a + b * c"), "a + (b * c)");
  EXPECT_EQ(exprForm("a * b + c"), "(a * b) + c");
  EXPECT_EQ(exprForm("a - b - c"), "(a - b) - c");
  EXPECT_EQ(exprForm("a / b % c"), "(a / b) % c");
  EXPECT_EQ(exprForm("a & b == c"), "(a & b) == c");
  EXPECT_EQ(exprForm("a | b ^ c & d"), "a | (b ^ (c & d))");
  EXPECT_EQ(exprForm("a << 1 + 2"), "a << (1 + 2)");
  EXPECT_EQ(exprForm("a & b << c"), "a & (b << c)");
  EXPECT_EQ(exprForm("a || b && c"), "a || (b && c)");
  EXPECT_EQ(exprForm("a < b && c != d"), "(a < b) && (c != d)");
  EXPECT_EQ(exprForm("a | b < c"), "(a | b) < c");
  EXPECT_EQ(exprForm("-a * b"), "-a * b");
  EXPECT_EQ(exprForm("-(a * b)"), "-(a * b)");
  EXPECT_EQ(exprForm("!a && ~b"), "!a && ~b");
  EXPECT_EQ(exprForm("- - a"), "--a");
  EXPECT_EQ(exprForm("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(exprForm("-x[:, None]"), "-x[:, None]");
}

TEST(Parser, BinaryRangesAndOperatorLocation) {
  auto r = parse("kernel k() grid (1) { let v = (a + b) * c; }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *let = cast<LetStmt>(r->body()[0].get());
  auto *mul = cast<BinaryExpr>(let->init.get());
  EXPECT_EQ(r->text(mul->range), "(a + b) * c");
  EXPECT_EQ(*mul->opLoc.getPointer(), '*');
  auto *add = cast<BinaryExpr>(mul->lhs.get());
  EXPECT_EQ(*add->opLoc.getPointer(), '+');
  EXPECT_EQ(r->text(let->range), "let v = (a + b) * c;");
  EXPECT_EQ(r->text(let->nameRange), "v");
}

TEST(Parser, ComparisonsDoNotChain) {
  auto r = parseBody("let v = a < b < c;");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:15: error: comparison operators cannot be "
               "chained; use parentheses");
  EXPECT_EQ(r->numErrors, 1u);
  auto eq = parseBody("let v = a == b != c;");
  EXPECT_PRED2(contains, eq->errors, "cannot be chained");
  EXPECT_EQ(exprForm("(a < b) == c"), "(a < b) == c");
}

TEST(Parser, GenericCallsVersusLessThan) {
  auto r = parseBody("let a = cast<f16>(x);\n"
                     "let b = zeros<f32>([BM, BN]);\n"
                     "let c = full<i32>([8], 1);\n"
                     "let d = n < m;\n"
                     "let e = n < (m);\n"
                     "let f = cast<*f32>(x);\n"
                     "let g = cast<tile<f32, [4]>>(x);");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto init = [&](size_t i) { return cast<LetStmt>(r->body()[i].get())->init.get(); };
  auto *a = cast<CallExpr>(init(0));
  EXPECT_EQ(a->callee, "cast");
  ASSERT_EQ(a->typeArgs.size(), 1u);
  EXPECT_EQ(a->typeArgs[0].elem, ScalarKind::F16);
  EXPECT_EQ(a->args.size(), 1u);
  auto *b = cast<CallExpr>(init(1));
  EXPECT_EQ(formatExprInline(b), "zeros<f32>([BM, BN])");
  auto *c = cast<CallExpr>(init(2));
  EXPECT_EQ(c->args.size(), 2u);
  EXPECT_EQ(cast<BinaryExpr>(init(3))->op, BinaryOp::Lt);
  EXPECT_EQ(cast<BinaryExpr>(init(4))->op, BinaryOp::Lt);
  EXPECT_EQ(cast<CallExpr>(init(5))->typeArgs[0].kind,
            TypeExpr::Kind::Pointer);
  auto *g = cast<CallExpr>(init(6));
  EXPECT_EQ(g->typeArgs[0].kind, TypeExpr::Kind::Tile);
  EXPECT_EQ(formatExprInline(g), "cast<tile<f32, [4]>>(x)");

  auto missing = parseBody("let a = cast<f16> x;");
  EXPECT_PRED2(contains, missing->errors,
               "error: expected '(' after the type arguments of 'cast', "
               "found 'x'");
}

TEST(Parser, NamedArguments) {
  auto r = parseBody("store(x, v, mask = m);");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *call = cast<CallExpr>(cast<ExprStmt>(r->body()[0].get())->expr.get());
  EXPECT_EQ(call->args.size(), 2u);
  ASSERT_EQ(call->namedArgs.size(), 1u);
  EXPECT_EQ(call->namedArgs[0].name, "mask");
  EXPECT_EQ(r->text(call->namedArgs[0].nameRange), "mask");
  EXPECT_EQ(r->text(call->range), "store(x, v, mask = m)");

  // `a == b` is a positional comparison, not a named argument.
  auto eq = parseBody("f(a == b);");
  ASSERT_TRUE(eq->errors.empty()) << eq->errors;
  auto *f = cast<CallExpr>(cast<ExprStmt>(eq->body()[0].get())->expr.get());
  EXPECT_EQ(f->args.size(), 1u);
  EXPECT_TRUE(f->namedArgs.empty());

  auto bad = parseBody("store(x, mask = m, v);");
  EXPECT_PRED2(contains, bad->errors,
               "test.tile:2:20: error: positional argument after a named "
               "argument");
  auto twice = parseBody("load(x, mask = m, mask = m);");
  EXPECT_PRED2(contains, twice->errors, "argument 'mask' given twice");
}

TEST(Parser, IndexItems) {
  auto r = parseBody("let a = x[:, None];\nlet b = y[None, :, :,][:];");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *a = cast<IndexExpr>(cast<LetStmt>(r->body()[0].get())->init.get());
  ASSERT_EQ(a->items.size(), 2u);
  EXPECT_EQ(a->items[0].kind, IndexItem::Kind::Keep);
  EXPECT_EQ(a->items[1].kind, IndexItem::Kind::NewAxis);
  EXPECT_EQ(r->text(a->range), "x[:, None]");
  auto *b = cast<IndexExpr>(cast<LetStmt>(r->body()[1].get())->init.get());
  EXPECT_EQ(b->items.size(), 1u);
  EXPECT_EQ(cast<IndexExpr>(b->base.get())->items.size(), 3u);

  auto byValue = parseBody("let a = x[0];");
  EXPECT_PRED2(contains, byValue->errors,
               "test.tile:2:11: error: expected ':' or 'None' in index; "
               "tiles cannot be indexed by value");
  auto none = parseBody("let a = None;");
  EXPECT_PRED2(contains, none->errors,
               "test.tile:2:9: error: 'None' is only valid inside an index");
}

TEST(Parser, Lists) {
  EXPECT_EQ(exprForm("[a, b, c]"), "[a, b, c]");
  EXPECT_EQ(exprForm("[a, b,]"), "[a, b]");
  EXPECT_EQ(exprForm("[]"), "[]");
  EXPECT_EQ(exprForm("[[1, 2], [3]]"), "[[1, 2], [3]]");
}

TEST(Parser, Literals) {
  EXPECT_EQ(exprForm("1_024"), "1024");
  EXPECT_EQ(exprForm("0x10"), "16");
  EXPECT_EQ(exprForm("1.5"), "1.5");
  EXPECT_EQ(exprForm("1e-5"), "1e-05");
  EXPECT_EQ(exprForm("2.0"), "2.0");
  EXPECT_EQ(exprForm("inf"), "inf");
  EXPECT_EQ(exprForm("-inf"), "-inf");
  EXPECT_EQ(exprForm("nan"), "nan");
  EXPECT_EQ(exprForm("true && false"), "true && false");
  EXPECT_EQ(exprForm(R"("x=\n")"), R"("x=\n")");
  EXPECT_EQ(exprForm("where(c, a, b)"), "where(c, a, b)");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST(Parser, LetVarAndTypes) {
  auto r = parseBody("let a: f32 = 1.0;\n"
                     "var b: tile<f32, [BM, 2 * BN]> = zeros<f32>([BM, 2 * BN]);\n"
                     "let c: *f16 = x;\n"
                     "let d: view<f16, 2> = view(x, [n, n], [n, 1]);");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *a = cast<LetStmt>(r->body()[0].get());
  EXPECT_FALSE(a->isMutable);
  ASSERT_TRUE(a->declaredType);
  EXPECT_EQ(a->declaredType->kind, TypeExpr::Kind::Scalar);
  auto *b = cast<LetStmt>(r->body()[1].get());
  EXPECT_TRUE(b->isMutable);
  EXPECT_EQ(b->declaredType->kind, TypeExpr::Kind::Tile);
  EXPECT_EQ(b->declaredType->dims.size(), 2u);
  EXPECT_EQ(formatTypeExpr(*b->declaredType), "tile<f32, [BM, 2 * BN]>");
  auto *c = cast<LetStmt>(r->body()[2].get());
  EXPECT_EQ(formatTypeExpr(*c->declaredType), "*f16");
  auto *d = cast<LetStmt>(r->body()[3].get());
  EXPECT_EQ(d->declaredType->kind, TypeExpr::Kind::View);
  EXPECT_EQ(d->declaredType->rank, 2);
  EXPECT_EQ(r->text(d->declaredType->range), "view<f16, 2>");
}

TEST(Parser, Assignments) {
  const char *ops[] = {"=",  "+=", "-=", "*=",  "/=", "%=",
                       "&=", "|=", "^=", "<<=", ">>="};
  std::optional<BinaryOp> expected[] = {
      std::nullopt,    BinaryOp::Add,    BinaryOp::Sub,   BinaryOp::Mul,
      BinaryOp::Div,   BinaryOp::Rem,    BinaryOp::BitAnd, BinaryOp::BitOr,
      BinaryOp::BitXor, BinaryOp::Shl,   BinaryOp::Shr};
  for (size_t i = 0; i < std::size(ops); ++i) {
    auto r = parseBody(std::string("acc ") + ops[i] + " 1;");
    ASSERT_TRUE(r->errors.empty()) << ops[i] << r->errors;
    auto *a = cast<AssignStmt>(r->body()[0].get());
    EXPECT_EQ(a->name, "acc");
    EXPECT_EQ(a->compound, expected[i]) << ops[i];
    EXPECT_EQ(*a->opLoc.getPointer(), ops[i][0]);
    EXPECT_EQ(r->text(a->range), std::string("acc ") + ops[i] + " 1;");
  }
  auto bad = parseBody("x[:, None] = 1;\nf(x) += 2;");
  EXPECT_PRED2(contains, bad->errors,
               "test.tile:2:12: error: cannot assign to this expression; only "
               "variables can be assigned");
  EXPECT_PRED2(contains, bad->errors, "test.tile:3:6: error: cannot assign");
}

TEST(Parser, ForLoops) {
  auto r = parseBody("for i in range(0, n) { x = 1; }\n"
                     "for j in range(0, n, 4) { }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *f = cast<ForStmt>(r->body()[0].get());
  EXPECT_EQ(f->var, "i");
  EXPECT_EQ(r->text(f->varRange), "i");
  EXPECT_FALSE(f->step);
  EXPECT_EQ(f->body->stmts.size(), 1u);
  EXPECT_EQ(r->text(f->range), "for i in range(0, n) { x = 1; }");
  auto *g = cast<ForStmt>(r->body()[1].get());
  ASSERT_TRUE(g->step);

  auto noRange = parseBody("for i in rnge(0, n) { }\nlet ok = 1;");
  EXPECT_PRED2(contains, noRange->errors,
               "test.tile:2:10: error: expected 'range(...)' after 'in'");
  EXPECT_EQ(noRange->numErrors, 1u);
  // Recovery: the loop is skipped, the next statement is parsed.
  ASSERT_EQ(noRange->body().size(), 1u);
  EXPECT_TRUE(isa<LetStmt>(noRange->body()[0].get()));

  auto args = parseBody("for i in range(n) { }");
  EXPECT_PRED2(contains, args->errors,
               "error: 'range' takes 2 or 3 arguments (start, end [, step]), "
               "found 1");
}

TEST(Parser, IfElse) {
  auto r = parseBody("if a < b { x = 1; } else if c { x = 2; } else { x = 3; }\n"
                     "if d { }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *i = cast<IfStmt>(r->body()[0].get());
  EXPECT_EQ(formatExprInline(i->cond.get()), "a < b");
  EXPECT_EQ(i->thenBlock->stmts.size(), 1u);
  ASSERT_TRUE(i->elseBlock);
  ASSERT_EQ(i->elseBlock->stmts.size(), 1u);
  auto *elseIf = cast<IfStmt>(i->elseBlock->stmts[0].get());
  ASSERT_TRUE(elseIf->elseBlock);
  EXPECT_TRUE(isa<AssignStmt>(elseIf->elseBlock->stmts[0].get()));
  EXPECT_FALSE(cast<IfStmt>(r->body()[1].get())->elseBlock);

  auto bad = parseBody("if a { } else x = 1;");
  EXPECT_PRED2(contains, bad->errors,
               "error: expected '{' or 'if' after 'else', found 'x'");
  auto dangling = parseBody("else { }");
  EXPECT_PRED2(contains, dangling->errors, "'else' without a matching 'if'");
}

TEST(Parser, ReturnExprStmtAndBlocks) {
  auto r = parse("fn f(a: f32) -> f32 { return a * 2.0; }\n"
                 "kernel k() grid (1) { { store(x, 1); } return; ; }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  ASSERT_EQ(r->module->functions.size(), 1u);
  const FnDecl &f = *r->module->functions[0];
  EXPECT_EQ(f.name, "f");
  ASSERT_TRUE(f.returnType);
  EXPECT_EQ(f.returnType->elem, ScalarKind::F32);
  auto *ret = cast<ReturnStmt>(f.body->stmts[0].get());
  ASSERT_TRUE(ret->value);
  ASSERT_EQ(r->body().size(), 2u);
  auto *block = cast<BlockStmt>(r->body()[0].get());
  EXPECT_TRUE(isa<ExprStmt>(block->stmts[0].get()));
  EXPECT_FALSE(cast<ReturnStmt>(r->body()[1].get())->value);
}

TEST(Parser, HelperFunctionsWithConstParams) {
  auto r = parse("fn tile_sum<N: i32>(t: tile<f32, [N]>) -> f32 { return sum(t, 0); }\n"
                 "kernel k() grid (1) { }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  const FnDecl &f = *r->module->functions[0];
  ASSERT_EQ(f.constParams.size(), 1u);
  EXPECT_EQ(f.params[0].type.kind, TypeExpr::Kind::Tile);
}

TEST(Parser, GridWithThreeDimensions) {
  auto r = parse("kernel k(n: i32) grid (n, 2, cdiv(n, 4)) { }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  EXPECT_EQ(r->kernel().grid.size(), 3u);
  EXPECT_EQ(r->text(r->kernel().gridRange), "grid (n, 2, cdiv(n, 4))");
}

TEST(Parser, AnnotationsAndDefaults) {
  auto r = parse("kernel k<B: i32 = 64 * 2, C: bool = (1 > 0)>(p: *f32 @align(16), "
                 "n: i32 @div(16) @align(4)) grid (1) { }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  const KernelDecl &k = r->kernel();
  EXPECT_EQ(formatExprInline(k.constParams[0].defaultValue.get()), "64 * 2");
  EXPECT_EQ(k.constParams[1].type, ScalarKind::Bool);
  EXPECT_EQ(k.params[0].annotations[0].name, "align");
  EXPECT_EQ(k.params[1].annotations.size(), 2u);
  EXPECT_EQ(r->text(k.params[1].annotations[0].range), "@div(16)");
}

//===----------------------------------------------------------------------===//
// Error messages
//===----------------------------------------------------------------------===//

TEST(ParserErrors, MissingSemicolonPointsPastPreviousToken) {
  auto r = parseBody("let a = 1\nlet b = 2;\nstore(x, a)");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:10: error: expected ';' after 'let' statement");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:4:12: error: expected ';' after expression "
               "statement");
  EXPECT_EQ(r->numErrors, 2u);
  // Both statements after the missing `;` are still there.
  EXPECT_EQ(r->body().size(), 3u);
  auto assign = parseBody("a = 1 b = 2;");
  EXPECT_PRED2(contains, assign->errors,
               "test.tile:2:6: error: expected ';' after assignment");
  auto ret = parse("fn f() -> i32 { return 1 }\nkernel k() grid (1) { }");
  EXPECT_PRED2(contains, ret->errors,
               "test.tile:1:25: error: expected ';' after 'return' statement");
}

TEST(ParserErrors, UnexpectedToken) {
  auto r = parseBody("let a = ;");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:9: error: expected expression, found ';'");
  auto brace = parse("kernel k() grid (1) { let a = }");
  EXPECT_PRED2(contains, brace->errors,
               "test.tile:1:31: error: expected expression, found '}'");
  EXPECT_EQ(brace->numErrors, 1u);
}

TEST(ParserErrors, UnterminatedBlock) {
  auto r = parse("kernel k() grid (1) {\n  if x {\n    let a = 1;\n");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:4:1: error: expected '}' at end of file to close "
               "the block");
  EXPECT_PRED2(contains, r->errors, "test.tile:2:8: note: block opened here");
  EXPECT_EQ(r->numErrors, 1u);
  EXPECT_EQ(count(r->errors, "note:"), 1u);
}

TEST(ParserErrors, TopLevelJunk) {
  auto r = parse("foo bar(1);\nkernel k() grid (1) { }\n123 fn");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:1: error: expected 'kernel' or 'fn' at top "
               "level, found 'foo'");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:3:1: error: expected 'kernel' or 'fn' at top "
               "level, found '123'");
  EXPECT_EQ(r->module->kernels.size(), 1u);
}

TEST(ParserErrors, EmptyFile) {
  for (const char *src : {"", "   \n\n", "// just a comment\n// another\n"}) {
    auto r = parse(src);
    EXPECT_PRED2(contains, r->errors,
                 "test.tile:1:1: error: empty file: expected at least one "
                 "kernel");
    EXPECT_EQ(r->numErrors, 1u);
  }
  auto fnOnly = parse("fn f() { }\n");
  EXPECT_PRED2(contains, fnOnly->errors,
               "test.tile:1:1: error: no kernel in file");
}

TEST(ParserErrors, MissingGridRecovers) {
  auto r = parse("kernel k(n: i32) {\n  let a = ;\n}");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:18: error: kernel 'k' has no grid: expected "
               "'grid (...)' after the parameter list");
  // The body is still parsed (and its error reported).
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:11: error: expected expression, found ';'");
  auto tune = parse("kernel k<B: i32>() tune B in [1] { }");
  EXPECT_PRED2(contains, tune->errors,
               "test.tile:1:20: error: kernel 'k' has no grid");
  ASSERT_EQ(tune->module->kernels.size(), 1u);
  EXPECT_TRUE(tune->kernel().tune.has_value());
  auto other = parse("kernel k() foo { }");
  EXPECT_PRED2(contains, other->errors,
               "test.tile:1:12: error: expected 'grid (...)' after the "
               "parameter list of kernel 'k', found 'foo'");
}

TEST(ParserErrors, GridLimits) {
  auto r = parse("kernel k() grid (1, 2, 3, 4) { }");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:27: error: grid has at most 3 dimensions");
  EXPECT_EQ(r->numErrors, 1u);
  auto empty = parse("kernel k() grid () { }");
  EXPECT_PRED2(contains, empty->errors, "grid needs at least one dimension");
}

TEST(ParserErrors, Annotations) {
  auto r = parse("kernel k(p: *f32 @foo(4), q: *f32 @align(16)) grid (1) { }");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:18: error: unknown annotation '@foo'; expected "
               "'@div' or '@align'");
  EXPECT_EQ(r->numErrors, 1u);
  ASSERT_EQ(r->module->kernels.size(), 1u);
  EXPECT_TRUE(r->kernel().params[0].annotations.empty());
}

TEST(ParserErrors, TuneClause) {
  auto r = parse("kernel k<BM: i32>() grid (1) tune BM in [] { }");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:41: error: tune list for 'BM' is empty");
  auto order = parse("kernel k<B: i32>(n: i32) grid (1) tune B in [1] key (n) "
                     "where B > 0 { }");
  EXPECT_PRED2(contains, order->errors,
               "'where' must come before 'key' in a tune clause");
  auto noIn = parse("kernel k<B: i32>() grid (1) tune B [1] { }");
  EXPECT_PRED2(contains, noIn->errors,
               "expected 'in' after 'B' in 'tune', found '['");
}

TEST(ParserErrors, Types) {
  auto r = parse("kernel k(a: flaot, b: float, c: *f23, d: tile<*f32, [4]>) "
                 "grid (1) { }");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:13: error: unknown type 'flaot'; did you mean "
               "'f32'?");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:23: error: unknown type 'float'; did you mean "
               "'f32'?");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:34: error: unknown type 'f23'; did you mean 'f32'?");
  EXPECT_PRED2(contains, r->errors,
               "error: a tile of pointers cannot be written as a type");
  auto cp = parse("kernel k<B: *i32>() grid (1) { }");
  EXPECT_PRED2(contains, cp->errors,
               "const parameter 'B' must have a scalar type");
  auto view = parse("kernel k(v: view<f16, n>) grid (1) { }");
  EXPECT_PRED2(contains, view->errors,
               "expected an integer rank in 'view<...>', found 'n'");
}

TEST(ParserErrors, DuplicateParameters) {
  auto r = parse("kernel k<A: i32>(x: i32, x: f32) grid (1) { }");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:26: error: duplicate parameter 'x'");
}

TEST(ParserErrors, SeveralErrorsWithoutCascade) {
  auto r = parseBody("let a = 1 +;\n"
                     "let b = (2;\n"
                     "store(x, 3, );\n"
                     "let c = 4;\n"
                     "foo bar;\n");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:12: error: expected expression, found ';'");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:3:11: error: expected ')' to close the "
               "parenthesized expression, found ';'");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:6:4: error: expected ';' after expression "
               "statement");
  // `store(x, 3, )` is fine (trailing comma); `let c` survives.
  EXPECT_EQ(r->numErrors, 3u);
  bool sawC = false;
  for (const StmtPtr &s : r->body())
    if (auto *let = dyn_cast<LetStmt>(s.get()))
      sawC |= let->name == "c";
  EXPECT_TRUE(sawC);
}

TEST(ParserErrors, ErrorLimitStopsParsing) {
  std::string body;
  for (int i = 0; i < 100; ++i)
    body += "let = 1;\n";
  auto r = parseBody(body);
  EXPECT_EQ(count(r->errors, ": error: expected a variable name"), 20u);
  EXPECT_EQ(count(r->errors, "too many errors emitted, stopping now"), 1u);
}

TEST(ParserErrors, LexicalErrorsDoNotCascade) {
  auto r = parseBody("let a = $ + 1;\nlet b = 1 $ 2;");
  EXPECT_EQ(r->numErrors, 2u) << r->errors;
  EXPECT_PRED2(contains, r->errors,
               "test.tile:2:9: error: invalid character '$' in source");
}

//===----------------------------------------------------------------------===//
// Hostile input
//===----------------------------------------------------------------------===//

namespace {
void expectSingleNestingError(const std::string &src) {
  auto r = parse(src);
  EXPECT_EQ(count(r->errors, "error: nesting is too deep (more than 256 "
                             "levels)"),
            1u);
  EXPECT_EQ(r->numErrors, 1u) << r->errors.substr(0, 2000);
}
} // namespace

TEST(ParserHostile, DeepParentheses) {
  expectSingleNestingError("kernel k() grid (1) { let x = " +
                           std::string(20000, '(') + "1" +
                           std::string(20000, ')') + "; }");
}

TEST(ParserHostile, DeepUnary) {
  expectSingleNestingError("kernel k() grid (1) { let x = " +
                           std::string(20000, '-') + "1; }");
}

TEST(ParserHostile, DeepBlocks) {
  expectSingleNestingError("kernel k() grid (1) " + std::string(20000, '{') +
                           std::string(20000, '}'));
}

TEST(ParserHostile, DeepListsCallsAndElseIf) {
  expectSingleNestingError("kernel k() grid (1) { let x = " +
                           std::string(20000, '[') + "; }");
  std::string calls;
  for (int i = 0; i < 20000; ++i)
    calls += "f(";
  expectSingleNestingError("kernel k() grid (1) { let x = " + calls + "; }");
  std::string elseIf;
  for (int i = 0; i < 20000; ++i)
    elseIf += "if a { } else ";
  expectSingleNestingError("kernel k() grid (1) { " + elseIf + "{ } }");
}

TEST(ParserHostile, LongOperatorChainsAreBounded) {
  std::string chain;
  for (int i = 0; i < 100000; ++i)
    chain += "a + ";
  expectSingleNestingError("kernel k() grid (1) { let x = " + chain + "a; }");
  // Moderate chains are fine.
  std::string ok;
  for (int i = 0; i < 100; ++i)
    ok += "a + ";
  auto r = parse("kernel k() grid (1) { let x = " + ok + "a; }");
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(ParserHostile, NestingJustBelowTheLimit) {
  auto r = parse("kernel k() grid (1) { let x = " + std::string(200, '(') +
                 "1" + std::string(200, ')') + "; }");
  EXPECT_TRUE(r->errors.empty()) << r->errors.substr(0, 500);
}

TEST(ParserHostile, RandomBytesTerminateQuickly) {
  std::mt19937 rng(42);
  std::string bytes(1 << 20, '\0');
  for (char &c : bytes)
    c = static_cast<char>(rng() & 0xFF);
  auto start = std::chrono::steady_clock::now();
  auto r = parse(bytes);
  double secs = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  EXPECT_TRUE(r->numErrors > 0);
  EXPECT_LE(count(r->errors, ": error: "), 20u);
  EXPECT_LT(secs, 2.0);
  EXPECT_LT(r->errors.size(), 20000u);
}

TEST(ParserHostile, RandomTokenSoup) {
  // Random sequences of the language's own tokens: no crash, no hang, errors
  // bounded.
  const char *pieces[] = {
      "kernel", "fn",  "let",  "var", "for",  "in",   "if",    "else",
      "return", "grid", "tune", "where", "key", "None", "true", "inf",
      "x",      "BM",   "f32",  "tile", "view", "range", "cast", "load",
      "(",      ")",    "[",    "]",   "{",    "}",    ",",     ";",
      ":",      "@",    "->",   "+",   "-",    "*",    "<",     ">",
      ">>",     "=",    "==",   "+=",  "1",    "2.5",  "\"s\"", "@div",
      "!",      "&&",   "<<=",  "~"};
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string src;
    unsigned n = rng() % 60;
    for (unsigned i = 0; i < n; ++i) {
      src += pieces[rng() % std::size(pieces)];
      src += ' ';
    }
    auto r = parse(src);
    ASSERT_LE(count(r->errors, ": error: "), 20u) << src;
    if (r->numErrors == 0) {
      // Anything accepted prints without trouble.
      EXPECT_FALSE(r->ast().empty()) << src;
    }
  }
}

//===----------------------------------------------------------------------===//
// AST printer
//===----------------------------------------------------------------------===//

TEST(ASTPrinter, Softmax) {
  auto r = parse(kSoftmax);
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  std::string ast = r->ast();
  EXPECT_PRED2(contains, ast,
               "kernel softmax @2:8\n"
               "  const BLOCK: i32\n"
               "  param x: *f32\n");
  EXPECT_PRED2(contains, ast,
               "  grid\n"
               "    ident rows\n"
               "  tune\n"
               "    BLOCK in [256, 512, 1024, 2048, 4096]\n"
               "    warps in [4, 8, 16]\n"
               "    where\n"
               "      binary >=\n"
               "        ident BLOCK\n"
               "        ident cols\n"
               "    key (cols)\n"
               "  body\n"
               "    let row @7:5\n"
               "      call program_id\n"
               "        int 0\n");
  EXPECT_PRED2(contains, ast,
               "        named other\n"
               "          unary -\n"
               "            float inf\n");
}

TEST(ASTPrinter, StatementsAndTypes) {
  auto r = parse("fn h<N: i32 = 4>(t: tile<f32, [N]>, p: *f16 @align(16)) -> f32 {\n"
                 "  var s: f32 = 0.0;\n"
                 "  for i in range(0, N, 2) { s += 1.5; }\n"
                 "  if s > 0.0 { return s; } else { { return -s; } }\n"
                 "}\n"
                 "kernel k() grid (1) { let y = x[:, None]; }\n");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  std::string ast = r->ast();
  EXPECT_EQ(ast, "fn h @1:4\n"
                 "  const N: i32 = 4\n"
                 "  param t: tile<f32, [N]>\n"
                 "  param p: *f16 @align(16)\n"
                 "  returns f32\n"
                 "  body\n"
                 "    var s: f32 @2:3\n"
                 "      float 0.0\n"
                 "    for i @3:3\n"
                 "      from\n"
                 "        int 0\n"
                 "      to\n"
                 "        ident N\n"
                 "      step\n"
                 "        int 2\n"
                 "      body\n"
                 "        assign s += @3:29\n"
                 "          float 1.5\n"
                 "    if @4:3\n"
                 "      cond\n"
                 "        binary >\n"
                 "          ident s\n"
                 "          float 0.0\n"
                 "      then\n"
                 "        return @4:16\n"
                 "          ident s\n"
                 "      else\n"
                 "        block @4:35\n"
                 "          return @4:37\n"
                 "            unary -\n"
                 "              ident s\n"
                 "kernel k @6:8\n"
                 "  grid\n"
                 "    int 1\n"
                 "  body\n"
                 "    let y @6:23\n"
                 "      index [:, None]\n"
                 "        ident x\n");
}

TEST(ASTPrinter, PrintsTypesOnceSemaFilledThem) {
  auto r = parse("kernel k() grid (1) { let y = f(1); }");
  ASSERT_TRUE(r->errors.empty()) << r->errors;
  auto *let = cast<LetStmt>(r->body()[0].get());
  auto *call = cast<CallExpr>(let->init.get());
  call->type = Type::tile(ScalarKind::F32, {Dim::known(128), Dim::symbolic("BN")});
  call->args[0]->type = Type::scalar(ScalarKind::I32);
  std::string ast = r->ast();
  EXPECT_PRED2(contains, ast,
               "      call f : tile<f32, [128, BN]>\n"
               "        int 1 : i32\n");
}
