// RUN: kiln-opt %s -tile-expand-fp8=as-i8=true | FileCheck %s

// A module without an fp8 value is left as it is: the pass does not run
// its rewrite driver (whose folding would fold the addition below), since
// it runs on every variant of every kernel, fp8 or not.
// CHECK-LABEL: func.func @no_fp8
// CHECK: %[[A:.*]] = arith.constant 1 : i32
// CHECK: %[[B:.*]] = arith.constant 2 : i32
// CHECK: arith.addi %[[A]], %[[B]] : i32
func.func @no_fp8(%x: f16) -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  return %c : i32
}
