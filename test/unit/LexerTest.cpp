//===- LexerTest.cpp - Tests of the .tile lexer, diagnostics and types ----===//

#include "dsl/Diagnostics.h"
#include "dsl/Lexer.h"
#include "dsl/Types.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

using namespace kiln::dsl;

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

/// Lexes `src` (named test.tile) to the end, collecting tokens and errors.
struct Lexed {
  llvm::SourceMgr sm;
  std::string errors;
  std::vector<Token> tokens; ///< Without the final Eof.
  unsigned numErrors = 0;

  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token &t : tokens)
      out.push_back(t.kind);
    return out;
  }
  std::pair<unsigned, unsigned> lineCol(const Token &t) const {
    return sm.getLineAndColumn(t.getLoc());
  }
};

std::unique_ptr<Lexed> lexAll(llvm::StringRef src) {
  auto r = std::make_unique<Lexed>();
  unsigned id = r->sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(src, "test.tile"), llvm::SMLoc());
  llvm::raw_string_ostream os(r->errors);
  DiagnosticEngine diag(r->sm, &os);
  Lexer lexer(r->sm, id, diag);
  for (unsigned i = 0; i < 10'000'000; ++i) {
    Token t = lexer.lex();
    if (t.is(TokenKind::Eof))
      break;
    r->tokens.push_back(std::move(t));
  }
  os.flush();
  r->numErrors = diag.getNumErrors();
  return r;
}

} // namespace

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

TEST(Lexer, Keywords) {
  auto r = lexAll("kernel fn let var for in if else return grid tune where "
                  "key const None true false");
  using K = TokenKind;
  std::vector<K> expected = {K::KwKernel, K::KwFn,    K::KwLet,   K::KwVar,
                             K::KwFor,    K::KwIn,    K::KwIf,    K::KwElse,
                             K::KwReturn, K::KwGrid,  K::KwTune,  K::KwWhere,
                             K::KwKey,    K::KwConst, K::KwNone,  K::KwTrue,
                             K::KwFalse};
  EXPECT_EQ(r->kinds(), expected);
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, IdentifiersIncludingContextualTypeNames) {
  auto r = lexAll("foo _bar x1 f32 bf16 f8e4m3 tile view range Kernel none");
  ASSERT_EQ(r->tokens.size(), 11u);
  for (const Token &t : r->tokens)
    EXPECT_EQ(t.kind, TokenKind::Identifier) << t.text.str();
  EXPECT_EQ(r->tokens[1].text, "_bar");
  EXPECT_EQ(r->tokens[3].text, "f32");
}

TEST(Lexer, PunctuationAndOperators) {
  auto r = lexAll("( ) [ ] { } , ; : @ -> + - * / % & | ^ ~ ! && || << >> "
                  "< <= > >= == != = += -= *= /= %= &= |= ^= <<= >>=");
  using K = TokenKind;
  std::vector<K> expected = {
      K::LParen,  K::RParen,    K::LBracket, K::RBracket, K::LBrace,
      K::RBrace,  K::Comma,     K::Semi,     K::Colon,    K::At,
      K::Arrow,   K::Plus,      K::Minus,    K::Star,     K::Slash,
      K::Percent, K::Amp,       K::Pipe,     K::Caret,    K::Tilde,
      K::Bang,    K::AmpAmp,    K::PipePipe, K::Shl,      K::Shr,
      K::Less,    K::LessEq,    K::Greater,  K::GreaterEq, K::EqEq,
      K::NotEq,   K::Assign,    K::PlusEq,   K::MinusEq,  K::StarEq,
      K::SlashEq, K::PercentEq, K::AmpEq,    K::PipeEq,   K::CaretEq,
      K::ShlEq,   K::ShrEq};
  EXPECT_EQ(r->kinds(), expected);
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, OperatorsWithoutSpaces) {
  auto r = lexAll("a<<=b>>c->d&&!e");
  using K = TokenKind;
  std::vector<K> expected = {K::Identifier, K::ShlEq,  K::Identifier,
                             K::Shr,        K::Identifier, K::Arrow,
                             K::Identifier, K::AmpAmp, K::Bang,
                             K::Identifier};
  EXPECT_EQ(r->kinds(), expected);
}

