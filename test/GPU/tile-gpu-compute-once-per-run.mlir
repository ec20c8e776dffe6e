// RUN: kiln-opt %s --split-input-file --tile-gpu-compute-once-per-run | FileCheck %s

// A mask marked with two runs of four registers: one comparison per run,
// on the runs' first registers, spread back to the eight; the mark is
// gone. Unmarked ops are left alone.
// CHECK-LABEL: func.func @two_runs
// CHECK: %[[A:.*]] = vector.shuffle %arg0, %arg0 [0, 4] : vector<8xi32>, vector<8xi32>
// CHECK: %[[B:.*]] = vector.shuffle %arg1, %arg1 [0, 4] : vector<8xi32>, vector<8xi32>
// CHECK: %[[C:.*]] = arith.cmpi slt, %[[A]], %[[B]] : vector<2xi32>
// CHECK: %[[M:.*]] = vector.shuffle %[[C]], %[[C]] [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xi1>, vector<2xi1>
// CHECK: arith.addi %arg0, %arg1 : vector<8xi32>
// CHECK-NOT: equal_runs
// CHECK: return %[[M]]
func.func @two_runs(%offs: vector<8xi32>, %n: vector<8xi32>) -> (vector<8xi1>, vector<8xi32>) {
  %m = arith.cmpi slt, %offs, %n {kiln_gpu.equal_runs = array<i32: 0, 0, 0, 0, 1, 1, 1, 1>} : vector<8xi32>
  %s = arith.addi %offs, %n : vector<8xi32>
  return %m, %s : vector<8xi1>, vector<8xi32>
}

// -----

// Groups need not be contiguous (a register order that interleaves two
// columns' runs): each group's first register, groups in order of first
// appearance; inside a loop body too.
// CHECK-LABEL: func.func @interleaved
// CHECK: scf.for
// CHECK: %[[A:.*]] = vector.shuffle %arg0, %arg0 [0, 1] : vector<4xi32>, vector<4xi32>
// CHECK: %[[C:.*]] = arith.andi %[[A]], %{{.*}} : vector<2xi32>
// CHECK: vector.shuffle %[[C]], %[[C]] [0, 1, 0, 1] : vector<2xi32>, vector<2xi32>
func.func @interleaved(%x: vector<4xi32>, %y: vector<4xi32>, %n: index) -> vector<4xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %y) -> vector<4xi32> {
    %a = arith.andi %x, %acc {kiln_gpu.equal_runs = array<i32: 0, 1, 0, 1>} : vector<4xi32>
    scf.yield %a : vector<4xi32>
  }
  return %r : vector<4xi32>
}

// -----

// One group per register: nothing to share, only the mark goes.
// CHECK-LABEL: func.func @all_distinct
// CHECK-NEXT: %[[S:.*]] = arith.subi %arg0, %arg0 : vector<2xi32>
// CHECK-NEXT: return %[[S]]
func.func @all_distinct(%x: vector<2xi32>) -> vector<2xi32> {
  %s = arith.subi %x, %x {kiln_gpu.equal_runs = array<i32: 0, 1>} : vector<2xi32>
  return %s : vector<2xi32>
}
