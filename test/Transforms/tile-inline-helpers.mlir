// RUN: kiln-opt %s -split-input-file -tile-inline-helpers -verify-diagnostics -mlir-print-debuginfo | FileCheck %s

// A helper call is replaced by the helper's body; the helper is erased.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:[^:]*]]: tensor<16xf32>
// CHECK-NOT: call
// CHECK: %[[M:.*]] = arith.mulf %[[X]], %[[X]] : tensor<16xf32>
// CHECK: %[[A:.*]] = arith.addf %[[M]], %[[X]] : tensor<16xf32>
// CHECK: return %[[A]] : tensor<16xf32>
// CHECK-NOT: func.func private
func.func @k(%x: tensor<16xf32>) -> tensor<16xf32> attributes {kiln.kernel} {
  %r = func.call @sq_add(%x, %x) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
func.func private @sq_add(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> attributes {kiln.helper} {
  %m = arith.mulf %a, %a : tensor<16xf32>
  %s = arith.addf %m, %b : tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

// Helpers calling helpers are inlined to the bottom; results that are
// arguments pass straight through; void helpers work; structured control
// flow inside a helper is cloned.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<i32>
// CHECK-SAME: %[[N:[^:]*]]: i32
// CHECK-NOT: call
// CHECK: %[[D:.*]] = arith.addi %[[N]], %[[N]] : i32
// CHECK: %[[Q:.*]] = arith.addi %[[D]], %[[D]] : i32
// CHECK: scf.if %{{.*}} {
// CHECK:   kiln.store %[[P]], %[[Q]] : !kiln.ptr<i32>
// CHECK: }
// CHECK: return %[[N]] : i32
func.func @nested(%p: !kiln.ptr<i32>, %n: i32) -> i32 attributes {kiln.kernel} {
  %q = func.call @quad(%n) : (i32) -> i32
  func.call @put(%p, %q) : (!kiln.ptr<i32>, i32) -> ()
  %i = func.call @id(%n) : (i32) -> i32
  return %i : i32
}
func.func private @quad(%a: i32) -> i32 attributes {kiln.helper} {
  %d = func.call @double(%a) : (i32) -> i32
  %q = func.call @double(%d) : (i32) -> i32
  return %q : i32
}
func.func private @double(%a: i32) -> i32 attributes {kiln.helper} {
  %d = arith.addi %a, %a : i32
  return %d : i32
}
func.func private @put(%p: !kiln.ptr<i32>, %v: i32) attributes {kiln.helper} {
  %c0 = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %v, %c0 : i32
  scf.if %pos {
    kiln.store %p, %v : !kiln.ptr<i32>
  }
  return
}
func.func private @id(%a: i32) -> i32 attributes {kiln.helper} {
  return %a : i32
}

// -----

// Inlined ops keep their location, wrapped in a call-site location that
// names the call.
// CHECK-LABEL: func.func @locs(
// CHECK: arith.negf %{{.*}} loc(#[[CALLSITE:.*]])
// CHECK: #[[HELPER:.*]] = loc("helper.tile":2:3)
// CHECK: #[[CALL:.*]] = loc("kernel.tile":7:9)
// CHECK: #[[CALLSITE]] = loc(callsite(#[[HELPER]] at #[[CALL]]))
func.func @locs(%x: f32) -> f32 attributes {kiln.kernel} {
  %r = func.call @neg(%x) : (f32) -> f32 loc("kernel.tile":7:9)
  return %r : f32
}
func.func private @neg(%a: f32) -> f32 attributes {kiln.helper} {
  %n = arith.negf %a : f32 loc("helper.tile":2:3)
  return %n : f32
}

// -----

func.func @not_a_helper(%x: f32) -> f32 attributes {kiln.kernel} {
  // expected-error @below {{call to 'plain', which is not a kiln helper}}
  %r = func.call @plain(%x) : (f32) -> f32
  return %r : f32
}
func.func private @plain(%a: f32) -> f32 {
  return %a : f32
}

// -----

func.func @recursive(%x: i32) -> i32 attributes {kiln.kernel} {
  %r = func.call @rec(%x) : (i32) -> i32
  return %r : i32
}
func.func private @rec(%a: i32) -> i32 attributes {kiln.helper} {
  // expected-error @below {{helper calls nest more than 64 levels deep (recursion?)}}
  %r = func.call @rec(%a) : (i32) -> i32
  return %r : i32
}
