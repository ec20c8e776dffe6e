//===- Types.cpp - Types of the .tile language ----------------------------===//

#include "dsl/Types.h"

#include "llvm/ADT/StringSwitch.h"

using namespace kiln::dsl;

llvm::StringRef kiln::dsl::spelling(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::Bool: return "bool";
  case ScalarKind::I8: return "i8";
  case ScalarKind::I16: return "i16";
  case ScalarKind::I32: return "i32";
  case ScalarKind::I64: return "i64";
  case ScalarKind::U8: return "u8";
  case ScalarKind::U16: return "u16";
  case ScalarKind::U32: return "u32";
  case ScalarKind::U64: return "u64";
  case ScalarKind::F16: return "f16";
  case ScalarKind::BF16: return "bf16";
  case ScalarKind::F32: return "f32";
  case ScalarKind::F64: return "f64";
  case ScalarKind::F8E4M3: return "f8e4m3";
  case ScalarKind::F8E5M2: return "f8e5m2";
  }
  return "<scalar>";
}

std::optional<ScalarKind> kiln::dsl::parseScalarKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScalarKind>>(name)
      .Case("bool", ScalarKind::Bool)
      .Case("i8", ScalarKind::I8)
      .Case("i16", ScalarKind::I16)
      .Case("i32", ScalarKind::I32)
      .Case("i64", ScalarKind::I64)
      .Case("u8", ScalarKind::U8)
      .Case("u16", ScalarKind::U16)
      .Case("u32", ScalarKind::U32)
      .Case("u64", ScalarKind::U64)
      .Case("f16", ScalarKind::F16)
      .Case("bf16", ScalarKind::BF16)
      .Case("f32", ScalarKind::F32)
      .Case("f64", ScalarKind::F64)
      .Case("f8e4m3", ScalarKind::F8E4M3)
      .Case("f8e5m2", ScalarKind::F8E5M2)
      .Default(std::nullopt);
}

bool kiln::dsl::isFloat(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::F16:
  case ScalarKind::BF16:
  case ScalarKind::F32:
  case ScalarKind::F64:
  case ScalarKind::F8E4M3:
  case ScalarKind::F8E5M2:
    return true;
  default:
    return false;
  }
}

bool kiln::dsl::isFp8(ScalarKind kind) {
  return kind == ScalarKind::F8E4M3 || kind == ScalarKind::F8E5M2;
}

std::string kiln::dsl::fp8StorageOnly(llvm::StringRef what, ScalarKind kind) {
  return what.str() + " cannot be applied to " + spelling(kind).str() +
         ": fp8 types only load, store, cast and feed dot; use cast<f32>(...) "
         "first";
}

bool kiln::dsl::isInteger(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::I8:
  case ScalarKind::I16:
  case ScalarKind::I32:
  case ScalarKind::I64:
  case ScalarKind::U8:
  case ScalarKind::U16:
  case ScalarKind::U32:
  case ScalarKind::U64:
    return true;
  default:
    return false;
  }
}

/// True for the signed integer kinds only (floats and bool: false).
bool kiln::dsl::isSigned(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::I8:
  case ScalarKind::I16:
  case ScalarKind::I32:
  case ScalarKind::I64:
    return true;
  default:
    return false;
  }
}

unsigned kiln::dsl::bitWidth(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::Bool: return 1;
  case ScalarKind::I8:
  case ScalarKind::U8:
  case ScalarKind::F8E4M3:
  case ScalarKind::F8E5M2:
    return 8;
  case ScalarKind::I16:
  case ScalarKind::U16:
  case ScalarKind::F16:
  case ScalarKind::BF16:
    return 16;
  case ScalarKind::I32:
  case ScalarKind::U32:
  case ScalarKind::F32:
    return 32;
  case ScalarKind::I64:
  case ScalarKind::U64:
  case ScalarKind::F64:
    return 64;
  }
  return 0;
}

std::string kiln::dsl::formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    const Dim &d = shape[i];
    if (d.isKnown())
      s += std::to_string(d.value);
    else
      s += d.text.empty() ? std::string("?") : d.text;
  }
  s += "]";
  return s;
}

Type Type::withShape(Shape s) const {
  if (kind != Kind::Scalar && kind != Kind::Tile)
    return *this;
  Type t = *this;
  t.rank = 0;
  if (s.empty()) {
    t.kind = Kind::Scalar;
    t.shape.clear();
  } else {
    t.kind = Kind::Tile;
    t.shape = std::move(s);
  }
  return t;
}

Type Type::withElem(ScalarKind e) const {
  Type t = *this;
  t.elem = e;
  return t;
}

bool Type::operator==(const Type &o) const {
  return kind == o.kind && elem == o.elem && isPointer == o.isPointer &&
         shape == o.shape && rank == o.rank;
}

std::string Type::str() const {
  std::string elemStr = (isPointer ? "*" : "") + spelling(elem).str();
  switch (kind) {
  case Kind::Invalid: return "<invalid>";
  case Kind::Void: return "void";
  case Kind::Scalar: return elemStr;
  case Kind::Tile: return "tile<" + elemStr + ", " + formatShape(shape) + ">";
  case Kind::View:
    return "view<" + spelling(elem).str() + ", " + std::to_string(rank) + ">";
  case Kind::String: return "string";
  case Kind::List: return "list<" + elemStr + ", " + std::to_string(rank) + ">";
  }
  return "<invalid>";
}
