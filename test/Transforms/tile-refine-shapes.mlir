// RUN: kiln-opt %s -split-input-file -tile-refine-shapes -verify-diagnostics | FileCheck %s

// Constant bounds and sizes (through index_cast/dim and integer arithmetic)
// give static shapes, which flow through elementwise ops.
// CHECK-LABEL: func.func @basic(
// CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK: %[[S:.*]] = kiln.splat %{{.*}} : i32 -> tensor<64xi32>
// CHECK: %[[A:.*]] = arith.addi %[[R]], %[[S]] : tensor<64xi32>
// CHECK: %[[C:.*]] = arith.cmpi slt, %[[A]], %[[S]] : tensor<64xi32>
// CHECK: %[[F:.*]] = arith.sitofp %[[A]] : tensor<64xi32> to tensor<64xf32>
// CHECK: %[[Z:.*]] = kiln.splat %{{.*}} : f32 -> tensor<64xf32>
// CHECK: arith.select %[[C]], %[[F]], %[[Z]] : tensor<64xi1>, tensor<64xf32>
// CHECK: kiln.splat %{{.*}} : f32 -> tensor<8x32xf32>
func.func @basic(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c2 = arith.constant 2 : i32
  %hi = arith.muli %c32, %c2 : i32
  %r = kiln.arange %c0, %hi : tensor<?xi32>
  %c0i = arith.constant 0 : index
  %d = tensor.dim %r, %c0i : tensor<?xi32>
  %size = arith.index_cast %d : index to i32
  %s = kiln.splat %n [%size : i32] : i32 -> tensor<?xi32>
  %a = arith.addi %r, %s : tensor<?xi32>
  %c = arith.cmpi slt, %a, %s : tensor<?xi32>
  %f = arith.sitofp %a : tensor<?xi32> to tensor<?xf32>
  %zero = arith.constant 0.0 : f32
  %z = kiln.splat %zero [%size : i32] : f32 -> tensor<?xf32>
  %w = arith.select %c, %f, %z : tensor<?xi1>, tensor<?xf32>
  // Sizes of i64 and every integer op that const expressions produce.
  %c16 = arith.constant 16 : i64
  %c1 = arith.constant 1 : i64
  %rows = arith.shrsi %c16, %c1 : i64
  %c4 = arith.constant 4 : i32
  %c128 = arith.constant 128 : i32
  %cols = arith.divsi %c128, %c4 : i32
  %t = kiln.splat %zero [%rows : i64, %cols : i32] : f32 -> tensor<?x?xf32>
  return
}

// -----

