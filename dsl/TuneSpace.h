//===- TuneSpace.h - Const-param evaluation and tune spaces ----*- C++ -*-===//
//
// Compile-time evaluation of integer expressions over const params, the
// enumeration of a kernel's tune space (cross product of the `tune` lists,
// pruned by the compile-time part of `where`, narrowed by -D pins), and the
// canonical prefix form in which grid and launch-time `where` expressions
// are handed to the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_TUNESPACE_H
#define KILN_DSL_TUNESPACE_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::dsl {

/// The implicit const params every kernel has, and their defaults.
constexpr const char *kWarpsName = "warps";
constexpr const char *kStagesName = "stages";
constexpr int64_t kDefaultWarps = 4;
constexpr int64_t kDefaultStages = 2;
/// More variants than this in one kernel is an error.
constexpr size_t kMaxVariants = 4096;

using Binding = std::map<std::string, int64_t>;

/// Evaluates an integer (or boolean, as 0/1) expression made of literals,
/// names bound in `binding`, unary/binary operators and `cdiv`/`min`/`max`.
/// On failure returns nullopt and, if `err` is set, says why (with the
/// offending sub-expression's location in `errLoc`).
std::optional<int64_t> evalConstExpr(const Expr &e, const Binding &binding,
                                     std::string *err = nullptr,
                                     llvm::SMLoc *errLoc = nullptr);

/// Names of identifiers that `e` reads.
void collectIdents(const Expr &e, std::vector<std::string> &names);

/// Canonical prefix form of an expression for the runtime:
/// `(cdiv rows BLOCK)`, `(* (+ a 1) 2)`, identifiers and integers as is.
std::string toPrefixForm(const Expr &e);

struct Variant {
  /// Every const param of the kernel in declaration order, then `warps`
  /// and `stages`.
  std::vector<std::pair<std::string, int64_t>> values;
  std::string str() const; ///< "BLOCK=256, warps=4, stages=2"
};

struct TuneSpace {
  std::vector<Variant> variants;
  /// Conjuncts of `where` that read runtime params (checked at launch), in
  /// prefix form; empty when the whole condition is compile-time.
  std::vector<std::string> launchConditions;
  /// The same conjuncts as written in the source (for messages).
  std::vector<std::string> launchConditionTexts;
  /// `key(...)` names, and how each is bucketed ("pow2", "exact").
  std::vector<std::string> key;
  std::vector<std::string> keyBuckets;
};

/// Enumerates the tune space of `kernel`. `pins` (from -D) fix const params
/// (or warps/stages): a pinned tuned param keeps only that value, a pinned
/// untuned one replaces its default. Errors (a const param without value,
/// a pin naming no const param, a value outside the tune list, an empty
/// space after pruning, too many variants) go to `diag`.
std::optional<TuneSpace> buildTuneSpace(const KernelDecl &kernel,
                                        const Binding &pins,
                                        DiagnosticEngine &diag,
                                        llvm::SourceMgr &sm);

} // namespace kiln::dsl

#endif // KILN_DSL_TUNESPACE_H
