//===- Types.h - Types of the .tile language -------------------*- C++ -*-===//
//
// Scalar kinds and the semantic type that Sema attaches to each expression.
// Tile shapes may depend on const params: a dimension is either a known
// integer or symbolic (its value is fixed only once a tune variant is
// chosen); `Dim::text` keeps the source spelling for messages.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_TYPES_H
#define KILN_DSL_TYPES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::dsl {

enum class ScalarKind {
  Bool,
  I8, I16, I32, I64,
  U8, U16, U32, U64,
  F16, BF16, F32, F64,
  F8E4M3, F8E5M2, // storage types: load, store, cast, dot
};

llvm::StringRef spelling(ScalarKind kind);
std::optional<ScalarKind> parseScalarKind(llvm::StringRef name);
bool isFloat(ScalarKind kind);
bool isInteger(ScalarKind kind); ///< Signed or unsigned, not bool.
bool isSigned(ScalarKind kind);
unsigned bitWidth(ScalarKind kind);
bool isFp8(ScalarKind kind);
/// The error for `what` (e.g. "operator '+'") applied to fp8 values: fp8
/// is a storage type.
std::string fp8StorageOnly(llvm::StringRef what, ScalarKind kind);

/// One tile dimension: a known size, or a size fixed by const params.
struct Dim {
  static constexpr int64_t kSymbolic = -1;
  int64_t value = kSymbolic;
  std::string text; ///< Source spelling, e.g. "BLOCK" or "BM * 2".

  static Dim known(int64_t v) { return Dim{v, std::to_string(v)}; }
  static Dim symbolic(std::string t) { return Dim{kSymbolic, std::move(t)}; }
  bool isKnown() const { return value != kSymbolic; }
  bool operator==(const Dim &o) const {
    return isKnown() || o.isKnown() ? value == o.value : text == o.text;
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }
  /// Whether the two may be the same size: equal, or one of them depends
  /// on const params (each variant's sizes are then checked after
  /// specialization, as for operators: docs/language.md 6.4).
  bool mayEqual(const Dim &o) const {
    return *this == o || !isKnown() || !o.isKnown();
  }
};

using Shape = std::vector<Dim>;
std::string formatShape(const Shape &shape); ///< "[128, BN]"

/// The semantic type of an expression.
struct Type {
  enum class Kind {
    Invalid,  ///< After an error; suppresses follow-on errors.
    Void,     ///< store(...), print(...)
    Scalar,   ///< elem (isPointer: a pointer to elem)
    Tile,     ///< shape x elem (isPointer: a tile of pointers to elem)
    View,     ///< view<elem, rank>
    String,   ///< string literal (print/assert)
    List,     ///< [a, b, ...] (shapes, offsets)
  };
  Kind kind = Kind::Invalid;
  ScalarKind elem = ScalarKind::I32;
  bool isPointer = false;
  /// A literal whose type is still open (adapts to its context).
  bool isUntypedLiteral = false;
  Shape shape;       ///< Tile only.
  int64_t rank = 0;  ///< View only (and List length).

  static Type invalid() { return Type{}; }
  static Type voidType() { Type t; t.kind = Kind::Void; return t; }
  static Type scalar(ScalarKind e) { Type t; t.kind = Kind::Scalar; t.elem = e; return t; }
  static Type pointer(ScalarKind e) { Type t = scalar(e); t.isPointer = true; return t; }
  static Type tile(ScalarKind e, Shape s, bool ptr = false) {
    Type t; t.kind = Kind::Tile; t.elem = e; t.shape = std::move(s); t.isPointer = ptr; return t;
  }
  static Type view(ScalarKind e, int64_t rank) {
    Type t; t.kind = Kind::View; t.elem = e; t.rank = rank; return t;
  }

  bool isInvalid() const { return kind == Kind::Invalid; }
  bool isScalar() const { return kind == Kind::Scalar; }
  bool isTile() const { return kind == Kind::Tile; }
  bool isView() const { return kind == Kind::View; }
  /// Scalar or tile (a value elementwise ops accept).
  bool isValue() const { return isScalar() || isTile(); }

  /// The same element type with another shape (a scalar when empty).
  Type withShape(Shape s) const;
  Type withElem(ScalarKind e) const;
  bool operator==(const Type &o) const;
  bool operator!=(const Type &o) const { return !(*this == o); }

  /// "f32", "*f16", "tile<f32, [128, BN]>", "view<f16, 2>".
  std::string str() const;
};

} // namespace kiln::dsl

#endif // KILN_DSL_TYPES_H
