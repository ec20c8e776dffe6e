// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{pointee type must be a signless integer or float type, got 'index'}}
func.func private @bad_pointee(!kiln.ptr<index>)

// -----

// expected-error @below {{view rank must be 1, 2 or 3, got 4}}
func.func private @bad_view_rank(!kiln.view<f32, 4>)

// -----

// expected-error @below {{view element type must be a signless integer or float type, got '!kiln.ptr<f32>'}}
func.func private @bad_view_element(!kiln.view<!kiln.ptr<f32>, 1>)

// -----

func.func @const_param_name() {
  // expected-error @below {{const param name must not be empty}}
  %0 = kiln.const_param "" : i32
  return
}

// -----

func.func @program_id_axis() {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'axis' [x, y, z]}}
  %0 = kiln.program_id w
  return
}

// -----

func.func @arange_not_pow2_result(%lo: i32, %hi: i32) {
  // expected-error @below {{result size 48 must be a positive power of two}}
  %0 = kiln.arange %lo, %hi : tensor<48xi32>
  return
}

// -----

func.func @arange_empty() {
  %lo = arith.constant 64 : i32
  %hi = arith.constant 64 : i32
  // expected-error @below {{bounds must satisfy lo < hi, got lo = 64 and hi = 64}}
  %0 = kiln.arange %lo, %hi : tensor<?xi32>
  return
}

// -----

func.func @arange_length_not_pow2() {
  %lo = arith.constant 16 : i32
  %hi = arith.constant 64 : i32
  // expected-error @below {{length hi - lo = 48 (lo = 16, hi = 64) must be a power of two}}
  %0 = kiln.arange %lo, %hi : tensor<?xi32>
  return
}

// -----

func.func @arange_size_mismatch() {
  %lo = arith.constant 0 : i32
  %hi = arith.constant 64 : i32
  // expected-error @below {{result size 32 does not match hi - lo = 64 (lo = 0, hi = 64)}}
  %0 = kiln.arange %lo, %hi : tensor<32xi32>
  return
}

// -----

func.func @splat_element(%x: f16) {
  // expected-error @below {{result element type 'f32' does not match the scalar type 'f16'}}
  %0 = kiln.splat %x : f16 -> tensor<64xf32>
  return
}

// -----

func.func @splat_size_count(%x: f32, %n: i32) {
  // expected-error @below {{expects 2 dynamic size operand(s), one per '?' dimension of 'tensor<?x?xf32>', got 1}}
  %0 = kiln.splat %x [%n : i32] : f32 -> tensor<?x?xf32>
  return
}

// -----

func.func @splat_static_not_pow2(%x: f32) {
  // expected-error @below {{tile dimensions must be positive powers of two, but dimension 1 of 'tensor<4x24xf32>' is 24}}
  %0 = kiln.splat %x : f32 -> tensor<4x24xf32>
  return
}

// -----

func.func @splat_constant_size_not_pow2(%x: f32) {
  %c3 = arith.constant 3 : i32
  // expected-error @below {{tile dimensions must be positive powers of two, but size operand #0 is 3}}
  %0 = kiln.splat %x [%c3 : i32] : f32 -> tensor<?xf32>
  return
}

// -----

func.func @broadcast_element(%x: tensor<1x64xf32>) {
  // expected-error @below {{result element type 'f16' does not match the source element type 'f32'}}
  %0 = kiln.broadcast %x : tensor<1x64xf32> -> tensor<8x64xf16>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<64xf32>) {
  // expected-error @below {{source 'tensor<64xf32>' and result 'tensor<8x64xf32>' must have the same rank}}
  %0 = kiln.broadcast %x : tensor<64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<2x64xf32>) {
  // expected-error @below {{cannot broadcast 2x64 to 4x64: dimension 0 has size 2, which is neither 1 nor 4}}
  %0 = kiln.broadcast %x : tensor<2x64xf32> -> tensor<4x64xf32>
  return
}

// -----

