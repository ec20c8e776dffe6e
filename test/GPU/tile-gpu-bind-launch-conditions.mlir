// RUN: kiln-opt %s --tile-gpu-bind-launch-conditions | FileCheck %s

// `(== HEAD_DIM head_dim)` with HEAD_DIM = 64 in this variant: head_dim's
// uses become 64 (i32). `(== CAUSAL causal)` binds causal to 1. A
// condition that is not an equality of a const param and a parameter
// binds nothing (n keeps its argument).
// CHECK-LABEL: func.func @k(
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: arith.addi %[[C64]], %[[C1]] : i32
// CHECK: arith.addi %arg2, %arg2 : i32
module attributes {kiln.variant = {HEAD_DIM = 64 : i64, CAUSAL = 1 : i64, stages = 2 : i64, warps = 4 : i64}} {
  func.func @k(%arg0: i32 {kiln.name = "head_dim"}, %arg1: i32 {kiln.name = "causal"}, %arg2: i32 {kiln.name = "n"}) -> (i32, i32)
      attributes {kiln.kernel, kiln.where = ["(== HEAD_DIM head_dim)", "(== causal CAUSAL)", "(> n 16)"]} {
    %0 = arith.addi %arg0, %arg1 : i32
    %1 = arith.addi %arg2, %arg2 : i32
    return %0, %1 : i32, i32
  }
}
