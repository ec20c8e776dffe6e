// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @splat_constant
// CHECK-DAG: %[[F:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<true> : tensor<16xi1>
// CHECK-DAG: %[[D:.*]] = kiln.splat %{{.*}} [%{{.*}} : i32] : f32 -> tensor<?xf32>
// CHECK: return %[[F]], %[[I]], %[[D]]
func.func @splat_constant(%n: i32) -> (tensor<4x8xf32>, tensor<16xi1>, tensor<?xf32>) {
  %one = arith.constant 1.0 : f32
  %true = arith.constant true
  %0 = kiln.splat %one : f32 -> tensor<4x8xf32>
  %1 = kiln.splat %true : i1 -> tensor<16xi1>
  %2 = kiln.splat %one [%n : i32] : f32 -> tensor<?xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<16xi1>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @splat_pointer
// CHECK: kiln.splat %{{.*}} : !kiln.ptr<f32> -> tensor<8x!kiln.ptr<f32>>
func.func @splat_pointer(%p: !kiln.ptr<f32>) -> tensor<8x!kiln.ptr<f32>> {
  %0 = kiln.splat %p : !kiln.ptr<f32> -> tensor<8x!kiln.ptr<f32>>
  return %0 : tensor<8x!kiln.ptr<f32>>
}

// -----

// CHECK-LABEL: func.func @shape_ops_of_constants
// CHECK-DAG: %[[B:.*]] = arith.constant dense<2> : tensor<4x8xi32>
// CHECK-DAG: %[[E:.*]] = arith.constant dense<2> : tensor<8x1xi32>
// CHECK-DAG: %[[R:.*]] = arith.constant dense<2> : tensor<2x4xi32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<2> : tensor<8x4xi32>
// CHECK-NOT: kiln.
// CHECK: return %[[B]], %[[E]], %[[R]], %[[T]]
func.func @shape_ops_of_constants() -> (tensor<4x8xi32>, tensor<8x1xi32>, tensor<2x4xi32>, tensor<8x4xi32>) {
  %c = arith.constant dense<2> : tensor<1x8xi32>
  %v = arith.constant dense<2> : tensor<8xi32>
  %b = kiln.broadcast %c : tensor<1x8xi32> -> tensor<4x8xi32>
  %e = kiln.expand_dims %v axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
  %r = kiln.reshape %v : tensor<8xi32> -> tensor<2x4xi32>
  %t = kiln.trans %b order = [1, 0] : tensor<4x8xi32> -> tensor<8x4xi32>
  return %b, %e, %r, %t : tensor<4x8xi32>, tensor<8x1xi32>, tensor<2x4xi32>, tensor<8x4xi32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[D:.*]]: tensor<?x8xf32>, %[[N:.*]]: i32)
// CHECK: %[[BD:.*]] = kiln.broadcast %[[D]] [%[[N]] : i32] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: return %[[X]], %[[X]], %[[X]], %[[BD]]
func.func @identities(%x: tensor<4x8xf32>, %d: tensor<?x8xf32>, %n: i32)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  %b = kiln.broadcast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = kiln.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %t = kiln.trans %x order = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  // A `?` dimension may be 1 and broadcast: not an identity.
  %bd = kiln.broadcast %d [%n : i32] : tensor<?x8xf32> -> tensor<?x8xf32>
  return %b, %r, %t, %bd : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @addptr_zero
// CHECK-SAME: (%[[P:.*]]: !kiln.ptr<f32>, %[[PS:.*]]: tensor<8x!kiln.ptr<f32>>)
// CHECK-NOT: kiln.addptr
// CHECK: return %[[P]], %[[PS]]
func.func @addptr_zero(%p: !kiln.ptr<f32>, %ps: tensor<8x!kiln.ptr<f32>>)
    -> (!kiln.ptr<f32>, tensor<8x!kiln.ptr<f32>>) {
  %c0 = arith.constant 0 : i64
  %z = arith.constant dense<0> : tensor<8xi32>
  %0 = kiln.addptr %p, %c0 : !kiln.ptr<f32>, i64
  %1 = kiln.addptr %ps, %z : tensor<8x!kiln.ptr<f32>>, tensor<8xi32>
  return %0, %1 : !kiln.ptr<f32>, tensor<8x!kiln.ptr<f32>>
}

// -----

// Unused pure ops and loads disappear; stores, atomics, prints and asserts
// stay.
// CHECK-LABEL: func.func @effects
// CHECK-NOT: kiln.load
// CHECK-NOT: kiln.reduce
// CHECK-NOT: kiln.dot
// CHECK: kiln.store
// CHECK: kiln.atomic_rmw add
// CHECK: kiln.print "x"
// CHECK: kiln.assert %{{.*}}, "ok"
func.func @effects(%p: !kiln.ptr<f32>, %t: tensor<8xf32>, %c: i1,
                   %a: tensor<16x16xf16>, %acc: tensor<16x16xf32>) {
  %0 = kiln.load %p : !kiln.ptr<f32> -> f32
  %1 = kiln.reduce %t axis = 0 : (tensor<8xf32>) -> f32 {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    kiln.reduce.return %s : f32
  }
  %2 = kiln.dot %a, %a, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %v = arith.constant 1.0 : f32
  kiln.store %p, %v : !kiln.ptr<f32>
  %3 = kiln.atomic_rmw add, %p, %v : !kiln.ptr<f32> -> f32
  kiln.print "x"
  kiln.assert %c, "ok" : i1
  return
}
