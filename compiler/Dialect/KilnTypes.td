//===- KilnTypes.td - Types of the kiln dialect ------------*- tablegen -*-===//
//
// `!kiln.ptr<T>` and `!kiln.view<T, N>`, and the type constraints that the
// ops use for scalars and tiles.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILNTYPES_TD
#define KILN_DIALECT_KILNTYPES_TD

include "compiler/Dialect/KilnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonTypeConstraints.td"

class Kiln_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kiln_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kiln_PointerType : Kiln_Type<"Pointer", "ptr"> {
  let summary = "pointer to global memory";
  let description = [{
    A pointer to an element of type `T` in global memory, written
    `!kiln.ptr<T>`. `T` is an integer (including `i1`) or float type. A tile
    of pointers is a ranked tensor of this type, e.g.
    `tensor<128x!kiln.ptr<f32>>`; pointer arithmetic (`kiln.addptr`) counts
    in elements of `T`.
  }];
  let parameters = (ins "::mlir::Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType), [{
      return $_get(pointeeType.getContext(), pointeeType);
    }]>,
  ];
  let skipDefaultBuilders = 1;
  let genVerifyDecl = 1;
}

def Kiln_ViewType : Kiln_Type<"View", "view"> {
  let summary = "strided N-d window on global memory";
  let description = [{
    `!kiln.view<T, N>` describes an N-d box of elements of type `T` in global
    memory (1 <= N <= 3): a base pointer, N sizes and N strides (in
    elements), built by `kiln.make_view`. `kiln.view_load` and
    `kiln.view_store` move rectangular tiles in and out of it with bounds
    checks against the sizes.
  }];
  let parameters = (ins "::mlir::Type":$elementType, "unsigned":$rank);
  let assemblyFormat = "`<` $elementType `,` $rank `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$elementType,
                                        "unsigned":$rank), [{
      return $_get(elementType.getContext(), elementType, rank);
    }]>,
  ];
  let skipDefaultBuilders = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// A scalar number: a signless integer (including i1) or a float.
def Kiln_Number : AnyTypeOf<[AnySignlessInteger, AnyFloat], "integer or float">;

// A scalar that a tile may hold: a number or a pointer.
def Kiln_Scalar : AnyTypeOf<[AnySignlessInteger, AnyFloat, Kiln_PointerType],
                            "integer, float or pointer">;

// A tile: a ranked tensor of rank 1 to 3.
class Kiln_TileOf<list<Type> allowed, list<int> ranks = [1, 2, 3]>
    : TensorRankOf<allowed, ranks>;

def Kiln_Tile : Kiln_TileOf<[Kiln_Scalar]>;
def Kiln_NumberTile : Kiln_TileOf<[Kiln_Number]>;
def Kiln_PtrTile : Kiln_TileOf<[Kiln_PointerType]>;
def Kiln_IntTile : Kiln_TileOf<[AnySignlessInteger]>;
def Kiln_BoolTile : Kiln_TileOf<[I1]>;

// Tile or scalar of ...
def Kiln_PtrLike : AnyTypeOf<[Kiln_PointerType, Kiln_PtrTile],
                             "pointer or tile of pointers">;
def Kiln_IntLike : AnyTypeOf<[AnySignlessInteger, Kiln_IntTile],
                             "integer or tile of integers">;
def Kiln_BoolLike : AnyTypeOf<[I1, Kiln_BoolTile], "i1 or tile of i1">;
def Kiln_NumberLike : AnyTypeOf<[Kiln_Number, Kiln_NumberTile],
                                "number or tile of numbers">;
def Kiln_Value : AnyTypeOf<[Kiln_Scalar, Kiln_Tile],
                           "scalar or tile (integer, float or pointer)">;

// A dynamic size or an offset: i32 or i64.
def Kiln_Size : AnyTypeOf<[I32, I64], "i32 or i64">;

#endif // KILN_DIALECT_KILNTYPES_TD