TEST(Lexer, LocationsAndRanges) {
  auto r = lexAll("kernel\n  foo(x)\n");
  ASSERT_EQ(r->tokens.size(), 5u);
  EXPECT_EQ(r->lineCol(r->tokens[0]), std::make_pair(1u, 1u));
  EXPECT_EQ(r->lineCol(r->tokens[1]), std::make_pair(2u, 3u));
  EXPECT_EQ(r->lineCol(r->tokens[2]), std::make_pair(2u, 6u));
  EXPECT_EQ(r->tokens[1].getEndLoc().getPointer() -
                r->tokens[1].getLoc().getPointer(),
            3);
}

TEST(Lexer, Comments) {
  auto r = lexAll("a // comment with $ and \"quotes\n b // last line");
  ASSERT_EQ(r->tokens.size(), 2u);
  EXPECT_EQ(r->tokens[0].text, "a");
  EXPECT_EQ(r->tokens[1].text, "b");
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, BlockCommentsAreNotComments) {
  auto r = lexAll("/* x */");
  using K = TokenKind;
  std::vector<K> expected = {K::Slash, K::Star, K::Identifier, K::Star,
                             K::Slash};
  EXPECT_EQ(r->kinds(), expected);
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

TEST(Lexer, IntegerLiterals) {
  auto r = lexAll("42 0x2A 0X2a 0b101 1_024 0 007 0xFFFF_FFFF "
                  "18446744073709551615");
  ASSERT_EQ(r->tokens.size(), 9u);
  std::vector<uint64_t> expected = {42,  42, 42,         5,
                                    1024, 0, 7, 0xFFFFFFFF,
                                    18446744073709551615ull};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r->tokens[i].kind, TokenKind::IntLit);
    EXPECT_EQ(r->tokens[i].intValue, expected[i]) << r->tokens[i].text.str();
  }
  EXPECT_EQ(r->tokens[4].text, "1_024");
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, IntegerTooLarge) {
  auto r = lexAll("18446744073709551616");
  ASSERT_EQ(r->tokens.size(), 1u);
  EXPECT_EQ(r->tokens[0].kind, TokenKind::IntLit);
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:1: error: integer literal '18446744073709551616' "
               "is too large (the largest is 18446744073709551615)");
  auto h = lexAll("x = 0x1_0000_0000_0000_0000");
  EXPECT_PRED2(contains, h->errors,
               "test.tile:1:5: error: integer literal "
               "'0x1_0000_0000_0000_0000' is too large");
}

TEST(Lexer, MalformedIntegers) {
  for (const char *src : {"1_", "0x", "0b", "1__0", "0b102", "12abc", "0x_1",
                          "0xG"}) {
    auto r = lexAll(src);
    EXPECT_PRED2(contains, r->errors,
                 "test.tile:1:1: error: malformed integer literal '" +
                     std::string(src) + "'");
    EXPECT_EQ(r->numErrors, 1u) << src;
    ASSERT_EQ(r->tokens.size(), 1u) << src;
  }
}

