//===- Parser.h - Parser of the .tile language ------------------*- C++ -*-===//
//
// A hand-written recursive-descent parser producing the AST of AST.h.
// Errors are reported to the DiagnosticEngine with the location and what was
// expected; the parser recovers at statement and declaration boundaries, so
// one run reports several independent errors. Nesting deeper than
// kMaxNesting levels is refused with one error (no stack overflow on hostile
// input), and parsing stops once the engine has seen too many errors.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_PARSER_H
#define KILN_DSL_PARSER_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace kiln::dsl {

/// The deepest nesting of blocks and expressions the parser accepts.
constexpr unsigned kMaxNesting = 256;

/// Parses the buffer `bufferId` of `sm`. Always returns a Module (possibly
/// partial); errors go to `diag`.
std::unique_ptr<Module> parseModule(llvm::SourceMgr &sm, unsigned bufferId,
                                    DiagnosticEngine &diag);

} // namespace kiln::dsl

#endif // KILN_DSL_PARSER_H
