//===- KilnOps.td - Ops of the kiln dialect ----------------*- tablegen -*-===//
//
// Every tablegen generator of compiler/Dialect/CMakeLists.txt runs on this
// file; it includes the dialect and type definitions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILNOPS_TD
#define KILN_DIALECT_KILNOPS_TD

include "compiler/Dialect/KilnDialect.td"
include "compiler/Dialect/KilnTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Program and const params
//===----------------------------------------------------------------------===//

def Kiln_ConstParamOp : Kiln_Op<"const_param", [Pure]> {
  let summary = "value of a const param in a generic kernel";
  let description = [{
    Reads the compile-time const param `name` of the enclosing generic
    kernel. `tile-specialize` replaces every `kiln.const_param` by the
    variant's constant; none is left after specialization.

    ```mlir
    %bm = kiln.const_param "BLOCK" : i32
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Kiln_Number:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_ProgramIdOp : Kiln_Op<"program_id", [Pure]> {
  let summary = "index of this program along a grid axis";
  let description = [{
    The coordinate (0-based, i32) of the running program along the launch
    grid axis `x`, `y` or `z` (axis 0, 1, 2 of the language's
    `program_id(axis)`).

    ```mlir
    %pid = kiln.program_id x
    ```
  }];
  let arguments = (ins Kiln_ProgramAxisAttr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
  let builders = [
    OpBuilder<(ins "::kiln::ProgramAxis":$axis), [{
      build($_builder, $_state, $_builder.getI32Type(), axis);
    }]>,
    OpBuilder<(ins "unsigned":$axis), [{
      assert(axis < 3 && "grid axis out of range");
      build($_builder, $_state, $_builder.getI32Type(),
            static_cast<::kiln::ProgramAxis>(axis));
    }]>,
  ];
}

def Kiln_NumProgramsOp : Kiln_Op<"num_programs", [Pure]> {
  let summary = "number of programs along a grid axis";
  let description = [{
    The launch grid's extent (i32) along axis `x`, `y` or `z`.

    ```mlir
    %n = kiln.num_programs y
    ```
  }];
  let arguments = (ins Kiln_ProgramAxisAttr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
  let builders = [
    OpBuilder<(ins "::kiln::ProgramAxis":$axis), [{
      build($_builder, $_state, $_builder.getI32Type(), axis);
    }]>,
    OpBuilder<(ins "unsigned":$axis), [{
      assert(axis < 3 && "grid axis out of range");
      build($_builder, $_state, $_builder.getI32Type(),
            static_cast<::kiln::ProgramAxis>(axis));
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Tile construction and shape ops
//===----------------------------------------------------------------------===//

def Kiln_ArangeOp : Kiln_Op<"arange", [Pure]> {
  let summary = "1-d tile of consecutive i32 values";
  let description = [{
    The tile `[lo, lo + 1, ..., hi - 1]`. `lo` and `hi` must be constants
    after specialization; then `hi - lo` is a positive power of two equal to
    the result size (the verifier checks this whenever both are constants).

    ```mlir
    %r = kiln.arange %c0, %block : tensor<?xi32>
    ```
  }];
  let arguments = (ins I32:$lo, I32:$hi);
  let results = (outs Kiln_TileOf<[I32], [1]>:$result);
  let assemblyFormat = "$lo `,` $hi attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_SplatOp : Kiln_Op<"splat", [Pure]> {
  let summary = "tile filled with one scalar";
  let description = [{
    A tile whose every element is `src` (an integer, float or pointer of the
    result's element type). One size operand (i32 or i64) per `?` dimension
    of the result, in order, gives the dynamic extents.

    ```mlir
    %t = kiln.splat %x [%bm : i32] : f32 -> tensor<?x64xf32>
    %p = kiln.splat %ptr : !kiln.ptr<f16> -> tensor<128x!kiln.ptr<f16>>
    ```

    A splat of a constant with a static shape folds to a dense constant.
  }];
  let arguments = (ins Kiln_Scalar:$src, Variadic<Kiln_Size>:$sizes);
  let results = (outs Kiln_Tile:$result);
  let assemblyFormat = [{
    $src (` ` `[` custom<TypedOperands>($sizes, type($sizes))^ `]`)? attr-dict
    `:` type($src) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$src), [{
      build($_builder, $_state, result, src, ::mlir::ValueRange());
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_BroadcastOp : Kiln_Op<"broadcast", [Pure]> {
  let summary = "broadcast the unit dimensions of a tile";
  let description = [{
    Repeats `src` along its size-1 dimensions to the result shape. Source
    and result have the same rank and element type; each static source
    dimension is 1 or equal to the result dimension. Size operands give the
    `?` dimensions of the result, as for `kiln.splat`.

    ```mlir
    %b = kiln.broadcast %x [%bn : i32] : tensor<64x1xf32> -> tensor<64x?xf32>
    ```
  }];
  let arguments = (ins Kiln_Tile:$src, Variadic<Kiln_Size>:$sizes);
  let results = (outs Kiln_Tile:$result);
  let assemblyFormat = [{
    $src (` ` `[` custom<TypedOperands>($sizes, type($sizes))^ `]`)? attr-dict
    `:` type($src) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$src), [{
      build($_builder, $_state, result, src, ::mlir::ValueRange());
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ExpandDimsOp : Kiln_Op<"expand_dims", [Pure]> {
  let summary = "insert a unit dimension";
  let description = [{
    Inserts a dimension of size 1 at position `axis` (0 <= axis <= rank of
    `src`); the result rank is at most 3. This is `x[:, None]` (axis 1) and
    `x[None, :]` (axis 0) of the language.

    ```mlir
    %e = kiln.expand_dims %x axis = 1 : tensor<?xf32> -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Kiln_Tile:$src, I32Attr:$axis);
  let results = (outs Kiln_Tile:$result);
  let assemblyFormat = [{
    $src `axis` `=` $axis attr-dict `:` type($src) `->` type($result)
  }];
  let builders = [
    // Infers the result type.
    OpBuilder<(ins "::mlir::Value":$src, "unsigned":$axis)>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tile with another shape";
  let description = [{
    The elements of `src` in row-major order, laid out in the result shape.
    Both have the same element type and, when both shapes are known, the
    same number of elements. Size operands give the `?` dimensions of the
    result.

    ```mlir
    %r = kiln.reshape %x : tensor<16x8xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tile:$src, Variadic<Kiln_Size>:$sizes);
  let results = (outs Kiln_Tile:$result);
  let assemblyFormat = [{
    $src (` ` `[` custom<TypedOperands>($sizes, type($sizes))^ `]`)? attr-dict
    `:` type($src) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$src), [{
      build($_builder, $_state, result, src, ::mlir::ValueRange());
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransOp : Kiln_Op<"trans", [Pure]> {
  let summary = "permute the dimensions of a tile";
  let description = [{
    Result dimension `i` is source dimension `order[i]`; `order` is a
    permutation of `[0, rank)`. `trans(x)` of the language is
    `order = [1, 0]`.

    ```mlir
    %t = kiln.trans %x order = [1, 0] : tensor<64x?xf16> -> tensor<?x64xf16>
    ```
  }];
  let arguments = (ins Kiln_Tile:$src, DenseI32ArrayAttr:$order);
  let results = (outs Kiln_Tile:$result);
  let assemblyFormat = [{
    $src `order` `=` $order attr-dict `:` type($src) `->` type($result)
  }];
  let builders = [
    // Infers the result type.
    OpBuilder<(ins "::mlir::Value":$src, "::llvm::ArrayRef<int32_t>":$order)>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Pointers
//===----------------------------------------------------------------------===//

def Kiln_AddPtrOp : Kiln_Op<"addptr",
    [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "pointer plus an element offset";
  let description = [{
    `ptr + offset`, counted in elements of the pointee type. Either both are
    scalars, or both are tiles of the same shape. The result has the type of
    `ptr`.

    ```mlir
    %q = kiln.addptr %p, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Kiln_PtrLike:$ptr, Kiln_IntLike:$offset);
  let results = (outs Kiln_PtrLike:$result);
  let assemblyFormat = [{
    $ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::Value":$offset), [{
      build($_builder, $_state, ptr.getType(), ptr, offset);
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_LoadOp : Kiln_Op<"load", [AttrSizedOperandSegments,
    TypesMatchWith<"result type is the pointee type in the shape of `ptr`",
                   "ptr", "result", "::kiln::getPointeeTypeSameShape($_self)">,
    OptionalTypesMatchWith<"mask is i1 in the shape of `ptr`",
                   "ptr", "mask", "::kiln::getI1SameShape($_self)">,
    OptionalTypesMatchWith<"`other` has the result type",
                   "ptr", "other", "::kiln::getPointeeTypeSameShape($_self)">]> {
  let summary = "load through a pointer or a tile of pointers";
  let description = [{
    Reads one element per pointer. Where `mask` is false nothing is read and
    the result takes `other`, or zero when `other` is absent. `mask` is i1 in
    the shape of `ptr`; `other` has the result type. Without a mask, every
    pointer must be valid.

    ```mlir
    %v = kiln.load %ptrs, mask %m, other %o
        : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
    %s = kiln.load %p : !kiln.ptr<i32> -> i32
    ```
  }];
  let arguments = (ins Arg<Kiln_PtrLike, "pointers", [MemRead]>:$ptr,
                       Optional<Kiln_BoolLike>:$mask,
                       Optional<Kiln_Value>:$other);
  let results = (outs Kiln_Value:$result);
  let assemblyFormat = [{
    $ptr (`,` `mask` $mask^)? (`,` `other` $other^)? attr-dict
    `:` type($ptr) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr,
                   CArg<"::mlir::Value", "{}">:$mask,
                   CArg<"::mlir::Value", "{}">:$other), [{
      build($_builder, $_state,
            ::kiln::getPointeeTypeSameShape(ptr.getType()), ptr, mask, other);
    }]>,
  ];
}

def Kiln_StoreOp : Kiln_Op<"store", [
    TypesMatchWith<"value type is the pointee type in the shape of `ptr`",
                   "ptr", "value", "::kiln::getPointeeTypeSameShape($_self)">,
    OptionalTypesMatchWith<"mask is i1 in the shape of `ptr`",
                   "ptr", "mask", "::kiln::getI1SameShape($_self)">]> {
  let summary = "store through a pointer or a tile of pointers";
  let description = [{
    Writes each element of `value` through the matching pointer, where
    `mask` (i1 in the shape of `ptr`) is true.

    ```mlir
    kiln.store %ptrs, %v, mask %m : tensor<128x!kiln.ptr<f32>>
    ```
  }];
  let arguments = (ins Arg<Kiln_PtrLike, "pointers", [MemWrite]>:$ptr,
                       Kiln_Value:$value,
                       Optional<Kiln_BoolLike>:$mask);
  let assemblyFormat = [{
    $ptr `,` $value (`,` `mask` $mask^)? attr-dict `:` type($ptr)
  }];
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

def Kiln_MakeViewOp : Kiln_Op<"make_view", [Pure, AttrSizedOperandSegments]> {
  let summary = "make a strided view on global memory";
  let description = [{
    A view of rank N whose element (i0, ..., iN-1) is at
    `base + sum(ik * strides[k])` (in elements) and whose in-bounds box is
    `0 <= ik < sizes[k]`. Exactly N sizes and N strides, all i64.

    ```mlir
    %A = kiln.make_view %a, [%m, %k], [%lda, %c1]
        : !kiln.ptr<f16> -> !kiln.view<f16, 2>
    ```
  }];
  let arguments = (ins Kiln_PointerType:$base, Variadic<I64>:$sizes,
                       Variadic<I64>:$strides);
  let results = (outs Kiln_ViewType:$result);
  let assemblyFormat = [{
    $base `,` `[` $sizes `]` `,` `[` $strides `]` attr-dict
    `:` qualified(type($base)) `->` qualified(type($result))
  }];
  let builders = [
    // Infers the view type from the base pointer and the number of sizes.
    OpBuilder<(ins "::mlir::Value":$base, "::mlir::ValueRange":$sizes,
                   "::mlir::ValueRange":$strides)>,
  ];
  let hasVerifier = 1;
}

def Kiln_ViewLoadOp : Kiln_Op<"view_load", [AttrSizedOperandSegments,
    OptionalTypesMatchWith<"`other` has the element type of the view",
        "view", "other",
        "::llvm::cast<::kiln::ViewType>($_self).getElementType()">]> {
  let summary = "load a box of a view";
  let description = [{
    Reads the box of the result's shape whose first element is at `offsets`
    (one i32 or i64 per view dimension). Elements outside the view's sizes
    (or at negative coordinates) take `other`, a scalar of the element type,
    or zero when it is absent. Size operands give the `?` dimensions of the
    result, as for `kiln.splat`; the result has the view's rank.

    ```mlir
    %t = kiln.view_load %A [%r : i32, %k : i32] [%bk : i32]
        : !kiln.view<f16, 2> -> tensor<64x?xf16>
    ```
  }];
  let arguments = (ins Arg<Kiln_ViewType, "view", [MemRead]>:$view,
                       Variadic<Kiln_Size>:$offsets,
                       Variadic<Kiln_Size>:$sizes,
                       Optional<Kiln_Number>:$other);
  let results = (outs Kiln_NumberTile:$result);
  let assemblyFormat = [{
    $view `[` custom<TypedOperands>($offsets, type($offsets)) `]`
    (` ` `[` custom<TypedOperands>($sizes, type($sizes))^ `]`)?
    (`,` `other` $other^)? attr-dict
    `:` qualified(type($view)) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$view,
                   "::mlir::ValueRange":$offsets,
                   CArg<"::mlir::ValueRange", "{}">:$sizes,
                   CArg<"::mlir::Value", "{}">:$other), [{
      build($_builder, $_state, ::mlir::TypeRange(result), view, offsets,
            sizes, other);
    }]>,
  ];
  let hasVerifier = 1;
}

def Kiln_ViewStoreOp : Kiln_Op<"view_store"> {
  let summary = "store a tile into a box of a view";
  let description = [{
    Writes `value` to the box of its shape whose first element is at
    `offsets` (one i32 or i64 per view dimension); elements outside the
    view's sizes are not written.

    ```mlir
    kiln.view_store %C [%r : i32, %c : i32], %t
        : !kiln.view<f16, 2>, tensor<64x64xf16>
    ```
  }];
  let arguments = (ins Arg<Kiln_ViewType, "view", [MemWrite]>:$view,
                       Variadic<Kiln_Size>:$offsets,
                       Kiln_NumberTile:$value);
  let assemblyFormat = [{
    $view `[` custom<TypedOperands>($offsets, type($offsets)) `]` `,` $value
    attr-dict `:` qualified(type($view)) `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix multiply
//===----------------------------------------------------------------------===//

def Kiln_DotOp : Kiln_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix product with accumulation";
  let description = [{
    `a @ b + acc` for `a: MxK`, `b: KxN`, `acc, result: MxN`. Element types:

    | a, b | acc, result |
    |---|---|
    | f16, bf16, f8E4M3FN, f8E5M2 | f32 |
    | i8 | i32 |
    | f32 | f32 (`precision = tf32` allowed) |
    | f64 | f64 |

    `a` and `b` have the same element type (the two f8 formats may mix).
    `precision` (default `ieee`) may be `tf32` only for f32 inputs.

    ```mlir
    %d = kiln.dot %a, %b, %acc
        : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %e = kiln.dot %x, %y, %acc precision = tf32
        : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Kiln_TileOf<[Kiln_Number], [2]>:$a,
                       Kiln_TileOf<[Kiln_Number], [2]>:$b,
                       Kiln_TileOf<[Kiln_Number], [2]>:$acc,
                       DefaultValuedAttr<Kiln_DotPrecisionAttr,
                           "::kiln::DotPrecision::ieee">:$precision);
  let results = (outs Kiln_TileOf<[Kiln_Number], [2]>:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc (`precision` `=` $precision^)? attr-dict
    `:` type($a) `,` type($b) `->` type($result)
  }];
  let builders = [
    // The result has the type of `acc`.
    OpBuilder<(ins "::mlir::Value":$a, "::mlir::Value":$b,
                   "::mlir::Value":$acc,
                   CArg<"::kiln::DotPrecision",
                        "::kiln::DotPrecision::ieee">:$precision), [{
      build($_builder, $_state, acc.getType(), a, b, acc, precision);
    }]>,
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

def Kiln_ReduceOp : Kiln_Op<"reduce",
    [RecursiveMemoryEffects, RecursivelySpeculatable, SingleBlock]> {
  let summary = "reduce tiles along one axis with a combining region";
  let description = [{
    Reduces N tiles of the same shape along `axis` together: result `i` is
    input `i` without dimension `axis` (a scalar when the input is 1-d),
    with the element type of input `i`. The combining region has 2N scalar
    arguments, first the N accumulated values, then the N values being
    combined into them (`^bb0(%acc0, ..., %accN-1, %new0, ..., %newN-1)`),
    and ends with `kiln.reduce.return` of the N combined values. Argument
    `k` and `N + k` and returned value `k` have the element type of input
    `k`. The order of combination is unspecified, so the region should be
    associative and commutative (argmax breaks ties on the index itself).

    ```mlir
    %s = kiln.reduce %x axis = 1 : (tensor<64x?xf32>) -> tensor<64xf32> {
    ^bb0(%acc: f32, %new: f32):
      %0 = arith.addf %acc, %new : f32
      kiln.reduce.return %0 : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Kiln_NumberTile>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<Kiln_NumberLike>:$results);
  let regions = (region SizedRegion<1>:$combiner);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis attr-dict `:` functional-type($srcs, results)
    $combiner
  }];
  let builders = [
    // Infers the result types and creates the combining block with its 2N
    // arguments; the caller fills it and adds `kiln.reduce.return`.
    OpBuilder<(ins "::mlir::ValueRange":$srcs, "unsigned":$axis)>,
  ];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kiln_ReduceReturnOp : Kiln_Op<"reduce.return",
    [Pure, Terminator, HasParent<"ReduceOp">]> {
  let summary = "terminator of a kiln.reduce combining region";
  let description = [{
    Yields the N combined scalars of a `kiln.reduce` combining step.
  }];
  let arguments = (ins Variadic<Kiln_Number>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Kiln_ScanOp : Kiln_Op<"scan",
    [RecursiveMemoryEffects, RecursivelySpeculatable, SingleBlock]> {
  let summary = "inclusive scan of tiles along one axis";
  let description = [{
    Inclusive prefix combination of N tiles of the same shape along `axis`
    (from the last element backwards with `reverse`). Results have the
    types of the inputs. The combining region is that of `kiln.reduce`
    (2N scalar arguments: the N running values, then the N new values) and
    ends with `kiln.scan.return`.

    ```mlir
    %c = kiln.scan %x axis = 0 : (tensor<128xi32>) -> tensor<128xi32> {
    ^bb0(%acc: i32, %new: i32):
      %0 = arith.addi %acc, %new : i32
      kiln.scan.return %0 : i32
    }
    ```
  }];
  let arguments = (ins Variadic<Kiln_NumberTile>:$srcs, I32Attr:$axis,
                       UnitAttr:$reverse);
  let results = (outs Variadic<Kiln_NumberTile>:$results);
  let regions = (region SizedRegion<1>:$combiner);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis (`reverse` $reverse^)? attr-dict
    `:` functional-type($srcs, results) $combiner
  }];
  let builders = [
    // Result types are the input types; creates the combining block with
    // its 2N arguments; the caller fills it and adds `kiln.scan.return`.
    OpBuilder<(ins "::mlir::ValueRange":$srcs, "unsigned":$axis,
                   CArg<"bool", "false">:$reverse)>,
  ];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kiln_ScanReturnOp : Kiln_Op<"scan.return",
    [Pure, Terminator, HasParent<"ScanOp">]> {
  let summary = "terminator of a kiln.scan combining region";
  let description = [{
    Yields the N combined scalars of a `kiln.scan` combining step.
  }];
  let arguments = (ins Variadic<Kiln_Number>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Kiln_AtomicRMWOp : Kiln_Op<"atomic_rmw", [
    TypesMatchWith<"value type is the pointee type in the shape of `ptr`",
                   "ptr", "val", "::kiln::getPointeeTypeSameShape($_self)">,
    AllTypesMatch<["val", "result"]>,
    OptionalTypesMatchWith<"mask is i1 in the shape of `ptr`",
                   "ptr", "mask", "::kiln::getI1SameShape($_self)">]> {
  let summary = "atomic read-modify-write";
  let description = [{
    For each pointer where `mask` is true, atomically replaces `*ptr` by
    `*ptr <kind> val` and returns the old value (undefined where masked off).
    Kinds: `add` (integer or float), `max`/`min` (signed integer or float),
    `umax`/`umin`/`and`/`or`/`xor` (integer only), `xchg` (any). Ordering
    is acquire-release at device (GPU) scope.

    ```mlir
    %old = kiln.atomic_rmw add, %ptrs, %v, mask %m
        : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Kiln_AtomicRMWKindAttr:$kind,
                       Arg<Kiln_PtrLike, "pointers", [MemRead, MemWrite]>:$ptr,
                       Kiln_Value:$val,
                       Optional<Kiln_BoolLike>:$mask);
  let results = (outs Kiln_Value:$result);
  let assemblyFormat = [{
    $kind `,` $ptr `,` $val (`,` `mask` $mask^)? attr-dict
    `:` type($ptr) `->` type($result)
  }];
  let builders = [
    // The result has the type of `val`.
    OpBuilder<(ins "::kiln::AtomicRMWKind":$kind, "::mlir::Value":$ptr,
                   "::mlir::Value":$val,
                   CArg<"::mlir::Value", "{}">:$mask), [{
      build($_builder, $_state, val.getType(), kind, ptr, val, mask);
    }]>,
  ];
  let hasVerifier = 1;
}

def Kiln_AtomicCASOp : Kiln_Op<"atomic_cas", [
    TypesMatchWith<"`cmp` type is the pointee type in the shape of `ptr`",
                   "ptr", "cmp", "::kiln::getPointeeTypeSameShape($_self)">,
    AllTypesMatch<["cmp", "val", "result"]>]> {
  let summary = "atomic compare-and-swap";
  let description = [{
    For each pointer, atomically: `old = *ptr; if (old == cmp) *ptr = val;`
    and returns `old` (bitwise comparison for floats). Ordering is
    acquire-release at device (GPU) scope.

    ```mlir
    %old = kiln.atomic_cas %p, %c0, %c1 : !kiln.ptr<i32> -> i32
    ```
  }];
  let arguments = (ins Arg<Kiln_PtrLike, "pointers", [MemRead, MemWrite]>:$ptr,
                       Kiln_Value:$cmp, Kiln_Value:$val);
  let results = (outs Kiln_Value:$result);
  let assemblyFormat = [{
    $ptr `,` $cmp `,` $val attr-dict `:` type($ptr) `->` type($result)
  }];
  let builders = [
    // The result has the type of `val`.
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::Value":$cmp,
                   "::mlir::Value":$val), [{
      build($_builder, $_state, val.getType(), ptr, cmp, val);
    }]>,
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Kiln_PrintOp : Kiln_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "print a message and values";
  let description = [{
    Prints `format` followed by the values of `args` (scalars or whole
    tiles) from each program, where the target supports it (host backend,
    GPU printf).

    ```mlir
    kiln.print "x = " (%x, %t : f32, tensor<4xi32>)
    ```
  }];
  let arguments = (ins StrAttr:$format, Variadic<Kiln_Value>:$args);
  let assemblyFormat = [{
    $format (` ` `(` $args^ `:` type($args) `)`)? attr-dict
  }];
}

def Kiln_AssertOp : Kiln_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "abort with a message when a condition is false";
  let description = [{
    In checked builds, reports `message` and stops the kernel when
    `condition` (an i1, or any element of an i1 tile) is false; compiled out
    otherwise.

    ```mlir
    kiln.assert %ok, "index out of range" : tensor<128xi1>
    ```
  }];
  let arguments = (ins Kiln_BoolLike:$condition, StrAttr:$message);
  let assemblyFormat = [{
    $condition `,` $message attr-dict `:` type($condition)
  }];
}

#endif // KILN_DIALECT_KILNOPS_TD