TEST(Lexer, FloatLiterals) {
  auto r = lexAll("1.0 1e-5 2.5E+3 0.5 3e2 1_000.5 inf nan");
  ASSERT_EQ(r->tokens.size(), 8u);
  for (const Token &t : r->tokens)
    EXPECT_EQ(t.kind, TokenKind::FloatLit) << t.text.str();
  EXPECT_DOUBLE_EQ(r->tokens[0].floatValue, 1.0);
  EXPECT_DOUBLE_EQ(r->tokens[1].floatValue, 1e-5);
  EXPECT_DOUBLE_EQ(r->tokens[2].floatValue, 2500.0);
  EXPECT_DOUBLE_EQ(r->tokens[3].floatValue, 0.5);
  EXPECT_DOUBLE_EQ(r->tokens[4].floatValue, 300.0);
  EXPECT_DOUBLE_EQ(r->tokens[5].floatValue, 1000.5);
  EXPECT_TRUE(std::isinf(r->tokens[6].floatValue));
  EXPECT_GT(r->tokens[6].floatValue, 0);
  EXPECT_TRUE(std::isnan(r->tokens[7].floatValue));
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, FloatErrors) {
  auto dot = lexAll("x = 1.;");
  EXPECT_PRED2(contains, dot->errors,
               "test.tile:1:6: error: expected digits after '.' in float "
               "literal");
  auto big = lexAll("1e999");
  EXPECT_PRED2(contains, big->errors,
               "test.tile:1:1: error: float literal '1e999' is out of range");
  auto tiny = lexAll("1e-999"); // underflow to zero is fine
  EXPECT_TRUE(tiny->errors.empty()) << tiny->errors;
  auto lead = lexAll(".5");
  EXPECT_PRED2(contains, lead->errors,
               "test.tile:1:1: error: expected a digit before '.'");
  auto exp = lexAll("1e");
  EXPECT_PRED2(contains, exp->errors,
               "test.tile:1:1: error: malformed float literal '1e'");
}

TEST(Lexer, StringLiterals) {
  auto r = lexAll(R"("a\nb\t\\\"" "")");
  ASSERT_EQ(r->tokens.size(), 2u);
  EXPECT_EQ(r->tokens[0].kind, TokenKind::StringLit);
  EXPECT_EQ(r->tokens[0].stringValue, "a\nb\t\\\"");
  EXPECT_EQ(r->tokens[1].stringValue, "");
  EXPECT_TRUE(r->errors.empty()) << r->errors;
}

TEST(Lexer, UnterminatedString) {
  auto r = lexAll("print(\"abc\n);");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:7: error: unterminated string literal");
  // Lexing goes on after the line break.
  ASSERT_GE(r->tokens.size(), 4u);
  EXPECT_EQ(r->tokens[3].kind, TokenKind::RParen);
  auto eof = lexAll("\"abc");
  EXPECT_PRED2(contains, eof->errors,
               "test.tile:1:1: error: unterminated string literal");
}

TEST(Lexer, UnknownEscape) {
  auto r = lexAll(R"("a\qb")");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:3: error: unknown escape sequence '\\q'");
}

TEST(Lexer, InvalidCharacters) {
  auto r = lexAll("a $ b");
  EXPECT_PRED2(contains, r->errors,
               "test.tile:1:3: error: invalid character '$' in source");
  ASSERT_EQ(r->tokens.size(), 3u);
  EXPECT_EQ(r->tokens[1].kind, TokenKind::Error);

  auto ctl = lexAll(std::string("a \x01 b"));
  EXPECT_PRED2(contains, ctl->errors,
               "test.tile:1:3: error: invalid character '\\x01' in source");

  auto nul = lexAll(std::string("a \0 b", 5));
  EXPECT_PRED2(contains, nul->errors,
               "test.tile:1:3: error: invalid character '\\x00' in source");
  EXPECT_EQ(nul->tokens.back().text, "b");

  // A UTF-8 sequence is one character, one error.
  auto utf = lexAll("x \xC3\xA9 y");
  EXPECT_PRED2(contains, utf->errors,
               "test.tile:1:3: error: invalid character '\\xC3' in source");
  EXPECT_EQ(utf->numErrors, 1u);

  auto dot = lexAll("a.b");
  EXPECT_PRED2(contains, dot->errors, "invalid character '.' in source");
}

TEST(Lexer, StopsAfterTooManyErrors) {
  auto r = lexAll(std::string(1000, '$') + " a b c");
  EXPECT_EQ(count(r->errors, ": error: invalid character"), 20u);
  EXPECT_EQ(count(r->errors, "error: too many errors emitted, stopping now"),
            1u);
  // The lexer returns Eof once the limit is reached.
  EXPECT_LE(r->tokens.size(), 20u);
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

namespace {
struct DiagFixture {
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os{out};
  unsigned id;
  explicit DiagFixture(llvm::StringRef src) {
    id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(src, "d.tile"), llvm::SMLoc());
  }
  llvm::SMLoc at(size_t offset) {
    return llvm::SMLoc::getFromPointer(
        sm.getMemoryBuffer(id)->getBufferStart() + offset);
  }
};
} // namespace

