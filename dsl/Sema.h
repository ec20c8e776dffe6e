//===- Sema.h - Semantic analysis of .tile modules -------------*- C++ -*-===//
//
// Name resolution, type and shape inference, and the checks of the
// language's typing rules. Sema annotates every expression of the AST with
// its Type. Tile dimensions that depend on const params stay symbolic
// (Dim::symbolic) here; they are fixed and checked again per tune variant by
// the `tile-specialize` pass.
//
// `fn` helpers are checked once per distinct call signature (they are
// instantiated like templates and always inlined); MLIRGen re-runs
// `instantiateHelper` before emitting an instance so that the annotations
// on the helper's body are those of that instance.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_SEMA_H
#define KILN_DSL_SEMA_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include <map>
#include <memory>

namespace kiln::dsl {

/// A compile-time integer known in the front end: a value when it does not
/// depend on const params, else only its source text.
struct ConstInt {
  std::optional<int64_t> value;
  std::string text;
};

/// One instantiation of a helper: its argument types.
struct HelperInstance {
  const FnDecl *fn = nullptr;
  std::vector<Type> argTypes;
  Type resultType;
  /// Helper const params bound by the call: name -> dim (value or symbol),
  /// and where it came from: (argument index, dimension index).
  std::vector<std::pair<std::string, Dim>> constBindings;
  std::vector<std::pair<unsigned, unsigned>> constSources;
  std::string mangledName;
};

/// The element type two operands of different (compatible) types are
/// widened to: the wider of two ints of one signedness or two floats;
/// f16 with bf16 gives f32.
ScalarKind promoteScalarKinds(ScalarKind a, ScalarKind b);

/// True if a call to `min`/`max` is a reduction (`max(t, 0)`, `max(t)`,
/// `max(t, axis = 1)`) rather than the smaller/larger of two values. Its
/// first argument must have been checked (a tile makes it a candidate).
bool isMinMaxReduction(const CallExpr &call);

class Sema {
public:
  Sema(DiagnosticEngine &diag, llvm::SourceMgr &sm);
  ~Sema();

  /// Checks every declaration of `module`. Returns false on any error.
  bool check(Module &module);

  /// Re-checks `fn`'s body for the given argument types so that its
  /// expressions carry this instance's types. Used by MLIRGen.
  bool instantiateHelper(const HelperInstance &inst);

  /// Every helper instance that a checked module uses, in first-use order.
  const std::vector<HelperInstance> &getHelperInstances() const {
    return instances;
  }
  /// The instance a call expression resolved to (null for builtins).
  const HelperInstance *getInstanceFor(const CallExpr *call) const;

  /// The compile-time integer value of `e` (after check()), if it has one.
  std::optional<ConstInt> getConstInt(const Expr *e) const;

  /// The source text of a range.
  std::string getText(llvm::SMRange range) const;

  /// Names of the builtins (for suggestions and docs).
  static llvm::ArrayRef<const char *> builtinNames();

  class Impl;

private:
  std::unique_ptr<Impl> impl;
  std::vector<HelperInstance> instances;
};

} // namespace kiln::dsl

#endif // KILN_DSL_SEMA_H
