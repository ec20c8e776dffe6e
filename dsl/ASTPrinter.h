//===- ASTPrinter.h - Readable dump of the .tile AST ------------*- C++ -*-===//
//
// `kiln compile --emit=ast` and the lit tests use this dump: one node per
// line, children indented by two spaces, declarations and statements with
// their `@line:col`, and every expression that Sema has typed followed by
// ` : <type>`. The format is stable; tests depend on it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_ASTPRINTER_H
#define KILN_DSL_ASTPRINTER_H

#include "dsl/AST.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln::dsl {

/// Prints the whole module (kernels first, then helper functions, each in
/// source order).
void printAST(const Module &m, llvm::SourceMgr &sm, llvm::raw_ostream &os);

/// An expression on one line, source-like, with nested binary operands
/// parenthesized: `(BM * BN) <= (128 * 256)`.
std::string formatExprInline(const Expr *e);
/// A type as written: `*f32`, `tile<f32, [BM, BN]>`, `view<f16, 2>`.
std::string formatTypeExpr(const TypeExpr &t);

} // namespace kiln::dsl

#endif // KILN_DSL_ASTPRINTER_H