TEST(Diagnostics, FormatWithCaretAndRange) {
  DiagFixture f("let x = foo + 1;\n");
  DiagnosticEngine diag(f.sm, &f.os);
  diag.error(llvm::SMRange(f.at(8), f.at(11)), "unknown name 'foo'");
  f.os.flush();
  EXPECT_EQ(f.out, "d.tile:1:9: error: unknown name 'foo'\n"
                   "let x = foo + 1;\n"
                   "        ^~~\n");
  EXPECT_TRUE(diag.hadError());
  EXPECT_EQ(diag.getNumErrors(), 1u);
}

TEST(Diagnostics, NotesWarningsAndContext) {
  DiagFixture f("a b c\n");
  DiagnosticEngine diag(f.sm, &f.os);
  diag.setContext("in variant BLOCK=128, warps=4");
  diag.error(f.at(0), "first");
  diag.note(f.at(2), "see here");
  diag.error(f.at(4), "second");
  diag.warning(f.at(4), "careful");
  f.os.flush();
  EXPECT_EQ(count(f.out, "in variant BLOCK=128, warps=4\n"), 1u);
  EXPECT_LT(f.out.find("in variant"), f.out.find("d.tile:1:1: error: first"));
  EXPECT_PRED2(contains, f.out, "d.tile:1:3: note: see here");
  EXPECT_PRED2(contains, f.out, "d.tile:1:5: error: second");
  EXPECT_PRED2(contains, f.out, "d.tile:1:5: warning: careful");
  EXPECT_EQ(diag.getNumErrors(), 2u);
}

TEST(Diagnostics, ErrorLimit) {
  DiagFixture f("x\n");
  DiagnosticEngine diag(f.sm, &f.os, /*maxErrors=*/3);
  for (int i = 0; i < 10; ++i) {
    diag.error(f.at(0), "boom");
    diag.note(f.at(0), "detail");
  }
  f.os.flush();
  EXPECT_EQ(count(f.out, "error: boom"), 3u);
  EXPECT_EQ(count(f.out, "too many errors emitted, stopping now"), 1u);
  // Notes of dropped errors are dropped too.
  EXPECT_EQ(count(f.out, "note: detail"), 2u);
  EXPECT_TRUE(diag.tooManyErrors());
}

TEST(Diagnostics, LongAndBinaryLinesAreWindowed) {
  std::string line(100000, 'a');
  line[50000] = '$';
  line[50001] = '\x01';
  DiagFixture f(line);
  DiagnosticEngine diag(f.sm, &f.os);
  diag.error(f.at(50000), "here");
  f.os.flush();
  EXPECT_PRED2(contains, f.out, "d.tile:1:50001: error: here\n");
  EXPECT_LT(f.out.size(), 600u);
  EXPECT_PRED2(contains, f.out, "...");
  EXPECT_PRED2(contains, f.out, "$?"); // control byte shown as '?'
  EXPECT_PRED2(contains, f.out, "^");
}

TEST(Diagnostics, ErrorAtEndOfBuffer) {
  DiagFixture f("abc");
  DiagnosticEngine diag(f.sm, &f.os);
  diag.error(f.at(3), "at the end");
  f.os.flush();
  EXPECT_PRED2(contains, f.out, "d.tile:1:4: error: at the end");
}