// Shape ops: expand_dims, broadcast, reshape, trans, view_load, dot,
// reduce and scan take their shapes from their (refined) operands.
// CHECK-LABEL: func.func @shape_ops(
// CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<16xi32>
// CHECK: %[[E:.*]] = kiln.expand_dims %[[R]] axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
// CHECK: %[[B:.*]] = kiln.broadcast %[[E]] : tensor<16x1xi32> -> tensor<16x32xi32>
// CHECK: %[[RS:.*]] = kiln.reshape %[[B]] : tensor<16x32xi32> -> tensor<32x16xi32>
// CHECK: %[[T:.*]] = kiln.trans %[[RS]] order = [1, 0] : tensor<32x16xi32> -> tensor<16x32xi32>
// CHECK: %[[L:.*]] = kiln.view_load %{{.*}}[%{{.*}} : i32, %{{.*}} : i32] : !kiln.view<f16, 2> -> tensor<16x32xf16>
// CHECK: %[[L2:.*]] = kiln.view_load %{{.*}}[%{{.*}} : i32, %{{.*}} : i32] : !kiln.view<f16, 2> -> tensor<32x16xf16>
// CHECK: %[[ACC:.*]] = kiln.splat %{{.*}} : f32 -> tensor<16x16xf32>
// CHECK: %[[D:.*]] = kiln.dot %[[L]], %[[L2]], %[[ACC]] : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
// CHECK: kiln.reduce %[[D]] axis = 0 : (tensor<16x16xf32>) -> tensor<16xf32>
// CHECK: kiln.scan %[[D]] axis = 1 : (tensor<16x16xf32>) -> tensor<16x16xf32>
func.func @shape_ops(%v: !kiln.view<f16, 2>) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %r = kiln.arange %c0, %c16 : tensor<?xi32>
  %e = kiln.expand_dims %r axis = 1 : tensor<?xi32> -> tensor<?x1xi32>
  %b = kiln.broadcast %e [%c16 : i32, %c32 : i32] : tensor<?x1xi32> -> tensor<?x?xi32>
  %rs = kiln.reshape %b [%c32 : i32] : tensor<?x?xi32> -> tensor<?x16xi32>
  %t = kiln.trans %rs order = [1, 0] : tensor<?x16xi32> -> tensor<16x?xi32>
  %l = kiln.view_load %v[%c0 : i32, %c0 : i32] [%c16 : i32] : !kiln.view<f16, 2> -> tensor<?x32xf16>
  %l2 = kiln.view_load %v[%c0 : i32, %c0 : i32] [%c32 : i32] : !kiln.view<f16, 2> -> tensor<?x16xf16>
  %zero = arith.constant 0.0 : f32
  %acc = kiln.splat %zero [%c16 : i32] : f32 -> tensor<?x16xf32>
  %d = kiln.dot %l, %l2, %acc : tensor<?x32xf16>, tensor<?x16xf16> -> tensor<?x16xf32>
  %red = kiln.reduce %d axis = 0 : (tensor<?x16xf32>) -> tensor<16xf32> {
  ^bb0(%a: f32, %x: f32):
    %s = arith.addf %a, %x : f32
    kiln.reduce.return %s : f32
  }
  %scan = kiln.scan %d axis = 1 : (tensor<?x16xf32>) -> tensor<?x16xf32> {
  ^bb0(%a: f32, %x: f32):
    %s = arith.addf %a, %x : f32
    kiln.scan.return %s : f32
  }
  return
}

// -----

// Loop-carried values and 'if' results take the shapes of their inits and
// yields.
// CHECK-LABEL: func.func @regions(
// CHECK: %[[INIT:.*]] = kiln.splat %{{.*}} : f32 -> tensor<32xf32>
// CHECK: %[[FOR:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (tensor<32xf32>)  : i32 {
// CHECK:   %[[N:.*]] = arith.addf %[[A]], %[[A]] : tensor<32xf32>
// CHECK:   scf.yield %[[N]] : tensor<32xf32>
// CHECK: %[[IF:.*]] = scf.if %{{.*}} -> (tensor<32xf32>) {
// CHECK: kiln.print "r" (%[[IF]] : tensor<32xf32>)
func.func @regions(%n: i32, %c: i1) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant 0.0 : f32
  %init = kiln.splat %zero [%c32 : i32] : f32 -> tensor<?xf32>
  %for = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<?xf32>) : i32 {
    %next = arith.addf %a, %a : tensor<?xf32>
    scf.yield %next : tensor<?xf32>
  }
  %if = scf.if %c -> (tensor<?xf32>) {
    scf.yield %for : tensor<?xf32>
  } else {
    %neg = arith.negf %for : tensor<?xf32>
    scf.yield %neg : tensor<?xf32>
  }
  kiln.print "r" (%if : tensor<?xf32>)
  return
}

// -----

func.func @loop_carried_change(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant 0.0 : f32
  %init = kiln.splat %zero [%c16 : i32] : f32 -> tensor<?xf32>
  // expected-error @below {{a loop-carried variable changes shape in the loop body: [16] before, [32] after}}
  %for = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<?xf32>) : i32 {
    %other = kiln.splat %zero [%c32 : i32] : f32 -> tensor<?xf32>
    scf.yield %other : tensor<?xf32>
  }
  return
}

// -----