func.func @broadcast_dim_constant_size(%x: tensor<2x64xf32>) {
  %c4 = arith.constant 4 : i32
  // expected-error @below {{cannot broadcast 2x64 to 4x64: dimension 0 has size 2, which is neither 1 nor 4}}
  %0 = kiln.broadcast %x [%c4 : i32] : tensor<2x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<64xf32>) {
  // expected-error @below {{axis 2 is out of range for a tile of rank 1}}
  %0 = kiln.expand_dims %x axis = 2 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @expand_dims_rank(%x: tensor<64xf32>) {
  // expected-error @below {{result rank 3 must be the source rank 1 plus 1}}
  %0 = kiln.expand_dims %x axis = 0 : tensor<64xf32> -> tensor<1x1x64xf32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<64xf32>) {
  // expected-error @below {{result shape 64x1 does not match 1x64 (source 64 with a unit dimension at axis 0)}}
  %0 = kiln.expand_dims %x axis = 0 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @expand_dims_element(%x: tensor<64xf32>) {
  // expected-error @below {{result element type 'i32' does not match the source element type 'f32'}}
  %0 = kiln.expand_dims %x axis = 0 : tensor<64xf32> -> tensor<1x64xi32>
  return
}

// -----

func.func @expand_dims_rank4(%x: tensor<2x2x2xf32>) {
  // expected-error @below {{result #0 must be 1D/2D/3D tensor}}
  %0 = kiln.expand_dims %x axis = 0 : tensor<2x2x2xf32> -> tensor<1x2x2x2xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<16x8xf32>) {
  // expected-error @below {{cannot reshape 16x8 (128 elements) to 64 (64 elements)}}
  %0 = kiln.reshape %x : tensor<16x8xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reshape_count_constant_size(%x: tensor<16x8xf32>) {
  %c64 = arith.constant 64 : i64
  // expected-error @below {{cannot reshape 16x8 (128 elements) to 64x4 (256 elements)}}
  %0 = kiln.reshape %x [%c64 : i64] : tensor<16x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @reshape_element(%x: tensor<16x8xf32>) {
  // expected-error @below {{result element type 'f16' does not match the source element type 'f32'}}
  %0 = kiln.reshape %x : tensor<16x8xf32> -> tensor<128xf16>
  return
}

// -----

func.func @trans_not_permutation(%x: tensor<16x8xf32>) {
  // expected-error @below {{order [0, 0] is not a permutation of the 2 dimensions of 'tensor<16x8xf32>'}}
  %0 = kiln.trans %x order = [0, 0] : tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @trans_order_size(%x: tensor<16x8xf32>) {
  // expected-error @below {{order [1, 0, 2] is not a permutation of the 2 dimensions of 'tensor<16x8xf32>'}}
  %0 = kiln.trans %x order = [1, 0, 2] : tensor<16x8xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @trans_rank(%x: tensor<16x8xf32>) {
  // expected-error @below {{result rank 3 does not match the source rank 2}}
  %0 = kiln.trans %x order = [1, 0] : tensor<16x8xf32> -> tensor<8x16x1xf32>
  return
}

// -----

func.func @trans_shape(%x: tensor<16x8xf32>) {
  // expected-error @below {{result shape 16x8 does not match the permuted source shape 8x16}}
  %0 = kiln.trans %x order = [1, 0] : tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @trans_element(%x: tensor<16x8xf32>) {
  // expected-error @below {{result element type 'i32' does not match the source element type 'f32'}}
  %0 = kiln.trans %x order = [1, 0] : tensor<16x8xf32> -> tensor<8x16xi32>
  return
}

// -----

func.func @addptr_scalar_tile(%p: !kiln.ptr<f32>, %o: tensor<128xi32>) {
  // expected-error @below {{pointer and offset must both be scalars or both be tiles, got '!kiln.ptr<f32>' and 'tensor<128xi32>'}}
  %0 = kiln.addptr %p, %o : !kiln.ptr<f32>, tensor<128xi32>
  return
}

// -----

func.func @addptr_shape(%p: tensor<128x!kiln.ptr<f32>>, %o: tensor<64xi32>) {
  // expected-error @below {{pointer tile shape 128 does not match offset tile shape 64}}
  %0 = kiln.addptr %p, %o : tensor<128x!kiln.ptr<f32>>, tensor<64xi32>
  return
}

// -----

func.func @addptr_offset_type(%p: !kiln.ptr<f32>, %o: f32) {
  // expected-error @below {{operand #1 must be integer or tile of integers}}
  %0 = kiln.addptr %p, %o : !kiln.ptr<f32>, f32
  return
}

// -----

func.func @load_result(%p: tensor<128x!kiln.ptr<f32>>) {
  // expected-error @below {{failed to verify that result type is the pointee type in the shape of `ptr`}}
  %0 = kiln.load %p : tensor<128x!kiln.ptr<f32>> -> tensor<128xf16>
  return
}

// -----

func.func @load_mask_generic(%p: tensor<128x!kiln.ptr<f32>>, %m: tensor<64xi1>) {
  // expected-error @below {{failed to verify that mask is i1 in the shape of `ptr`}}
  %0 = "kiln.load"(%p, %m) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<128x!kiln.ptr<f32>>, tensor<64xi1>) -> tensor<128xf32>
  return
}

// -----

func.func @load_other_generic(%p: tensor<128x!kiln.ptr<f32>>, %o: f32) {
  // expected-error @below {{failed to verify that `other` has the result type}}
  %0 = "kiln.load"(%p, %o) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<128x!kiln.ptr<f32>>, f32) -> tensor<128xf32>
  return
}

// -----

func.func @store_value_generic(%p: tensor<128x!kiln.ptr<f32>>, %v: tensor<128xf16>) {
  // expected-error @below {{failed to verify that value type is the pointee type in the shape of `ptr`}}
  "kiln.store"(%p, %v) : (tensor<128x!kiln.ptr<f32>>, tensor<128xf16>) -> ()
  return
}

// -----

func.func @store_mask_generic(%p: !kiln.ptr<f32>, %v: f32, %m: tensor<4xi1>) {
  // expected-error @below {{failed to verify that mask is i1 in the shape of `ptr`}}
  "kiln.store"(%p, %v, %m) : (!kiln.ptr<f32>, f32, tensor<4xi1>) -> ()
  return
}

// -----

func.func @make_view_element(%a: !kiln.ptr<f32>, %n: i64) {
  // expected-error @below {{view element type 'f16' does not match the pointee type 'f32'}}
  %0 = kiln.make_view %a, [%n], [%n] : !kiln.ptr<f32> -> !kiln.view<f16, 1>
  return
}

// -----

func.func @make_view_sizes(%a: !kiln.ptr<f32>, %n: i64) {
  // expected-error @below {{expects 2 sizes for a view of rank 2, got 1}}
  %0 = kiln.make_view %a, [%n], [%n, %n] : !kiln.ptr<f32> -> !kiln.view<f32, 2>
  return
}

// -----

func.func @make_view_strides(%a: !kiln.ptr<f32>, %n: i64) {
  // expected-error @below {{expects 2 strides for a view of rank 2, got 3}}
  %0 = kiln.make_view %a, [%n, %n], [%n, %n, %n] : !kiln.ptr<f32> -> !kiln.view<f32, 2>
  return
}

// -----

func.func @make_view_i32_size(%a: !kiln.ptr<f32>, %n: i32) {
  // expected-error @below {{operand #1 must be variadic of 64-bit signless integer}}
  %0 = "kiln.make_view"(%a, %n, %n) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!kiln.ptr<f32>, i32, i32) -> !kiln.view<f32, 1>
  return
}

// -----

func.func @view_load_element(%v: !kiln.view<f16, 2>, %i: i32) {
  // expected-error @below {{result element type 'f32' does not match the view element type 'f16'}}
  %0 = kiln.view_load %v[%i : i32, %i : i32] : !kiln.view<f16, 2> -> tensor<64x64xf32>
  return
}

// -----

func.func @view_load_rank(%v: !kiln.view<f16, 2>, %i: i32) {
  // expected-error @below {{result rank 1 does not match the view rank 2}}
  %0 = kiln.view_load %v[%i : i32, %i : i32] : !kiln.view<f16, 2> -> tensor<64xf16>
  return
}

// -----

func.func @view_load_offsets(%v: !kiln.view<f16, 2>, %i: i32) {
  // expected-error @below {{expects 2 offsets for a view of rank 2, got 1}}
  %0 = kiln.view_load %v[%i : i32] : !kiln.view<f16, 2> -> tensor<64x64xf16>
  return
}

// -----

func.func @view_load_sizes(%v: !kiln.view<f16, 2>, %i: i32) {
  // expected-error @below {{expects 1 dynamic size operand(s), one per '?' dimension of 'tensor<64x?xf16>', got 0}}
  %0 = kiln.view_load %v[%i : i32, %i : i32] : !kiln.view<f16, 2> -> tensor<64x?xf16>
  return
}

// -----

func.func @view_load_other(%v: !kiln.view<f16, 2>, %i: i32, %o: f32) {
  // expected-error @below {{failed to verify that `other` has the element type of the view}}
  %0 = "kiln.view_load"(%v, %i, %i, %o) <{operandSegmentSizes = array<i32: 1, 2, 0, 1>}> : (!kiln.view<f16, 2>, i32, i32, f32) -> tensor<64x64xf16>
  return
}

// -----

func.func @view_store_rank(%v: !kiln.view<f16, 2>, %i: i32, %t: tensor<64xf16>) {
  // expected-error @below {{value rank 1 does not match the view rank 2}}
  kiln.view_store %v[%i : i32, %i : i32], %t : !kiln.view<f16, 2>, tensor<64xf16>
  return
}

// -----

func.func @view_store_offsets(%v: !kiln.view<f16, 1>, %i: i32, %t: tensor<64xf16>) {
  // expected-error @below {{expects 1 offsets for a view of rank 1, got 2}}
  kiln.view_store %v[%i : i32, %i : i32], %t : !kiln.view<f16, 1>, tensor<64xf16>
  return
}

// -----

func.func @view_store_element(%v: !kiln.view<f16, 1>, %i: i32, %t: tensor<64xf32>) {
  // expected-error @below {{value element type 'f32' does not match the view element type 'f16'}}
  kiln.view_store %v[%i : i32], %t : !kiln.view<f16, 1>, tensor<64xf32>
  return
}

// -----

func.func @dot_inner(%a: tensor<64x32xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @below {{inner dimensions differ: a is 64x32, b is 16x64}}
  %0 = kiln.dot %a, %b, %c : tensor<64x32xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<32x64xf32>) {
  // expected-error @below {{accumulator shape 32x64 does not match a x b = 64x32 x 32x64}}
  %0 = kiln.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @dot_mixed(%a: tensor<64x32xf16>, %b: tensor<32x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @below {{unsupported operand element types 'f16' and 'bf16'}}
  %0 = kiln.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_acc_element(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf16>) {
  // expected-error @below {{accumulator element type must be 'f32' for 'f16' operands, got 'f16'}}
  %0 = kiln.dot %a, %b, %c : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf16>
  return
}

// -----

func.func @dot_i8_acc(%a: tensor<64x32xi8>, %b: tensor<32x64xi8>, %c: tensor<64x64xf32>) {
  // expected-error @below {{accumulator element type must be 'i32' for 'i8' operands, got 'f32'}}
  %0 = kiln.dot %a, %b, %c : tensor<64x32xi8>, tensor<32x64xi8> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_tf32(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @below {{precision tf32 needs f32 operands, got 'f16'}}
  %0 = kiln.dot %a, %b, %c precision = tf32 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<64xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @below {{operand #0 must be 2D tensor}}
  %0 = kiln.dot %a, %b, %c : tensor<64xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<64xf32>) {
  // expected-error @below {{axis 1 is out of range for a tile of rank 1}}
  %0 = kiln.reduce %x axis = 1 : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    kiln.reduce.return %s : f32
  }
  return
}

// -----

func.func @reduce_input_shapes(%x: tensor<64xf32>, %y: tensor<32xi32>) {
  // expected-error @below {{inputs must have the same shape, got 64 and 32}}
  %0:2 = kiln.reduce %x, %y axis = 0 : (tensor<64xf32>, tensor<32xi32>) -> (f32, i32) {
  ^bb0(%a: f32, %i: i32, %b: f32, %j: i32):
    kiln.reduce.return %a, %i : f32, i32
  }
  return
}

// -----

func.func @reduce_result_count(%x: tensor<64xf32>) {
  // expected-error @below {{expects one result per input (1), got 2}}
  %0:2 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> (f32, f32) {
  ^bb0(%a: f32, %b: f32):
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_result_type(%x: tensor<64x32xf32>) {
  // expected-error @below {{result #0 has type 'tensor<64xf32>', but reducing 'tensor<64x32xf32>' along axis 0 gives 'tensor<32xf32>'}}
  %0 = kiln.reduce %x axis = 0 : (tensor<64x32xf32>) -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_scalar_result(%x: tensor<64xf32>) {
  // expected-error @below {{result #0 has type 'tensor<1xf32>', but reducing 'tensor<64xf32>' along axis 0 gives 'f32'}}
  %0 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_region_arity(%x: tensor<64xf32>) {
  // expected-error @below {{combining region must have 2 arguments (1 accumulated values, then 1 new values), got 3}}
  %0 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32, %c: f32):
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_region_type(%x: tensor<64xf32>) {
  // expected-error @below {{combining region argument #1 has type 'f16', expected the element type 'f32' of input #0}}
  %0 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f16):
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @reduce_argmax_order(%x: tensor<64xf32>, %i: tensor<64xi32>) {
  // expected-error @below {{combining region argument #2 has type 'i32', expected the element type 'f32' of input #0}}
  %0:2 = kiln.reduce %x, %i axis = 0 : (tensor<64xf32>, tensor<64xi32>) -> (f32, i32) {
  ^bb0(%a: f32, %b: f32, %ai: i32, %bi: i32):
    kiln.reduce.return %a, %ai : f32, i32
  }
  return
}

// -----

func.func @reduce_return_count(%x: tensor<64xf32>) {
  %0 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    // expected-error @below {{returns 2 value(s), but the combining region combines 1}}
    kiln.reduce.return %a, %b : f32, f32
  }
  return
}

// -----

func.func @reduce_return_type(%x: tensor<64xf32>) {
  %0 = kiln.reduce %x axis = 0 : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 0 : i32
    // expected-error @below {{returned value #0 has type 'i32', expected the element type 'f32' of input #0}}
    kiln.reduce.return %c : i32
  }
  return
}

// -----

func.func @reduce_return_outside(%x: f32) {
  // expected-error @below {{expects parent op 'kiln.reduce'}}
  kiln.reduce.return %x : f32
}

// -----

func.func @scan_with_reduce_return(%x: tensor<64xf32>) {
  %0 = kiln.scan %x axis = 0 : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    // expected-error @below {{expects parent op 'kiln.reduce'}}
    kiln.reduce.return %a : f32
  }
  return
}

// -----

func.func @scan_result_type(%x: tensor<64xf32>) {
  // expected-error @below {{result #0 has type 'tensor<64xf16>', expected the input type 'tensor<64xf32>'}}
  %0 = kiln.scan %x axis = 0 : (tensor<64xf32>) -> tensor<64xf16> {
  ^bb0(%a: f32, %b: f32):
    kiln.scan.return %a : f32
  }
  return
}

// -----

func.func @scan_axis(%x: tensor<64x2xf32>) {
  // expected-error @below {{axis 2 is out of range for a tile of rank 2}}
  %0 = kiln.scan %x axis = 2 : (tensor<64x2xf32>) -> tensor<64x2xf32> {
  ^bb0(%a: f32, %b: f32):
    kiln.scan.return %a : f32
  }
  return
}

// -----

func.func @atomic_i1(%p: !kiln.ptr<i1>, %v: i1) {
  // expected-error @below {{atomics on i1 are not supported}}
  %0 = kiln.atomic_rmw xchg, %p, %v : !kiln.ptr<i1> -> i1
  return
}

// -----

func.func @atomic_umax_float(%p: !kiln.ptr<f32>, %v: f32) {
  // expected-error @below {{'umax' needs integer elements, got 'f32'}}
  %0 = kiln.atomic_rmw umax, %p, %v : !kiln.ptr<f32> -> f32
  return
}

// -----

func.func @atomic_xor_float(%p: tensor<4x!kiln.ptr<f16>>, %v: tensor<4xf16>) {
  // expected-error @below {{'xor' needs integer elements, got 'f16'}}
  %0 = kiln.atomic_rmw xor, %p, %v : tensor<4x!kiln.ptr<f16>> -> tensor<4xf16>
  return
}

// -----

func.func @atomic_kind(%p: !kiln.ptr<f32>, %v: f32) {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'kind' [add, max, min, umax, umin, and, or, xor, xchg]}}
  %0 = kiln.atomic_rmw mul, %p, %v : !kiln.ptr<f32> -> f32
  return
}

// -----

func.func @atomic_rmw_value_generic(%p: !kiln.ptr<f32>, %v: i32) {
  // expected-error @below {{failed to verify that value type is the pointee type in the shape of `ptr`}}
  %0 = "kiln.atomic_rmw"(%p, %v) <{kind = 0 : i32}> : (!kiln.ptr<f32>, i32) -> i32
  return
}

// -----

func.func @atomic_cas_i1(%p: !kiln.ptr<i1>, %c: i1, %v: i1) {
  // expected-error @below {{atomics on i1 are not supported}}
  %0 = kiln.atomic_cas %p, %c, %v : !kiln.ptr<i1> -> i1
  return
}

// -----

func.func @assert_condition(%c: i32) {
  // expected-error @below {{operand #0 must be i1 or tile of i1}}
  kiln.assert %c, "bad" : i32
  return
}

// -----

// expected-error @below {{'kiln.kernel' must be a unit attribute}}
func.func @kernel_not_unit() attributes {kiln.kernel = 1 : i32} {
  return
}

// -----

// expected-error @below {{'kiln.kernel' is only valid on a function}}
module attributes {kiln.kernel} {
}

// -----

// expected-error @below {{a function cannot be both 'kiln.kernel' and 'kiln.helper'}}
func.func @kernel_and_helper() attributes {kiln.kernel, kiln.helper} {
  return
}

// -----

// expected-error @below {{'kiln.grid' must be an array of strings}}
func.func @grid_not_strings() attributes {kiln.grid = [1, 2]} {
  return
}

// -----

// expected-error @below {{'kiln.grid' must have 1 to 3 entries, got 0}}
func.func @grid_empty() attributes {kiln.grid = []} {
  return
}

// -----

// expected-error @below {{'kiln.grid' must have 1 to 3 entries, got 4}}
func.func @grid_four() attributes {kiln.grid = ["a", "b", "c", "d"]} {
  return
}

// -----

// expected-error @below {{'kiln.variants' must be an array of dictionaries}}
func.func @variants_not_dicts() attributes {kiln.variants = [1]} {
  return
}

// -----

// expected-error @below {{'kiln.key_buckets' must be an array of "pow2" or "exact"}}
func.func @key_buckets_fuzzy() attributes {kiln.key_buckets = ["fuzzy"]} {
  return
}

// -----

// expected-error @below {{'kiln.key_buckets' must have one entry per entry of 'kiln.key'}}
func.func @key_buckets_count() attributes {kiln.key = ["n", "m"], kiln.key_buckets = ["exact"]} {
  return
}

// -----

// expected-error @below {{'kiln.variant' is only valid on a builtin.module}}
func.func @variant_on_function() attributes {kiln.variant = {BLOCK = 1 : i32}} {
  return
}

// -----

// expected-error @below {{'kiln.variant' must be a dictionary}}
module attributes {kiln.variant = [1]} {
}

// -----

// expected-error @below {{'kiln.tune' is only valid on a function}}
module attributes {kiln.tune = {}} {
}

// -----

// expected-error @below {{unknown kiln attribute 'kiln.kernal'}}
func.func @typo() attributes {kiln.kernal} {
  return
}

// -----

// expected-error @below {{unknown kiln argument attribute 'kiln.aligned'}}
func.func @unknown_arg_attr(%p: !kiln.ptr<f32> {kiln.aligned = 16}) {
  return
}

// -----

// expected-error @below {{'kiln.div' of argument 0 must be a positive integer}}
func.func @div_zero(%n: i32 {kiln.div = 0}) {
  return
}

// -----

// expected-error @below {{'kiln.div' of argument 0 must be a positive integer}}
func.func @div_not_integer(%n: i32 {kiln.div = "8"}) {
  return
}

// -----

// expected-error @below {{'kiln.align' of argument 0 must be a power of two, got 12}}
func.func @align_not_pow2(%p: !kiln.ptr<f32> {kiln.align = 12}) {
  return
}

// -----

// expected-error @below {{'kiln.align' applies to pointer arguments, but argument 1 has type 'i32'}}
func.func @align_on_integer(%p: !kiln.ptr<f32>, %n: i32 {kiln.align = 16}) {
  return
}

// -----

// expected-error @below {{'kiln.div' applies to integer arguments, but argument 0 has type '!kiln.ptr<f32>'}}
func.func @div_on_pointer(%p: !kiln.ptr<f32> {kiln.div = 16}) {
  return
}