TEST(Diagnostics, SuggestName) {
  std::vector<std::string> names = {"program_id", "arange", "load", "store",
                                    "cols", "rows"};
  EXPECT_EQ(suggestName("progam_id", names), "program_id");
  EXPECT_EQ(suggestName("stroe", names), "store");
  EXPECT_EQ(suggestName("col", names), "cols");
  EXPECT_EQ(suggestName("zzzzzz", names), "");
  EXPECT_EQ(suggestName("x", {}), "");
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

TEST(Types, ScalarSpellingRoundTrip) {
  for (int i = 0; i <= static_cast<int>(ScalarKind::F8E5M2); ++i) {
    auto k = static_cast<ScalarKind>(i);
    std::optional<ScalarKind> back = parseScalarKind(spelling(k));
    ASSERT_TRUE(back.has_value()) << spelling(k).str();
    EXPECT_EQ(*back, k);
  }
  EXPECT_FALSE(parseScalarKind("float").has_value());
  EXPECT_FALSE(parseScalarKind("tile").has_value());
  EXPECT_EQ(spelling(ScalarKind::BF16), "bf16");
  EXPECT_EQ(spelling(ScalarKind::F8E4M3), "f8e4m3");
}

TEST(Types, ScalarProperties) {
  EXPECT_TRUE(isFloat(ScalarKind::BF16));
  EXPECT_TRUE(isFloat(ScalarKind::F8E5M2));
  EXPECT_FALSE(isFloat(ScalarKind::I32));
  EXPECT_TRUE(isInteger(ScalarKind::U8));
  EXPECT_FALSE(isInteger(ScalarKind::Bool));
  EXPECT_TRUE(isSigned(ScalarKind::I64));
  EXPECT_FALSE(isSigned(ScalarKind::U64));
  EXPECT_EQ(bitWidth(ScalarKind::Bool), 1u);
  EXPECT_EQ(bitWidth(ScalarKind::BF16), 16u);
  EXPECT_EQ(bitWidth(ScalarKind::F8E4M3), 8u);
  EXPECT_EQ(bitWidth(ScalarKind::U64), 64u);
}

TEST(Types, Str) {
  Shape s = {Dim::known(128), Dim::symbolic("BN")};
  EXPECT_EQ(formatShape(s), "[128, BN]");
  EXPECT_EQ(Type::scalar(ScalarKind::F32).str(), "f32");
  EXPECT_EQ(Type::pointer(ScalarKind::F16).str(), "*f16");
  EXPECT_EQ(Type::tile(ScalarKind::F32, s).str(), "tile<f32, [128, BN]>");
  EXPECT_EQ(Type::tile(ScalarKind::F32, {Dim::known(128)}, true).str(),
            "tile<*f32, [128]>");
  EXPECT_EQ(Type::view(ScalarKind::F16, 2).str(), "view<f16, 2>");
  EXPECT_EQ(Type::voidType().str(), "void");
  EXPECT_EQ(Type::invalid().str(), "<invalid>");
  Type str;
  str.kind = Type::Kind::String;
  EXPECT_EQ(str.str(), "string");
}

TEST(Types, EqualityAndWith) {
  Shape s = {Dim::known(4), Dim::symbolic("BN")};
  Type t = Type::tile(ScalarKind::F32, s);
  EXPECT_EQ(t, Type::tile(ScalarKind::F32, s));
  EXPECT_NE(t, Type::tile(ScalarKind::F16, s));
  EXPECT_NE(t, Type::tile(ScalarKind::F32, s, /*ptr=*/true));
  EXPECT_NE(t, Type::tile(ScalarKind::F32, {Dim::known(4), Dim::known(8)}));
  EXPECT_NE(t, Type::tile(ScalarKind::F32, {Dim::known(4)}));
  EXPECT_EQ(Type::tile(ScalarKind::F32, {Dim::symbolic("BN")}),
            Type::tile(ScalarKind::F32, {Dim::symbolic("BN")}));
  EXPECT_NE(Type::view(ScalarKind::F16, 2), Type::view(ScalarKind::F16, 3));
  EXPECT_EQ(t.withShape({}), Type::scalar(ScalarKind::F32));
  EXPECT_EQ(Type::pointer(ScalarKind::F32).withShape({Dim::known(8)}).str(),
            "tile<*f32, [8]>");
  EXPECT_EQ(t.withElem(ScalarKind::F16).str(), "tile<f16, [4, BN]>");
}