func.func @if_branches(%c: i1) {
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{the branches of 'if' give a variable different shapes: [16] and [32]}}
  %if = scf.if %c -> (tensor<?xf32>) {
    %a = kiln.splat %zero [%c16 : i32] : f32 -> tensor<?xf32>
    scf.yield %a : tensor<?xf32>
  } else {
    %b = kiln.splat %zero [%c32 : i32] : f32 -> tensor<?xf32>
    scf.yield %b : tensor<?xf32>
  }
  return
}

// -----

// Bounds that become constant only through arithmetic (the op verifier
// checks literal constant bounds itself).
func.func @not_pow2() {
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %c8 = arith.constant 8 : i32
  %c24 = arith.muli %c3, %c8 : i32
  // expected-error @below {{arange length 24 (from 0 to 24) is not a power of two}}
  %r = kiln.arange %c0, %c24 : tensor<?xi32>
  return
}

// -----

func.func @splat_not_pow2(%x: f32) {
  %c3 = arith.constant 3 : i32
  %c8 = arith.constant 8 : i32
  %n = arith.muli %c3, %c8 : i32
  // expected-error @below {{tile dimension 24 is not a power of two (shape [24])}}
  %t = kiln.splat %x [%n : i32] : f32 -> tensor<?xf32>
  return
}

// -----

func.func @too_large(%x: f32) {
  %c2048 = arith.constant 2048 : i32
  // expected-error @below {{tile too large: [2048, 1024] has more than 1048576 elements}}
  %t = kiln.splat %x [%c2048 : i32] : f32 -> tensor<?x1024xf32>
  return
}

// -----

func.func @stays_dynamic(%x: f32, %n: i32) {
  // expected-error @below {{the shape of this tile, [?], does not become constant; tile sizes must depend only on const params and literals}}
  %t = kiln.splat %x [%n : i32] : f32 -> tensor<?xf32>
  return
}

// -----

func.func @empty_arange() {
  %c4 = arith.constant 4 : i32
  %c8 = arith.addi %c4, %c4 : i32
  // expected-error @below {{arange needs end > start, found arange(8, 8)}}
  %r = kiln.arange %c8, %c8 : tensor<?xi32>
  return
}

// -----

func.func @elementwise_mismatch(%x: f32) {
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %a = kiln.splat %x [%c16 : i32] : f32 -> tensor<?xf32>
  %b = kiln.splat %x [%c32 : i32] : f32 -> tensor<?xf32>
  // expected-error @below {{operands have different shapes [16] and [32] in this variant (their sizes depend on const params)}}
  %s = arith.addf %a, %b : tensor<?xf32>
  return
}

// -----

func.func @broadcast_mismatch(%x: f32) {
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %a = kiln.splat %x [%c16 : i32] : f32 -> tensor<?x1xf32>
  // expected-error @below {{cannot broadcast shape [16, 1] to [32, 8] in this variant: each dimension must be 1 or equal}}
  %b = kiln.broadcast %a [%c32 : i32] : tensor<?x1xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @reshape_count(%x: f32) {
  %c16 = arith.constant 16 : i32
  %a = kiln.splat %x [%c16 : i32] : f32 -> tensor<?xf32>
  // expected-error @below {{reshape from [16] to [16, 2] changes the number of elements (16 vs 32)}}
  %b = kiln.reshape %a [%c16 : i32] : tensor<?xf32> -> tensor<?x2xf32>
  return
}

// -----

func.func @dot_inner(%x: f16, %acc: tensor<16x16xf32>) {
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %a = kiln.splat %x [%c32 : i32] : f16 -> tensor<16x?xf16>
  %b = kiln.splat %x [%c16 : i32] : f16 -> tensor<?x16xf16>
  // expected-error @below {{dot: inner dimensions differ: [16, 32] x [16, 16]}}
  %d = kiln.dot %a, %b, %acc : tensor<16x?xf16>, tensor<?x16xf16> -> tensor<16x16xf32>
  return
}
