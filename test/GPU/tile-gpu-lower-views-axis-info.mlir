// The axis analysis on lowered views: the facts survive the widened
// coordinates (arith.extsi) and the i64 offset arithmetic, so a row-major
// view with a 16-byte aligned base, a unit innermost stride and a leading
// dimension of @div(8) f16 elements is read 8 elements (16 bytes) at once.
//
// RUN: kiln-opt %s -tile-gpu-lower-views \
// RUN:   | kiln-opt -tile-gpu-test-axis-info -o /dev/null 2>&1 \
// RUN:   | FileCheck %s

// The A operand of a matmul (BM = 64, BK = 32): rows from r = pm * BM,
// columns from the K loop's induction variable (a multiple of 32).
// K: @div(16) keeps the column mask constant over runs of 16.
func.func @matmul_a(%a: !kiln.ptr<f16> {kiln.align = 16 : i64}, %M: i32,
                    %K: i32 {kiln.div = 16 : i64},
                    %lda: i32 {kiln.div = 8 : i64}, %pm: i32) {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %c1 = arith.constant 1 : i64
  %m64 = arith.extsi %M : i32 to i64
  %k64 = arith.extsi %K : i32 to i64
  %lda64 = arith.extsi %lda : i32 to i64
  %A = kiln.make_view %a, [%m64, %k64], [%lda64, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  %r = arith.muli %pm, %c64 : i32
  scf.for %k = %c0 to %K step %c32 : i32 {
    %t = kiln.view_load %A[%r : i32, %k : i32] : !kiln.view<f16, 2> -> tensor<64x32xf16>
    kiln.view_store %A[%r : i32, %k : i32], %t : !kiln.view<f16, 2>, tensor<64x32xf16>
  }
  return
}

// Rows: 64 consecutive coordinates from a multiple of 64; times lda, a
// multiple of 8 elements.
// CHECK: remark: contiguity = [64], divisibility = [64], constancy = [1]
// CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK: remark: contiguity = [64], divisibility = [64], constancy = [1]
// CHECK-NEXT: arith.extsi %{{.*}} : tensor<64xi32> to tensor<64xi64>
// CHECK: remark: contiguity = [1], divisibility = [8], constancy = [1]
// CHECK-NEXT: arith.muli %{{.*}}, %{{.*}} : tensor<64xi64>
// Columns: 32 consecutive from a multiple of 32; the mask against K is
// constant over runs of 16.
// CHECK: remark: contiguity = [32], divisibility = [32], constancy = [1]
// CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK: remark: contiguity = [1], divisibility = [1], constancy = [16]
// CHECK-NEXT: arith.cmpi ult, %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK: remark: contiguity = [32], divisibility = [32], constancy = [1]
// CHECK-NEXT: arith.extsi %{{.*}} : tensor<32xi32> to tensor<32xi64>
// The box: rows of 32 consecutive elements, each starting 16-byte aligned.
// CHECK: remark: contiguity = [1, 1], divisibility = [1, 1], constancy = [64, 16]
// CHECK-NEXT: kiln.broadcast %{{.*}} : tensor<1x32xi1> -> tensor<64x32xi1>
// CHECK: remark: contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 16]
// CHECK-NEXT: arith.andi %{{.*}}, %{{.*}} : tensor<64x32xi1>
// CHECK: remark: contiguity = [1, 32], divisibility = [1, 8], constancy = [1, 1]
// CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : tensor<64x32xi64>
// CHECK: remark: contiguity = [1, 32], divisibility = [2, 16], constancy = [1, 1]
// CHECK-NEXT: kiln.addptr %{{.*}}, %{{.*}} : tensor<64x32x!kiln.ptr<f16>>, tensor<64x32xi64>
// CHECK: remark: vectorizable = [1, 8]
// CHECK-NEXT: kiln.load
// The store computes the same box.
// CHECK: remark: contiguity = [1, 32], divisibility = [2, 16], constancy = [1, 1]
// CHECK-NEXT: kiln.addptr %{{.*}}, %{{.*}} : tensor<64x32x!kiln.ptr<f16>>, tensor<64x32xi64>
// CHECK: remark: vectorizable = [1, 8]
// CHECK-NEXT: kiln.store
